"""What pre- and post-processing need of a layout: the name of each axis, and where an axis of
a given name is in a tensor of a given rank ("NCHW", "[N,C,H,W]", "N...C", "?").

ADAPTER: the API branch brings OpenVINO's ``Layout`` (irexec.Layout) with its helpers; this
module accepts it (anything whose ``to_string()`` gives the text) and a plain string. At merge,
fold this into that class or keep it as the preprocessing's reading of it.
"""

from __future__ import annotations


class Layout:
    """A layout: axis names, with ``...`` standing for any number of unnamed axes."""

    __slots__ = ("names",)

    def __init__(self, layout=""):
        if isinstance(layout, Layout):
            self.names = list(layout.names)
            return
        text = layout.to_string() if hasattr(layout, "to_string") else str(layout)
        text = text.strip()
        if text.startswith("["):
            if not text.endswith("]"):
                raise ValueError(f"layout '{text}' opens a '[' it does not close")
            names = [n.strip().upper() for n in text[1:-1].split(",") if n.strip()]
        else:
            names, i = [], 0
            while i < len(text):
                if text.startswith("...", i):
                    names.append("...")
                    i += 3
                else:
                    names.append(text[i].upper())
                    i += 1
        if names.count("...") > 1:
            raise ValueError(f"layout '{text}' has '...' more than once")
        named = [n for n in names if n not in ("...", "?")]
        if len(set(named)) != len(named):
            raise ValueError(f"layout '{text}' names an axis twice")
        self.names = names

    @property
    def empty(self) -> bool:
        return not self.names

    def index(self, name: str, rank: int | None = None) -> int | None:
        """The axis called ``name`` in a tensor of ``rank`` axes (None if the layout has no
        such axis); an axis after ``...`` counts from the end."""
        name = name.upper()
        if name not in self.names:
            return None
        at = self.names.index(name)
        if "..." in self.names and at > self.names.index("..."):
            if rank is None:
                raise ValueError(f"the layout {self} needs a rank to place '{name}'")
            return rank - (len(self.names) - at)
        return at

    def axes(self, rank: int) -> list[str]:
        """One name per axis ('?' for unnamed ones)."""
        if "..." not in self.names:
            return list(self.names)
        cut = self.names.index("...")
        head, tail = self.names[:cut], self.names[cut + 1:]
        return head + ["?"] * (rank - len(head) - len(tail)) + tail

    def to_string(self) -> str:
        return "[" + ",".join(self.names) + "]"

    def __eq__(self, other) -> bool:
        try:
            return self.names == Layout(other).names
        except (TypeError, ValueError):
            return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self.names))

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return f"<Layout: {self.to_string()}>"


def permutation(source: Layout, target: Layout, rank: int) -> list[int] | None:
    """The Transpose order taking a tensor laid out as ``source`` to ``target`` (None when it
    is the identity); ValueError if the two do not name the same axes."""
    src, dst = source.axes(rank), target.axes(rank)
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
    axes = layout.axes(rank) if not layout.empty else []
    if not axes:
        return Layout()
    return Layout("[" + ",".join(axes[i] for i in order) + "]")
