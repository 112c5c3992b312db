"""Layers made one at a time in Python, as OpenVINO's opset functions make them: each layer is
inferred as it is made (its outputs' element types and shapes are known at once, and a layer
that breaks its op's rules is refused there), and ``Model(results, parameters, name)`` gathers
the layers the results depend on.

NOTE for developers: a layer made here belongs to no model until ``Model(...)`` gathers it, so
its id comes from one counter for the process (ids only need to be unique within a model).
What inference knows of an output's values (constants folded, shape arithmetic) is kept beside
the port in weak dictionaries, so a later layer can read it (Reshape's target shape from
ShapeOf -> Concat) and nothing is kept alive for it.
"""

from __future__ import annotations

import itertools
import weakref

import numpy as np

from irexec.builder import new_layer
from irexec.diagnostics.diagnostic import Diagnostics, Location
from irexec.errors import IRError
from irexec.infer import infer_new_layer
from irexec.ir import element_type as et_table
from irexec.ir.element_type import ElementType
from irexec.ir.model import Model, Node, OutputPort, Ports
from irexec.ir.shape import PartialShape
from irexec.ops import registry

_ids = itertools.count(1)
_values: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_bounds: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class ArgumentError(TypeError):
    """An argument of the wrong kind given to an ``irexec.opsetN`` function (OpenVINO raises
    TypeError too); the message names the function and the argument."""


def lookup(type_name: str, version: str):
    try:
        return registry.lookup(type_name, version)
    except registry.LookupFailure as e:
        raise IRError.make("IR103", str(e), Location(layer_type=type_name)) from None


def make_layer(type_name: str, version: str, inputs: list[OutputPort], attrs: dict,
               name: str | None) -> Node:
    """A layer of ``type_name`` (the registration serving ``version``) fed by ``inputs``, its
    attributes coerced, inferred at once; IRError naming the layer if it breaks a rule."""
    op = lookup(type_name, version)
    node_id = next(_ids)
    # OpenVINO's friendly names: Type_N
    node = new_layer(op, version, attrs, inputs, node_id, name or f"{op.spec.type}_{node_id}")

    node.inputs = Ports(node.inputs)

    def make_outputs(count: int) -> None:
        node.outputs = Ports(OutputPort(node, i, len(inputs) + i) for i in range(count))

    diags = Diagnostics()
    outputs = infer_new_layer(node, _values, _bounds, diags, make_outputs)
    if outputs is None or diags.errors:
        for port in node.inputs:  # the refused layer feeds nothing
            port.source.consumers.remove(port)
        raise IRError(diags.errors)
    return node


def _shape(shape, function: str, argument: str) -> PartialShape:
    if isinstance(shape, PartialShape):
        return shape
    try:
        return PartialShape(shape)  # text too: '?,3,224,224', '1..8,3', '...'
    except (TypeError, ValueError) as e:
        raise ArgumentError(f"{function}: argument '{argument}' must be a shape (a list of "
                            f"dims, a PartialShape or text such as '?,3,224,224'): {e}") from None


def element_type(value, function: str, argument: str) -> ElementType:
    """An element type from what OpenVINO's functions take for one: a Type (OpenVINO's or
    irexec's), a numpy type or dtype, Python's int/float/bool, or a name ('f32')."""
    if isinstance(value, ElementType):
        return value
    try:
        if value is int:
            return et_table.from_name("i32")  # OpenVINO's choice for int (it warns)
        if value is float:
            return et_table.from_name("f32")
        if value is bool:
            return et_table.from_name("boolean")
        if isinstance(value, str):
            return et_table.from_name(value)
        if hasattr(value, "get_type_name"):  # OpenVINO's Type, or a Type wrapping one
            return et_table.from_name(value.get_type_name())
        return et_table.from_dtype(value)
    except (KeyError, TypeError):
        raise ArgumentError(f"{function}: argument '{argument}' must be an element type (such "
                            f"as 'f32', np.float32 or Type.f32), not {value!r}") from None


def constant_layer(value, dtype=None, name: str | None = None, *, function: str = "constant",
                   argument: str = "value") -> Node:
    """A Constant holding ``value`` (made an array as OpenVINO makes it: ``np.array`` of a
    Python number or list), converted to ``dtype`` if given."""
    if value is None or isinstance(value, (str, bytes, dict, set)):
        raise ArgumentError(f"{function}: argument '{argument}' must be a node, an output, a "
                            f"numpy array or a number, not {type(value).__name__}")
    et = element_type(dtype, function, "dtype") if dtype is not None else None
    try:
        if et is not None and et.is_coded and np.asarray(value).dtype != et.dtype:
            array = et_table.from_codes(et, np.asarray(value))
        else:
            array = np.array(value, dtype=et.dtype if et is not None else None)
    except (TypeError, ValueError) as e:
        raise ArgumentError(f"{function}: argument '{argument}' cannot be made a tensor: "
                            f"{e}") from None
    if array.dtype.kind in "US" or (array.dtype == object and array.size and all(
            isinstance(v, str) for v in array.reshape(-1))):  # text: OpenVINO's string type
        array = np.vectorize(lambda v: v.decode() if isinstance(v, bytes) else str(v),
                             otypes=[object])(array) if array.size else array.astype(object)
    elif array.dtype == object:
        raise ArgumentError(f"{function}: argument '{argument}' must be a node, an output, a "
                            f"numpy array or a number, not {type(value).__name__}")
    try:
        et = et or et_table.from_dtype(array.dtype)
    except KeyError:
        raise ArgumentError(f"{function}: argument '{argument}' has the numpy type "
                            f"{array.dtype}, which no element type holds") from None
    node = make_layer("Constant", "opset1", [], {"element_type": et, "shape": array.shape,
                                                "offset": 0, "size": array.nbytes}, name)
    node.value = array
    return node


def as_outputs(value, function: str, argument: str) -> list[OutputPort]:
    """The output ports an argument stands for: a layer's outputs (all of them, as OpenVINO's
    node factory takes a node), one output port, or a Constant made of an array or a number."""
    if isinstance(value, Node):
        if not value.outputs:
            raise ArgumentError(f"{function}: argument '{argument}' is the layer "
                                f"'{value.name}' ({value.type}), which has no outputs")
        return list(value.outputs)
    if isinstance(value, OutputPort):
        if value.node.op is not None and value.node.op.spec.role == "result":
            return [value.node.inputs[0].source]  # a model's output: what feeds its Result
        return [value]
    port = getattr(value, "_irexec_output", None)  # a port object of the API (adapter)
    if isinstance(port, OutputPort):
        return [port]
    return list(constant_layer(value, function=function, argument=argument).outputs)


# --- Model(results, parameters, name) -----------------------------------------------------------

def _result_ports(results) -> list:
    if isinstance(results, (Node, OutputPort)):
        return [results]
    return list(results)


def assemble(results, parameters, sinks) -> list[Node]:
    """The layers of OpenVINO's ``Model(results, parameters)``: the given Parameters first (in
    input order), then every layer the results and sinks depend on, producers first, then the
    Result layers in output order (a Result made for each output port given)."""
    result_nodes: list[Node] = []
    for item in _result_ports(results):
        if isinstance(item, OutputPort) and item.node.op is not None \
                and item.node.op.spec.role == "result":
            item = item.node  # a model's output (its Result's face): that Result
        if isinstance(item, Node) and item.op is not None and item.op.spec.role == "result":
            result_nodes.append(item)
            continue
        for port in as_outputs(item, "Model", "results"):
            result_nodes.append(make_layer("Result", "opset1", [port], {}, None))
    if isinstance(parameters, Node):
        parameters = [parameters]
    parameters = list(parameters)
    for p in parameters:
        if not (isinstance(p, Node) and p.op is not None and p.op.spec.role == "parameter"):
            raise ArgumentError(f"Model: argument 'parameters' must hold Parameter layers, not "
                                f"{p!r}")
    sink_nodes = [s for s in (sinks if not isinstance(sinks, Node) else [sinks])]
    return ordered_layers(parameters, sink_nodes, result_nodes)


def ordered_layers(parameters: list[Node], roots: list[Node], results: list[Node]) -> list[Node]:
    """``parameters`` (in input order), every layer ``roots`` and ``results`` depend on with
    producers before consumers, then ``results`` (in output order); ids made unique within the
    list (a layer made in Python and one read from a file may share a number). IRError if a
    Parameter outside ``parameters`` is reached."""
    order: list[Node] = []
    seen: set[int] = {id(p) for p in parameters} | {id(r) for r in results}
    tops = [*roots, *(source.node for r in results for p in r.inputs
                      if (source := p.source) is not None)]
    for top in tops:
        stack = [(top, False)]
        while stack:  # depth first, a layer after everything it reads
            node, done = stack.pop()
            if done:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            for port in reversed(node.inputs):
                source = port.source
                if source is not None and id(source.node) not in seen:
                    stack.append((source.node, False))
    missing = [n for n in order if n.op is not None and n.op.spec.role == "parameter"]
    if missing:
        raise IRError.make("IR202", f"the results depend on Parameter '{missing[0].name}', "
                                    f"which is not in the model's parameters",
                           missing[0].location)
    nodes = [*parameters, *order, *results]
    used: set[int] = set()
    clashes = []
    for node in nodes:
        if node.id in used:
            clashes.append(node)
        used.add(node.id)
    top_id = max(used, default=0)
    for node in clashes:
        top_id = max(top_id, next(_ids)) + 1
        node.id = top_id
    return nodes


Model.assemble = staticmethod(assemble)
