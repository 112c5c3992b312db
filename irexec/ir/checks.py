"""The structural checks of a model's graph, whatever file format it came from.

A reader turns its format's edges into ``(from layer, from port, to layer, to port)`` and hands
them to :class:`Wiring`, which connects the ports and reports edges that name what does not exist
(IR201), an input fed twice (IR203) or an edge written twice (IR206), then input ports that no
edge feeds (IR202). :func:`check_graph` then reports cycles (IR204), input names used twice
(IR207) and layers no Result needs (IR205); :func:`check_variables`, once per file, pairs the
layers that read and write the model's state (IR208).

One mistake, one diagnostic: an edge that cannot be connected is reported once, as the cause,
and what it was meant to connect is not reported again: the input port it was meant to feed is
not "unconnected", the layer it was meant to read from is not "unused". A reader reports the
edges it could not even read (or that touch a layer it already reported) and tells the wiring
with :meth:`Wiring.lost`, for the same effect.
"""

from __future__ import annotations

from collections.abc import Callable

from irexec.diagnostics.diagnostic import Diagnostics, Location
from irexec.ir.model import InputPort, Model, Node


class Wiring:
    """Connects one model's edges, one at a time, and remembers what the broken ones meant.

    ``locate(ref)`` gives the location of the edge a reader passed as ``ref`` (an XML element, a
    node index ...); it is called only for an edge that is reported."""

    def __init__(self, nodes: dict[int, Node], diags: Diagnostics,
                 locate: Callable[[object], Location]):
        self.nodes = nodes
        self.diags = diags
        self.locate = locate
        self.unfed: set[tuple[int, int]] = set()  # (layer id, input port id) a lost edge fed
        self.sources: set[int] = set()  # layers a lost edge read from
        # Input ports (layer id, port id; None where unreadable) of lost edges whose source
        # names no layer that exists: see source_unknown.
        self._from_nowhere: set[tuple[int | None, int | None]] = set()
        # Edges naming a layer id no layer has, by that id: reported by finish() unless layers
        # the reader could not read account for them.
        self._dangling: dict[int, list[tuple[str, object]]] = {}
        self._ports_by_id: dict = {}  # see _port

    def lost(self, from_layer: int | None = None, to_layer: int | None = None,
             to_port: int | None = None) -> None:
        """An edge that is already reported, or that goes to or from a layer already reported:
        the ends it names that exist are not reported again for lacking it."""
        if to_layer is not None and to_port is not None:
            self.unfed.add((to_layer, to_port))
        if from_layer is not None and from_layer in self.nodes:
            self.sources.add(from_layer)
        else:
            self._from_nowhere.add((to_layer, to_port))

    @property
    def source_unknown(self) -> bool:
        """Whether an input port was left unfed by an edge from a layer that does not exist (a
        missing or unreadable id): the layer it meant is unknown, so check_graph does not call
        layers unused for want of that edge."""
        for layer, port_id in self._from_nowhere:
            node = self.nodes.get(layer) if layer is not None else None
            if node is None:
                if layer is None:
                    return True
                continue
            port = _port(node.inputs, port_id, self._ports_by_id) if port_id is not None else None
            if port_id is None or (port is not None and port.source is None):
                return True
        return False

    def connect(self, from_layer: int, from_port: int, to_layer: int, to_port: int,
                ref: object = None) -> None:
        src_node, dst_node = self.nodes.get(from_layer), self.nodes.get(to_layer)
        if src_node is not None and dst_node is not None:
            src = _port(src_node.outputs, from_port, self._ports_by_id)
            dst = _port(dst_node.inputs, to_port, self._ports_by_id)
            if src is not None and dst is not None and dst.source is None:
                dst.source = src  # the common case
                src.consumers.append(dst)
                return
        edge = f"edge {from_layer}:{from_port} -> {to_layer}:{to_port}"
        if src_node is None or dst_node is None:
            missing = from_layer if src_node is None else to_layer
            self._dangling.setdefault(missing, []).append((edge, ref))
            self.lost(from_layer, to_layer, to_port)
            return
        if src is None:
            self.diags.add("IR201", f"{edge}: layer '{src_node.name}' has no output port "
                                    f"{from_port}", self.locate(ref))
            self.lost(from_layer, to_layer, to_port)
            return
        if dst is None:
            self.diags.add("IR201", f"{edge}: layer '{dst_node.name}' has no input port "
                                    f"{to_port}", self.locate(ref))
            self.lost(from_layer)
            return
        if dst.source is src:
            self.diags.add("IR206", f"{edge} is written twice", self.locate(ref))
            return
        if dst.source is not None:
            self.diags.add("IR203", f"input port {to_port} of layer '{dst_node.name}' already "
                                    f"has an edge (from layer '{dst.source.node.name}'); an "
                                    f"input takes exactly one", self.locate(ref))
            self.lost(from_layer)

    def finish(self, skip: set[int] = frozenset(), unread_layers: int = 0) -> None:
        """Report the edges to missing layers, then every input port of a layer that nothing
        feeds (IR202). ``skip``: ids of layers already reported whole. ``unread_layers``: layers
        the reader dropped because it could not read their id; edges naming as many missing ids
        or fewer are taken to be theirs (they are reported already, with their layer)."""
        if len(self._dangling) > unread_layers:
            for missing, edges in self._dangling.items():
                for edge, ref in edges:
                    self.diags.add("IR201", f"{edge} names layer id {missing}, which does not "
                                            f"exist", self.locate(ref))
        unfed = self.unfed
        for node in self.nodes.values():
            if node.broken or node.id in skip:
                continue
            for port in node.inputs:
                if port.source is None and (node.id, port.port_id) not in unfed:
                    self.diags.add("IR202", f"input port {port.port_id} has no incoming edge",
                                   port_location(node, port))


def port_location(node: Node, port: InputPort) -> Location:
    """The port's own line and column where the file gave them, else its layer's."""
    if port.line is None:
        return node.location
    return Location(node.file, port.line, node.name, node.type, str(node.id), port.column)


def _port(ports: list, port_id: int, by_id: dict):
    """The port with this id: where OpenVINO's numbering puts it (inputs 0..n-1, outputs
    from n), else wherever it is; None if there is none. ``by_id`` keeps, per port list, a
    dict made the first time the numbering does not hold, so that many edges into a layer with
    many ports cost linear time, not a search per edge."""
    if ports:
        at = port_id - ports[0].port_id
        if 0 <= at < len(ports) and ports[at].port_id == port_id:
            return ports[at]
    found = by_id.get(id(ports))
    if found is None:
        found = by_id[id(ports)] = ({}, ports)  # keeps the list alive, so its id stays its own
        for p in ports:
            found[0].setdefault(p.port_id, p)
    return found[0].get(port_id)


def check_graph(model: Model, diags: Diagnostics, also_needed: set[int] = frozenset(),
                source_unknown: bool = False) -> None:
    """Cycles (IR204, naming the layers on each), input names two Parameters share (IR207),
    and layers that no Result (nor sink) needs (IR205, a warning). ``also_needed``: layers that
    count as needed anyway (a broken edge was meant to take their output somewhere).
    ``source_unknown``: a broken edge came from a layer that does not exist; the layer it meant
    is likely one whose outputs now go nowhere, so those (and what they read) count as needed:
    the broken edge is the one problem to report."""
    for cycle in model.cycles():
        names = [model.by_id[i].name for i in cycle]
        first = model.by_id[cycle[0]]
        diags.add("IR204", "the layers form a cycle: " + " -> ".join(
            f"'{n}'" for n in names + names[:1]), first.location)
    owner: dict[str, Node] = {}
    for param in model.parameters:
        names = {param.name, *(n for p in param.outputs for n in p.names)}
        for name in sorted(names):
            first = owner.setdefault(name, param)
            if first is not param:
                diags.add("IR207", f"input name '{name}' already names Parameter "
                                   f"'{first.name}' (line {first.line}); inputs given by this "
                                   f"name could not reach both", param.location)
    # An op whose role is "sink" (Assign writes a variable) is needed though no Result reads it.
    sinks = {n.id for n in model.nodes if n.op is not None and n.op.spec.role == "sink"}
    if source_unknown:
        sinks |= {n.id for n in model.nodes
                  if n.outputs and not any(p.consumers for p in n.outputs)}
    needed = model.needed_nodes(set(also_needed) | sinks)
    for node in model.nodes:
        if node.id not in needed and not node.broken:  # a broken layer lost its edges
            diags.add("IR205", "no Result depends on this layer; it is not executed",
                      node.location)


def _all_nodes(model: Model):
    for node in model.nodes:
        yield node
        for body in node.bodies.values():
            yield from _all_nodes(body.model)


def check_variables(model: Model, diags: Diagnostics) -> None:
    """Every variable of the model's state (bodies included) is declared by a layer that reads
    it (ReadValue) and written by one that writes it (Assign), paired by ``variable_id``;
    OpenVINO refuses an Assign whose variable no ReadValue declares, and a variable that nothing
    writes is a mistake (IR208, once per unpaired layer)."""
    by_role: dict[str, dict[str, Node]] = {"reads": {}, "writes": {}}
    layers: list[tuple[Node, str, str]] = []
    for node in _all_nodes(model):
        role = getattr(node.op.spec, "variable", None) if node.op is not None else None
        variable = node.attrs.get("variable_id")
        if role in by_role and isinstance(variable, str):
            by_role[role].setdefault(variable, node)
            layers.append((node, role, variable))
    for node, role, variable in layers:
        other = "writes" if role == "reads" else "reads"
        if variable in by_role[other]:
            continue
        if role == "reads":
            message = (f"no layer writes the variable '{variable}' this layer reads (an Assign "
                       f"with variable_id=\"{variable}\")")
        else:
            message = (f"no layer declares the variable '{variable}' this layer writes (a "
                       f"ReadValue with variable_id=\"{variable}\"); OpenVINO refuses the model")
        diags.add("IR208", message, node.location)
