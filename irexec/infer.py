"""Shape and type inference: a topological walk where each op's spec and ``infer`` give the
element type and partial shape of every output.

Before an op's own ``infer`` runs, the generic rules its spec declares are checked here, once for
all ops: the number of ports, each input's element-type rule and rank rule. The dims each port
declares in the XML are then compared with what was inferred (``-1`` matches anything).

A layer that fails gets unknown outputs, and layers fed by it are skipped, so one mistake is
reported once and unrelated mistakes elsewhere are still found.
"""

from __future__ import annotations

import numpy as np

from irexec import gc_pause
from irexec.ir.model import Model, Node, OutputPort
from irexec.ir.shape import PartialShape
from irexec.ops.spec import TensorType, resolve
from irexec.validate.diagnostic import Diagnostics, Location


class _LayerFailed(Exception):
    """Raised by InferContext.error to stop inferring one layer."""


class InferContext:
    """What an op's ``infer`` sees: parsed attributes, input types, constant input values."""

    def __init__(self, node: Node, input_types: list[TensorType],
                 input_values: list[np.ndarray | None], diags: Diagnostics):
        self.node = node
        self.attrs = node.attrs
        self._types = input_types
        self._values = input_values
        self._diags = diags

    def input_type(self, i: int) -> TensorType:
        return self._types[i]

    def input_value(self, i: int) -> np.ndarray | None:
        """The input's values when they are known before running (a Constant), else None."""
        return self._values[i]

    def error(self, code: str, message: str):
        self._diags.add(code, message, self.node.location)
        raise _LayerFailed

    def warn(self, code: str, message: str) -> None:
        self._diags.add(code, message, self.node.location)


def _check_spec_rules(ctx: InferContext) -> None:
    node, spec = ctx.node, ctx.node.op.spec
    n, lo, hi = len(node.inputs), spec.min_inputs, len(spec.inputs)
    if not lo <= n <= hi:
        wanted = str(hi) if lo == hi else f"{lo} to {hi}"
        ctx.error("IR303", f"the layer has {n} input port{'s' * (n != 1)}; {spec.type} takes "
                           f"{wanted}")
    problems = []
    for i, rule in enumerate(spec.inputs[:n]):
        t = ctx.input_type(i)
        types = resolve(rule.types, node.attrs)
        if types is not None and not types.allows(t.element_type):
            problems.append(("IR304", f"input {i} ({rule.name}) is {t.element_type}; it must be "
                                      f"{types.describe()}"))
        if rule.rank is not None and t.shape.rank_is_static and not rule.rank.allows(len(t.shape)):
            problems.append(("IR305", f"input {i} ({rule.name}) has shape {t.shape} (rank "
                                      f"{len(t.shape)}); it must have {rule.rank.describe()}"))
    for code, message in problems:
        ctx._diags.add(code, message, node.location)
    if problems:
        raise _LayerFailed


def _declared_matches(declared: PartialShape, inferred: PartialShape) -> bool:
    """XML dims agree with inference when each is -1 or a size the inferred dim allows (a
    static 5 inside an inferred 2..10 agrees: the file may know more than the graph says)."""
    if declared._dims == inferred._dims:
        return True  # the same dims (the common case)
    if not inferred.rank_is_static:
        return True  # OpenVINO writes no <dim> for a dynamic rank; any dims are possible
    if len(declared) != len(inferred):
        return False
    return all(d.is_dynamic or i.contains(d.min) for d, i in zip(declared, inferred))


def _port_location(node: Node, port) -> Location:
    loc = node.location
    if port.line is None:
        return loc
    return Location(loc.file, port.line, loc.layer_name, loc.layer_type, loc.layer_id,
                    port.column)


def _compare_declared(node: Node, types: dict, diags: Diagnostics) -> None:
    for port in node.inputs:
        t = types.get(port.source) if port.source is not None else None
        if port.declared is not None and t is not None and not _declared_matches(port.declared,
                                                                                 t.shape):
            diags.add("IR401", f"input port {port.port_id} declares dims {port.declared} but "
                               f"receives {t.shape} from layer '{port.source.node.name}'",
                      _port_location(node, port))
    for port in node.outputs:
        t = types.get(port)
        if (t is not None and port.precision is not None and port.precision is not t.element_type
                and not port.precision.is_dynamic
                and not t.element_type.is_dynamic and port.precision != t.element_type):
            diags.add("IR402", f"output port {port.port_id} declares precision "
                               f"{port.precision.precision} but the tensor is {t.element_type} "
                               f"({t.element_type.precision})", _port_location(node, port))
        if port.declared is not None and t is not None and not _declared_matches(port.declared,
                                                                                 t.shape):
            diags.add("IR401", f"output port {port.port_id} declares dims {port.declared} but "
                               f"inference gives {t.shape}", _port_location(node, port))


def infer_types(model: Model, diags: Diagnostics,
                parameter_types: dict[str, TensorType | PartialShape] | None = None,
                check_declared: bool = True) -> dict[OutputPort, TensorType]:
    """Infer every output port's type. ``parameter_types`` overrides Parameters' types (or just
    their shapes) by layer name, to infer for concrete inputs; the model itself is not changed."""
    types: dict[OutputPort, TensorType] = {}
    overrides = parameter_types or {}
    for node in model.topological_order():
        if node.op is None or node.broken:
            continue  # already reported by the reader
        sources = [p.source for p in node.inputs]
        try:
            input_types = [types[s] for s in sources]
        except KeyError:
            continue  # an input failed upstream, or has no edge (already reported)
        input_values = [s.node.value if s.node.type == "Constant" else None for s in sources]
        ctx = InferContext(node, input_types, input_values, diags)
        try:
            _check_spec_rules(ctx)
            outputs = node.op.infer(ctx)
        except _LayerFailed:
            continue
        if node.type == "Parameter" and node.name in overrides:
            given = overrides[node.name]
            outputs = [given if isinstance(given, TensorType)
                       else TensorType(outputs[0].element_type, given)]
        if len(outputs) != len(node.outputs):
            diags.add("IR303", f"the layer has {len(node.outputs)} output port"
                               f"{'s' * (len(node.outputs) != 1)}; {node.type} gives "
                               f"{len(outputs)}", node.location)
            continue
        for port, t in zip(node.outputs, outputs):
            types[port] = t
        if check_declared:
            _compare_declared(node, types, diags)
    return types


def infer_model(model: Model) -> Diagnostics:
    """Infer and store every port's element type and partial shape on the model."""
    diags = Diagnostics()
    with gc_pause.paused():  # many small objects, none freed: see irexec/gc_pause.py
        types = infer_types(model, diags)
    for port, t in types.items():
        port.element_type = t.element_type
        port.partial_shape = t.shape
    return diags

