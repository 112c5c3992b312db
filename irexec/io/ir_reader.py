"""Read an OpenVINO IR (.xml + .bin, version 10 or 11) into an ``ir.Model``.

The reader collects every problem it can find in one pass and raises them together; each carries
the file, the XML line and the layer. It checks layers and ports, parses attributes by the kinds
the op specs declare, and hands the edges to :mod:`irexec.ir.checks`, which connects them and
checks the graph (dangling edges, unfed inputs, cycles, unused layers). Shape and type inference
runs afterwards (:mod:`irexec.infer`).

NOTE for developers: lxml is used with a hardened parser: no DTDs, no entity expansion, no network.
Only layers' ``<data>``, ports and ``<rt_info>`` are interpreted; unknown ``<data>`` attributes are
kept as strings in ``Node.extra_attrs`` so that writing the model back loses nothing.
"""

from __future__ import annotations

import os
import re

from lxml import etree

from irexec import budget, gc_pause
from irexec.diagnostics import codes
from irexec.diagnostics.diagnostic import Diagnostic, Diagnostics, Location
from irexec.errors import IRError, raise_if_errors
from irexec.io import files, limits
from irexec.io.columns import Columns
from irexec.io.weights import Weights, WeightsError
from irexec.ir import text as ir_text
from irexec.ir.checks import Wiring, check_graph, check_variables
from irexec.ir.element_type import ElementType
from irexec.ir.model import Body, InputPort, Model, Node, OutputPort, PortMapping, RtInfo
from irexec.ir.shape import PartialShape
from irexec import availability
from irexec.ops import registry

SUPPORTED_VERSIONS = (10, 11)
MAX_XML_BYTES = 1 << 30
MAX_REPEATED = 5  # diagnostics of one kind on one element given one by one; the rest summarised
MAX_PER_LAYER = 10  # the same for any code on one layer (or outside layers, in one file)


def _parser() -> etree.XMLParser:
    # Whitespace between elements is dropped: nothing reads it, and it is half of the nodes
    # of an indented file (a third of the parse time). Not collect_ids=False: with it, libxml2
    # opens a DOCTYPE's external subset (tests/data/hostile/external_dtd.xml).
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                           dtd_validation=False, huge_tree=False, remove_comments=True,
                           remove_pis=True, remove_blank_text=True)


def _children(parent, tag: str):
    return list(parent.iterchildren(tag))  # lxml's own filter: elements with exactly this tag


def _child(parent, tag: str):
    return next(parent.iterchildren(tag), None)


_ATTRIBUTE_VALUES = etree.XPath("@*", smart_strings=False)
FEW_ATTRIBUTES = 32


def attributes(element) -> dict[str, str]:
    """An element's attributes as a dict, in time linear in their number. lxml's ``attrib``,
    ``items()`` and ``values()`` look each value up again by name, one linear search per
    attribute: 100,000 attributes on one element took minutes. XPath hands them over in one
    walk (in the order of ``keys()``), but costs more per call, so it serves the elements with
    many."""
    names = element.keys()
    if len(names) <= FEW_ATTRIBUTES:
        return dict(element.items())
    return dict(zip(names, _ATTRIBUTE_VALUES(element)))


def read_rt_info(element) -> list[RtInfo]:
    if element is None:
        return []
    return [RtInfo(c.tag, attributes(c), read_rt_info(c))
            for c in element if isinstance(c.tag, str)]


class _Summarising(Diagnostics):
    """The reader's diagnostics. Past ``MAX_PER_LAYER`` of one code on one layer (20,000 ports
    with a bad id), or of one code outside any layer (20,000 broken edges), the rest are counted
    and said in one line when reading ends (``finish``), quoting the first of them: the output
    stays proportional to the kinds of problem, not to the file's size."""

    def __init__(self):
        super().__init__()
        self._counts: dict = {}
        self._held: dict = {}  # key -> [count, the first diagnostic held back]
        self._open = True

    def add(self, code: str, message: str, location: Location | None = None) -> Diagnostic:
        location = location or Location()
        key = (code, location.layer_name, location.layer_id)
        count = self._counts[key] = self._counts.get(key, 0) + 1
        if count <= MAX_PER_LAYER or not self._open:
            return super().add(code, message, location)
        codes.get(code)  # an unknown code is our bug, as in Diagnostics.add
        diag = Diagnostic(code, message, location)
        self._held.setdefault(key, [0, diag])[0] += 1
        return diag

    def finish(self) -> None:
        """Say what was held back, one line per code and layer; later additions go through."""
        self._open = False
        for (code, layer, _), (count, first) in self._held.items():
            where = "on this layer" if layer is not None else "in this file"
            super().add(code, f"{count} more problems of this kind {where} (the first at line "
                              f"{first.location.line}: {first.message})", first.location)
        self._held.clear()


class _Reader:
    def __init__(self, xml_path: str, bin_path: str | None, weights_optional: bool = False):
        self.path = xml_path
        # Without a weights file, the Consts are read for their type and shape only, their
        # values unknown (``irexec info`` shows a model's structure so): the reason is kept in
        # ``weights_missing`` instead of an error.
        self.weights_optional = weights_optional
        self.weights_missing: str | None = None
        self.diags = _Summarising()
        self.budget = budget.current()  # bytes one tensor may take (irexec/budget.py)
        self.weights = Weights(bin_path, limit=self.budget)
        # Layers already reported as broken (bad header or ports): edges touching them would only
        # repeat the problem, so they are not reported again.
        self.broken: set[str] = set()
        self.unread_layers = 0  # layers dropped because their id could not be read
        self._over_budget: list = []  # the current layer's ports too large for the budget
        self._attr_over_budget = False  # whether its attributes were reported so
        # Every tensor over the budget, (message, location, layer name): said in one line.
        self.over_budget: list = []
        self._weights_reported = False  # a weights file unusable for every Const: said once
        self.beyond_end: list = []  # (message, location, layer, end) of Consts past the .bin
        self.not_implemented: list[Node] = []  # layers of OpenVINO ops irexec cannot run
        self._columns = Columns(b"")
        self._too_deep: list = []  # the current layer's ports with too many dims
        self._ops: dict[tuple[str, str], object] = {}  # (type, version) -> op or LookupFailure
        self._values: dict = {}  # (id of the Attr, text) -> its parsed value, when immutable
        self._dims: dict = {}  # the text of a <dim> -> its Dimension
        # Per file, each distinct text is parsed once: integers (ids), the texts of a port's
        # <dim>s -> its shape, precisions; and (dim texts or Const shape, itemsize) known to be
        # within the memory budget.
        self._uints: dict = {}
        self._shapes: dict = {}
        self._precisions: dict = {}
        self._fits: set = set()
        self.scope = ""  # the path of the enclosing layers while reading a body ("loop/body/")

    def loc(self, element=None, node: Node | None = None, layer=None) -> Location:
        line, column = self.position(element) if element is not None else (None, None)
        if node is not None:
            if line is None:
                line, column = node.line, node.column
            return Location(self.path, line, node.scope + node.name, node.type, str(node.id),
                            column)
        if layer is not None:
            name = layer.get("name")
            return Location(self.path, line, self.scope + name if name is not None else None,
                            layer.get("type"), layer.get("id"), column)
        return Location(self.path, line, column=column)

    def index_columns(self, root, data: bytes) -> None:
        """Columns are found on demand (irexec/io/columns.py): nothing is computed until a
        column is asked for."""
        encoding = root.getroottree().docinfo.encoding if root is not None else None
        self._columns = Columns(data, limits.ascii_compatible(data, encoding))

    def column(self, element) -> int | None:
        return self._columns.of(element)

    def line(self, element) -> int | None:
        """The element's line (lxml's, made exact past line 65,535: irexec/io/columns.py)."""
        return self._columns.line(element)

    def position(self, element) -> tuple[int | None, int | None]:
        """The element's line and column (both at once: a little faster than each)."""
        return self._columns.position(element)

    # --- the file ---------------------------------------------------------------------------

    def parse_xml(self):
        try:
            with files.open_file(self.path) as f:
                size = os.fstat(f.fileno()).st_size
                if size > MAX_XML_BYTES:
                    raise IRError.make("IR001", f"the XML file is larger than {MAX_XML_BYTES} "
                                                f"bytes, the most irexec reads",
                                       Location(self.path))
                limits.check_xml_size(self.path, size, self.budget)
                data = files.read_at_most(f, MAX_XML_BYTES)
        except OSError as e:
            raise IRError.make("IR001", f"cannot read the model: {e.strerror or e}",
                               Location(self.path)) from None
        if len(data) > MAX_XML_BYTES:  # it grew since
            raise IRError.make("IR001", f"the XML file is larger than {MAX_XML_BYTES} bytes, "
                                        f"the most irexec reads", Location(self.path))
        limits.check_xml_memory(self.path, data, self.budget)
        try:
            root = etree.fromstring(data, _parser())
        except MemoryError:
            raise limits.out_of_memory(self.path, data) from None
        except etree.XMLSyntaxError as e:
            if getattr(e, "code", None) == etree.ErrorTypes.ERR_NO_MEMORY:
                raise limits.out_of_memory(self.path, data) from None
            line = e.lineno if e.lineno else None
            msg = e.msg if hasattr(e, "msg") and e.msg else str(e)
            msg = re.sub(r",? line \d+, column \d+$", "", msg)  # the location is in front
            for advice in (", use XML_PARSE_HUGE option", ", try XML_PARSE_HUGE"):
                msg = msg.replace(advice, "")  # libxml2's advice, not ours
            msg = " ".join(msg.split())  # one line, whatever libxml2 wrote
            column = e.position[1] if getattr(e, "position", None) and line else None
            code = limits.syntax_error_code(msg, data)
            if code == "IR005":
                raise limits.doctype_error(self.path, data) from None
            what = "XML beyond irexec's limits" if code == "IR006" else "malformed XML"
            raise IRError.make(code, f"{what}: {msg}",
                               Location(self.path, line, column=column)) from None
        if root is not None:
            limits.check_tree(root, data, self.path)
            self.index_columns(root, data)
        if root is None or not isinstance(root.tag, str) or root.tag.lower() != "net":
            tag = root.tag if root is not None else "nothing"
            raise IRError.make("IR003", f"the root element is <{tag}>, not <net>: this is not an "
                                        f"OpenVINO IR file",
                               self.loc(root) if root is not None else Location(self.path, 1))
        text = root.get("version")
        try:
            version = ir_text.parse_int(text) if text is not None else None
        except ValueError:
            version = None
        if version not in SUPPORTED_VERSIONS:
            shown = "missing" if text is None else f"'{text}'"
            raise IRError.make("IR004", f"IR version {shown} is not supported; irexec reads "
                                        f"versions {', '.join(map(str, SUPPORTED_VERSIONS))}",
                               self.loc(root))
        return root, version

    # --- layers and ports -------------------------------------------------------------------

    def read_layer(self, layer) -> Node | None:
        get = layer.get
        text_id, name, type_name, version = get("id"), get("name"), get("type"), get("version")
        if (name is not None and type_name is not None and version is not None
                and text_id is not None and text_id.isdigit() and text_id.isascii()
                and len(text_id) <= 19):
            layer_id = self._uints[text_id] = int(text_id)  # the edges will look it up
        else:
            layer_id = self.read_layer_header(layer)
            if layer_id is None:
                return None
        op = self._ops.get((type_name, version))
        if op is None:
            try:
                op = registry.lookup(type_name, version)
            except registry.LookupFailure as e:
                op = e
            self._ops[type_name, version] = op
        not_implemented = False
        if isinstance(op, registry.LookupFailure):
            # OpenVINO's op that irexec lacks: read, checked and drawn, not run (one IR113 for
            # the model). A type or version no opset has: an error naming what OpenVINO has.
            not_implemented = availability.is_openvino_op(type_name, version)
            if not not_implemented:
                self.diags.add("IR103", availability.explain(type_name, version, op),
                               self.loc(layer, layer=layer))
            op = None
        line, column = self.position(layer)
        node = Node(id=layer_id, name=name, type=op.spec.type if op else type_name,
                    version=version, op=op, line=line, file=self.path,
                    column=column, scope=self.scope)
        if not_implemented:
            self.not_implemented.append(node)
        first = {}  # the first child element of each tag (one pass over the children)
        for child in layer:
            first.setdefault(child.tag, child)
        rt_info = first.get("rt_info")
        if rt_info is not None:
            node.rt_info = read_rt_info(rt_info)
        over_budget = self._over_budget = []
        too_deep = self._too_deep = []  # its ports with more dims than numpy holds
        self._attr_over_budget = False
        self.read_ports(node, layer, first)
        if op is not None:
            self.read_attrs(node, layer, first.get("data"))
        elif first.get("data") is not None:  # no spec to parse them by: kept as written
            node.extra_attrs = attributes(first["data"])
        if too_deep and not self._attr_over_budget:  # as below: the attribute is the cause
            for message, location in too_deep:
                self.diags.add("IR114", message, location)
        if over_budget and not self._attr_over_budget:
            # A port declares a tensor too large, and no attribute of the layer (a Const's
            # shape, the cause when there is one) was reported for it: report the port.
            node.broken = True
            for message, location in over_budget:
                self.over_budget.append((message, location, node.name))
        if op is not None and op.spec.bodies:
            self.read_bodies(node, layer, first)
        return node

    # --- sub-graphs (TensorIterator, Loop, If) -------------------------------------------------

    def read_bodies(self, node: Node, layer, first: dict) -> None:
        """Each body the op declares, read as a model of its own (with the same weights), with
        its port map and back edges. Problems inside carry the body's lines and the path of the
        enclosing layers."""
        for name in node.op.spec.bodies:
            element = first.get(name)
            if element is None:
                self.diags.add("IR110", f"the layer has no <{name}>; {node.type} needs one",
                               self.loc(layer, node))
                node.broken = True
                continue
            outer = self.scope
            self.scope = f"{outer}{node.name}/{name}/"
            try:
                model = self.read_graph(element, name)
            finally:
                self.scope = outer
            tag = "port_map" if first.get("port_map") is not None or len(node.op.spec.bodies) == 1 \
                else f"{name.split('_')[0]}_port_map"
            body = Body(name, model, line=self.line(element), port_map_tag=tag)
            self.read_port_map(node, body, first.get(tag), layer)
            back = first.get("back_edges")
            if back is not None and len(node.op.spec.bodies) == 1:
                self.read_back_edges(node, body, back)
            if not node.broken:
                self.check_parameters_fed(node, body, element)
            node.bodies[name] = body

    def check_parameters_fed(self, node: Node, body: Body, element) -> None:
        """Each body Parameter takes its first value from one port map input (a back edge
        feeds only the iterations after the first): one fed by none has no value to start
        from, one fed by two has two."""
        fed: dict[int, int] = {}
        for m in body.inputs:
            fed[m.internal] = fed.get(m.internal, 0) + 1
        problems = []
        for param in body.model.by_id.values():
            if param.role != "parameter":
                continue
            count = fed.get(param.id, 0)
            if count != 1:
                problems.append((f"{body.name} Parameter '{param.name}' (id {param.id}) is fed "
                                 f"by {count} port map inputs; it takes its value from exactly "
                                 f"one", element))
        self.report_repeated("IR110", problems, node, f"Parameters of <{body.name}>")

    def read_back_edges(self, node: Node, body: Body, element) -> None:
        problems = []
        fed: dict[int, int] = {}  # Parameter id -> the Result whose back edge feeds it
        current = {m.internal for m in body.inputs if m.purpose == "current_iteration"}
        for edge in _children(element, "edge"):
            try:
                pair = (self.uint(edge.get("from-layer", "")),
                        self.uint(edge.get("to-layer", "")))
            except ValueError:
                problems.append(("a back <edge> needs integer from-layer and to-layer "
                                 "attributes", edge))
                continue
            problem = _back_edge_problem(body.model, pair)
            if problem is None and pair[1] in current:
                problem = (f"back edge {pair[0]} -> {pair[1]}: Parameter {pair[1]} is the "
                           f"current iteration's number, which no back edge feeds")
            if problem is None and pair[1] in fed:
                if fed[pair[1]] == pair[0]:
                    continue  # the same edge twice says nothing new
                problem = (f"back edge {pair[0]} -> {pair[1]}: Parameter {pair[1]} is fed by "
                           f"the back edge from {fed[pair[1]]} already")
            if problem:
                problems.append((problem, edge))
                continue
            fed[pair[1]] = pair[0]
            body.back_edges.append(pair)
        self.report_repeated("IR111", problems, node, "back edges")

    def read_port_map(self, node: Node, body: Body, element, layer) -> None:
        if element is None:
            return
        inputs = {p.port_id for p in node.inputs}
        outputs = {p.port_id for p in node.outputs}
        problems = []
        for entry in element:
            if not isinstance(entry.tag, str) or entry.tag not in ("input", "output"):
                continue
            get = entry.get
            try:
                mapping = PortMapping(
                    external=ir_text.parse_int(get("external_port_id", "")),
                    internal=self.uint(get("internal_layer_id", "")),
                    axis=ir_text.parse_int(get("axis")) if get("axis") is not None else None,
                    **{k: ir_text.parse_int(get(k)) for k in ("start", "end", "stride",
                                                              "part_size")
                       if get(k) is not None},
                    purpose=get("purpose"), line=self.line(entry))
            except ValueError as e:
                problems.append((f"<{entry.tag}> of <{element.tag}>: {e}", entry))
                continue
            is_input = entry.tag == "input"
            wanted = "parameter" if is_input else "result"
            target = body.model.by_id.get(mapping.internal)
            ports = inputs if is_input else outputs
            if target is None or target.role != wanted:
                what = "no layer" if target is None else f"layer '{target.name}' ({target.type})"
                problem = (f"{body.name} has {what} with id {mapping.internal}; a port map "
                           f"{entry.tag} names a {wanted.capitalize()} of the body")
            elif mapping.external != -1 and mapping.external not in ports:
                problem = (f"the layer has no {entry.tag} port {mapping.external} for "
                           f"{wanted} '{target.name}'")
            elif mapping.external == -1 and mapping.purpose not in (
                    "current_iteration" if is_input else "execution_condition",):
                problem = (f"external_port_id -1 is only for Loop's special ports (purpose "
                           f"current_iteration or execution_condition)")
            elif mapping.axis is not None and mapping.stride == 0:
                problem = "a sliced port's stride must not be 0"
            elif mapping.axis is not None and mapping.part_size < 1:
                problem = f"a sliced port's part_size must be at least 1, not {mapping.part_size}"
            else:
                problem = None
            if problem:
                problems.append((problem, entry))
                continue
            (body.inputs if is_input else body.outputs).append(mapping)
        self.report_repeated("IR110", problems, node, f"entries of <{element.tag}>")

    def report_repeated(self, code: str, problems: list, node: Node, what: str) -> None:
        """Problems of one kind in one element's children: the first ``MAX_REPEATED`` one by
        one, the rest counted in one more line (a port map may hold 100,000 entries)."""
        if not problems:
            return
        node.broken = True
        for message, element in problems[:MAX_REPEATED]:
            self.diags.add(code, message, self.loc(element, node))
        rest = problems[MAX_REPEATED:]
        if rest:
            self.diags.add(code, f"{len(rest)} more {what} have problems like these (the first "
                                 f"at line {self.line(rest[0][1])})",
                           self.loc(rest[0][1], node))

    def read_layer_header(self, layer) -> int | None:
        """The id of a layer whose header is not the plain case (a missing attribute, an id
        that is not plain ASCII digits), or None after reporting why it cannot be read."""
        missing = [a for a in ("id", "name", "type", "version") if layer.get(a) is None]
        if missing or not ir_text.is_uint(layer.get("id", "")):
            self.broken.add(str(layer.get("id", "")).strip(ir_text.SPACE))
        if missing:
            self.diags.add("IR101", f"<layer> lacks the mandatory attribute"
                                    f"{'s' * (len(missing) > 1)} {', '.join(missing)}",
                           self.loc(layer, layer=layer))
            self.unread_layers += "id" in missing or not ir_text.is_uint(layer.get("id"))
            return None
        try:
            return self.uint(layer.get("id"))
        except ValueError:
            self.diags.add("IR101", f"layer id '{layer.get('id')}' is not a non-negative integer",
                           self.loc(layer, layer=layer))
            self.unread_layers += 1
            return None

    def uint(self, text: str) -> int:
        """``ir_text.parse_uint``, each distinct text parsed once per file."""
        value = self._uints.get(text)
        if value is None:
            value = self._uints[text] = ir_text.parse_uint(text)
        return value

    def read_ports(self, node: Node, layer, first=None) -> None:
        uints = self._uints
        for section, is_input in (("input", True), ("output", False)):
            block = _child(layer, section) if first is None else first.get(section)
            if block is None:
                continue
            seen = set()
            for port in block:
                if port.tag != "port":
                    continue
                get = port.get
                port_id = uints.get(get("id"))
                if port_id is None:
                    try:
                        port_id = self.uint(get("id", ""))
                    except ValueError:
                        self.diags.add("IR104", f"{section} <port> id '{get('id')}' is not a "
                                                f"non-negative integer", self.loc(port, node))
                        self.broken.add(str(node.id))
                        node.broken = True
                        continue
                if port_id in seen:
                    self.diags.add("IR104", f"{section} port id {port_id} appears twice",
                                   self.loc(port, node))
                    self.broken.add(str(node.id))
                    node.broken = True
                    continue
                seen.add(port_id)
                dim_elements = []
                port_rt_info = None
                for child in port:
                    tag = child.tag
                    if tag == "dim":
                        dim_elements.append(child)
                    elif tag == "rt_info" and port_rt_info is None:
                        port_rt_info = child
                texts = tuple([d.text for d in dim_elements])
                declared = self._shapes.get(texts)
                if declared is None:
                    declared = self.read_dims(texts, dim_elements, section, port_id, node)
                text = get("precision")
                precision = self._precisions.get(text) if text is not None else None
                if precision is None and text is not None:
                    try:
                        precision = self._precisions[text] = ir_text.parse_precision(text)
                    except ValueError as e:
                        if not is_input:  # OpenVINO ignores input precisions altogether
                            self.diags.add("IR106", f"output port {port_id}: {e}",
                                           self.loc(port, node))
                if declared is not None:
                    # An input port's tensor is its source's output, costed there: here only
                    # its dims are checked (no bytes: the int64 overflow check alone).
                    itemsize = None if is_input else (
                        precision.dtype.itemsize if precision and precision.dtype else 1)
                    if (texts, itemsize) not in self._fits and declared.is_static:
                        problem = budget.shape_problem(declared.to_shape(), itemsize,
                                                       self.budget, precision)
                        if problem is None:
                            self._fits.add((texts, itemsize))
                        else:  # reported after the attributes, unless they report it first
                            self._over_budget.append((f"{section} port {port_id}: {problem}",
                                                      self.loc(port, node)))
                rt_info = read_rt_info(port_rt_info) if port_rt_info is not None else []
                line, column = self.position(port)
                if is_input:
                    node.inputs.append(InputPort(node, len(node.inputs), port_id, declared,
                                                 precision, rt_info, line=line,
                                                 column=column))
                else:
                    names = get("names")
                    names = ir_text.split_names(names) if names else []
                    node.outputs.append(OutputPort(node, len(node.outputs), port_id, declared,
                                                   precision, names, rt_info, line=line,
                                                   column=column))
        self.check_port_order(node, layer)

    def read_dims(self, texts: tuple, elements: list, section: str, port_id: int,
                  node: Node) -> PartialShape | None:
        """The shape the ``<dim>`` elements of a port declare (kept for the next port with the
        same texts), or None after reporting each one that is not a dimension, or too many."""
        if len(elements) > budget.MAX_RANK:  # said after the attributes, unless one said it
            self._too_deep.append((f"{section} port {port_id} has {len(elements)} <dim>s; numpy, "
                                   f"which irexec computes with, holds at most {budget.MAX_RANK}",
                                   self.loc(elements[budget.MAX_RANK], node)))
            node.broken = True
            return None
        dims = []
        for dim in elements:
            known = self._dims.get(dim.text)
            if known is not None:  # a text already read in this file
                dims.append(known)
                continue
            try:
                dims.append(ir_text.parse_dim_element(dim.text))
                self._dims[dim.text] = dims[-1]
            except ValueError as e:
                if (dim.text or "").strip(ir_text.SPACE) == "?":
                    self.diags.add("IR107", f"{section} port {port_id}: <dim> holds '?'; "
                                            f"a dynamic size is written -1 in a <dim>",
                                   self.loc(dim, node))
                else:
                    self.diags.add("IR105", f"{section} port {port_id}: {e}",
                                   self.loc(dim, node))
                dims.append(None)
        if None in dims:
            return None
        declared = self._shapes[texts] = PartialShape._of(tuple(dims))
        return declared

    def check_port_order(self, node: Node, layer) -> None:
        ids = [p.port_id for p in node.inputs] + [p.port_id for p in node.outputs]
        if not node.broken and ids != list(range(len(ids))):
            inputs = ",".join(str(p.port_id) for p in node.inputs) or "none"
            outputs = ",".join(str(p.port_id) for p in node.outputs) or "none"
            self.diags.add("IR108", f"port ids are {inputs} (inputs) and {outputs} (outputs); "
                                    f"they are matched by order, but OpenVINO's writer numbers "
                                    f"inputs 0..n-1 and outputs from n", self.loc(layer, node))

    def read_attrs(self, node: Node, layer, data=False) -> None:
        if data is False:
            data = _child(layer, "data")
        raw = attributes(data) if data is not None else {}
        ignored = {}
        for attr in node.op.spec.attrs:
            if attr.on_layer:
                # OpenVINO reads such an attribute (Result's output_names) from the <layer>
                # element, where its serializer writes it, and ignores one inside <data> (kept
                # here as an unknown attribute).
                if attr.name in raw:
                    ignored[attr.name] = raw.pop(attr.name)
                if layer.get(attr.name) is not None:
                    raw[attr.name] = layer.get(attr.name)
        located = []

        def where():  # the location, worked out once and only for a diagnostic
            if not located:
                located.append(self.loc(data if data is not None else layer, node))
            return located[0]

        for attr in node.op.spec.attrs:
            if attr.name not in raw:
                if attr.required:
                    self.diags.add("IR301", f"attribute '{attr.name}' is required", where())
                    node.broken = True
                    continue
                node.attrs[attr.name] = attr.default
                if attr.kind == "element_type" and getattr(attr.default, "is_dynamic", False):
                    # A Parameter's element_type: left out, it reads as dynamic, which OpenVINO
                    # reads but its CPU plugin cannot compile.
                    self.diags.add("IR112", f"attribute '{attr.name}' is absent, so the element "
                                            f"type is dynamic: OpenVINO reads the file, but its "
                                            f"CPU plugin cannot compile it", where())
                continue
            text = raw.pop(attr.name)
            value = self._values.get((id(attr), text), self._values)
            if value is self._values:  # not parsed yet in this file
                try:
                    value = attr.parse(text)
                except ValueError as e:
                    self.diags.add("IR302", f"attribute '{attr.name}': {e}", where())
                    node.broken = True
                    continue
                if isinstance(value, _IMMUTABLE):
                    self._values[id(attr), text] = value
            node.attrs[attr.name] = value
            if attr.kind == "partial_shape" and not self.check_shape_attr(
                    attr.name, value, data if data is not None else layer, node):
                del node.attrs[attr.name]
                continue
            if attr.kind == "element_type" and not value.in_ir and not (
                    value.is_dynamic and attr.dynamic_ok):
                what = ("is not an OpenVINO element type (irexec holds it for ONNX models only)"
                        if not value.is_openvino else "is not supported in IR files yet"
                        if value.is_supported else "is not supported yet")
                self.diags.add("IR505", f"attribute '{attr.name}': element type {value} {what} "
                                        f"(supported: "
                                        f"{', '.join(e.name for e in _supported())})", where())
                del node.attrs[attr.name]
                node.broken = True
        if raw:
            self.report_unknown(node, list(raw), where)
        for name in ignored:
            self.diags.add("IR310", f"attribute '{name}' belongs on the <layer> element, not in "
                                    f"<data>; it is ignored", where())
        node.extra_attrs = {**raw, **ignored}
        if node.op.spec.role == "constant" and all(a.name in node.attrs
                                                   for a in node.op.spec.attrs):
            a = node.attrs
            et, shape, offset, size = a["element_type"], a["shape"], a["offset"], a["size"]
            itemsize = et.dtype.itemsize if et.dtype else 1
            if (shape, itemsize) not in self._fits:
                if not self.check_budget(shape, itemsize, "the constant",
                                         data if data is not None else layer, node, et):
                    return
                self._fits.add((shape, itemsize))
            try:
                if et.kind == "string":  # its table is checked now
                    node.value = self.weights.tensor(et, shape, offset, size)
                else:  # read when a layer first needs it (irexec/io/weights.py)
                    self.weights.check(et, shape, offset, size)
                    node.load_value_later(self.weights.later(et, shape, offset, size,
                                                             where()))
            except WeightsError as e:
                if self.weights_optional and e.code == "IR501" and e is self.weights.failure:
                    self.weights_missing = self.weights_missing or str(e)
                    return
                node.broken = True
                if e.code == "IR502":  # several beyond the end: the wrong file, said once
                    self.beyond_end.append((str(e), where(), node.name, offset + size))
                elif e is not self.weights.failure or not self._weights_reported:
                    self.diags.add(e.code, str(e), where())  # a file unusable for all: once
                    self._weights_reported = e is self.weights.failure
                return
            count = 1
            for d in shape:
                count *= d
            needed = self.weights.used_size(et, offset, count, size)
            if a["size"] > needed:
                self.diags.add("IR504", f"size {a['size']} is larger than the {needed} bytes "
                                        f"shape {list(a['shape'])} of {a['element_type']} needs",
                               where())

    def check_shape_attr(self, name: str, shape: PartialShape, element, node: Node) -> bool:
        """A shape attribute numpy could not make a tensor of (a Parameter's ``shape``: the
        inputs are made from it): more dims than it holds (IR114), or dims -- those other than
        0 too -- past a 64-bit count (IR109). Its size against the budget is its port's
        business (the port knows the element type); a Const's shape is checked with its
        payload."""
        if not shape.rank_is_static:
            return True
        dims = tuple(d.min if d.is_static else 1 for d in shape)
        return self.check_budget(dims, None, f"attribute '{name}'", element, node)

    def report_unknown(self, node: Node, names: list[str], where) -> None:
        """IR310 for each unknown attribute of one element, the first ``MAX_REPEATED`` one by
        one and the rest in one summary (an element may carry 100,000 of them)."""
        op = f"{node.type}-{node.op.spec.since}"
        known = ", ".join(a.name for a in node.op.spec.attrs)
        for name in names[:MAX_REPEATED]:
            self.diags.add("IR310", f"attribute '{ir_text.short(name)}' is not one {op} takes; "
                                    f"it is ignored (known: {known})", where())
        rest = names[MAX_REPEATED:]
        if rest:
            shown = ", ".join(f"'{ir_text.short(n)}'" for n in rest[:MAX_REPEATED])
            more = ", ..." if len(rest) > MAX_REPEATED else ""
            self.diags.add("IR310", f"{len(rest)} more attributes {op} does not take are "
                                    f"ignored: {shown}{more}", where())

    def check_budget(self, shape, itemsize: int, what: str, element, node: Node,
                     element_type=None) -> bool:
        """The layer marked broken if a tensor an attribute declares would exceed the memory
        budget or overflow int64 (see irexec/budget.py); reported with the model's other
        tensors over it, in one line, when reading ends (``report_budget``). More dims than
        numpy holds is IR114, said at once."""
        problem = budget.shape_problem(shape, itemsize, self.budget, element_type)
        if problem is None:
            return True
        if budget.problem_code(shape) != "IR109":
            self.diags.add(budget.problem_code(shape), f"{what}: {problem}",
                           self.loc(element, node))
            node.broken = True
            self._attr_over_budget = True  # the cause: its ports are not reported again
            return False
        self.over_budget.append((f"{what}: {problem}", self.loc(element, node), node.name))
        node.broken = True
        self._attr_over_budget = True
        return False

    def report_beyond_end(self) -> None:
        """One Const past the end of the .bin is that Const's problem; several mean the .bin
        is not this model's (or is cut short): one line says so."""
        if len(self.beyond_end) == 1:
            message, location, _, _ = self.beyond_end[0]
            self.diags.add("IR502", message, location)
        elif self.beyond_end:
            _, location, _, _ = self.beyond_end[0]
            names = [name for _, _, name, _ in self.beyond_end]
            shown = ", ".join(f"'{n}'" for n in names[:3]) + (", ..." if len(names) > 3 else "")
            needed = max(end for _, _, _, end in self.beyond_end)
            self.diags.add("IR502", f"the weights file '{self.weights.path}' holds "
                                    f"{self.weights.size} bytes, but {len(names)} Consts lie "
                                    f"beyond its end ({shown}; they need {needed} bytes): it is "
                                    f"cut short, or not this model's .bin", location)

    def report_budget(self) -> None:
        if not self.over_budget:
            return
        message, location, first = self.over_budget[0]
        others = list(dict.fromkeys(n for _, _, n in self.over_budget[1:] if n != first))
        if len(self.over_budget) > 1:
            shown = ", ".join(f"'{n}'" for n in others[:3]) + (", ..." if len(others) > 3 else "")
            count = len(self.over_budget) - 1
            more = (f" ({count} more tensor{'s' * (count > 1)} of this model "
                    f"{'are' if count > 1 else 'is'} over it too{': ' + shown if others else ''})")
            head, sep, advice = message.partition("; raise")
            message = head + more + sep + advice
        self.diags.add("IR109", message, location)

    # --- edges and graph --------------------------------------------------------------------

    def connect(self, root, nodes: dict[int, Node]) -> Wiring:
        """Read the edges and hand them to the wiring (irexec/ir/checks.py), which connects
        them and reports the broken ones; an edge the reader cannot read is reported here."""
        wiring = Wiring(nodes, self.diags, self.loc)
        edges_block = _child(root, "edges")
        uints = self._uints
        for edge in _children(edges_block, "edge") if edges_block is not None else []:
            ends = [_canonical(edge.get(a, "").strip(ir_text.SPACE))
                    for a in ("from-layer", "to-layer")] if self.broken else ()
            if ends and set(ends) & self.broken and all(e in self.broken or (ir_text.is_uint(e) and
                                                                    int(e) in nodes)
                                               for e in ends):
                # An edge of a layer already reported broken: its problem is said; but the
                # layer feeding it is still used, as far as anyone can tell.
                wiring.lost(*self.edge_ends(edge))
                continue
            get = edge.get
            texts = get("from-layer"), get("from-port"), get("to-layer"), get("to-port")
            try:
                ids = [uints[t] if t in uints else self.uint(t or "") for t in texts]
            except ValueError:
                self.diags.add("IR201", "an <edge> needs integer from-layer, from-port, to-layer "
                                        "and to-port attributes", self.loc(edge))
                wiring.lost(*self.edge_ends(edge))
                continue
            wiring.connect(*ids, edge)
        return wiring

    def edge_ends(self, edge) -> tuple[int | None, int | None, int | None]:
        """(from-layer, to-layer, to-port) of an edge, each None where it is not a number."""
        values = []
        for name in ("from-layer", "to-layer", "to-port"):
            try:
                values.append(self.uint((edge.get(name) or "").strip(ir_text.SPACE)))
            except ValueError:
                values.append(None)
        return values[0], values[1], values[2]

    def read(self) -> tuple[Model, Diagnostics]:
        root, version = self.parse_xml()
        model = self.read_graph(root, root.get("name", "model"), version)
        model.rt_info = read_rt_info(_child(root, "rt_info"))
        model.weights_missing = self.weights_missing
        self.weights.close()  # a value asked for later opens it again (irexec/io/weights.py)
        # What is said once for the whole file (bodies included):
        check_variables(model, self.diags)
        self.report_budget()
        self.report_beyond_end()
        if self.not_implemented:
            self.diags.add("IR113", availability.cannot_run_message(self.not_implemented) +
                           "; the rest is checked, and their outputs are taken as their ports "
                           "declare", self.not_implemented[0].location)
        self.diags.finish()
        return model, self.diags

    def read_graph(self, root, name: str, version: int = 11) -> Model:
        """The layers and edges under ``root`` (the <net>, or a layer's <body>) as a Model."""
        broken, unread = self.broken, self.unread_layers
        self.broken, self.unread_layers = set(), 0
        try:
            return self._read_graph(root, name, version)
        finally:
            self.broken, self.unread_layers = broken, unread

    def _read_graph(self, root, name: str, version: int) -> Model:
        layers_block = _child(root, "layers")
        nodes: dict[int, Node] = {}
        order: list[Node] = []
        for layer in _children(layers_block, "layer") if layers_block is not None else []:
            node = self.read_layer(layer)
            if node is None:
                continue
            if node.id in nodes:
                self.diags.add("IR102", f"layer id {node.id} is already used by layer "
                                        f"'{nodes[node.id].name}' (line {nodes[node.id].line})",
                               node.location)
                self.broken.add(str(node.id))
                continue
            nodes[node.id] = node
            order.append(node)
        wiring = self.connect(root, nodes)
        wiring.finish({int(i) for i in self.broken if ir_text.is_uint(i)}, self.unread_layers)
        model = Model(order, name=name, ir_version=version, path=self.path)
        model.weights = self.weights
        check_graph(model, self.diags, wiring.sources, wiring.source_unknown)
        return model


_IMMUTABLE = (int, str, bool, float, tuple, ElementType, PartialShape)


def _back_edge_problem(model: Model, pair: tuple[int, int]) -> str | None:
    source, target = (model.by_id.get(i) for i in pair)
    if source is None or source.role != "result":
        return f"back edge {pair[0]} -> {pair[1]}: the body has no Result with id {pair[0]}"
    if target is None or target.role != "parameter":
        return f"back edge {pair[0]} -> {pair[1]}: the body has no Parameter with id {pair[1]}"
    return None


def _canonical(layer_id: str) -> str:
    """An edge's layer id as the reader keys layers ("007" is layer 7)."""
    return str(int(layer_id)) if ir_text.is_uint(layer_id) else layer_id


def _supported():
    from irexec.ir.element_type import SUPPORTED

    return SUPPORTED


def load_ir(xml_path, bin_path=None, weights_optional: bool = False) \
        -> tuple[Model, Diagnostics]:
    """Parse an IR file into a Model (no inference yet) and every problem found on the way.
    Only a file that cannot be read as IR at all raises IRError. Layers with problems are kept
    but marked ``broken``, so that later passes skip them instead of repeating the problem.
    ``weights_optional``: a weights file that is missing (or unusable) is no error; the Consts
    keep their type and shape, not their values, and ``model.weights_missing`` says why."""
    xml_path = os.fspath(xml_path)
    if bin_path is None:
        bin_path = os.path.splitext(xml_path)[0] + ".bin"
    with gc_pause.paused():  # many objects made, few freed: see irexec/gc_pause.py
        return _Reader(xml_path, os.fspath(bin_path), weights_optional).read()


def read_ir(xml_path, bin_path=None) -> Model:
    """Parse an IR file into a Model (no inference yet). Raises IRError with every error."""
    model, diags = load_ir(xml_path, bin_path)
    raise_if_errors(diags)
    model.diagnostics.extend(diags)
    return model


__all__ = ["load_ir", "read_ir", "SUPPORTED_VERSIONS"]
