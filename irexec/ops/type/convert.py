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
        output_bytes=lambda data, **_: data.size * 8,  # no element is wider than 8 bytes
    )

    @staticmethod
    def infer(ctx):
        return infer_conversion(ctx, "destination_type")

    bounds = staticmethod(bounds.convert)  # shape values keep their bounds (irexec/infer.py)

    @staticmethod
    def kernel(data, *, destination_type):
        return convert(data, destination_type)


# --- weights saved in f16 (save_model's compress_to_fp16) --------------------------------------

F16_MAX = 65504.0
F16_TINIEST = 2.0 ** -24  # the smallest positive f16 (a subnormal)
KEEP_SHARE = 0.75  # a constant with this share of values out of f16's range stays as it is


def compress_to_f16(model, next_id: list[int] | None = None) -> None:
    """Every f32 and f64 Constant of ``model`` (and of its layers' bodies) stored as f16 and
    converted back by a Convert marked ``decompression`` in its rt_info, as OpenVINO's
    ``save_model(..., compress_to_fp16=True)`` writes it: the Constant is renamed
    ``<name>_compressed`` and the Convert takes its name; values beyond f16's range are
    clamped to its largest; a Constant of which at least 3/4 of the values are out of range
    (beyond it, or nonzero below its smallest subnormal), or whose rt_info disables f16
    compression, is kept. Changes ``model`` in place: give it a copy (``Model.clone()``)."""
    import numpy as np

    from irexec.ir import element_type as et_table
    from irexec.ir.model import InputPort, Node, OutputPort
    from irexec.ir.rt_info import RtInfo

    f16 = et_table.ElementType.f16
    next_id = next_id if next_id is not None else [max((n.id for n in model.nodes), default=-1) + 1]
    for node in list(model.nodes):
        for body in node.bodies.values():
            compress_to_f16(body.model, [max((n.id for n in body.model.nodes), default=-1) + 1])
        if node.op is None or node.op.spec.role != "constant" or not node.outputs:
            continue
        port = node.outputs[0]
        et = port.element_type
        if et is None or et.name not in ("f32", "f64") or not port.consumers or \
                any(e.attrs.get("name") == "disable_fp16_compression" for e in node.rt_info):
            continue
        values = np.asarray(node.value)
        if values.size == 0:
            continue
        magnitude = np.abs(values)
        out_of_range = np.count_nonzero(magnitude > F16_MAX) + \
            np.count_nonzero((magnitude < F16_TINIEST) & (values != 0))
        if out_of_range / values.size >= KEEP_SHARE:
            continue
        compressed = np.clip(values, -F16_MAX, F16_MAX).astype(np.float16)
        consumers, shape = list(port.consumers), port.partial_shape
        convert = Node(next_id[0], node.name, "Convert", "opset1", op=Convert,
                       attrs={"destination_type": et}, file=node.file, scope=node.scope,
                       rt_info=[RtInfo("attribute", {"name": "decompression", "version": "0"})])
        next_id[0] += 1
        source = InputPort(convert, 0, 0, source=port)
        convert.inputs.append(source)
        out = OutputPort(convert, 0, 1, names=list(port.names), element_type=et,
                         partial_shape=shape, consumers=consumers)
        convert.outputs.append(out)
        for consumer in consumers:
            consumer.source = out
        node.name = node.name + "_compressed"
        node.attrs["element_type"] = f16
        node.attrs["size"] = compressed.nbytes
        node.value = compressed
        port.element_type, port.precision, port.names = f16, None, []
        port.consumers = [source]
        model.nodes.insert(model.nodes.index(node) + 1, convert)
        model.by_id[convert.id] = convert
    model._graph = model._order = model._kahn_order = None
