"""Unsqueeze-1: insert dims of size 1 (a view of the data).

The axes number the output's dims, in [-R, R-1] for an output of rank R = data rank + number of
axes. OpenVINO settles what the specification leaves open, and irexec follows it: the same value
given twice counts once (R counts distinct values), and two values that name the same output dim
once normalized insert one dim there, which leaves one dim fewer than R, so the highest positions
append at the end (irexec warns, IR334). An empty axes tensor is an error.
"""

from __future__ import annotations

import functools

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.ir.shape_rules import normalize_axis
from irexec.ops.domains import UniqueAxes
from irexec.ops.spec import register, same_bytes
from irexec.ops.spec import (ANY, INTEGER, SCALAR_OR_VECTOR, Input, Op, OpSpec, Output,
                             TensorType, TypeVar)
from irexec.ops.values import ints

T = TypeVar("T", ANY)
_ONE = Dimension.static(1)


@functools.lru_cache(maxsize=256)  # axes and ranks repeat on every call of a model
def positions(axes: tuple[int, ...], rank: int) -> tuple[tuple[int, ...], bool]:
    """Where the new dims go (sorted output positions), and whether two axes met."""
    if not axes:
        raise OpError("axes is empty; Unsqueeze needs at least one axis", code="IR308")
    distinct = set(axes)
    expanded = rank + len(distinct)
    normalized = {normalize_axis(a, expanded) for a in distinct}
    return tuple(sorted(normalized)), len(normalized) < len(axes)


def unsqueezed(dims: list, axes: list[int], one) -> list:
    """``dims`` with ``one`` inserted at each of the sorted positions (appended past the end)."""
    out = list(dims)
    for a in axes:
        if a <= len(out):
            out.insert(a, one)
        else:
            out.append(one)
    return out


@register
class Unsqueeze(Op):
    spec = OpSpec(
        type="Unsqueeze",
        since=1,
        until=16,
        inputs=(
            Input("data", T, doc="the tensor to unsqueeze"),
            Input("axes", INTEGER, SCALAR_OR_VECTOR, domain=UniqueAxes(0, extra=True),
                  doc="where the new dims go, numbered in the output: in [-R, R-1], R = data "
                      "rank + number of axes"),
        ),
        outputs=(Output("output", "the data with dims of size 1 inserted; same elements in the "
                                  "same order", type=T),),
        doc="Inserts dims of size 1 at the positions the axes name.",
        exact=True,
        returns_view=True,  # the plan copies it where the caller must own it
        reshapes=True,
        output_bytes=same_bytes,
    )

    @staticmethod
    def infer(ctx):
        data = ctx.input_type(0)
        shape = data.shape
        values = ctx.input_value(1)
        if values is None:
            axes_shape = ctx.input_shape(1)
            if shape.rank_is_static and axes_shape.is_static and axes_shape.to_shape() in (
                    (), (1,)):
                return [TensorType(data.element_type, PartialShape([None] * (len(shape) + 1)))]
            return [TensorType(data.element_type, PartialShape.dynamic())]
        if not shape.rank_is_static:
            return [TensorType(data.element_type, PartialShape.dynamic())]
        axes = ints(values)
        where, met = positions(axes, len(shape))
        if met:
            ctx.warn("IR334", f"axes {list(axes)} name the same output dim more than once; "
                              f"OpenVINO inserts one dim there, so the output has rank "
                              f"{len(shape) + len(where)}")
        return [TensorType(data.element_type, PartialShape._of(tuple(
            unsqueezed(list(shape.dims), where, _ONE))))]

    @staticmethod
    def kernel(data, axes):
        where, _ = positions(ints(axes), data.ndim)
        return data.reshape(unsqueezed(list(data.shape), where, 1))

