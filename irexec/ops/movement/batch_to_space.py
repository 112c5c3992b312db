"""BatchToSpace-2: move blocks of the batch into the spatial dims, then crop.

With ``block_shape`` ``[1, B1, ..., B(N-1)]`` the batch (divisible by B1 * ... * B(N-1), IR331) is
read as ``[B1, ..., B(N-1), batch']``, each block offset joins its spatial dim (``D_i * B_i``), and
``crops_begin``/``crops_end`` remove elements from each side. The batch's block is 1; crops are
>= 0 and leave no dim negative (IR308).
"""

from __future__ import annotations

import math

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.kernels.strided_copy import transposed
from irexec.ops.domains import SmallInts
from irexec.ops.movement.blocks import check_amounts, check_blocks, check_vectors
from irexec.ops.openvino_cpu import refuses
from irexec.ops.spec import register
from irexec.ops.spec import (ANY, INTEGER, VECTOR, Input, Op, OpSpec, Output, Rank, TensorType,
                             TypeVar)
from irexec.ops.values import ints

T = TypeVar("T", ANY)


NAMES = ("block_shape", "crops_begin", "crops_end")


@register
class BatchToSpace(Op):
    spec = OpSpec(
        type="BatchToSpace",
        since=2,
        until=16,
        inputs=(
            Input("data", T, Rank(min=2), doc="[batch, D1, ..., D(N-1)]"),
            Input("block_shape", INTEGER, VECTOR, domain=SmallInts(0, 1, 1),
                  doc="[1, B1, ..., B(N-1)], blocks >= 1"),
            Input("crops_begin", INTEGER, VECTOR, domain=SmallInts(0, 0, 0),
                  doc="elements to remove at the start of each axis, >= 0"),
            Input("crops_end", INTEGER, VECTOR, domain=SmallInts(0, 0, 0),
                  doc="elements to remove at the end of each axis, >= 0"),
        ),
        outputs=(Output("output", "[batch / (B1 * ... * B(N-1)), D_i * B_i - crops]", type=T),),
        doc="Rearranges blocks of the batch into spatial blocks, then crops.",
        exact=True,
    )
    openvino_refuses = refuses(strings=True)

    @staticmethod
    def infer(ctx):
        data = ctx.input_type(0)
        shape = data.shape
        if not shape.rank_is_static:
            return [data]
        rank = len(shape)
        check_vectors(ctx, NAMES, rank)
        known = [ctx.input_value(i) for i in (1, 2, 3)]
        if any(v is None for v in known):
            return [TensorType(data.element_type, PartialShape([None] * rank))]
        block, begin, end = (ints(v) for v in known)
        check_blocks(block)
        check_amounts(begin, "crops_begin")
        check_amounts(end, "crops_end")
        total = math.prod(block)
        b = shape[0]
        if b.is_static and b.min % total:
            raise OpError(f"the batch {b.min} is not divisible by the product of block_shape "
                          f"{list(block)} ({total})", code="IR331")
        dims = []
        for i in range(rank):
            d = shape[i]
            if i == 0:  # the batch loses its blocks, then its own crops
                d = Dimension(-(-d.min // total), None if d.max is None else d.max // total)
            lo = d.min * block[i] - begin[i] - end[i]
            hi = None if d.max is None else d.max * block[i] - begin[i] - end[i]
            if hi is not None and hi < 0 or d.is_static and lo < 0:
                raise OpError(f"crops of {begin[i]} and {end[i]} remove more than the "
                              f"{d.min * block[i]} elements of dim {i} (after the blocks move)",
                              code="IR308")
            dims.append(Dimension(max(lo, 0), hi))
        return [TensorType(data.element_type, PartialShape._of(tuple(dims)))]

    @staticmethod
    def kernel(data, block_shape, crops_begin, crops_end):
        block, begin, end = ints(block_shape), ints(crops_begin), ints(crops_end)
        n = data.ndim
        spatial = list(data.shape[1:])
        blocks = list(block[1:])
        batch = data.shape[0] // math.prod(blocks)
        x = data.reshape(blocks + [batch] + spatial)
        order = [n - 1] + [a for i in range(n - 1) for a in (n + i, i)]
        joined = transposed(x, order).reshape([batch] + [d * b for d, b in zip(spatial, blocks)])
        crop = tuple(slice(b, joined.shape[i] - e) for i, (b, e) in enumerate(zip(begin, end)))
        return joined[crop]
