"""Dimensions and partial shapes, as OpenVINO names them.

A ``Dimension`` is an interval ``[min, max]`` of possible sizes; ``max is None`` means unbounded.
A static dimension has ``min == max``; the fully dynamic one is ``[0, None]`` (printed ``?``).
A ``PartialShape`` is a tuple of dimensions, or ``None`` dims for a dynamic rank (printed ``[...]``).
A ``Shape`` is a static shape: a tuple of ints (OpenVINO's ``Shape``).

Both take OpenVINO's constructor forms and text (``Dimension(5)``, ``Dimension(1, 8)``,
``Dimension("1..8")``, ``PartialShape("?,3,224,224")``) and answer its methods. A Dimension is an
immutable value; a PartialShape is one too inside irexec (ports hand out copies: only a user's
copy is ever changed by ``shape[i] = ...``, as in OpenVINO).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from irexec.ir.numbers import _INT, _MAX_DIM, SPACE, parse_uint


_UNSET = object()


@dataclass(frozen=True, init=False)
class Dimension:
    """``Dimension()`` dynamic, ``Dimension(5)`` static, ``Dimension(-1)`` dynamic,
    ``Dimension(1, 8)`` an interval (``max`` -1 or None: unbounded), ``Dimension("1..8")``."""

    min: int
    max: int | None

    def __init__(self, min=_UNSET, max=_UNSET):  # noqa: A002  (OpenVINO's words)
        if max is _UNSET:
            if min is _UNSET or min is None:
                min, max = 0, None
            elif isinstance(min, str):
                d = parse_dimension(min)
                min, max = d.min, d.max
            elif min == -1:
                min, max = 0, None
            else:
                min = max = int(min)
        elif max is not None and max == -1:
            max = None
        if min < 0 or (max is not None and max < min):
            raise ValueError(f"invalid dimension interval [{min}, {max}]")
        object.__setattr__(self, "min", min)
        object.__setattr__(self, "max", max)

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
            raise RuntimeError(f"dimension {self} is not static: it has no length")
        return self.min

    # OpenVINO's names: bounds (-1 for none above), text, and the refinement order.
    def get_min_length(self) -> int:
        return self.min

    def get_max_length(self) -> int:
        return -1 if self.max is None else self.max

    @property
    def min_length(self) -> int:
        return self.min

    @property
    def max_length(self) -> int:
        return self.get_max_length()

    def to_string(self) -> str:
        return str(self)

    def refines(self, other: Dimension) -> bool:
        """Every size this allows, ``other`` allows too."""
        other = _as_dim(other)
        return self.min >= other.min and (other.max is None or
                                          self.max is not None and self.max <= other.max)

    def relaxes(self, other: Dimension) -> bool:
        return _as_dim(other).refines(self)

    def same_scheme(self, other: Dimension) -> bool:
        return self == _as_dim(other)

    def __eq__(self, other) -> bool:
        if type(other) is Dimension:
            return self.min == other.min and self.max == other.max
        if isinstance(other, int) and not isinstance(other, bool):
            return self.max == self.min == other  # OpenVINO: Dimension(3) == 3
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.min, self.max))

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
        return f"<Dimension: {self}>"


_STATIC: dict[int, Dimension] = {}
_DYNAMIC = Dimension(0, None)


def _as_dim(d) -> Dimension:
    if type(d) is Dimension or isinstance(d, Dimension):
        return d
    if d is None or d == -1:
        return Dimension.dynamic()
    if isinstance(d, tuple) and len(d) == 2:
        return Dimension(d[0], d[1])
    if isinstance(d, str):
        return parse_dimension(d)
    return Dimension.static(int(d))


class Shape(tuple):
    """A static shape, OpenVINO's ``Shape``: a tuple of ints (numpy takes it as a shape),
    printed ``[1,3,224,224]``, equal to the same dims as a list or a tuple."""

    __slots__ = ()

    def __new__(cls, dims: Iterable = ()):
        return super().__new__(cls, (int(d) for d in dims))

    def __eq__(self, other) -> bool:
        if isinstance(other, (tuple, list)):
            return tuple.__eq__(self, tuple(other))
        if isinstance(other, PartialShape):
            return other == self
        return NotImplemented

    def __ne__(self, other) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = tuple.__hash__

    def to_string(self) -> str:
        return str(self)

    def __str__(self) -> str:
        return "[" + ",".join(str(d) for d in self) + "]"

    def __repr__(self) -> str:
        return f"<Shape: {self}>"


class PartialShape:
    """A shape whose rank and dims may be dynamic. ``PartialShape([2, -1, (1, 8)])``,
    ``PartialShape("?,3,1..8,224")``, ``PartialShape("...")`` (dynamic rank)."""

    __slots__ = ("_dims",)

    def __init__(self, dims: Iterable | str | None):
        if isinstance(dims, str):
            self._dims = parse_partial_shape(dims)._dims
        elif dims is None:
            self._dims = None
        elif type(dims) is PartialShape:
            self._dims = dims._dims
        else:
            self._dims = tuple([_as_dim(d) for d in dims])

    @classmethod
    def _of(cls, dims: tuple[Dimension, ...] | None) -> PartialShape:
        """A shape of a tuple of Dimension objects, taken as it is (no conversion)."""
        shape = object.__new__(cls)
        shape._dims = dims
        return shape

    @classmethod
    def dynamic(cls, rank=None) -> PartialShape:
        """A dynamic rank, or ``rank`` dynamic dims (OpenVINO's ``PartialShape.dynamic(r)``)."""
        if rank is None or isinstance(rank, Dimension) and rank.is_dynamic:
            return cls(None)
        return cls([Dimension.dynamic()] * int(rank.get_length() if isinstance(rank, Dimension)
                                               else rank))

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

    @property
    def is_dynamic(self) -> bool:
        return not self.is_static

    def to_shape(self) -> Shape:
        """The static shape (a tuple of ints); RuntimeError if a dim is dynamic."""
        if not self.is_static:
            raise RuntimeError(f"shape {self} is not static: to_shape() needs every dim fixed")
        return Shape([d.min for d in self._dims])

    # OpenVINO's names.
    def get_shape(self) -> Shape:
        return self.to_shape()

    def get_min_shape(self) -> Shape:
        """Each dim's lower bound (a dynamic rank: RuntimeError)."""
        return Shape([d.min for d in self._static_rank("get_min_shape")])

    def get_max_shape(self) -> Shape:
        """Each dim's upper bound; an unbounded one is 2**63 - 1, as OpenVINO gives."""
        return Shape([_MAX_DIM if d.max is None else d.max
                      for d in self._static_rank("get_max_shape")])

    def _static_rank(self, what: str) -> tuple[Dimension, ...]:
        if self._dims is None:
            raise RuntimeError(f"{what}() needs a static rank; this shape is {self}")
        return self._dims

    def get_dimension(self, index: int) -> Dimension:
        return self[index]

    @property
    def all_non_negative(self) -> bool:
        return True  # every Dimension is an interval of sizes, never below 0

    def to_string(self) -> str:
        return str(self)

    def refines(self, other) -> bool:
        other = _as_shape(other)
        if other._dims is None:
            return True
        if self._dims is None or len(self._dims) != len(other._dims):
            return False
        return all(a.refines(b) for a, b in zip(self._dims, other._dims))

    def relaxes(self, other) -> bool:
        return _as_shape(other).refines(self)

    def same_scheme(self, other) -> bool:
        return self == _as_shape(other)

    def __setitem__(self, index: int, dim) -> None:
        """``shape[i] = 5`` (or -1, or a Dimension), on a user's copy (as OpenVINO's)."""
        dims = list(self.dims)
        dims[index] = _as_dim(dim)
        self._dims = tuple(dims)

    def __copy__(self) -> PartialShape:
        return PartialShape._of(self._dims)

    def __deepcopy__(self, memo) -> PartialShape:
        return PartialShape._of(self._dims)

    def __len__(self) -> int:
        return len(self.dims)

    def __getitem__(self, i) -> Dimension:
        return self.dims[i]

    def __iter__(self):
        return iter(self.dims)

    def __eq__(self, other) -> bool:
        if not isinstance(other, PartialShape):
            if isinstance(other, str):
                return NotImplemented
            try:
                other = PartialShape(other)
            except (TypeError, ValueError):
                return NotImplemented
        return self._dims == other._dims

    def __hash__(self) -> int:
        return hash(self._dims)

    def compatible(self, other: PartialShape) -> bool:
        return self.merge(_as_shape(other)) is not None

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
        return f"<PartialShape: {self}>"


def _as_shape(value) -> PartialShape:
    return value if isinstance(value, PartialShape) else PartialShape(value)


# --- text forms: "1,3,224,224", "?", "-1", "2..10", "..." ----------------------------------

def _strip_brackets(text: str) -> str:
    text = text.strip(SPACE)
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1].strip(SPACE)
    return text


def parse_dimension(text: str) -> Dimension:
    t = text.strip(SPACE)
    if t == "":
        raise ValueError("a dimension is empty (two commas in a row, or one at an end?)")
    if t in ("?", "-1"):
        return Dimension.dynamic()
    if ".." in t:
        lo_text, hi_text = t.split("..", 1)
        try:
            lo = parse_uint(lo_text) if lo_text.strip(SPACE) else 0
            hi = parse_uint(hi_text) if hi_text.strip(SPACE) else None
        except ValueError as e:
            raise ValueError(f"interval '{t}': {e}") from None
        if hi is not None and hi < lo:
            raise ValueError(f"interval '{t}' has its upper bound below its lower bound")
        return Dimension(lo, hi)
    if not _INT.fullmatch(t):
        raise ValueError(f"'{t}' is not a dimension (a size, ?, -1, or an interval like 2..10)")
    value = int(t)
    if value < 0:
        raise ValueError(f"dimension '{t}' is negative; use -1 or ? for a dynamic size")
    if value > _MAX_DIM:
        raise ValueError(f"dimension '{t}' is too large")
    return Dimension.static(value)


def parse_partial_shape(text: str) -> PartialShape:
    """``1,3,224,224``; ``?``/``-1`` dynamic; ``2..10``, ``..8``, ``3..`` intervals; ``...`` a
    dynamic rank; empty for a scalar. Brackets and spaces around are tolerated."""
    t = _strip_brackets(text)
    if t == "...":
        return PartialShape.dynamic()
    if t == "":
        return PartialShape([])
    return PartialShape([parse_dimension(part) for part in t.split(",")])
