"""ConvertLike-1: convert a tensor to the element type of another (Convert's rules)."""

from irexec.ir import element_type as et_table
from irexec.kernels.convert import convert, unsupported_reason
from irexec.ops.spec import register
from irexec.ops.spec import CONVERTIBLE, Input, Op, OpSpec, Output, TensorType


@register
class ConvertLike(Op):
    spec = OpSpec(
        type="ConvertLike",
        numerics="exact",
        since=1,
        until=16,
        inputs=(Input("data", CONVERTIBLE, doc="the tensor to convert"),
                Input("like", CONVERTIBLE, doc="a tensor whose element type is the target "
                                               "(its values and shape are not used)")),
        outputs=(Output("output", "data's values in like's element type; data's shape"),),
        doc="Converts every element of data to the element type of like, by Convert's rules.",
        passes_values=True,
    )

    @staticmethod
    def infer(ctx):
        source = ctx.input_type(0).element_type
        target = ctx.input_type(1).element_type
        if not source.is_dynamic and not target.is_dynamic:
            reason = unsupported_reason(source, target)
            if reason:
                ctx.error("IR302", f"like is {target}, but {source} cannot be converted to "
                                   f"{target}: {reason}")
        return [TensorType(target, ctx.input_type(0).shape)]

    @staticmethod
    def kernel(data, like):
        return convert(data, et_table.from_dtype(like.dtype))
