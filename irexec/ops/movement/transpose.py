"""Transpose-1: permute the axes of a tensor.

The order names every input axis once (output axis i is input axis order[i]); an empty order
reverses the axes. The kernel copies tile by tile (irexec/kernels/strided_copy.py).
"""

from __future__ import annotations

from irexec.errors import OpError
from irexec.ir.shape import PartialShape
from irexec.ir.shape_rules import hull
from irexec.kernels import buffers
from irexec.kernels.strided_copy import copy_into
from irexec.ops.domains import Permutation
from irexec.ops.openvino_cpu import refuses
from irexec.ops.spec import register
from irexec.ops.spec import (ANY, INTEGER, VECTOR, Input, Op, OpSpec, Output, TensorType,
                             TypeVar)
from irexec.ops.values import ints

T = TypeVar("T", ANY)


def permutation(order: tuple[int, ...], rank: int) -> tuple[int, ...]:
    """The order checked against the rank (an empty order reverses the axes); OpError IR307
    for the wrong length, IR306 for an axis out of range, IR333 for an axis named twice."""
    if not order:
        return tuple(range(rank - 1, -1, -1))
    if len(order) != rank:
        raise OpError(f"the order {list(order)} has {len(order)} entries but the data has rank "
                      f"{rank}; it must name every axis once", code="IR307")
    bad = [a for a in order if not 0 <= a < rank]
    if bad:
        raise OpError(f"the order {list(order)} names axis {bad[0]}, outside [0, {rank - 1}]",
                      code="IR306")
    if len(set(order)) != rank:
        twice = next(a for a in order if order.count(a) > 1)
        raise OpError(f"the order {list(order)} names axis {twice} twice; it must name every "
                      f"axis once", code="IR333")
    return order


@register
class Transpose(Op):
    spec = OpSpec(
        type="Transpose",
        since=1,
        until=16,
        inputs=(
            Input("data", T, doc="the tensor to transpose"),
            Input("input_order", INTEGER, VECTOR, domain=Permutation(0),
                  doc="a permutation of [0, rank-1]: output axis i is input axis order[i]; "
                      "empty: the axes reversed"),
        ),
        outputs=(Output("output", "the data with its axes permuted", type=T),),
        doc="Permutes the axes of a tensor.",
        exact=True,
        returns_view=True,  # the plan copies it where the caller must own it
    )
    openvino_refuses = refuses()

    @staticmethod
    def infer(ctx):
        data = ctx.input_type(0)
        shape = data.shape
        values = ctx.input_value(1)
        order_shape = ctx.input_shape(1)
        if not shape.rank_is_static:
            n = order_shape[0] if order_shape.rank_is_static else None
            rank = PartialShape.dynamic() if n is None or not n.is_static or n.min == 0 \
                else PartialShape([None] * n.min)
            return [TensorType(data.element_type, rank)]
        rank = len(shape)
        if values is None:
            n = order_shape[0] if order_shape.rank_is_static else None
            if n is not None and not n.contains(rank) and not n.contains(0):
                raise OpError(f"the order has {n} entries but the data has rank {rank}; it must "
                              f"name every axis once", code="IR307")
            # Each output dim is one of the input dims, which one not known yet.
            dims = [hull(shape.dims)] * rank if rank else []
            return [TensorType(data.element_type, PartialShape._of(tuple(dims)))]
        order = permutation(ints(values), rank)
        return [TensorType(data.element_type, PartialShape._of(tuple(shape[a] for a in order)))]

    @staticmethod
    def kernel(data, input_order):
        order = ints(input_order) or tuple(range(data.ndim - 1, -1, -1))
        src = data.transpose(order)
        if not order or order[-1] == data.ndim - 1:
            # the last axis stays last: a view whose rows are still contiguous runs, which
            # every consumer reads as it reads a Slice's (a MatMul as BLAS's leading
            # dimension; attention's [B, L, H, D] -> [B, H, L, D] costs nothing)
            return src
        if data.nbytes < buffers.MIN_BYTES:  # small: numpy's copy, no pool to draw from
            return src.copy()
        out = buffers.empty(src.shape, data.dtype)
        copy_into(out, src)
        return out
