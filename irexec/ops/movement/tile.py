"""Tile-1: repeat a tensor along each axis, as ``numpy.tile``.

``repeats`` holds one count per axis, aligned to the right: a shorter list repeats the leading
axes once, a longer one adds leading axes of size 1 to the data first. Counts are >= 0 (IR327).
The output is written in one broadcasting copy (each output row a copy of a data row), with no
intermediate. OpenVINO's CPU plugin gets some repeat lists wrong (docs/compatibility.md); irexec
computes numpy's result.
"""

from __future__ import annotations


import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.kernels import buffers
from irexec.ops.domains import SmallInts
from irexec.ops.openvino_cpu import refuses
from irexec.ops.spec import register
from irexec.ops.spec import (ANY, INTEGER, VECTOR, Input, Op, OpSpec, Output, TensorType,
                             TypeVar)
from irexec.ops.values import ints

T = TypeVar("T", ANY)


def aligned(shape: tuple, repeats: tuple[int, ...], one) -> tuple[list, list[int]]:
    """Data dims and repeats made the same length (ones at the front of the shorter)."""
    rank = max(len(shape), len(repeats))
    return ([one] * (rank - len(shape)) + list(shape),
            [1] * (rank - len(repeats)) + list(repeats))


@register
class Tile(Op):
    spec = OpSpec(
        type="Tile",
        since=1,
        until=16,
        inputs=(
            Input("data", T, doc="the tensor to repeat"),
            Input("repeats", INTEGER, VECTOR, domain=SmallInts(0, 1, 2),
                  doc="how many times per axis, >= 0, aligned to the right"),
        ),
        outputs=(Output("output", "dim * repeats along each axis", type=T),),
        doc="Repeats a tensor along each axis (numpy.tile).",
        exact=True,
    )
    openvino_refuses = refuses()

    @staticmethod
    def infer(ctx):
        data = ctx.input_type(0)
        shape = data.shape
        values = ctx.input_value(1)
        if values is None:
            n = ctx.input_shape(1)
            if shape.rank_is_static and n.rank_is_static and n[0].is_static:
                rank = max(len(shape), n[0].min)
                return [TensorType(data.element_type, PartialShape([None] * rank))]
            return [TensorType(data.element_type, PartialShape.dynamic())]
        repeats = ints(values)
        bad = [r for r in repeats if r < 0]
        if bad:
            raise OpError(f"repeats {list(repeats)} holds {bad[0]}; a count is >= 0",
                          code="IR327")
        if not shape.rank_is_static:
            return [TensorType(data.element_type, PartialShape.dynamic())]
        dims, reps = aligned(shape.dims, repeats, Dimension.static(1))
        out = [Dimension(d.min * r, None if d.max is None else d.max * r) for d, r in
               zip(dims, reps)]
        return [TensorType(data.element_type, PartialShape._of(tuple(out)))]

    @staticmethod
    def kernel(data, repeats):
        dims, reps = aligned(data.shape, ints(repeats), 1)
        out = buffers.empty(tuple(d * r for d, r in zip(dims, reps)), data.dtype)
        if out.size:
            # out viewed as [r0, d0, r1, d1, ...]; data broadcast over the r axes.
            interleaved = [n for pair in zip(reps, dims) for n in pair]
            source = data.reshape([n for d in dims for n in (1, d)])
            np.copyto(out.reshape(interleaved), source)
        return out
