"""Layouts, as OpenVINO's ``Layout`` and ``layout_helpers`` (``irexec.layout_helpers`` is this
module): a name per axis ("NCHW", "[N,C,?,?]", "...C"), read from and written to a port's
``<rt_info>`` (``<attribute name="layout" version="0" layout="[N,C,H,W]"/>``, as OpenVINO
writes a Parameter's), so a layout set in Python is saved with the model and one in a file is
read back.

A layout is text and axis names; nothing here knows an op.
"""

from __future__ import annotations

import re

from irexec.ir.rt_info import RtInfo

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\?")


class Layout:
    """``Layout("NCHW")``, ``Layout("[N,C,H,W]")``, ``Layout("...C")``, ``Layout("NC...")``,
    ``Layout()`` (empty: any rank). Axis names are case-insensitive (kept upper-case);
    ``?`` is an axis with no name."""

    __slots__ = ("_names", "_ellipsis")

    def __init__(self, text: str = ""):
        self._names, self._ellipsis = _parse(str(text))

    @property
    def empty(self) -> bool:
        return not self._names and self._ellipsis is not None

    @staticmethod
    def scalar() -> Layout:
        layout = Layout()
        layout._names, layout._ellipsis = (), None
        return layout

    def has_name(self, name: str) -> bool:
        return name.upper() in self._names

    def get_index_by_name(self, name: str) -> int:
        """The axis of ``name``: counted from the start, or, for names after ``...``, a
        negative index from the end. RuntimeError if the layout has no such axis."""
        key = name.upper()
        if key not in self._names:
            raise RuntimeError(f"layout {self} has no axis named {name!r}")
        i = self._names.index(key)
        if self._ellipsis is not None and i >= self._ellipsis:
            return i - len(self._names)
        return i

    def to_string(self) -> str:
        return str(self)

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = Layout(other)
        if not isinstance(other, Layout):
            return NotImplemented
        return (self._names, self._ellipsis) == (other._names, other._ellipsis)

    def __hash__(self) -> int:
        return hash((self._names, self._ellipsis))

    def __str__(self) -> str:
        parts = list(self._names)
        if self._ellipsis is not None:
            parts.insert(self._ellipsis, "...")
        return "[" + ",".join(parts) + "]"

    def __repr__(self) -> str:
        return f"<Layout: {self}>"


def _parse(text: str) -> tuple[tuple[str, ...], int | None]:
    """(axis names, position of ``...`` among them or None)."""
    t = text.strip()
    if t in ("", "..."):
        return (), 0
    if t.startswith("[") and t.endswith("]"):
        parts = [p.strip() for p in t[1:-1].split(",")] if t[1:-1].strip() else []
    else:  # "NCHW", "NC...", "...C": one letter per axis
        parts, i = [], 0
        while i < len(t):
            if t.startswith("...", i):
                parts.append("...")
                i += 3
            else:
                parts.append(t[i])
                i += 1
    names, ellipsis = [], None
    for part in parts:
        if part == "...":
            if ellipsis is not None:
                raise ValueError(f"layout {text!r} has '...' twice")
            ellipsis = len(names)
        elif _NAME.fullmatch(part):
            if part != "?" and part.upper() in names:
                raise ValueError(f"layout {text!r} names axis {part!r} twice")
            names.append(part.upper())
        else:
            raise ValueError(f"layout {text!r}: {part!r} is not an axis name (letters, digits "
                             f"and _, or ?)")
    return tuple(names), ellipsis


# --- axes of a tensor of a given rank (pre- and post-processing) ------------------------------

def axis_of(layout: Layout, name: str, rank: int) -> int | None:
    """Where the axis ``name`` is in a tensor of ``rank`` axes laid out as ``layout``, counted
    from the start; None if the layout has no such axis."""
    if not layout.has_name(name):
        return None
    return layout.get_index_by_name(name) % rank


def axis_names(layout: Layout, rank: int) -> list[str]:
    """One name per axis of a tensor of ``rank`` axes ('?' for the unnamed ones ``...``
    stands for); an empty layout names none."""
    names = list(layout._names)
    if layout.empty or layout._ellipsis is None:
        return names
    cut = layout._ellipsis
    return names[:cut] + ["?"] * (rank - len(names)) + names[cut:]


def permutation(source: Layout, target: Layout, rank: int) -> list[int] | None:
    """The Transpose order taking a tensor laid out as ``source`` to ``target`` (None when it
    is the identity); ValueError if the two do not name the same axes."""
    src, dst = axis_names(source, rank), axis_names(target, rank)
    if len(src) != rank or len(dst) != rank:
        raise ValueError(f"layouts {source} and {target} do not fit a tensor of rank {rank}")
    if sorted(n for n in src if n != "?") != sorted(n for n in dst if n != "?"):
        raise ValueError(f"layout {source} cannot be converted to {target}: they name "
                         f"different axes")
    unnamed = iter(i for i, n in enumerate(src) if n == "?")
    order = [src.index(n) if n != "?" else next(unnamed) for n in dst]
    return None if order == list(range(rank)) else order


def permuted(layout: Layout, order: list[int], rank: int) -> Layout:
    """The layout of a tensor transposed by ``order``."""
    axes = axis_names(layout, rank)
    if not axes:
        return Layout()
    return Layout("[" + ",".join(axes[i] for i in order) + "]")


# --- layout_helpers: axis indices by their usual names ------------------------------------------

def _index(layout: Layout, name: str) -> int:
    return layout.get_index_by_name(name)


def batch_idx(layout: Layout) -> int:
    return _index(layout, "N")


def channels_idx(layout: Layout) -> int:
    return _index(layout, "C")


def depth_idx(layout: Layout) -> int:
    return _index(layout, "D")


def height_idx(layout: Layout) -> int:
    return _index(layout, "H")


def width_idx(layout: Layout) -> int:
    return _index(layout, "W")


def has_batch(layout: Layout) -> bool:
    return layout.has_name("N")


def has_channels(layout: Layout) -> bool:
    return layout.has_name("C")


def has_depth(layout: Layout) -> bool:
    return layout.has_name("D")


def has_height(layout: Layout) -> bool:
    return layout.has_name("H")


def has_width(layout: Layout) -> bool:
    return layout.has_name("W")


# --- a port's layout, kept in its rt_info --------------------------------------------------------

def _rt_info_of(port) -> list[RtInfo]:
    """The rt_info list a port's layout lives in: the port's own (a model's output is its
    Result's input port)."""
    rt_info = getattr(port, "layout_rt_info", None)
    return rt_info() if callable(rt_info) else port.rt_info


def _entry(entries: list[RtInfo]) -> RtInfo | None:
    for e in entries:
        if e.tag == "attribute" and e.attrs.get("name") == "layout":
            return e
    return None


def get_layout(port) -> Layout:
    """The layout set on a port (a model's input or output, or any layer's output); an empty
    Layout if none is."""
    entry = _entry(_rt_info_of(port))
    if entry is None:
        return Layout()
    return Layout(entry.attrs.get("layout", entry.attrs.get("value", "")))


def set_layout(port, layout) -> None:
    """Set (or, with an empty layout, drop) a port's layout; saved with the model."""
    layout = layout if isinstance(layout, Layout) else Layout(layout)
    entries = _rt_info_of(port)
    entry = _entry(entries)
    if entry is not None:
        entries.remove(entry)
    if not layout.empty:
        entries.append(RtInfo("attribute", {"name": "layout", "version": "0",
                                            "layout": str(layout)}))


# --- a model's batch, found by its inputs' layouts (OpenVINO's get_batch / set_batch) ----------

def _batched_inputs(model) -> list[tuple[object, int]]:
    """(input port, batch axis) for each input whose layout names N; RuntimeError listing the
    inputs when none does."""
    found = []
    for port in model.inputs:
        layout = get_layout(port)
        if layout.has_name("N"):
            axis = batch_idx(layout)
            shape = port.partial_shape
            if shape is not None and shape.rank_is_static:
                found.append((port, axis % len(shape)))
    if not found:
        listed = "; ".join(f"{p.get_any_name()!r} {p.partial_shape} layout {get_layout(p)}"
                           for p in model.inputs)
        raise RuntimeError(f"no input's layout names a batch axis N ({listed}); set one with "
                           f"layout_helpers.set_layout(model.input(i), Layout('NCHW'))")
    return found


def get_batch(model):
    """The batch size of a model: axis N of the first input whose layout names it."""
    port, axis = _batched_inputs(model)[0]
    return port.partial_shape[axis]


def set_batch(model, batch) -> None:
    """Reshape every input whose layout names N to ``batch`` (an int, -1 for dynamic, or a
    Dimension) on that axis."""
    from irexec.ir.shape import Dimension

    dim = batch if isinstance(batch, Dimension) else Dimension(batch)
    new = {}
    for port, axis in _batched_inputs(model):
        shape = port.get_partial_shape()
        shape[axis] = dim
        new[port] = shape
    model.reshape(new)
