"""Convert-1: change a tensor's element type (rules in irexec/kernels/convert.py)."""

from irexec.kernels.convert import convert
from irexec.ops.registry import register
from irexec.ops.spec import CONVERTIBLE, Attr, Input, Op, OpSpec, Output, TensorType


@register
class Convert(Op):
    spec = OpSpec(
        type="Convert",
        since=1,
        attrs=(Attr("destination_type", "element_type", doc="the element type to convert to"),),
        inputs=(Input("data", CONVERTIBLE, doc="the tensor to convert"),),
        outputs=(Output("output", "the same values in destination_type; same shape"),),
        doc="Converts every element to another element type.",
    )

    @staticmethod
    def infer(ctx):
        target = ctx.attrs["destination_type"]
        if not CONVERTIBLE.allows(target):
            ctx.error("IR302", f"destination_type is {target}; irexec converts to a "
                               f"{CONVERTIBLE.describe()} only")
        return [TensorType(target, ctx.input_type(0).shape)]

    @staticmethod
    def kernel(data, *, destination_type):
        return convert(data, destination_type.dtype)
