"""What the block rearrangements share: BatchToSpace's and SpaceToBatch's checks of block shapes
and pads or crops, DepthToSpace's and SpaceToDepth's block size and dims scaled by it."""

from __future__ import annotations

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.spec import Attr


def check_vectors(ctx, names: tuple[str, ...], rank: int) -> None:
    for i, name in enumerate(names, start=1):
        n = ctx.input_shape(i)
        if n.rank_is_static and n[0].is_static and n[0].min != rank:
            raise OpError(f"{name} has {n[0].min} values but the data has rank {rank}; give one "
                          f"per axis", code="IR307")


def check_blocks(block: tuple[int, ...]) -> None:
    if block and block[0] != 1:
        raise OpError(f"block_shape {list(block)} starts with {block[0]}; the batch's block is 1",
                      code="IR308")
    if any(b < 1 for b in block):
        raise OpError(f"block_shape {list(block)} holds {min(block)}; blocks are >= 1",
                      code="IR308")


def check_amounts(values: tuple[int, ...], name: str) -> None:
    if any(v < 0 for v in values):
        raise OpError(f"{name} {list(values)} holds {min(values)}; they are >= 0", code="IR308")


BLOCK = Attr("block_size", "uint", default=1, doc="the block's size along each spatial dim")


def scaled(d: Dimension, factor: int) -> Dimension:
    return Dimension(d.min * factor, None if d.max is None else d.max * factor)


def divided(d: Dimension, factor: int, what: str, shape: PartialShape) -> Dimension:
    if factor == 0:
        raise OpError("block_size is 0; a block has at least one element", code="IR302")
    if d.is_static and d.min % factor:
        raise OpError(f"{what} of the data {shape} is {d.min}, not divisible by {factor}",
                      code="IR331")
    return Dimension(-(-d.min // factor), None if d.max is None else d.max // factor)
