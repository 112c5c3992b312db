"""StridedSlice-1: numpy-style basic indexing with masks (``data[1:, ..., None, 0, ::-1]``).

Slicing step i uses begin[i], end[i] and stride[i] (stride 1 when the input is absent) unless a
mask bit says otherwise: ``begin_mask``/``end_mask`` ignore begin/end (the start or the end of
the dim), ``new_axis_mask`` inserts a dim of 1, ``shrink_axis_mask`` takes the single element
begin[i] (which must lie in [-dim, dim-1]: IR325) and drops the dim, ``ellipsis_mask`` (one bit at
most) stands for every axis no step names. Masks shorter than begin are padded with zeros; bits
beyond are ignored. Begin and end clamp as in Slice (OpenVINO's rule, irexec/ops/movement/
slice.py). The result is a view of the data (never written through).

Where the specification's examples and OpenVINO disagree (an ``end_mask`` bit with a negative
stride), OpenVINO settles it: the slice runs to the first element inclusive, like numpy's ``::-1``.
"""

from __future__ import annotations

from dataclasses import dataclass

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.domains import SmallInts
from irexec.ops.movement.slicing import (as_slice, check_lengths, check_steps, dim_of_counts,
                                         first_and_count, sliced_dim, turning_sizes)
from irexec.ops.openvino_cpu import refuses
from irexec.ops.spec import register
from irexec.ops.spec import (ANY, INTEGER, VECTOR, Attr, Input, Op, OpSpec, Output, TensorType,
                             TypeVar)
from irexec.ops.values import ints

T = TypeVar("T", ANY)


@dataclass(frozen=True)
class Step:
    kind: str  # "slice", "shrink", "new", "ellipsis"
    index: int  # the step's position in begin/end/stride


def _bits(mask: tuple[int, ...], count: int) -> set[int]:
    return {i for i, v in enumerate(mask[:count]) if v == 1}


def plan(rank: int, count: int, attrs: dict) -> list[tuple[Step, int | None]]:
    """Each slicing step with the input axis it consumes (None for a new axis); an ellipsis
    step is expanded into one ("ellipsis", axis) entry per axis it stands for, and an implicit
    one closes the plan. OpError when more axes are named than the data has."""
    ellipsis_all = [i for i, v in enumerate(attrs["ellipsis_mask"]) if v == 1]
    if len(ellipsis_all) > 1:
        raise OpError(f"ellipsis_mask {list(attrs['ellipsis_mask'])} sets {len(ellipsis_all)} "
                      f"bits; at most one ellipsis is allowed", code="IR302")
    ellipsis = _bits(attrs["ellipsis_mask"], count)
    new = _bits(attrs["new_axis_mask"], count) - ellipsis
    shrink = _bits(attrs["shrink_axis_mask"], count) - ellipsis - new
    real = count - len(ellipsis) - len(new)
    if real > rank:
        raise OpError(f"the slice names {real} axes of the data (besides new axes) but the data "
                      f"has rank {rank}", code="IR307")
    hidden = rank - real
    steps: list[tuple[Step, int | None]] = []
    axis = 0
    for i in range(count):
        if i in ellipsis:
            for _ in range(hidden):
                steps.append((Step("ellipsis", i), axis))
                axis += 1
        elif i in new:
            steps.append((Step("new", i), None))
        else:
            steps.append((Step("shrink" if i in shrink else "slice", i), axis))
            axis += 1
    while axis < rank:  # the implicit ellipsis at the end
        steps.append((Step("ellipsis", count), axis))
        axis += 1
    return steps


def bounds(n: int, begin: int, end: int, stride: int, begin_masked: bool, end_masked: bool) \
        -> tuple[int, int]:
    """begin and end with the masks applied, in the terms ``first_and_count`` reads: a masked
    end going backward runs past index 0 (numpy's ``::-1``)."""
    if begin_masked:
        begin = n - 1 if stride < 0 else 0
    if end_masked:
        end = -n - 1 if stride < 0 else n
    return begin, end


def check_shrink(n: int, begin: int, step: int) -> int:
    if not -n <= begin < n:
        raise OpError(f"begin[{step}] = {begin} is outside [{-n}, {n - 1}]: a shrunk axis takes "
                      f"one element, which must exist in its dim of {n}", code="IR325")
    return begin + n if begin < 0 else begin


MASK = "comma-separated 0s and 1s, one per slicing step (missing bits are 0)"


@register
class StridedSlice(Op):
    spec = OpSpec(
        type="StridedSlice",
        since=1,
        until=16,
        attrs=(
            Attr("begin_mask", "int_list", doc=f"1: ignore begin[i], start at the dim's start "
                                               f"(its end going backward); {MASK}"),
            Attr("end_mask", "int_list", doc=f"1: ignore end[i], run to the dim's end (its start "
                                             f"going backward); {MASK}"),
            Attr("new_axis_mask", "int_list", default=(), doc=f"1: insert a dim of 1; {MASK}"),
            Attr("shrink_axis_mask", "int_list", default=(),
                 doc=f"1: take element begin[i] and drop the dim; {MASK}"),
            Attr("ellipsis_mask", "int_list", default=(),
                 doc=f"1 (once at most): every axis no other step names; {MASK}"),
        ),
        inputs=(
            Input("data", T, doc="the tensor to slice"),
            Input("begin", INTEGER, VECTOR, domain=SmallInts(0, -2, 1),
                  doc="first index per step (negative: from the end; clamped)"),
            Input("end", INTEGER, VECTOR, domain=SmallInts(0, -2, 3),
                  doc="end index per step, exclusive (negative: from the end; clamped)"),
            Input("stride", INTEGER, VECTOR, domain=SmallInts(0, 1, 1), optional=True,
                  doc="step per slicing step, never 0; 1 when absent"),
        ),
        outputs=(Output("output", "the selected elements", type=T),),
        doc="Takes a strided slice with numpy's new-axis, shrink and ellipsis indexing.",
        exact=True,
        returns_view=True,  # the plan copies it where the caller must own it
    )
    openvino_refuses = refuses(strings=True)

    @staticmethod
    def infer(ctx):
        data = ctx.input_type(0)
        shape = data.shape
        count = check_lengths(ctx, 1, ("begin", "end", "stride"))
        strides = ctx.input_value(3) if ctx.num_inputs > 3 else None
        if strides is not None:
            check_steps(ints(strides), "stride")
        if not shape.rank_is_static or count is None:
            return [TensorType(data.element_type, PartialShape.dynamic())]
        begin, end = ctx.input_value(1), ctx.input_value(2)
        if ctx.num_inputs <= 3 and begin is not None:
            strides_known = (1,) * count
        else:
            strides_known = ints(strides) if strides is not None else None
        b = ints(begin) if begin is not None else None
        e = ints(end) if end is not None else None
        bm, em = ctx.attrs["begin_mask"], ctx.attrs["end_mask"]
        dims = []
        for step, axis in plan(len(shape), count, ctx.attrs):
            if step.kind == "new":
                dims.append(Dimension.static(1))
                continue
            dim = shape[axis]
            i = step.index
            if step.kind == "ellipsis":
                dims.append(dim)
            elif step.kind == "shrink":
                if b is not None and dim.is_static:
                    check_shrink(dim.min, b[i], i)
            elif b is None or e is None or strides_known is None:
                dims.append(Dimension(0, dim.max))
            else:
                dims.append(strided_dim(dim, b[i], e[i], strides_known[i], _bit(bm, i),
                                        _bit(em, i)))
        return [TensorType(data.element_type, PartialShape._of(tuple(dims)))]

    @staticmethod
    def kernel(data, begin, end, stride=None, *, begin_mask, end_mask, new_axis_mask,
               shrink_axis_mask, ellipsis_mask):
        b, e = ints(begin), ints(end)
        s = ints(stride) if stride is not None else (1,) * len(b)
        attrs = {"ellipsis_mask": ellipsis_mask, "new_axis_mask": new_axis_mask,
                 "shrink_axis_mask": shrink_axis_mask}
        index = []
        for step, axis in plan(data.ndim, len(b), attrs):
            i = step.index
            if step.kind == "new":
                index.append(None)
            elif step.kind == "ellipsis":
                index.append(slice(None))
            elif step.kind == "shrink":
                index.append(check_shrink(data.shape[axis], b[i], i))
            else:
                n = data.shape[axis]
                first, last = bounds(n, b[i], e[i], s[i], _bit(begin_mask, i),
                                     _bit(end_mask, i))
                index.append(as_slice(n, first, last, s[i]))
        return data[tuple(index)]


def _bit(mask: tuple[int, ...], i: int) -> bool:
    return i < len(mask) and mask[i] == 1


def strided_dim(dim: Dimension, begin: int, end: int, stride: int, begin_masked: bool,
                end_masked: bool) -> Dimension:
    """The length one slicing step takes from a dim of any size in ``dim`` (a masked bound
    moves with the dim's size, so each size is sized with its own bounds)."""
    if not (begin_masked or end_masked):
        return sliced_dim(dim, begin, end, stride)
    counts = []
    for n in turning_sizes(dim, begin, end):
        first, last = bounds(n, begin, end, stride, begin_masked, end_masked)
        counts.append(first_and_count(n, first, last, stride)[1])
    return dim_of_counts(dim, counts)

