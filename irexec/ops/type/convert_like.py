"""ConvertLike-1: convert a tensor to the element type of another (Convert's rules)."""

from irexec.ir import element_type as et_table
from irexec.kernels.convert import convert
from irexec.ops.rules import check_convertible
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
        target = ctx.input_type(1).element_type
        check_convertible(ctx, "like", ctx.input_type(0).element_type, target)
        return [TensorType(target, ctx.input_type(0).shape)]

    @staticmethod
    def kernel(data, like):
        return convert(data, et_table.from_dtype(like.dtype))
