"""SpaceToDepth-1: move spatial blocks into the channels (DepthToSpace's inverse).

Data ``[N, C, D1, ..., DK]`` becomes ``[N, C * bs^K, D1 / bs, ..., DK / bs]``; ``blocks_first``
puts the block offsets before the channel, ``depth_first`` after it. Each spatial dim must be
divisible by bs (IR331).
"""

from __future__ import annotations

from irexec.ir.shape import PartialShape
from irexec.kernels.strided_copy import transposed
from irexec.ops.movement.blocks import BLOCK, divided, scaled
from irexec.ops.openvino_cpu import refuses
from irexec.ops.spec import register
from irexec.ops.spec import ANY, Attr, Input, Op, OpSpec, Output, Rank, TensorType, TypeVar

T = TypeVar("T", ANY)


@register
class SpaceToDepth(Op):
    spec = OpSpec(
        type="SpaceToDepth",
        since=1,
        until=16,
        attrs=(Attr("mode", "enum", values=("blocks_first", "depth_first"),
                    doc="where the block offsets go in the channels: before them "
                        "(blocks_first) or after (depth_first)"), BLOCK),
        inputs=(Input("data", T, Rank(min=3), doc="[N, C, D1, ..., DK]"),),
        outputs=(Output("output", "[N, C * bs^K, D1 / bs, ..., DK / bs]", type=T),),
        doc="Rearranges spatial blocks into channels.",
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
        spatial = [divided(d, bs, f"dim {i + 2}", shape) for i, d in enumerate(shape.dims[2:])]
        dims = [shape[0], scaled(shape[1], bs ** k)] + spatial
        return [TensorType(data.element_type, PartialShape._of(tuple(dims)))]

    @staticmethod
    def kernel(data, *, mode, block_size):
        n, c, *spatial = data.shape
        k, bs = len(spatial), block_size
        x = data.reshape([n, c] + [a for d in spatial for a in (d // bs, bs)])
        blocks = [3 + 2 * i for i in range(k)]
        space = [2 + 2 * i for i in range(k)]
        order = [0] + (blocks + [1] if mode == "blocks_first" else [1] + blocks) + space
        return transposed(x, order).reshape([n, c * bs ** k] + [d // bs for d in spatial])
