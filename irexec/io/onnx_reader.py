"""Read an ONNX model (``.onnx``) into the same ``ir.Model`` the IR reader builds.

* graph inputs that are not initializers -> Parameter layers (named by the input);
* initializers, and ``Constant`` nodes with a ``value`` tensor -> Constant layers
  (values from ``onnx.numpy_helper``);
* every other node -> a layer of irexec's ``onnx`` version family, ``version="onnxN"`` where N is
  the model's ai.onnx opset (the registry picks the op version, as for ``opsetN``);
* graph outputs -> Result layers named by the output name.

ONNX tensor names are kept as the output ports' tensor names. ONNX has no line numbers: a
diagnostic names the file, the node (its name, or ``<OpType>_<index>`` when it has none) and the
node's index in the graph. Every unsupported op type in the model is named in one error (IR103).

ONNX strings are held as numpy object arrays of Python ``str`` (as ONNX Runtime's Python API
returns them; ``onnx.numpy_helper`` gives ``bytes``, decoded here as UTF-8), complex64/128 as
numpy complex arrays. ONNX data types irexec does not hold (the float8/float4/int4/int2 types)
are an IR505 error naming the type. ``onnx`` is imported only when this module is used.
"""

from __future__ import annotations

import os

import numpy as np

from irexec.errors import IRError
from irexec.io import files
from irexec.ir import element_type as et_table
from irexec.ir.checks import check_graph
from irexec.ir.element_type import ElementType
from irexec.ir.model import InputPort, Model, Node, OutputPort
from irexec.ir.shape import PartialShape
from irexec.ops import registry
from irexec.diagnostics.diagnostic import Diagnostics, Location

FAMILY = "onnx"
ONNX_DOMAINS = ("", "ai.onnx")
MAGIC_FIRST_BYTE = b"\x08"  # a serialized ModelProto starts with field 1 (ir_version), a varint

# ONNX TensorProto.DataType names -> the IR element type names (the one table, ir/element_type.py,
# knows everything else about them). ONNX types missing here are not supported by irexec yet.
_ONNX_TYPES = {
    "FLOAT": "f32", "DOUBLE": "f64", "FLOAT16": "f16", "BFLOAT16": "bf16",
    "INT8": "i8", "INT16": "i16", "INT32": "i32", "INT64": "i64",
    "UINT8": "u8", "UINT16": "u16", "UINT32": "u32", "UINT64": "u64", "BOOL": "boolean",
    "STRING": "string", "COMPLEX64": "complex64", "COMPLEX128": "complex128",
}
SUPPORTED_ONNX_TYPES = tuple(_ONNX_TYPES)
MAX_ONNX_BYTES = 2**31 - 1  # protobuf's limit on one message


def is_onnx_file(path) -> bool:
    """True for a ``.onnx`` path, or a file that starts like a serialized ModelProto."""
    path = os.fspath(path)
    if path.lower().endswith(".onnx"):
        return True
    if path.lower().endswith(".xml"):
        return False
    try:
        with files.open_file(path) as f:  # never blocks on a FIFO (irexec/io/files.py)
            return f.read(1) == MAGIC_FIRST_BYTE
    except OSError:
        return False


def _import_onnx():
    try:
        import onnx
        import onnx.numpy_helper  # noqa: F401
    except ImportError:
        raise IRError.make("IR001", "reading ONNX models needs the 'onnx' package: pip install "
                                    "onnx (in a clone of irexec: pip install '.[onnx]')") from None
    return onnx


def element_type(onnx_type: int) -> ElementType:
    """The element type for an ONNX data type number; ValueError naming unsupported ones."""
    import onnx

    try:
        name = onnx.TensorProto.DataType.Name(onnx_type)
    except ValueError:
        raise ValueError(f"ONNX data type {onnx_type} is unknown") from None
    if name not in _ONNX_TYPES:
        raise ValueError(f"ONNX data type {name} is not supported by irexec yet (supported: "
                         f"{', '.join(t.lower() for t in SUPPORTED_ONNX_TYPES)})")
    return et_table.from_name(_ONNX_TYPES[name])


def _strings(value) -> np.ndarray:
    """An object array of ``str``: onnx.numpy_helper gives ONNX strings as ``bytes``."""
    value = np.asarray(value, dtype=object)
    out = np.empty(value.shape, dtype=object)
    out.reshape(-1)[:] = [v.decode("utf-8") if isinstance(v, bytes) else str(v)
                          for v in value.reshape(-1)]
    return out


class _Reader:
    def __init__(self, proto, path: str | None):
        self.onnx = _import_onnx()
        self.proto = proto
        self.path = path
        self.diags = Diagnostics()
        self.nodes: list[Node] = []
        self.tensors: dict[str, OutputPort] = {}
        opset = next((o.version for o in proto.opset_import if o.domain in ONNX_DOMAINS), None)
        self.opset = opset if opset is not None else 1

    def loc(self, name: str | None = None, type_name: str | None = None,
            index: int | None = None) -> Location:
        return Location(self.path, None, name, type_name, None if index is None else str(index))

    def new_node(self, name: str, type_name: str, version: str, op, index: int | None) -> Node:
        node = Node(id=len(self.nodes), name=name, type=type_name, version=version, op=op,
                    file=self.path)
        self.nodes.append(node)
        return node

    def add_output(self, node: Node, tensor_name: str) -> None:
        port = OutputPort(node, len(node.outputs), len(node.inputs) + len(node.outputs),
                          names=[tensor_name] if tensor_name else [])
        node.outputs.append(port)
        if tensor_name:
            self.tensors[tensor_name] = port

    # --- graph inputs and constants -----------------------------------------------------------

    def parameter(self, value_info) -> None:
        name = value_info.name
        where = self.loc(name, "Parameter")
        t = value_info.type
        if t.WhichOneof("value") != "tensor_type":
            self.diags.add("IR505", f"graph input '{name}' is a {t.WhichOneof('value')}; irexec "
                                    f"supports tensor inputs only", where)
            return
        try:
            et = element_type(t.tensor_type.elem_type)
        except ValueError as e:
            self.diags.add("IR505", f"graph input '{name}': {e}", where)
            return
        if t.tensor_type.HasField("shape"):
            shape = PartialShape([d.dim_value if d.HasField("dim_value") else -1
                                  for d in t.tensor_type.shape.dim])
        else:
            shape = PartialShape.dynamic()
        node = self.new_node(name, "Parameter", "opset1", registry.lookup("Parameter", "opset1"),
                             None)
        node.attrs = {"element_type": et, "shape": shape}
        self.add_output(node, name)

    def constant(self, tensor, name: str, output_name: str, index: int | None) -> None:
        where = self.loc(name, "Constant", index)
        try:
            et = element_type(tensor.data_type)
        except ValueError as e:
            self.diags.add("IR505", f"constant '{output_name}': {e}", where)
            return
        try:
            value = self.onnx.numpy_helper.to_array(tensor)
        except Exception as e:  # onnx raises several types for malformed tensors
            self.diags.add("IR503", f"constant '{output_name}': cannot read its values: {e}",
                           where)
            return
        if et.kind == "string":
            try:
                value = _strings(value)
            except UnicodeDecodeError as e:
                self.diags.add("IR503", f"constant '{output_name}': a string is not UTF-8: {e}",
                               where)
                return
        value = np.asarray(value).astype(et.dtype, copy=False)
        node = self.new_node(name, "Constant", "opset1", registry.lookup("Constant", "opset1"),
                             index)
        node.attrs = {"element_type": et, "shape": tuple(value.shape), "offset": 0,
                      "size": value.nbytes}
        node.value = value
        self.add_output(node, output_name)

    # --- nodes --------------------------------------------------------------------------------

    def node_name(self, proto, index: int) -> str:
        return proto.name or f"{proto.op_type}_{index}"

    def find_op(self, proto, index: int, unsupported: dict[str, list[str]]):
        domain = proto.domain if proto.domain not in ONNX_DOMAINS else ""
        label = f"{domain}::{proto.op_type}" if domain else proto.op_type
        if domain or FAMILY not in registry.families_of(proto.op_type):
            unsupported.setdefault(label, []).append(self.node_name(proto, index))
            return None
        try:
            return registry.lookup(proto.op_type, f"{FAMILY}{self.opset}")
        except registry.LookupFailure as e:
            self.diags.add("IR103", str(e), self.loc(self.node_name(proto, index),
                                                     proto.op_type, index))
            return None

    def attrs(self, node: Node, proto, index: int) -> None:
        where = self.loc(node.name, node.type, index)
        given = {a.name: a for a in proto.attribute}
        for attr in node.op.spec.attrs:
            if attr.name not in given:
                if attr.required:
                    self.diags.add("IR301", f"attribute '{attr.name}' is required", where)
                    node.broken = True
                else:
                    node.attrs[attr.name] = attr.default
                continue
            value = self.onnx.helper.get_attribute_value(given.pop(attr.name))
            try:
                if attr.kind == "element_type":
                    value = element_type(value)
                elif isinstance(value, bytes):
                    value = value.decode("utf-8")
                node.attrs[attr.name] = attr.coerce(value)
            except ValueError as e:
                code = "IR505" if "not supported" in str(e) else "IR302"
                self.diags.add(code, f"attribute '{attr.name}': {e}", where)
                node.broken = True
        for name in given:
            self.diags.add("IR310", f"attribute '{name}' is not one {node.type}-"
                                    f"{node.op.spec.since} takes; it is ignored (known: "
                                    f"{', '.join(a.name for a in node.op.spec.attrs) or 'none'})",
                           where)

    def read(self) -> tuple[Model, Diagnostics]:
        graph = self.proto.graph
        initializers = {t.name for t in graph.initializer}
        for value_info in graph.input:
            if value_info.name not in initializers:
                self.parameter(value_info)
        for tensor in graph.initializer:
            self.constant(tensor, tensor.name, tensor.name, None)
        unsupported: dict[str, list[str]] = {}
        ops = [self.find_op(p, i, unsupported)
               if not (p.op_type == "Constant" and p.domain in ONNX_DOMAINS) else "const"
               for i, p in enumerate(graph.node)]
        if unsupported:
            listing = "; ".join(f"{t} (node{'s' * (len(n) > 1)} {', '.join(repr(x) for x in n)})"
                                for t, n in sorted(unsupported.items()))
            onnx_types = registry.registered_types(FAMILY)
            self.diags.add("IR103", f"{len(unsupported)} ONNX operation type"
                                    f"{'s are' if len(unsupported) > 1 else ' is'} not supported "
                                    f"by irexec: {listing} (supported ONNX ops: "
                                    f"{', '.join(onnx_types)})", self.loc())
        unread: set[str] = set()  # tensors of nodes already reported: their readers stay quiet
        for index, (proto, op) in enumerate(zip(graph.node, ops)):
            name = self.node_name(proto, index)
            if op == "const":
                self.constant_node(proto, name, index)
                continue
            if op is None:
                unread.update(proto.output)
                continue
            node = self.new_node(name, op.spec.type, f"{FAMILY}{self.opset}", op, index)
            node.line = None
            node.extra_attrs = {}
            for i, tensor_name in enumerate(proto.input):
                port = InputPort(node, i, i)
                node.inputs.append(port)
                if not tensor_name:
                    self.diags.add("IR202", f"input {i} is left empty; {node.type} needs it",
                                   self.loc(name, node.type, index))
                    node.broken = True
                    continue
                source = self.tensors.get(tensor_name)
                if source is None and tensor_name in unread:
                    node.broken = True
                    unread.update(proto.output)
                    continue
                if source is None:
                    self.diags.add("IR201", f"input {i} reads tensor '{tensor_name}', which no "
                                            f"graph input, initializer or earlier node produces",
                                   self.loc(name, node.type, index))
                    node.broken = True
                    continue
                port.source = source
                source.consumers.append(port)
            for tensor_name in proto.output:
                self.add_output(node, tensor_name)
            self.attrs(node, proto, index)
        for value_info in graph.output:
            self.result(value_info)
        model = Model(self.nodes, name=graph.name or "model", path=self.path)
        if not self.diags.errors:
            check_graph(model, self.diags)
        return model, self.diags

    def constant_node(self, proto, name: str, index: int) -> None:
        attrs = {a.name: a for a in proto.attribute}
        if set(attrs) != {"value"} or len(proto.output) != 1:
            self.diags.add("IR302", f"Constant nodes are read with a 'value' tensor only (got "
                                    f"{', '.join(sorted(attrs)) or 'no attributes'})",
                           self.loc(name, "Constant", index))
            return
        self.constant(attrs["value"].t, name, proto.output[0], index)

    def result(self, value_info) -> None:
        name = value_info.name
        source = self.tensors.get(name)
        if source is None:
            if not self.diags.errors:  # otherwise its producer was already reported
                self.diags.add("IR201", f"graph output '{name}' is not produced by any node, "
                                        f"input or initializer", self.loc(name, "Result"))
            return
        node = self.new_node(name, "Result", "opset1", registry.lookup("Result", "opset1"), None)
        node.attrs = {"output_names": (name,)}
        port = InputPort(node, 0, 0, source=source)
        node.inputs.append(port)
        source.consumers.append(port)


def load_onnx(model, path: str | None = None) -> tuple[Model, Diagnostics]:
    """Turn an ONNX file (a path) or a loaded ``onnx.ModelProto`` into a Model (no inference yet)
    and every problem found on the way. A file that is not readable ONNX raises IRError. The file
    is read before the onnx package is asked for: a path that is no file (a FIFO, a directory)
    is that error with or without onnx installed."""
    data = None
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        try:
            data = files.read_file(path, MAX_ONNX_BYTES)
        except OSError as e:
            raise IRError.make("IR001", f"cannot read the model: {e.strerror or e}",
                               Location(path)) from None
        if len(data) > MAX_ONNX_BYTES:
            raise IRError.make("IR001", f"the file is larger than {MAX_ONNX_BYTES} bytes, the "
                                        f"most a protobuf message holds", Location(path))
    onnx = _import_onnx()
    if data is not None:
        try:
            model = onnx.load_model_from_string(data)
        except Exception as e:  # protobuf's DecodeError and friends
            raise IRError.make("IR003", f"the file is not a readable ONNX model: {e}",
                               Location(path)) from None
    if not model.HasField("graph"):
        raise IRError.make("IR003", "the ONNX model has no graph", Location(path))
    return _Reader(model, path).read()


__all__ = ["is_onnx_file", "load_onnx", "element_type", "SUPPORTED_ONNX_TYPES"]
