"""The in-memory model: layers (Node), their ports, and the graph of edges between them.

Nothing here knows XML. The reader in ``io/`` fills these objects; inference fills in each output
port's element type and partial shape; the runtime compiles them into a flat plan.

NOTE for developers: an output port *is* the value it carries (as OpenVINO's ``Output``); an input
port points at the output port feeding it (``source``). Ordering, cycle detection and reachability
walk those links directly with plain lists (linear time); a networkx graph mirroring them (one
edge per connection, keys ``(from_index, to_index)``) is built only when asked for (``graph``) or
to name the layers of a cycle, and never while running.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import heapq

import numpy as np

from irexec.errors import IRError
from irexec.ir.element_type import ElementType
from irexec.ir.shape import PartialShape

if TYPE_CHECKING:
    from irexec.diagnostics.diagnostic import Diagnostic, Location


@dataclass
class RtInfo:
    """One element of an ``<rt_info>`` block, kept as written so that nothing is lost."""

    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[RtInfo] = field(default_factory=list)

    def to_dict(self) -> Any:
        """A plain view: ``value`` attributes become strings, nested blocks dicts."""
        if not self.children:
            return self.attrs.get("value", dict(self.attrs))
        return rt_info_dict(self.children)


def rt_info_dict(entries: list[RtInfo]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for e in entries:
        key = e.attrs.get("name", e.tag) if e.tag == "attribute" else e.tag
        out[key] = e.to_dict()
    return out


@dataclass(eq=False)
class InputPort:
    node: Node
    index: int
    port_id: int
    declared: PartialShape | None = None  # the dims the XML wrote, if any
    precision: ElementType | None = None
    rt_info: list[RtInfo] = field(default_factory=list)
    line: int | None = None
    source: OutputPort | None = None  # set when edges are connected
    column: int | None = None

    def __repr__(self) -> str:
        return f"<input {self.index} of {self.node.name!r}>"


@dataclass(eq=False)
class OutputPort:
    """An output port of a layer, and the tensor it produces."""

    node: Node
    index: int
    port_id: int
    declared: PartialShape | None = None
    precision: ElementType | None = None
    names: list[str] = field(default_factory=list)
    rt_info: list[RtInfo] = field(default_factory=list)
    line: int | None = None
    column: int | None = None
    # Filled by inference:
    element_type: ElementType | None = None
    partial_shape: PartialShape | None = None
    consumers: list[InputPort] = field(default_factory=list)

    def get_any_name(self) -> str:
        return self.names[0] if self.names else self.node.name

    def get_element_type(self) -> ElementType | None:
        return self.element_type

    def get_partial_shape(self) -> PartialShape | None:
        return self.partial_shape

    # OpenVINO's names for the same facts (its Output / ConstOutput).
    @property
    def any_name(self) -> str:
        return self.get_any_name()

    def get_names(self) -> set[str]:
        return set(self.names)

    def get_index(self) -> int:
        return self.index

    def get_node(self) -> Node:
        return self.node

    def get_shape(self) -> list[int]:
        """The static shape, as OpenVINO's ``get_shape()``: RuntimeError if it is dynamic."""
        shape = self.partial_shape
        if shape is None or not shape.is_static:
            raise RuntimeError(f"output {self.index} of {self.node.name!r} has the dynamic "
                               f"shape {shape}; use get_partial_shape()")
        return list(shape.to_shape())

    @property
    def shape(self) -> list[int]:
        return self.get_shape()

    def __repr__(self) -> str:
        return (f"<output {self.index} of {self.node.name!r}: "
                f"{self.element_type} {self.partial_shape}>")


@dataclass
class PortMapping:
    """One entry of a sub-graph's port map: outer port ``external`` (an input or output port id
    of the layer; -1 for Loop's special ports) is the body layer ``internal`` (a Parameter for
    inputs, a Result for outputs). ``axis`` set: the input is sliced (the output concatenated)
    along it, ``part_size`` elements at a time from ``start`` to ``end`` by ``stride``."""

    external: int
    internal: int
    axis: int | None = None
    start: int = 0
    end: int = -1
    stride: int = 1
    part_size: int = 1
    purpose: str | None = None  # Loop: "current_iteration" or "execution_condition"
    line: int | None = None


@dataclass
class Body:
    """A layer's sub-graph (TensorIterator's and Loop's ``body``, If's ``then_body`` and
    ``else_body``): a model of its own, how the layer's ports map onto it, and the back edges
    (Result id -> Parameter id) that carry a value to the next iteration."""

    name: str
    model: Model
    inputs: list[PortMapping] = field(default_factory=list)
    outputs: list[PortMapping] = field(default_factory=list)
    back_edges: list[tuple[int, int]] = field(default_factory=list)
    line: int | None = None
    # How the port map is written (one <port_map> or If's <then_port_map>/<else_port_map>).
    port_map_tag: str = "port_map"


@dataclass(eq=False)
class Node:
    """One layer of the IR."""

    id: int
    name: str
    type: str  # the registered op type, e.g. "Constant" for the IR's "Const"
    version: str  # as written: "opset1"
    op: Any = None  # the op class that runs the layer (an irexec.ops Op), None if unknown
    attrs: dict[str, Any] = field(default_factory=dict)
    inputs: list[InputPort] = field(default_factory=list)
    outputs: list[OutputPort] = field(default_factory=list)
    rt_info: list[RtInfo] = field(default_factory=list)
    line: int | None = None
    file: str | None = None
    extra_attrs: dict[str, str] = field(default_factory=dict)  # <data> attributes no spec names
    column: int | None = None
    broken: bool = False  # the reader reported a problem that leaves this layer unusable
    bodies: dict[str, Body] = field(default_factory=dict)  # sub-graphs (Loop, If ...)
    scope: str = ""  # the enclosing layers of a body's layer: "loop/body/"
    _value: np.ndarray | None = field(default=None, repr=False)
    _load: Callable[[], np.ndarray] | None = field(default=None, repr=False)

    @property
    def role(self) -> str | None:
        """What the layer is to the graph, as its op's spec says: "parameter", "constant" or
        "result" for the IR's three infrastructure layers, "sink" for a layer run for its effect
        (Assign); None for any other layer and for one whose type is unknown. Code finds
        Parameters, Constants and Results by this, never by their type names."""
        return self.op.spec.role if self.op is not None else None

    @property
    def value(self) -> np.ndarray | None:
        """A Constant's payload: a read-only view of the .bin, or (for packed sub-byte types)
        the unpacked array, made the first time it is asked for."""
        if self._load is not None:
            self._value, self._load = self._load(), None
        return self._value

    @value.setter
    def value(self, array: np.ndarray | None) -> None:
        self._value, self._load = array, None

    def load_value_later(self, load: Callable[[], np.ndarray]) -> None:
        """Make ``value`` call ``load`` when it is first needed (unpacking a large packed Const
        that nothing reads costs nothing)."""
        self._value, self._load = None, load

    @property
    def location(self) -> Location:
        from irexec.diagnostics.diagnostic import Location

        return Location(self.file, self.line, self.scope + self.name, self.type, str(self.id),
                        self.column)

    def input_values(self) -> list[OutputPort | None]:
        return [p.source for p in self.inputs]

    # OpenVINO's names for a node's facts (its Node).
    def get_friendly_name(self) -> str:
        return self.name

    def get_type_name(self) -> str:
        return self.type

    def get_output_size(self) -> int:
        return len(self.outputs)

    def output(self, index: int) -> OutputPort:
        return self.outputs[index]

    def get_output_partial_shape(self, index: int) -> PartialShape | None:
        return self.outputs[index].partial_shape

    def get_output_element_type(self, index: int) -> ElementType | None:
        return self.outputs[index].element_type

    def __repr__(self) -> str:
        return f"<layer {self.id} {self.name!r} ({self.type}-{self.version})>"


class Model:
    """A whole IR model. Build it with ``irexec.read_model`` or ``irexec.builder``."""

    def __init__(self, nodes: list[Node], *, name: str = "model", ir_version: int = 11,
                 rt_info: list[RtInfo] | None = None, path: str | None = None):
        self.nodes = nodes
        self.name = name
        self.ir_version = ir_version
        self.rt_info = rt_info or []
        self.path = path
        self.diagnostics: list[Diagnostic] = []  # warnings found while reading and inferring
        self.weights = None  # the io.weights.Weights the Consts view, kept alive with the model
        self.by_id = {n.id: n for n in nodes}
        self._graph = None
        self._order: list[Node] | None = None
        self._kahn_order: list[int] | None = None

    @property
    def graph(self):
        """A networkx MultiDiGraph of the layers (built on first use; nothing fast needs it)."""
        if self._graph is None:
            import networkx as nx

            graph = nx.MultiDiGraph()
            for n in self.nodes:
                graph.add_node(n.id)
            for n in self.nodes:
                for port in n.inputs:
                    if port.source is not None:
                        graph.add_edge(port.source.node.id, n.id,
                                       key=(port.source.index, port.index))
            self._graph = graph
        return self._graph

    def _edges(self) -> tuple[list[list[int]], list[int]]:
        """Per layer (by position in ``nodes``): the positions of the layers it feeds, one per
        connection, and how many connections come in."""
        position = {id(n): i for i, n in enumerate(self.nodes)}
        out: list[list[int]] = [[] for _ in self.nodes]
        indegree = [0] * len(self.nodes)
        for i, n in enumerate(self.nodes):
            for port in n.inputs:
                source = port.source
                if source is not None:
                    j = position.get(id(source.node))
                    if j is not None:
                        out[j].append(i)
                        indegree[i] += 1
        return out, indegree

    def _sorted(self) -> list[int]:
        """``_kahn()``, worked out once."""
        if self._kahn_order is None:
            self._kahn_order = self._kahn()
        return self._kahn_order

    def _in_file_order(self) -> bool:
        """True when every connection goes from a layer to a later one: then the file order
        is the topological order (the smallest ready position first is always the next one)."""
        position = {id(n): i for i, n in enumerate(self.nodes)}
        get = position.get
        for i, n in enumerate(self.nodes):
            for port in n.inputs:
                source = port.source
                if source is not None:
                    j = get(id(source.node))
                    if j is not None and j >= i:
                        return False
        return True

    def _kahn(self, excluded: set[int] = frozenset()) -> list[int]:
        """Positions of the layers not in ``excluded`` in topological order (smallest position
        first among those ready); layers on or behind a cycle never become ready."""
        if not excluded and self._in_file_order():
            return list(range(len(self.nodes)))
        out, indegree = self._edges()
        if excluded:
            for j in excluded:
                for i in out[j]:
                    indegree[i] -= 1
        ready = [i for i, d in enumerate(indegree) if d == 0 and i not in excluded]
        heapq.heapify(ready)
        order = []
        pop, push = heapq.heappop, heapq.heappush
        while ready:
            j = pop(ready)
            order.append(j)
            for i in out[j]:
                indegree[i] -= 1
                if indegree[i] == 0 and i not in excluded:
                    push(ready, i)
        return order

    @property
    def parameters(self) -> list[Node]:
        return [n for n in self.nodes if n.role == "parameter"]

    @property
    def results(self) -> list[Node]:
        return [n for n in self.nodes if n.role == "result"]

    @property
    def inputs(self) -> list[OutputPort]:
        return [p.outputs[0] for p in self.parameters]

    @property
    def outputs(self) -> list[OutputPort]:
        return [r.inputs[0].source for r in self.results]

    def cycles(self) -> list[list[int]]:
        """Layer ids of each cycle (a strongly connected group, or a layer feeding itself)."""
        if len(self._sorted()) == len(self.nodes):
            return []  # every layer sorted: no cycle (the common case, in linear time)
        import networkx as nx

        graph = self.graph
        position = {n.id: i for i, n in enumerate(self.nodes)}
        groups = [sorted(c, key=position.__getitem__)
                  for c in nx.strongly_connected_components(graph)
                  if len(c) > 1 or graph.has_edge(next(iter(c)), next(iter(c)))]
        return sorted(groups, key=lambda c: position[c[0]])

    def topological_order(self) -> list[Node]:
        """Every layer not on a cycle, producers before consumers; ties keep the XML order."""
        if self._order is None:
            order = self._sorted()
            if len(order) != len(self.nodes):
                position = {n.id: i for i, n in enumerate(self.nodes)}
                on_cycles = {position[i] for c in self.cycles() for i in c}
                order = self._kahn(on_cycles)
            self._order = [self.nodes[i] for i in order]
        return self._order

    def needed_nodes(self, sinks=()) -> set[int]:
        """Ids of layers some Result (or one of ``sinks``) depends on; Parameters always count."""
        needed: set[int] = set()
        stack = [r for r in self.results] + [self.by_id[i] for i in sinks if i in self.by_id]
        for sink in stack:
            needed.add(sink.id)
        seen = {id(n) for n in stack}
        while stack:
            node = stack.pop()
            for port in node.inputs:
                source = port.source
                if source is not None and id(source.node) not in seen:
                    seen.add(id(source.node))
                    needed.add(source.node.id)
                    stack.append(source.node)
        needed |= {p.id for p in self.parameters}
        return needed

    def output_name(self, result: Node) -> str:
        """A Result's output name: output_names, else the feeding port's first name, else its name."""
        names = result.attrs.get("output_names")
        if names and self.ir_version >= 11:  # IR v10 had no output_names; OpenVINO ignores it
            return names[0]
        source = result.inputs[0].source
        if source is not None and source.names:
            return source.names[0]
        return result.name

    # --- OpenVINO's Model API -----------------------------------------------------------------

    # Inference lives above ir/ (it needs the ops): irexec/api.py sets this hook to
    # ``infer_model`` when imported, so reshape re-infers without ir/ importing upward.
    reinfer: ClassVar[Callable[[Model], list] | None] = None

    def get_parameters(self) -> list[Node]:
        return self.parameters

    def get_results(self) -> list[Node]:
        return self.results

    def get_ops(self) -> list[Node]:
        return list(self.nodes)

    def input(self, key=None, out_of_range: type[Exception] = IndexError) -> OutputPort:
        return _port_by(self.inputs, key, "input", self._input_names, out_of_range)

    def output(self, key=None, out_of_range: type[Exception] = IndexError) -> OutputPort:
        return _port_by(self.outputs, key, "output", lambda p: set(p.names), out_of_range)

    @staticmethod
    def _input_names(port: OutputPort) -> set[str]:
        return {port.node.name, *port.names}  # irexec also takes a Parameter's layer name

    def is_dynamic(self) -> bool:
        """Whether any layer's output has a dynamic (or unknown) shape, as OpenVINO's."""
        return any(p.partial_shape is None or not p.partial_shape.is_static
                   for n in self.nodes for p in n.outputs)

    def reshape(self, shapes) -> None:
        """New shapes for the inputs, and every tensor's type and shape inferred again (as
        OpenVINO's ``Model.reshape``). ``shapes``: one shape (a list, tuple or PartialShape;
        -1 or None for a dynamic dim) for a model of one input, or a dict keyed by input index,
        name or port. The dims the file declared are dropped (they describe the old shapes).
        IRError, the model unchanged, if the new shapes break an op's rules."""
        if not isinstance(shapes, dict):
            shapes = {None: shapes}
        new = {}
        for key, shape in shapes.items():
            port = self.input(key)
            if isinstance(shape, str):
                raise TypeError("give a shape as a list, a tuple or a PartialShape, not text")
            new[port.node] = shape if isinstance(shape, PartialShape) else PartialShape(shape)
        saved = [(p, p.declared, getattr(p, "element_type", None),
                  getattr(p, "partial_shape", None))
                 for n in self.nodes for p in (*n.inputs, *n.outputs)]
        old_attrs = {param: param.attrs.get("shape") for param in new}
        for param, shape in new.items():
            param.attrs["shape"] = shape
        for node in self.nodes:  # what the file declared no longer holds; a layer whose op
            for port in node.inputs:  # irexec lacks keeps its outputs' (all it is known by)
                port.declared = None
            if node.op is not None:
                for port in node.outputs:
                    port.declared = None
        errors = [d for d in Model.reinfer(self) if d.is_error]
        if errors:
            for port, declared, et, shape in saved:
                port.declared = declared
                if isinstance(port, OutputPort):
                    port.element_type, port.partial_shape = et, shape
            for param, shape in old_attrs.items():
                param.attrs["shape"] = shape
            raise IRError(errors)

    def __repr__(self) -> str:
        return f"<Model {self.name!r}: {len(self.nodes)} layers>"


def _port_by(ports: list[OutputPort], key, what: str, names,
             out_of_range: type[Exception] = IndexError) -> OutputPort:
    """OpenVINO's ``input()``/``output()``: no key for the only one (RuntimeError if there are
    several), an index (``out_of_range`` past the end: OpenVINO's Model raises IndexError, its
    CompiledModel RuntimeError), a name (RuntimeError if none has it), or a port."""
    if key is None:
        if len(ports) != 1:
            raise RuntimeError(f"{what}() without an index or name needs a model with exactly "
                               f"one {what}; this one has {len(ports)}")
        return ports[0]
    if isinstance(key, OutputPort):
        if any(key is p for p in ports):
            return key
        raise RuntimeError(f"{key!r} is not an {what} of this model")
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        if key < 0:  # OpenVINO's indices are unsigned
            raise TypeError(f"an {what} index is 0 or more, not {key}")
        if key >= len(ports):
            raise out_of_range(f"{what} index {key} is out of range: the model has "
                               f"{len(ports)} {what}{'s' * (len(ports) != 1)}")
        return ports[key]
    if isinstance(key, str):
        for port in ports:
            if key in names(port):
                return port
        raise RuntimeError(f"the model has no {what} named {key!r} ({what}s: "
                           f"{', '.join(p.get_any_name() for p in ports) or 'none'})")
    raise TypeError(f"an {what} is chosen by index, name or port, not {type(key).__name__}")
