"""Convert-1: change a tensor's element type (rules in irexec/kernels/convert.py)."""

from irexec.kernels.convert import convert
from irexec.ops import bounds
from irexec.ops.spec import register
from irexec.ops.spec import CONVERTIBLE, Attr, Input, Op, OpSpec, Output
from irexec.ops.rules import infer_conversion


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
