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
from irexec.ir import layout as layout_helpers
from irexec.ir import rt_info as rt
from irexec.ir.element_type import ElementType
from irexec.ir.rt_info import RtInfo, rt_info_dict  # noqa: F401  (re-exported)
from irexec.ir.shape import PartialShape, Shape

if TYPE_CHECKING:
    from irexec.diagnostics.diagnostic import Diagnostic, Location


class RtInfoAccess:
    """OpenVINO's get/has/set_rt_info on a port's or a layer's ``rt_info`` (a list of
    RtInfo entries; values set here are written as ``<attribute>`` entries)."""

    rt_info: list

    def get_rt_info(self, path=None):
        return rt.get(self.rt_info, path)

    def has_rt_info(self, path) -> bool:
        return rt.has(self.rt_info, path)

    def set_rt_info(self, value, path) -> None:
        rt.put(self.rt_info, value, path, attribute=True)


@dataclass(eq=False)
class InputPort(RtInfoAccess):
    node: Node
    index: int
    port_id: int
    declared: PartialShape | None = None  # the dims the XML wrote, if any
    precision: ElementType | None = None
    rt_info: list[RtInfo] = field(default_factory=list)
    line: int | None = None
    source: OutputPort | None = None  # set when edges are connected
    column: int | None = None

    # OpenVINO's names (its Input).
    def get_node(self) -> Node:
        return self.node

    def get_index(self) -> int:
        return self.index

    def get_source_output(self) -> OutputPort | None:
        return self.source

    def get_element_type(self) -> ElementType | None:
        return None if self.source is None else self.source.element_type

    def get_partial_shape(self) -> PartialShape | None:
        return None if self.source is None else self.source.get_partial_shape()

    def get_shape(self) -> Shape:
        return self.source.get_shape()

    def __repr__(self) -> str:
        return f"<input {self.index} of {self.node.name!r}>"


@dataclass(eq=False)
class OutputPort(RtInfoAccess):
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
        """The port's partial shape: a copy, which the caller may change (as OpenVINO's)."""
        shape = self.partial_shape
        return None if shape is None else PartialShape._of(shape._dims)

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

    def get_shape(self) -> Shape:
        """The static shape, as OpenVINO's ``get_shape()``: RuntimeError if it is dynamic."""
        shape = self.partial_shape
        if shape is None or not shape.is_static:
            raise RuntimeError(f"output {self.index} of {self.node.name!r} has the dynamic "
                               f"shape {shape}; use get_partial_shape()")
        return shape.to_shape()

    @property
    def shape(self) -> Shape:
        return self.get_shape()

    def get_target_inputs(self) -> set[InputPort]:
        return set(self.consumers)

    # The tensor's names as OpenVINO sets them (its descriptor tensor, which ``get_tensor()``
    # gives: the port answers for it). Kept sorted: the first, ``get_any_name``, is the smallest.
    def set_names(self, names) -> None:
        self.names = sorted({str(n) for n in names})

    def add_names(self, names) -> None:
        self.names = sorted({*self.names, *(str(n) for n in names)})

    def get_tensor(self) -> OutputPort:
        return self

    def __repr__(self) -> str:
        return (f"<output {self.index} of {self.node.name!r}: "
                f"{self.element_type} {self.partial_shape}>")


class ModelOutput(str, OutputPort):
    """A model's output as OpenVINO shows it: the output of its Result layer (``get_node()``
    is the Result), carrying the tensor its producer makes (names, element type and shape are
    the producer's, read through). ``Model.outputs`` hands out one per Result, always the same
    object; ``source`` is the producing layer's port.

    It is also the output's name (a ``str``: irexec's output name, the first tensor name or
    the Result's), so that the keys of a compiled model's Results are OpenVINO's ports and
    irexec's names at once: ``list(results) == ["logits"]``, ``dict(results)["logits"]``,
    ``np.savez(f, **results)`` keep working as they did when results were a dict by name.

    NOTE for developers: irexec's Result layers have no output port of their own (the IR gives
    them none); this face is what OpenVINO's API needs, nothing in the run uses it."""

    def __new__(cls, result: Node, name: str):
        return str.__new__(cls, name)

    def __init__(self, result: Node, name: str):
        self.node, self.index, self.port_id = result, 0, 0
        self.line, self.column = result.line, result.column
        self._name = name  # the output's name if the tensor has none

    def __reduce__(self):
        return ModelOutput, (self.node, self._name)

    @property
    def source(self) -> OutputPort | None:
        return self.node.inputs[0].source if self.node.inputs else None

    def _read(self, attr, default=None):
        source = self.source
        return default if source is None else getattr(source, attr)

    names = property(lambda self: self._read("names") or [self._name])
    element_type = property(lambda self: self._read("element_type"))
    partial_shape = property(lambda self: self._read("partial_shape"))
    declared = property(lambda self: self._read("declared"))
    precision = property(lambda self: self._read("precision"))
    consumers = property(lambda self: [])
    rt_info = property(lambda self: self.node.inputs[0].rt_info if self.node.inputs else [])

    def get_any_name(self) -> str:
        return self.names[0]

    def __repr__(self) -> str:
        return (f"<output of {self.node.name!r} ({self.get_any_name()}): "
                f"{self.element_type} {self.partial_shape}>")


class Ports(list):
    """A layer's ports: a list, which may also be called, as OpenVINO's ``node.inputs()`` and
    ``node.outputs()`` are methods where irexec's are lists."""

    __slots__ = ()

    def __call__(self) -> list:
        return list(self)


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

    def clone(self) -> Body:
        import copy

        twin = copy.copy(self)
        twin.model = self.model.clone()
        twin.inputs = [copy.copy(m) for m in self.inputs]
        twin.outputs = [copy.copy(m) for m in self.outputs]
        twin.back_edges = list(self.back_edges)
        return twin


class OutputFacts:
    """OpenVINO's accessors that a layer (its Node) and a model share: the name, and the
    element type and shape of output ``i`` or, where there is exactly one output, of that
    one. The class using it has ``name`` and ``outputs`` (a list of OutputPorts)."""

    name: str
    outputs: list

    def get_name(self) -> str:
        return self.name

    def get_friendly_name(self) -> str:
        return self.name

    def set_friendly_name(self, name: str) -> None:
        self.name = str(name)

    @property
    def friendly_name(self) -> str:
        return self.name

    @friendly_name.setter
    def friendly_name(self, name: str) -> None:
        self.set_friendly_name(name)

    def get_output_size(self) -> int:
        return len(self.outputs)

    def get_output_element_type(self, index: int) -> ElementType | None:
        return self.outputs[index].element_type

    def get_output_partial_shape(self, index: int) -> PartialShape | None:
        return self.outputs[index].get_partial_shape()

    def get_output_shape(self, index: int) -> Shape:
        return self.outputs[index].get_shape()

    # One output answers for the whole (OpenVINO's Node.get_element_type ...).
    def _only_output(self) -> OutputPort:
        outputs = self.outputs
        if len(outputs) != 1:
            raise RuntimeError(f"{self.name!r} has {len(outputs)} outputs; name one "
                               f"(get_output_element_type(i) ...)")
        return outputs[0]

    def get_element_type(self) -> ElementType | None:
        return self._only_output().element_type

    def get_partial_shape(self) -> PartialShape | None:
        return self._only_output().get_partial_shape()

    def get_shape(self) -> Shape:
        return self._only_output().get_shape()

    @property
    def shape(self) -> Shape:
        return self.get_shape()

    @property
    def element_type(self) -> ElementType | None:
        return self.get_element_type()

    @property
    def partial_shape(self) -> PartialShape | None:
        return self.get_partial_shape()


@dataclass(eq=False)
class Node(OutputFacts, RtInfoAccess):
    """One layer of the IR."""

    id: int
    name: str
    type: str  # the registered op type, e.g. "Constant" for the IR's "Const"
    version: str  # as written: "opset1"
    op: Any = None  # the op class that runs the layer (an irexec.ops Op), None if unknown
    attrs: dict[str, Any] = field(default_factory=dict)
    inputs: list[InputPort] = field(default_factory=Ports)
    outputs: list[OutputPort] = field(default_factory=Ports)
    rt_info: list[RtInfo] = field(default_factory=list)
    line: int | None = None
    file: str | None = None
    extra_attrs: dict[str, str] = field(default_factory=dict)  # <data> attributes no spec names
    column: int | None = None
    broken: bool = False  # the reader reported a problem that leaves this layer unusable
    bodies: dict[str, Body] = field(default_factory=dict)  # sub-graphs (Loop, If ...)
    scope: str = ""  # the enclosing layers of a body's layer: "loop/body/"
    # Inference asked for an input's values that were not known before running (a Parameter's
    # axes, sizes ...): its checks of those values must run on each call's (runtime/plan.py).
    values_unknown: bool = False
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

    # OpenVINO's names for a layer's facts (its Node); OutputFacts has the shared ones.
    def get_type_name(self) -> str:
        return self.type

    def output(self, index: int) -> OutputPort:
        return self.outputs[index]

    # A Parameter's declared type and shape (OpenVINO's Parameter.set_partial_shape ...);
    # ``Model.validate_nodes_and_infer_types()`` then infers the model again.
    def set_partial_shape(self, shape) -> None:
        self.attrs["shape"] = shape if isinstance(shape, PartialShape) else PartialShape(shape)

    def set_element_type(self, element_type) -> None:
        from irexec.ir.element_type import lookup

        self.attrs["element_type"] = lookup(element_type)

    def get_input_size(self) -> int:
        return len(self.inputs)

    def input(self, index: int) -> InputPort:
        return self.inputs[index]

    def input_value(self, index: int) -> OutputPort | None:
        """The output port feeding input ``index`` (OpenVINO's ``input_value``)."""
        return self.inputs[index].source

    def get_input_partial_shape(self, index: int) -> PartialShape | None:
        return self.inputs[index].get_partial_shape()

    def get_input_element_type(self, index: int) -> ElementType | None:
        return self.inputs[index].get_element_type()

    def get_input_shape(self, index: int) -> Shape:
        return self.inputs[index].get_shape()

    def get_attributes(self) -> dict[str, Any]:
        """The layer's attributes by their IR names as OpenVINO's ``get_attributes`` gives
        them: plain Python values (element types by name, shapes as lists with -1 for a
        dynamic dim, sequences as lists); a Constant's without its place in the .bin. The
        parsed values are ``node.attrs``."""
        skip = ("offset", "size") if self.op is not None and \
            getattr(self.op.spec, "role", None) == "constant" else ()
        return {k: _plain_attr(v) for k, v in self.attrs.items() if k not in skip}

    # A Constant's payload (OpenVINO's Constant.get_data / get_vector).
    def get_data(self) -> np.ndarray:
        value = self.value
        if value is None:
            raise RuntimeError(f"layer {self.name!r} ({self.type}) holds no data: only a "
                               f"Constant does")
        return value

    def get_vector(self) -> list:
        return self.get_data().reshape(-1).tolist()

    @property
    def data(self) -> np.ndarray:
        return self.get_data()

    # A Parameter's (its output's) or a Result's (its input's) layout, as OpenVINO's.
    def _layout_port(self):
        return self.outputs[0] if self.outputs else self.inputs[0]

    def get_layout(self):
        return layout_helpers.get_layout(self._layout_port())

    def set_layout(self, layout) -> None:
        layout_helpers.set_layout(self._layout_port(), layout)

    @property
    def layout(self):
        return self.get_layout()

    @layout.setter
    def layout(self, layout) -> None:
        self.set_layout(layout)

    def __repr__(self) -> str:
        return f"<layer {self.id} {self.name!r} ({self.type}-{self.version})>"


def _plain_attr(value):
    if isinstance(value, ElementType):
        return value.name
    if isinstance(value, PartialShape):
        if not value.rank_is_static:
            return [-1]  # never a Parameter's in practice: OpenVINO prints "..."
        return [d.min if d.is_static else -1 for d in value]
    if isinstance(value, (list, tuple)):
        return [_plain_attr(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


class Model(OutputFacts):
    """A whole IR model. Build it with ``irexec.read_model`` or ``irexec.builder``."""

    # OpenVINO's form, ``Model(results, parameters, name)``, gathers the layers the results
    # depend on: irexec/opsets/graph.py sets this hook (it makes Result layers, which ir/
    # cannot), as api.py sets ``reinfer``.
    assemble: ClassVar[Callable[..., list[Node]] | None] = None

    def __init__(self, nodes, parameters=None, name: str = "model", *more, sinks=None,
                 ir_version: int = 11, rt_info: list[RtInfo] | None = None,
                 path: str | None = None):
        """``Model(nodes, name=...)``: a model of these layers (the readers' and the builder's
        form). ``Model(results, parameters, name)``: OpenVINO's form, for a graph built with
        ``irexec.opsetN``: results (Result layers, other layers or output ports; one or a list),
        the Parameter layers in input order, optional ``sinks`` (Assign layers; also
        ``Model(results, sinks, parameters, name)``); the model is inferred at once (IRError if
        a layer breaks a rule)."""
        if isinstance(name, (list, tuple)):  # OpenVINO's Model(results, sinks, parameters, name)
            sinks, parameters, name = parameters, name, (more[0] if more else "model")
        built = parameters is not None or sinks is not None
        if built:
            if Model.assemble is None:
                raise RuntimeError("Model(results, parameters) needs irexec imported")
            nodes = Model.assemble(nodes, parameters or [], sinks or [])
        self.nodes = nodes
        self.name = name
        self.ir_version = ir_version
        self.rt_info = rt_info or []
        self.path = path
        self.diagnostics: list[Diagnostic] = []  # warnings found while reading and inferring
        self.weights = None  # the io.weights.Weights the Consts view, kept alive with the model
        # Why the weights could not be read, when the model was read without them on purpose
        # (structure only: ``check_model(..., weights_optional=True)``); None otherwise.
        self.weights_missing: str | None = None
        self.by_id = {n.id: n for n in nodes}
        self._graph = None
        self._order: list[Node] | None = None
        self._kahn_order: list[int] | None = None
        self._output_faces: dict[int, ModelOutput] = {}  # by id of the Result layer
        if built:
            errors = [d for d in Model.reinfer(self) if d.is_error]
            if errors:
                raise IRError(errors)

    def replace_layers(self, nodes: list[Node]) -> None:
        """Make ``nodes`` the model's layers (pre- and post-processing inserts layers); what
        was worked out from the old list is dropped. The caller infers the model again."""
        self.nodes = nodes
        self.by_id = {n.id: n for n in nodes}
        self._graph = None
        self._order = None
        self._kahn_order = None
        self._output_faces = {}

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
    def outputs(self) -> list[ModelOutput]:
        """The model's outputs, one per Result, as OpenVINO's (``get_node()`` is the Result;
        ``.source`` is the port of the layer that makes the tensor)."""
        faces = self._output_faces
        out = []
        for r, name in zip(self.results, self.unique_output_names()):
            face = faces.get(id(r))
            if face is None or face.node is not r or face._name != name:
                face = faces[id(r)] = ModelOutput(r, name)
            out.append(face)
        return out

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

    def unique_output_names(self) -> list[str]:
        """Each Result's output name; a name already taken falls back to the Result's layer
        name, and if that is taken too, to the layer name with a suffix ``_1``, ``_2`` ...
        (outputs are found by name: two Results must never share one)."""
        names: list[str] = []
        for result in self.results:
            name = self.output_name(result)
            if name in names:
                name = result.name
            suffix = 0
            while name in names:
                suffix += 1
                name = f"{result.name}_{suffix}"
            names.append(name)
        return names

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

    def get_ordered_ops(self) -> list[Node]:
        """Every layer, producers before consumers."""
        return list(self.topological_order())

    def get_output_op(self, index: int) -> Node:
        return self.results[index]

    def get_parameter_index(self, parameter: Node) -> int:
        """The position of a Parameter layer among the inputs; -1 if it is not one."""
        return next((i for i, p in enumerate(self.parameters) if p is parameter), -1)

    def get_result_index(self, result) -> int:
        """The position of a Result layer (or of a model output) among the outputs; -1 if
        it is not one."""
        node = result.node if isinstance(result, ModelOutput) else result
        return next((i for i, r in enumerate(self.results) if r is node), -1)

    def get_sinks(self) -> list[Node]:
        """The layers that run though no output needs them (Assign)."""
        return [n for n in self.nodes if n.op is not None and n.op.spec.role == "sink"]

    @property
    def sinks(self) -> list[Node]:
        return self.get_sinks()

    def get_result(self) -> Node:
        results = self.results
        if len(results) != 1:
            raise RuntimeError(f"get_result() needs a model with exactly one Result; this one "
                               f"has {len(results)}")
        return results[0]

    def get_rt_info(self, path=None):
        """The model's ``<rt_info>``: all of it as a dict, or the value at a key or a path of
        keys (``get_rt_info(["runtime_options", "KV_CACHE_PRECISION"]).astype(str)``)."""
        return rt.get(self.rt_info, path)

    def has_rt_info(self, path) -> bool:
        return rt.has(self.rt_info, path)

    def set_rt_info(self, value, path) -> None:
        """``value`` (kept as text, saved with the model) at a key or a path of keys."""
        rt.put(self.rt_info, value, path)

    def clone(self) -> Model:
        """A copy that changes apart from this one (reshape, rt_info, names, layers added);
        constants' payloads and parsed attribute values are shared (never changed in place).
        Walks the layers in a loop: a model of any depth copies."""
        import copy

        port_of: dict[int, OutputPort] = {}
        input_of: dict[int, InputPort] = {}
        nodes = []
        for node in self.nodes:
            twin = copy.copy(node)
            twin.attrs, twin.extra_attrs = dict(node.attrs), dict(node.extra_attrs)
            twin.rt_info = copy.deepcopy(node.rt_info)
            twin.bodies = {name: body.clone() for name, body in node.bodies.items()}
            twin.outputs, twin.inputs = Ports(), Ports()
            for port in node.outputs:
                new = copy.copy(port)
                new.node, new.names = twin, list(port.names)
                new.rt_info = copy.deepcopy(port.rt_info)
                port_of[id(port)] = new
                twin.outputs.append(new)
            for port in node.inputs:
                new = copy.copy(port)
                new.node, new.rt_info = twin, copy.deepcopy(port.rt_info)
                input_of[id(port)] = new
                twin.inputs.append(new)
            nodes.append(twin)
        for node in self.nodes:
            for port in node.outputs:
                port_of[id(port)].consumers = [input_of[id(c)] for c in port.consumers
                                               if id(c) in input_of]
            for port in node.inputs:
                if port.source is not None:
                    input_of[id(port)].source = port_of.get(id(port.source))
        copied = Model(nodes, name=self.name, ir_version=self.ir_version,
                       rt_info=copy.deepcopy(self.rt_info), path=self.path)
        own = set(copied.__dict__)
        for key, value in self.__dict__.items():
            if key not in own:  # anything else a model carries, as it is
                setattr(copied, key, value)
        copied.diagnostics = list(self.diagnostics)
        copied.weights = self.weights
        return copied

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
        OpenVINO's ``Model.reshape``). ``shapes``: one shape (a list, tuple, PartialShape or
        text such as "1,3,224,224" or "?,3,1..8,224"; -1 or None for a dynamic dim) for a
        model of one input, or a dict keyed by input index, name or port. The dims the file declared are dropped (they describe the old shapes).
        IRError, the model unchanged, if the new shapes break an op's rules."""
        if not isinstance(shapes, dict):
            shapes = {None: shapes}
        new = {}
        for key, shape in shapes.items():
            port = self.input(key)
            try:
                new[port.node] = shape if isinstance(shape, PartialShape) else PartialShape(shape)
            except (TypeError, ValueError) as e:
                raise ValueError(f"reshape: {shape!r} is not a shape for input "
                                 f"{port.get_any_name()!r} ({e})") from None
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

    def validate_nodes_and_infer_types(self) -> None:
        """Infer every layer again (after ``set_partial_shape`` on Parameters, say); IRError
        listing every problem."""
        for node in self.nodes:  # what the file declared no longer binds
            for port in node.inputs:
                port.declared = None
            if node.op is not None:
                for port in node.outputs:
                    port.declared = None
        errors = [d for d in Model.reinfer(self) if d.is_error]
        if errors:
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
