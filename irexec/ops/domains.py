"""Value domains: what values an input may hold, as objects that both check a value and make one.

An input's domain (``Input(domain=...)``) is read in two places: an op's ``infer`` calls
``check`` on a value known before running (a constant, or the concrete inputs of a call), and
``irexec run`` calls ``generate`` to make a valid value for a Parameter that feeds the input.
``pin`` narrows the shape of the Parameter that feeds input ``of`` so that a value made for a
Parameter of fixed shape can fit it (sequence lengths of length 4 fix the batch dim to 4).

Every domain depends on the shape of input ``of`` of the same layer (the data) and on the
layer's attributes. ``generate`` returns plain integers or booleans; the caller converts them
to the Parameter's element type.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irexec.errors import OpError
from irexec.ir.element_type import plain_values
from irexec.ir.shape import Dimension, PartialShape
from irexec.ir.shape_rules import normalize_axis


def as_int64(values: np.ndarray) -> np.ndarray:
    """Integer values as int64, flat; unsigned values read as signed 64-bit, as OpenVINO reads
    axes (u64 2**64-1 is -1)."""
    values = plain_values(values).reshape(-1)
    if values.dtype.kind == "u":
        return values.astype(np.uint64).view(np.int64)
    return values.astype(np.int64)


_AXES: dict = {}  # axis lists already normalized, by their bytes, type and rank
_AXES_KEPT = 1024


def sorted_axes(values: np.ndarray, rank: int) -> tuple[int, ...]:
    """Axis values (negative ones counted from the end) as the sorted distinct axes of a tensor
    of ``rank``; () for rank 0. Remembered by the values' bytes: a layer's axes are nearly
    always a constant, and converting them cost a small MVN or ReduceMean a third of its time."""
    key = (values.tobytes(), values.dtype.str, rank)
    found = _AXES.get(key)
    if found is None:
        found = tuple(sorted({int(a) % rank for a in as_int64(values)})) if rank else ()
        if len(_AXES) >= _AXES_KEPT:
            _AXES.clear()
        _AXES[key] = found
    return found


class Domain:
    """Base of value domains. ``of``: the input whose shape the values depend on. A domain
    whose ``own_shape`` is true makes values of the input's own shape (``data_shape`` is then
    that shape, chosen as for any input), so it depends on no other input."""

    of: int = 0
    own_shape = False

    def check(self, values: np.ndarray, data_shape: tuple[int, ...], attrs: dict) -> None:
        """Raise OpError (with a code) when ``values`` are outside the domain."""

    def generate(self, rng: np.random.Generator, data_shape: tuple[int, ...], attrs: dict,
                 declared: PartialShape, unsigned: bool) -> np.ndarray:
        """Values in the domain for an input the user did not give. A domain that only checks
        (a user's own, say) cannot make them: the input must then be given."""
        raise ValueError(f"{type(self).__name__} values cannot be generated")

    def pin(self, shape: PartialShape, declared: PartialShape, attrs: dict) -> PartialShape:
        """The data Parameter's shape narrowed so a value of shape ``declared`` fits it."""
        return shape


@dataclass(frozen=True)
class AxisIndices(Domain):
    """Axis numbers of input ``of``: each in [-rank, rank-1]."""

    of: int = 0

    def check(self, values, data_shape, attrs) -> None:
        for a in as_int64(values):
            normalize_axis(int(a), len(data_shape))

    def generate(self, rng, data_shape, attrs, declared, unsigned):
        rank = len(data_shape)
        if declared.rank_is_static and len(declared) == 0:  # one axis, as a scalar
            if rank == 0:
                raise ValueError("a scalar has no axes to name")
            return np.asarray(rng.integers(0 if unsigned else -rank, rank))
        count = _count(declared)
        if rank == 0 and count:
            raise ValueError("a scalar has no axes to name")
        if rank == 0:
            return np.zeros(0, np.int64)
        return rng.integers(0 if unsigned else -rank, rank, size=count)


def _count(declared: PartialShape, preferred: int = 3) -> int:
    """How many values a one-dimensional input of partial shape ``declared`` gets."""
    if declared.rank_is_static and len(declared) == 1:
        d = declared[0]
        return min(max(d.min, preferred), d.max if d.max is not None else max(d.min, preferred))
    return 1


def _sizes(declared: PartialShape, preferred: int = 3) -> tuple[int, ...]:
    """A concrete shape inside ``declared`` (dynamic dims become ``preferred`` where allowed)."""
    if not declared.rank_is_static:
        return (preferred,)
    sizes = []
    for d in declared:
        top = d.max if d.max is not None else max(d.min, preferred)
        sizes.append(d.min if d.is_static else min(max(d.min, preferred), top))
    return tuple(sizes)


@dataclass(frozen=True)
class UniqueAxes(Domain):
    """Axis numbers of input ``of``, each named once (Slice's axes); ``extra``: the axes count
    in the output, which has one more axis per value (Unsqueeze)."""

    of: int = 0
    extra: bool = False

    def generate(self, rng, data_shape, attrs, declared, unsigned):
        scalar = declared.rank_is_static and len(declared) == 0
        count = 1 if scalar else _count(declared)
        rank = len(data_shape) + (count if self.extra else 0)
        if count > rank:
            raise ValueError(f"{count} distinct axes do not fit rank {rank}")
        axes = rng.permutation(rank)[:count]
        if not unsigned:
            axes = np.where(rng.random(count) < 0.5, axes - rank, axes)
        return np.asarray(axes[0]) if scalar else axes


@dataclass(frozen=True)
class Permutation(Domain):
    """A permutation of the axes of input ``of`` (Transpose's order)."""

    of: int = 0

    def generate(self, rng, data_shape, attrs, declared, unsigned):
        return rng.permutation(len(data_shape))


@dataclass(frozen=True)
class TargetShape(Domain):
    """A shape holding as many elements as input ``of`` (Reshape's target): the data's own shape
    when the lengths agree, else ones and the element count last."""

    of: int = 0

    def generate(self, rng, data_shape, attrs, declared, unsigned):
        total = int(np.prod(data_shape, dtype=np.int64))
        if declared.rank_is_static and len(declared) == 0:
            if total != 1:
                raise ValueError(f"a scalar shape makes one element, but the data holds {total}")
            return np.asarray(1)
        count = _count(declared, len(data_shape) or 1)
        if count == len(data_shape):
            return np.array(data_shape, np.int64)
        if count == 0:
            if total != 1:
                raise ValueError(f"an empty shape makes one element, but the data holds {total}")
            return np.zeros(0, np.int64)
        return np.array([1] * (count - 1) + [total], np.int64)


@dataclass(frozen=True)
class ExpandedShape(Domain):
    """A shape that input ``of`` broadcasts to: its own dims, with leading ones (Broadcast's
    target shape)."""

    of: int = 0

    def generate(self, rng, data_shape, attrs, declared, unsigned):
        count = _count(declared, len(data_shape))
        if count < len(data_shape):
            raise ValueError(f"a target shape of {count} dims cannot hold data of rank "
                             f"{len(data_shape)}")
        return np.array([1] * (count - len(data_shape)) + list(data_shape), np.int64)


@dataclass(frozen=True)
class Indices(Domain):
    """Indices into input ``of`` along any of its axes: in [0, smallest dim), valid whichever axis
    they index (Gather, GatherElements, GatherND, the Scatter ops)."""

    of: int = 0

    def generate(self, rng, data_shape, attrs, declared, unsigned):
        sizes = _sizes(declared)
        top = min(data_shape) if data_shape else 1
        if top == 0 and int(np.prod(sizes)) > 0:
            raise ValueError("the data has an empty dim: no index is valid in it")
        return rng.integers(0, max(top, 1), size=sizes)


@dataclass(frozen=True)
class SmallInts(Domain):
    """Integers in [low, high] of the declared shape (slice bounds, shifts, repeats); ``low``
    below 0 is raised to 0 for an unsigned input."""

    of: int = 0
    low: int = 0
    high: int = 1

    def generate(self, rng, data_shape, attrs, declared, unsigned):
        low = max(self.low, 0) if unsigned else self.low
        return rng.integers(low, max(self.high, low) + 1, size=_sizes(declared))


@dataclass(frozen=True)
class Weights(Domain):
    """Non-negative weights of the input's own shape, not necessarily normalised
    (Multinomial's probabilities): made in [0, 1). Not checked: OpenVINO takes any value."""

    own_shape = True

    def generate(self, rng, data_shape, attrs, declared, unsigned):
        return rng.random(size=data_shape)


@dataclass(frozen=True)
class SortedRows(Domain):
    """Values sorted ascending along the last axis (SearchSorted's sequence, Bucketize's
    boundaries), of their own declared shape; ``of``: another input of the layer (the values
    depend on no shape but their own, and the generator needs one it knows first). Made
    sorted, never checked (OpenVINO does not check either: unsorted rows give whatever its
    binary search finds)."""

    of: int = 0

    def generate(self, rng, data_shape, attrs, declared, unsigned):
        values = rng.uniform(0 if unsigned else -10, 10, size=_sizes(declared))
        return np.sort(values, axis=-1) if values.ndim else values


@dataclass(frozen=True)
class PadSizes(Domain):
    """Pads every mode accepts for input ``of``: in [0, smallest dim - 1]."""

    of: int = 0

    def generate(self, rng, data_shape, attrs, declared, unsigned):
        top = max(min(data_shape, default=1) - 1, 0)
        return rng.integers(0, top + 1, size=_sizes(declared))


@dataclass(frozen=True)
class SplitLengths(Domain):
    """Lengths that add up to any dim of input ``of``: -1 (the rest) and zeros."""

    of: int = 0

    def generate(self, rng, data_shape, attrs, declared, unsigned):
        if unsigned:
            raise ValueError("unsigned lengths cannot say -1 (the rest of the dim)")
        count = _count(declared, 2)
        return np.array([-1] + [0] * (count - 1), np.int64)


@dataclass(frozen=True)
class AxisMask(Domain):
    """One boolean per axis of input ``of``."""

    of: int = 0

    @staticmethod
    def message(entries, rank: int) -> str:
        return (f"the mask has {entries} entries but data has rank {rank}; mask mode needs one "
                f"entry per axis")

    def check(self, values, data_shape, attrs) -> None:
        if np.shape(values) != (len(data_shape),):
            raise OpError(self.message(np.size(values), len(data_shape)), code="IR314")

    def generate(self, rng, data_shape, attrs, declared, unsigned):
        return rng.integers(0, 2, size=len(data_shape)).astype(np.bool_)

    def pin(self, shape, declared, attrs):
        if not shape.rank_is_static and declared.rank_is_static and len(declared) == 1 \
                and declared[0].is_static:
            return PartialShape([Dimension.dynamic()] * declared[0].min)
        return shape


@dataclass(frozen=True)
class SequenceLengths(Domain):
    """One length per index along ``batch_axis`` of input ``of``, each in [low, dim(seq_axis)]."""

    of: int = 0
    batch_axis: str = "batch_axis"
    seq_axis: str = "seq_axis"
    low: int = 1

    def generate(self, rng, data_shape, attrs, declared, unsigned):
        rank = len(data_shape)
        b, s = attrs[self.batch_axis] % rank, attrs[self.seq_axis] % rank
        top = data_shape[s]
        return rng.integers(min(self.low, top), top + 1, size=data_shape[b])

    def pin(self, shape, declared, attrs):
        if not (shape.rank_is_static and declared.rank_is_static and len(declared) == 1
                and declared[0].is_static):
            return shape
        b = attrs[self.batch_axis]
        if not -len(shape) <= b < len(shape):
            return shape
        merged = shape[b].merge(declared[0])
        return shape.replace(b % len(shape), merged) if merged is not None else shape


@dataclass(frozen=True)
class FibreLengths(Domain):
    """One length per fibre along ``axis_attr`` of input ``of``: the input's shape with 1 at that
    axis, each value in [low, dim(axis)]."""

    of: int = 0
    axis_attr: str = "axis"
    low: int = 0

    def expected_shape(self, data_shape, attrs) -> list[int]:
        axis = attrs[self.axis_attr]
        return [1 if d == axis else n for d, n in enumerate(data_shape)]

    def generate(self, rng, data_shape, attrs, declared, unsigned):
        axis = attrs[self.axis_attr]
        if not 0 <= axis < len(data_shape):
            raise ValueError(f"axis {axis} is outside data of rank {len(data_shape)}")
        top = data_shape[axis]
        return rng.integers(min(self.low, top), top + 1,
                            size=self.expected_shape(data_shape, attrs))

    def pin(self, shape, declared, attrs):
        axis = attrs[self.axis_attr]
        if not declared.rank_is_static or axis >= len(declared):
            return shape
        same_rank = shape.rank_is_static and len(shape) == len(declared)
        wanted = declared.replace(axis, shape[axis] if same_rank else Dimension.dynamic())
        return shape.merge(wanted) or shape


@dataclass(frozen=True)
class IndexRange(Domain):
    """Indices into input ``of`` along the axis named by attribute ``axis_attr`` (or axis 0):
    each in [-dim, dim-1] when ``negative`` else [0, dim-1] (Gather, OneHot ...)."""

    of: int = 0
    axis_attr: str | None = None
    negative: bool = True

    def _dim(self, data_shape, attrs) -> int:
        axis = attrs.get(self.axis_attr, 0) if self.axis_attr else 0
        return data_shape[axis % len(data_shape)] if data_shape else 1

    def check(self, values, data_shape, attrs) -> None:
        dim = self._dim(data_shape, attrs)
        v = as_int64(values)
        low = -dim if self.negative else 0
        bad = (v < low) | (v >= dim)
        if bad.any():
            raise OpError(f"index {int(v[bad][0])} is out of range [{low}, {dim - 1}] for a dim "
                          f"of {dim}", code="IR308")

    def generate(self, rng, data_shape, attrs, declared, unsigned):
        dim = self._dim(data_shape, attrs)
        shape = tuple(d.min if d.is_static else 3 for d in declared) \
            if declared.rank_is_static else (3,)
        low = 0 if unsigned or not self.negative else -dim
        return rng.integers(low, max(dim, 1), size=shape)


@dataclass(frozen=True)
class SortedIds(Domain):
    """Non-decreasing integers in [0, dim(axis 0) of input ``of``] (offsets into indices), or in
    [0, ``top``) when ``top`` is set (segment ids), one per entry of the declared shape."""

    of: int = 1
    top: int | None = None

    def generate(self, rng, data_shape, attrs, declared, unsigned):
        sizes = _sizes(declared)
        high = self.top if self.top is not None else (data_shape[0] + 1 if data_shape else 1)
        values = np.sort(rng.integers(0, max(high, 1), size=sizes))
        if self.top is None and values.size:
            values[0] = 0
        return values
