"""Build a Model in Python, layer by layer (used by tests, samples and converters).

    b = ModelBuilder("demo")
    x = b.parameter("data", "f32", [2, 3])
    y = b.op("Reverse", x, b.constant(np.array([1], np.int64)), mode="index")
    b.result(y, "out")
    model = b.build()          # checked and inferred, like read_model
"""

from __future__ import annotations

import numpy as np

from irexec.diagnostics.diagnostic import Location
from irexec.errors import IRError, raise_if_errors
from irexec.infer import infer_model
from irexec.ir import element_type as et_table
from irexec.ir.element_type import ElementType
from irexec.ir.model import InputPort, Model, Node, OutputPort
from irexec.ir.shape import PartialShape
from irexec.ops import registry


def _element_type(value) -> ElementType:
    try:
        return value if isinstance(value, ElementType) else et_table.from_name(str(value))
    except KeyError:
        raise IRError.make("IR302", f"'{value}' is not an element type name") from None


def _lookup(type_name: str, version: str, name: str | None):
    try:
        return registry.lookup(type_name, version)
    except registry.LookupFailure as e:
        raise IRError.make("IR103", str(e), Location(layer_name=name, layer_type=type_name)) \
            from None


def new_layer(op, version: str, attrs: dict, inputs, node_id: int, name: str | None) -> Node:
    """A layer of ``op`` fed by ``inputs`` (output ports), its attributes coerced to their kinds
    (the spec's defaults for those not given; IRError for a required one missing or a bad value);
    attributes the spec does not name are kept as text. No output ports yet."""
    attrs = dict(attrs)
    node = Node(id=node_id, name=name or f"{op.spec.type.lower()}_{node_id}",
                type=op.spec.type, version=version, op=op)
    for attr in op.spec.attrs:
        if attr.name in attrs:
            try:
                node.attrs[attr.name] = attr.coerce(attrs.pop(attr.name))
            except ValueError as e:
                raise IRError.make("IR302", f"attribute '{attr.name}': {e}",
                                   node.location) from None
        elif attr.required:
            raise IRError.make("IR301", f"attribute '{attr.name}' is required", node.location)
        else:
            node.attrs[attr.name] = attr.default
    node.extra_attrs = {k: str(v) for k, v in attrs.items()}
    for i, source in enumerate(inputs):
        port = InputPort(node, i, i, source=source)
        node.inputs.append(port)
        source.consumers.append(port)
    return node


class ModelBuilder:
    def __init__(self, name: str = "model"):
        self.name = name
        self.nodes: list[Node] = []

    def _add(self, type_name: str, version: str, attrs: dict, inputs, num_outputs: int,
             name: str | None, tensor_names: list[str] | None = None) -> Node:
        op = _lookup(type_name, version, name)
        node = new_layer(op, version, attrs, inputs, len(self.nodes), name)
        for i in range(num_outputs):
            names = tensor_names if tensor_names is not None else [node.name]
            node.outputs.append(OutputPort(node, i, len(inputs) + i, names=list(names)))
        self.nodes.append(node)
        return node

    def parameter(self, name: str, element_type, shape) -> OutputPort:
        shape = shape if isinstance(shape, PartialShape) else PartialShape(shape)
        return self._add("Parameter", "opset1", {"element_type": element_type, "shape": shape},
                         [], 1, name).outputs[0]

    def constant(self, value, element_type=None, name: str | None = None) -> OutputPort:
        et = _element_type(element_type) if element_type is not None else None
        if et is not None and et.is_coded and np.asarray(value).dtype != et.dtype:
            codes = np.asarray(value)  # u3, u6, nf4 given as their codes
            if codes.size and (codes.min() < 0 or codes.max() > et.max_code):
                raise ValueError(f"{et} codes are 0 to {et.max_code}")
            array = et_table.from_codes(et, codes)
        else:
            array = np.asarray(value, dtype=et.dtype if et else None)
        et = et or et_table.from_dtype(array.dtype)
        node = self._add("Const", "opset1", {"element_type": et, "shape": array.shape,
                                             "offset": 0, "size": array.nbytes}, [], 1, name)
        node.value = array
        return node.outputs[0]

    def op(self, type_name: str, *inputs: OutputPort, version: str | None = None,
           name: str | None = None, outputs: int | None = None, **attrs):
        """Add a layer and return its output port, or a tuple of every output port when the op
        has several (TopK, Split ...). ``version`` defaults to the first opset holding an OpenVINO op and
        to the first version of irexec's own (``irexec1``). ``outputs`` gives the number of
        outputs of an op whose count varies (Split's ``num_splits``, VariadicSplit's lengths)."""
        version = version or registry.default_version(type_name)
        spec = _lookup(type_name, version, name).spec
        if outputs is None:
            if any(o.variadic for o in spec.outputs):
                raise IRError.make("IR303", f"{spec.type} has a varying number of outputs: give "
                                            f"it with outputs=N",
                                   Location(layer_name=name, layer_type=spec.type))
            outputs = len(spec.outputs)
        node = self._add(type_name, version, dict(attrs), list(inputs), outputs, name)
        multi = len(spec.outputs) > 1 or any(o.variadic for o in spec.outputs)
        return tuple(node.outputs) if multi else node.outputs[0]

    def result(self, value: OutputPort, name: str | None = None) -> Node:
        return self._add("Result", "opset1", {}, [value], 0, name)

    def build(self) -> Model:
        """The finished model, checked and inferred. Raises IRError on any problem."""
        model = Model(list(self.nodes), name=self.name)
        diags = infer_model(model)
        raise_if_errors(diags)
        model.diagnostics.extend(diags.warnings)
        return model


def add_outputs(model: Model, outputs) -> list:
    """OpenVINO's ``Model.add_outputs``: a Result for each of ``outputs`` (a port, a tensor
    name, a layer name, or ``(layer name, output index)``, or a list of them), so that a
    compiled model also returns those tensors. Returns the new outputs (a port that already is
    an output is returned as it is)."""
    items = outputs if isinstance(outputs, list) else [outputs]
    added = []
    for item in items:
        port = _output_port(model, item)
        existing = next((o for o in model.outputs if o.source is port), None)
        if existing is not None:
            added.append(existing)
            continue
        op = _lookup("Result", "opset1", None)
        node = Node(id=max((n.id for n in model.nodes), default=-1) + 1,
                    name=f"{port.node.name}/sink_port_{port.index}", type=op.spec.type,
                    version="opset1", op=op)
        sink = InputPort(node, 0, 0, source=port)
        node.inputs.append(sink)
        port.consumers.append(sink)
        model.nodes.append(node)
        model.by_id[node.id] = node
        model._graph = model._order = model._kahn_order = None
        added.append(model.outputs[-1])
    return added


def _output_port(model: Model, item) -> OutputPort:
    if isinstance(item, OutputPort):
        return getattr(item, "source", None) or item
    if isinstance(item, tuple) and len(item) == 2:
        name, index = item
        for node in model.nodes:
            if node.name == name and 0 <= index < len(node.outputs):
                return node.outputs[index]
        raise RuntimeError(f"add_outputs: the model has no layer {name!r} with an output "
                           f"{index}")
    if isinstance(item, str):
        for node in model.nodes:
            for port in node.outputs:
                if item in port.names:
                    return port
        for node in model.nodes:
            if node.name == item and node.outputs:
                return node.outputs[0]
        raise RuntimeError(f"add_outputs: the model has no tensor or layer named {item!r}")
    raise TypeError(f"add_outputs takes ports, names or (layer name, index), not "
                    f"{type(item).__name__}")
