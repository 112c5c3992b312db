"""SpaceToBatch-2: pad the spatial dims with zeros, then move spatial blocks into the batch
(BatchToSpace's inverse).

With ``block_shape`` ``[1, B1, ..., B(N-1)]`` each padded dim (``pads_begin + D_i + pads_end``,
divisible by B_i: IR331) splits into ``[D_i' , B_i]`` and the block offsets join the batch in
front: ``[batch * B1 * ... * B(N-1), D_1', ..., D_(N-1)']``. OpenVINO's CPU plugin is wrong when a
dim is smaller than its block (docs/compatibility.md); irexec computes the specification's result.
"""

from __future__ import annotations

import math

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.kernels.pad import pad
from irexec.kernels.strided_copy import transposed
from irexec.ops.domains import SmallInts
from irexec.ops.movement.blocks import check_amounts, check_blocks, check_vectors
from irexec.ops.openvino_cpu import refuses
from irexec.ops.spec import register
from irexec.ops.spec import (ANY, INTEGER, VECTOR, Input, Op, OpSpec, Output, Rank, TensorType,
                             TypeVar)
from irexec.ops.values import ints

T = TypeVar("T", ANY)


@register
class SpaceToBatch(Op):
    spec = OpSpec(
        type="SpaceToBatch",
        since=2,
        until=16,
        inputs=(
            Input("data", T, Rank(min=2), doc="[batch, D1, ..., D(N-1)]"),
            Input("block_shape", INTEGER, VECTOR, domain=SmallInts(0, 1, 1),
                  doc="[1, B1, ..., B(N-1)], blocks >= 1"),
            Input("pads_begin", INTEGER, VECTOR, domain=SmallInts(0, 0, 0),
                  doc="zeros to add at the start of each axis, >= 0"),
            Input("pads_end", INTEGER, VECTOR, domain=SmallInts(0, 0, 0),
                  doc="zeros to add at the end of each axis, >= 0"),
        ),
        outputs=(Output("output", "[batch * B1 * ... * B(N-1), (pads + D_i) / B_i]", type=T),),
        doc="Pads, then rearranges spatial blocks into the batch.",
        exact=True,
    )
    openvino_refuses = refuses()

    @staticmethod
    def infer(ctx):
        data = ctx.input_type(0)
        shape = data.shape
        if not shape.rank_is_static:
            return [data]
        rank = len(shape)
        check_vectors(ctx, ("block_shape", "pads_begin", "pads_end"), rank)
        known = [ctx.input_value(i) for i in (1, 2, 3)]
        if any(v is None for v in known):
            return [TensorType(data.element_type, PartialShape([None] * rank))]
        block, begin, end = (ints(v) for v in known)
        check_blocks(block)
        check_amounts(begin, "pads_begin")
        check_amounts(end, "pads_end")
        total = math.prod(block)
        b = shape[0]
        grown = begin[0] + end[0]
        dims = [Dimension((b.min + grown) * total,
                          None if b.max is None else (b.max + grown) * total)]
        for i in range(1, rank):
            d = shape[i]
            lo, hi = d.min + begin[i] + end[i], None if d.max is None else \
                d.max + begin[i] + end[i]
            if d.is_static and lo % block[i]:
                raise OpError(f"dim {i} padded ({begin[i]} + {d.min} + {end[i]} = {lo}) is not "
                              f"divisible by its block {block[i]}", code="IR331")
            dims.append(Dimension(-(-lo // block[i]), None if hi is None else hi // block[i]))
        return [TensorType(data.element_type, PartialShape._of(tuple(dims)))]

    @staticmethod
    def kernel(data, block_shape, pads_begin, pads_end):
        block, begin, end = ints(block_shape), ints(pads_begin), ints(pads_end)
        padded = pad(data, list(begin), list(end), "constant") if any(begin) or any(end) \
            else data
        n = data.ndim
        blocks = list(block[1:])
        parts = [a for d, b in zip(padded.shape[1:], blocks) for a in (d // b, b)]
        batch = padded.shape[0]
        x = padded.reshape([batch] + parts)
        order = [2 + 2 * i for i in range(n - 1)] + [0] + [1 + 2 * i for i in range(n - 1)]
        out_shape = [batch * math.prod(blocks)] + [d // b for d, b in
                                                   zip(padded.shape[1:], blocks)]
        return transposed(x, order).reshape(out_shape)
