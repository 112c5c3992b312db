"""What the slicing and splitting ops share: start, stop and step rules (Slice, SliceScatter,
StridedSlice), the sliced shape over intervals, and the split axis (Split, VariadicSplit)."""

from __future__ import annotations

import functools

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.ir.shape_rules import normalize_axis
from irexec.ops.domains import SmallInts, UniqueAxes
from irexec.ops.spec import INTEGER, VECTOR, Input
from irexec.ops.values import ints, scalar


UNBOUNDED = 1 << 62  # stands for "no upper bound" when sizing a slice of an unbounded dim


def first_and_count(n: int, start: int, stop: int, step: int) -> tuple[int, int]:
    """The first index and the number of elements that ``start:stop:step`` takes from a dim of
    ``n``, by OpenVINO's rule (negative start and stop count from the end, then are clamped:
    into [0, n] going forward, start into [0, n-1] and stop into [-1, n] going backward)."""
    first = start + n if start < 0 else start
    last = stop + n if stop < 0 else stop
    if step > 0:
        first = min(max(first, 0), n)
        last = min(max(last, 0), n)
        return first, max(0, -(-(last - first) // step))
    if n == 0:
        return 0, 0
    first = min(max(first, 0), n - 1)
    last = min(max(last, -1), n)
    return first, max(0, -(-(first - last) // -step))


def as_slice(n: int, start: int, stop: int, step: int) -> slice:
    """The Python slice that takes what OpenVINO's ``start:stop:step`` takes from a dim of n."""
    first, count = first_and_count(n, start, stop, step)
    end = first + step * count
    return slice(first, end if end >= 0 else None, step)


def sliced_dim(dim: Dimension, start: int, stop: int, step: int) -> Dimension:
    """The length a slice takes from a dim of any size in ``dim``. Between the sizes where a
    clamp starts or stops acting, the length moves one way, so its extremes are at those sizes
    or at the interval's ends."""
    if dim.is_static:
        return Dimension.static(first_and_count(dim.min, start, stop, step)[1])
    return dim_of_counts(dim, [first_and_count(n, start, stop, step)[1]
                               for n in turning_sizes(dim, start, stop)])


def turning_sizes(dim: Dimension, start: int, stop: int) -> set[int]:
    """The sizes in ``dim`` where a slice's length may stop moving one way: the interval's ends
    and the sizes next to where ``start`` or ``stop`` begins or ends clamping."""
    hi = UNBOUNDED if dim.max is None else dim.max
    sizes = {dim.min, hi}
    for v in (start, stop):
        for n in (abs(v) - 1, abs(v), abs(v) + 1):
            if dim.min <= n <= hi:
                sizes.add(n)
    return sizes


def dim_of_counts(dim: Dimension, counts: list[int]) -> Dimension:
    """The sliced dim of the lengths at ``turning_sizes``: unbounded above when ``dim`` is and
    the length grows with it."""
    top = max(counts)
    return Dimension(min(counts), None if dim.max is None and top >= UNBOUNDED // 4 else top)


def slice_axes(ctx, count: int | None, rank: int, axes_index: int) -> list[int] | None:
    """Slice's (and SliceScatter's) axes: given, normalized and unique (IR306, IR333), or
    0, 1, ... by default; None while not known."""
    if ctx.num_inputs <= axes_index:
        return None if count is None else list(range(count))
    values = ctx.input_value(axes_index)
    if values is None:
        return None
    given = ints(values)
    axes = [normalize_axis(a, rank) for a in given]
    if len(set(axes)) < len(axes):
        twice = next(a for a in axes if axes.count(a) > 1)
        raise OpError(f"axes {list(given)} name axis {twice} twice; each axis is sliced once",
                      code="IR333")
    return axes


def check_lengths(ctx, first: int, names: tuple[str, ...]) -> int | None:
    """The common length of the 1-D inputs from ``first`` on (IR307 when they differ)."""
    seen = {}
    for i, name in enumerate(names, start=first):
        if i >= ctx.num_inputs:
            continue
        values = ctx.input_value(i)
        shape = ctx.input_shape(i)
        n = values.size if values is not None else (
            shape[0].min if shape.rank_is_static and shape[0].is_static else None)
        if n is not None:
            seen[name] = n
    if len(set(seen.values())) > 1:
        listed = ", ".join(f"{k} {v}" for k, v in seen.items())
        raise OpError(f"{', '.join(seen)} must have one length each; they have {listed}",
                      code="IR307")
    return next(iter(seen.values()), None)


def check_steps(steps: tuple[int, ...], what: str = "step") -> None:
    if 0 in steps:
        raise OpError(f"{what} {list(steps)} holds 0 at index {steps.index(0)}; a slice never "
                      f"steps by 0", code="IR330")


def slice_shape(ctx, data_index: int = 0, first: int = 1) -> PartialShape:
    """The shape Slice takes from input ``data_index`` with start, stop, step (and axes) from
    input ``first`` on (SliceScatter: the shape its updates must have)."""
    shape = ctx.input_shape(data_index)
    count = check_lengths(ctx, first, ("start", "stop", "step", "axes"))
    steps = ctx.input_value(first + 2)
    if steps is not None:
        check_steps(ints(steps))
    if not shape.rank_is_static:
        return shape
    rank = len(shape)
    axes = slice_axes(ctx, count, rank, first + 3)
    starts, stops = ctx.input_value(first), ctx.input_value(first + 1)
    if axes is None:
        return PartialShape([Dimension(0, d.max) for d in shape])
    if len(axes) > rank:
        raise OpError(f"{len(axes)} axes are sliced but the data has rank {rank}", code="IR307")
    dims = list(shape.dims)
    if starts is None or stops is None or steps is None:
        for a in axes:
            dims[a] = Dimension(0, dims[a].max)
        return PartialShape._of(tuple(dims))
    for a, b, e, s in zip(axes, ints(starts), ints(stops), ints(steps)):
        dims[a] = sliced_dim(dims[a], b, e, s)
    return PartialShape._of(tuple(dims))


def slices(shape: tuple[int, ...], start, stop, step, axes=None) -> tuple[slice, ...]:
    """The Python slices (one per data axis) that Slice's inputs name, for data of ``shape``."""
    return _slices(tuple(shape), ints(start), ints(stop), ints(step),
                   None if axes is None else ints(axes))


@functools.lru_cache(maxsize=1024)  # a model slices the same shapes on every call
def _slices(shape: tuple[int, ...], b, e, s, axes) -> tuple[slice, ...]:
    out = [slice(None)] * len(shape)
    which = range(len(b)) if axes is None else [a % len(shape) for a in axes]
    for a, first, last, by in zip(which, b, e, s):
        out[a] = as_slice(shape[a], first, last, by)
    return tuple(out)


BOUNDS = SmallInts(0, -3, 3)


# start, stop, step and axes: Slice-8's and SliceScatter-15's, which slice the same way
SLICE_INPUTS = (
    Input("start", INTEGER, VECTOR, domain=BOUNDS,
          doc="first index per sliced axis (negative: from the end; clamped)"),
    Input("stop", INTEGER, VECTOR, domain=BOUNDS,
          doc="end index per sliced axis, exclusive (negative: from the end; clamped)"),
    Input("step", INTEGER, VECTOR, domain=SmallInts(0, 1, 1),
          doc="step per sliced axis; never 0, negative slices backward"),
    Input("axes", INTEGER, VECTOR, domain=UniqueAxes(0), optional=True,
          doc="the sliced axes, each once, in [-rank, rank-1]; default 0, 1, ..."),
)


def split_axis(ctx, index: int = 1) -> int | None:
    """The axis input, normalized against the data's rank (None while either is unknown)."""
    values = ctx.input_value(index)
    shape = ctx.input_shape(0)
    if values is None:
        return None
    axis = scalar(values, "axis")
    return normalize_axis(axis, shape.rank)
