"""DepthToSpace-1: move blocks of channels into the spatial dims.

Data ``[N, C, D1, ..., DK]`` becomes ``[N, C / bs^K, D1 * bs, ..., DK * bs]``; ``blocks_first``
reads the channels as ``[bs, ..., bs, C / bs^K]``, ``depth_first`` as ``[C / bs^K, bs, ..., bs]``.
C must be divisible by bs^K (IR331).
"""

from __future__ import annotations

from irexec.ir.shape import PartialShape
from irexec.kernels.strided_copy import transposed
from irexec.ops.movement.blocks import BLOCK, divided, scaled
from irexec.ops.openvino_cpu import refuses
from irexec.ops.spec import register
from irexec.ops.spec import ANY, Attr, Input, Op, OpSpec, Output, Rank, TensorType, TypeVar

T = TypeVar("T", ANY)

MODE = Attr("mode", "enum", values=("blocks_first", "depth_first"),
            doc="how the channels split: blocks_first [bs, ..., bs, C'] or depth_first "
                "[C', bs, ..., bs]")


@register
class DepthToSpace(Op):
    spec = OpSpec(
        type="DepthToSpace",
        since=1,
        until=16,
        attrs=(MODE, BLOCK),
        inputs=(Input("data", T, Rank(min=3), doc="[N, C, D1, ..., DK]"),),
        outputs=(Output("output", "[N, C / bs^K, D1 * bs, ..., DK * bs]", type=T),),
        doc="Rearranges blocks of channels into spatial blocks.",
        exact=True,
    )
    openvino_refuses = refuses()

    @staticmethod
    def infer(ctx):
        data = ctx.input_type(0)
        shape = data.shape
        if not shape.rank_is_static:
            return [data]
        bs, k = ctx.attrs["block_size"], len(shape) - 2
        c = divided(shape[1], bs ** k, "the channel dim (1)", shape)
        dims = [shape[0], c] + [scaled(d, bs) for d in shape.dims[2:]]
        return [TensorType(data.element_type, PartialShape._of(tuple(dims)))]

    @staticmethod
    def kernel(data, *, mode, block_size):
        n, c, *spatial = data.shape
        k, bs = len(spatial), block_size
        c2 = c // bs ** k
        if mode == "blocks_first":
            x = data.reshape([n] + [bs] * k + [c2] + spatial)
            order = [0, k + 1] + [a for i in range(k) for a in (k + 2 + i, 1 + i)]
        else:
            x = data.reshape([n, c2] + [bs] * k + spatial)
            order = [0, 1] + [a for i in range(k) for a in (k + 2 + i, 2 + i)]
        return transposed(x, order).reshape([n, c2] + [d * bs for d in spatial])
