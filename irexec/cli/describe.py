"""A model in plain data, as a reader of the IR looks for it (what Netron shows): every layer's
attributes, its ports with their numbers, types and shapes, the edges, and each constant's shape
and first values. ``irexec info`` prints it (all of it with ``--format json``) and
``irexec graph`` labels its drawing with it; ``run`` previews arrays with :func:`preview`.
"""

from __future__ import annotations

import math

import numpy as np

from irexec.ir import element_type as et_table
from irexec.ir.element_type import plain_values
from irexec.ir.model import Model, Node, OutputPort
from irexec.ir.shape import PartialShape
from irexec.kernels.convert import NF4_VALUES

JSON_VALUES = 16  # a constant's first values in JSON
NF4 = et_table.from_name("nf4").dtype


def values(array: np.ndarray, count: int) -> list:
    """The first ``count`` values of an array (C order) as plain Python values: narrow types
    as numbers (nf4 as the codebook values its codes stand for), strings as str, complex as
    [real, imag], non-finite floats as "nan", "inf", "-inf"."""
    shown = np.asarray(array).reshape(-1)[:count]
    if shown.dtype == NF4:
        shown = NF4_VALUES[shown.view(np.uint8)]
    flat = plain_values(shown)
    if flat.dtype.kind == "O":
        return [str(v) for v in flat.tolist()]
    if flat.dtype.kind == "c":
        return [[_number(v.real), _number(v.imag)] for v in flat.tolist()]
    if flat.dtype.kind == "f":
        return [_number(float(v)) for v in flat]
    return flat.tolist()


def _number(v: float):
    return v if math.isfinite(v) else str(v)


def preview(array: np.ndarray, count: int = 6) -> str:
    """``[1, 2, 3, ...]``: the first ``count`` values as text (floats in 6 significant digits,
    strings quoted and cut at 20 characters)."""
    shown = np.asarray(array).reshape(-1)[:count]
    if shown.dtype == NF4:  # the codebook values the codes stand for
        shown = NF4_VALUES[shown.view(np.uint8)]
    flat = plain_values(shown)  # i4/u1..u6 as integers, f8/f4 as floats
    if flat.dtype == np.bool_:
        items = ["true" if v else "false" for v in flat.tolist()]
    elif flat.dtype.kind in "iu":
        items = [str(v) for v in flat.tolist()]
    elif flat.dtype.kind == "O":  # strings: quoted, long ones cut
        items = [repr(v if len(v) <= 20 else v[:20] + "...") for v in map(str, flat.tolist())]
    elif flat.dtype.kind == "c":
        items = [f"{v.real:.6g}{v.imag:+.6g}j" for v in flat.tolist()]
    else:
        items = [f"{float(v):.6g}" for v in flat]
    more = ", ..." if np.asarray(array).size > count else ""
    return "[" + ", ".join(items) + more + "]"


def shape_json(shape: PartialShape | None) -> list | None:
    """A partial shape in JSON (``irexec info --format json``): a list with one entry per dim,
    an integer for a static dim, -1 for a dim of any size (as the IR's ``<dim>-1</dim>``), and
    a string only for a bounded interval (``"1..8"``, ``"2.."``, ``"..8"``). None when the rank
    is not known, or nothing is."""
    if shape is None or not shape.rank_is_static:
        return None
    return [d.min if d.is_static else -1 if d.min == 0 and d.max is None else str(d)
            for d in shape]


def shape_text(shape: list | None) -> str:
    """The text of a :func:`shape_json` list: ``[5,4,3]``, ``[?,768]``, ``[1..8,3]``; ``?``
    when unknown."""
    if shape is None:
        return "?"
    return "[" + ",".join("?" if d == -1 else str(d) for d in shape) + "]"


def type_text(element_type, shape: list | None) -> str:
    """``f32 [5,4,3]`` from a type name and a :func:`shape_json` list; ``?`` for what
    inference could not tell (a dynamic rank: ``[...]``)."""
    return f"{element_type if element_type is not None else '?'} {shape_text(shape)}"


def attributes(node: Node) -> dict[str, str]:
    """The layer's attributes as the IR writes them: parsed ones by their spec, then those no
    spec names (for a layer whose op irexec lacks: all of them, as written)."""
    out: dict[str, str] = {}
    if node.op is not None:
        for attr in node.op.spec.attrs:
            if attr.name in node.attrs and not (attr.kind == "string_list"
                                                and not node.attrs[attr.name]):
                out[attr.name] = attr.format(node.attrs[attr.name])
    out.update(node.extra_attrs)
    return out


def _output(port: OutputPort) -> dict:
    entry = {"port": port.port_id, "element_type": _str(port.element_type),
             "shape": shape_json(port.partial_shape), "names": list(port.names),
             "to": [{"layer": c.node.id, "name": c.node.name, "port": c.port_id}
                    for c in port.consumers]}
    if port.precision is not None and port.element_type is not None \
            and port.precision != port.element_type:
        entry["declared_precision"] = port.precision.precision
    return entry


def _str(value) -> str | None:
    return None if value is None else str(value)


def layer(node: Node, runs: bool) -> dict:
    """One layer in plain data (an entry of ``irexec info --format json``'s ``layers``)."""
    entry = {
        "id": node.id, "name": node.name, "type": node.type, "version": node.version,
        "runs": runs, "line": node.line, "attributes": attributes(node),
        "inputs": [{"port": p.port_id,
                    "element_type": _str(p.source.element_type if p.source else None),
                    "shape": shape_json(p.source.partial_shape if p.source else None),
                    "from": ({"layer": p.source.node.id, "name": p.source.node.name,
                              "port": p.source.port_id} if p.source else None)}
                   for p in node.inputs],
        "outputs": [_output(p) for p in node.outputs],
    }
    if node.role == "constant" and not node.broken and node.op is not None:
        array = node.value
        if array is not None:
            entry["constant"] = {"element_type": str(node.attrs["element_type"]),
                                 "shape": list(array.shape), "elements": int(array.size),
                                 "values": values(array, JSON_VALUES)}
    if node.bodies:
        entry["bodies"] = [body(name, b) for name, b in node.bodies.items()]
    return entry


def _mapping(m) -> dict:
    entry = {"external_port": m.external, "internal_layer": m.internal}
    if m.axis is not None:
        entry.update(axis=m.axis, start=m.start, end=m.end, stride=m.stride,
                     part_size=m.part_size)
    if m.purpose:
        entry["purpose"] = m.purpose
    return entry


def body(name: str, b) -> dict:
    """A layer's sub-graph in plain data: its port map, back edges, layers and edges (layers
    with bodies of their own hold them the same way)."""
    return {
        "name": name,
        "inputs": [_mapping(m) for m in b.inputs],
        "outputs": [_mapping(m) for m in b.outputs],
        "back_edges": [{"from_layer": r, "to_layer": p} for r, p in b.back_edges],
        "layers": [layer(n, runs=n.op is not None) for n in b.model.nodes],
        "edges": edges(b.model),
    }


def edges(model: Model) -> list[dict]:
    """Every connection, in the order of the layers they enter."""
    return [{"from_layer": p.source.node.id, "from_port": p.source.port_id,
             "to_layer": node.id, "to_port": p.port_id,
             "element_type": _str(p.source.element_type),
             "shape": shape_json(p.source.partial_shape)}
            for node in model.nodes for p in node.inputs if p.source is not None]


def attribute_text(attrs: dict[str, str], width: int = 40) -> list[str]:
    """``name=value`` items, long values cut to ``width`` characters."""
    return [f"{k}={v if len(v) <= width else v[:width - 3] + '...'}" for k, v in attrs.items()]
