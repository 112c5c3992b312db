"""Convert-1: change a tensor's element type (rules in irexec/kernels/convert.py)."""

from irexec.kernels.convert import convert, unsupported_reason
from irexec.ops import bounds
from irexec.ops.spec import register
from irexec.ops.spec import CONVERTIBLE, Attr, Input, Op, OpSpec, Output, TensorType


def infer_conversion(ctx, attr: str) -> list[TensorType]:
    """The output of a conversion to the type in attribute ``attr`` (Convert-1, ONNX Cast)."""
    target = ctx.attrs[attr]
    source = ctx.input_type(0).element_type
    if not CONVERTIBLE.allows(target):
        ctx.error("IR302", f"{attr} is {target}; irexec converts to {CONVERTIBLE.describe()}")
    elif not source.is_dynamic and not target.is_dynamic:
        reason = unsupported_reason(source, target)
        if reason:
            ctx.error("IR302", f"{attr} is {target}, but {source} cannot be converted to "
                               f"{target}: {reason}")
    return [TensorType(target, ctx.input_type(0).shape)]


@register
class Convert(Op):
    spec = OpSpec(
        type="Convert",
        numerics="exact",
        since=1,
        attrs=(Attr("destination_type", "element_type", doc="the element type to convert to"),),
        inputs=(Input("data", CONVERTIBLE, doc="the tensor to convert"),),
        outputs=(Output("output", "the same values in destination_type; same shape"),),
        doc="Converts every element to another element type, by OpenVINO's rules and for the "
            "pairs OpenVINO converts (docs/element-types.md); other pairs are IR302.",
        passes_values=True,
    )

    @staticmethod
    def infer(ctx):
        return infer_conversion(ctx, "destination_type")

    bounds = staticmethod(bounds.convert)  # shape values keep their bounds (irexec/infer.py)

    @staticmethod
    def kernel(data, *, destination_type):
        return convert(data, destination_type)
