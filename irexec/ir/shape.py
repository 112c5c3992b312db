"""Dimensions and partial shapes, as OpenVINO names them.

A ``Dimension`` is an interval ``[min, max]`` of possible sizes; ``max is None`` means unbounded.
A static dimension has ``min == max``; the fully dynamic one is ``[0, None]`` (printed ``?``).
A ``PartialShape`` is a tuple of dimensions, or ``None`` dims for a dynamic rank (printed ``[...]``).
Both are immutable values. Parsing of the IR's shape strings lives in ``io/``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Dimension:
    min: int = 0
    max: int | None = None

    def __post_init__(self):
        if self.min < 0 or (self.max is not None and self.max < self.min):
            raise ValueError(f"invalid dimension interval [{self.min}, {self.max}]")

    @classmethod
    def dynamic(cls) -> Dimension:
        return _DYNAMIC if cls is Dimension else cls(0, None)

    @classmethod
    def static(cls, value: int) -> Dimension:
        """A fixed size; small sizes share one immutable object each (reading a large model
        makes the same few dims many times)."""
        if cls is Dimension and type(value) is int:
            d = _STATIC.get(value)
            if d is None:
                d = cls(value, value)
                if 0 <= value < 1 << 16:
                    _STATIC[value] = d
            return d
        return cls(value, value)

    @property
    def is_static(self) -> bool:
        return self.max == self.min

    @property
    def is_dynamic(self) -> bool:
        return not self.is_static

    def get_length(self) -> int:
        if not self.is_static:
            raise ValueError(f"dimension {self} is not static")
        return self.min

    def contains(self, size: int) -> bool:
        return self.min <= size and (self.max is None or size <= self.max)

    def compatible(self, other: Dimension) -> bool:
        """True when some size lies in both intervals."""
        return self.merge(other) is not None

    def merge(self, other: Dimension) -> Dimension | None:
        """The intersection of two dimensions, or None when they have no size in common."""
        lo = max(self.min, other.min)
        if self.max is None:
            hi = other.max
        elif other.max is None:
            hi = self.max
        else:
            hi = min(self.max, other.max)
        if hi is not None and hi < lo:
            return None
        return Dimension(lo, hi)

    def __str__(self) -> str:
        if self.is_static:
            return str(self.min)
        if self.min == 0 and self.max is None:
            return "?"
        if self.max is None:
            return f"{self.min}.."
        if self.min == 0:
            return f"..{self.max}"
        return f"{self.min}..{self.max}"

    def __repr__(self) -> str:
        return f"Dimension({self})"


_STATIC: dict[int, Dimension] = {}
_DYNAMIC = Dimension(0, None)


def _as_dim(d) -> Dimension:
    if type(d) is Dimension or isinstance(d, Dimension):
        return d
    if d is None or d == -1:
        return Dimension.dynamic()
    if isinstance(d, tuple) and len(d) == 2:
        return Dimension(d[0], d[1])
    return Dimension.static(int(d))


class PartialShape:
    """A shape whose rank and dims may be dynamic. ``PartialShape([2, -1, (1, 8)])``."""

    __slots__ = ("_dims",)

    def __init__(self, dims: Iterable | None):
        self._dims = None if dims is None else tuple([_as_dim(d) for d in dims])

    @classmethod
    def _of(cls, dims: tuple[Dimension, ...] | None) -> PartialShape:
        """A shape of a tuple of Dimension objects, taken as it is (no conversion)."""
        shape = object.__new__(cls)
        shape._dims = dims
        return shape

    @classmethod
    def dynamic(cls) -> PartialShape:
        return cls(None)

    @property
    def rank_is_static(self) -> bool:
        return self._dims is not None

    @property
    def rank(self) -> Dimension:
        return Dimension.dynamic() if self._dims is None else Dimension.static(len(self._dims))

    @property
    def dims(self) -> tuple[Dimension, ...]:
        if self._dims is None:
            raise ValueError("a dynamic-rank shape has no dims")
        return self._dims

    @property
    def is_static(self) -> bool:
        if self._dims is None:
            return False
        for d in self._dims:
            if d.max != d.min:
                return False
        return True

    def to_shape(self) -> tuple[int, ...]:
        if not self.is_static:
            raise ValueError(f"shape {self} is not static")
        return tuple([d.min for d in self._dims])

    def __len__(self) -> int:
        return len(self.dims)

    def __getitem__(self, i) -> Dimension:
        return self.dims[i]

    def __iter__(self):
        return iter(self.dims)

    def __eq__(self, other) -> bool:
        if not isinstance(other, PartialShape):
            try:
                other = PartialShape(other)
            except (TypeError, ValueError):
                return NotImplemented
        return self._dims == other._dims

    def __hash__(self) -> int:
        return hash(self._dims)

    def compatible(self, other: PartialShape) -> bool:
        return self.merge(other) is not None

    def merge(self, other: PartialShape) -> PartialShape | None:
        """The shape both describe, or None when they contradict each other."""
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if self._dims == other._dims:
            return self
        if len(self._dims) != len(other._dims):
            return None
        merged = [a.merge(b) for a, b in zip(self._dims, other._dims)]
        if any(m is None for m in merged):
            return None
        return PartialShape._of(tuple(merged))

    def contains(self, shape: tuple[int, ...]) -> bool:
        """True when a concrete shape is one this partial shape allows."""
        if self._dims is None:
            return True
        return len(shape) == len(self._dims) and all(d.contains(s) for d, s in zip(self._dims, shape))

    def replace(self, index: int, dim: Dimension) -> PartialShape:
        dims = list(self.dims)
        dims[index] = dim
        return PartialShape(dims)

    def __str__(self) -> str:
        if self._dims is None:
            return "[...]"
        return "[" + ",".join(str(d) for d in self._dims) + "]"

    def __repr__(self) -> str:
        return f"PartialShape({self})"
