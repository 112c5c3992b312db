"""ONNX Cast-6 and later (``version="onnx6"``, family ``onnx``): change the element type, by the
same rules as Convert-1 (irexec/kernels/convert.py). For in-range values ONNX's Cast equals
numpy's; float to integer beyond the target's range (and NaN) is undefined in ONNX: irexec
saturates (NaN gives 0), where ONNX Runtime gives the x86 results (docs/compatibility.md).
``saturate`` and ``round_mode`` only concern float8/float4 targets, which irexec does not
support yet; they are accepted and have no effect."""

from irexec.kernels.convert import convert
from irexec.ops.spec import register
from irexec.ops.spec import CONVERTIBLE, Attr, Input, Op, OpSpec, Output
from irexec.ops.rules import infer_conversion


@register
class OnnxCast(Op):
    spec = OpSpec(
        type="Cast",
        family="onnx",
        since=6,
        attrs=(
            Attr("to", "element_type", doc="the element type to cast to (an ONNX data type, "
                                           "read as the IR's element type)"),
            Attr("saturate", "int", default=1,
                 doc="float8 targets only (not supported yet); no effect"),
            Attr("round_mode", "string", default="up",
                 doc="float8/float4 targets only (not supported yet); no effect"),
        ),
        inputs=(Input("input", CONVERTIBLE, doc="the tensor to cast"),),
        outputs=(Output("output", "the same values in type `to`; same shape"),),
        doc="ONNX's Cast: converts every element to another element type.",
    )

    @staticmethod
    def infer(ctx):
        return infer_conversion(ctx, "to")

    @staticmethod
    def kernel(input, *, to, saturate=1, round_mode="up"):
        return convert(input, to)

    @staticmethod
    def to_openvino(b, node, data):
        return b.op("Convert", data, name=node.name, destination_type=node.attrs["to"])
