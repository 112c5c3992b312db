"""Col2Im-15: sums sliding blocks back into an image (PyTorch's ``fold``, the inverse layout of
im2col).

Data [N, C * KH * KW, L] (or without N) holds, for each of the L block positions (row-major over
the positions a KH x KW window with the attributes' strides, dilations and pads takes on an
output_size image), the block's values, channel c * KH * KW + kh * KW + kw. Each value is added
at its pixel of the padded image; the padding is then cut off. The kernel adds one strided slice
per kernel tap or per block position along each axis, whichever are fewer, in the compute type
(integers wrap).
"""

from __future__ import annotations

import math

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.kernels.numeric import compute_dtype, finish
from irexec.ops import windows
from irexec.ops.domains import as_int64
from irexec.ops.spec import register
from irexec.ops.spec import (SHAPE_INDEX, VECTOR, Attr, Input, Op, OpSpec, Output, Rank,
                             TensorType, TypeVar)

T = TypeVar("T", windows.ARITH)
_ATTRS = ("strides", "dilations", "pads_begin", "pads_end")


def _pair(ctx, i: int, name: str) -> list[int] | None:
    shape = ctx.input_shape(i)
    if shape.rank_is_static and (len(shape) != 1 or not shape[0].contains(2)):
        raise OpError(f"{name} has shape {shape}; it holds 2 values (rows, cols)",
                      code="IR307")
    value = ctx.input_value(i)
    if value is None:
        return None
    values = [int(v) for v in as_int64(np.asarray(value)).reshape(-1)]
    if name == "kernel_size" and any(v < 1 for v in values):
        raise OpError(f"kernel_size {values} has a size below 1", code="IR347")
    if any(v < 0 for v in values):
        raise OpError(f"{name} {values} has a negative size", code="IR308")
    return values


def blocks(output_size, kernel, attrs) -> list[int]:
    """The number of block positions along each axis."""
    return [(o + b + e - d * (k - 1) - 1) // s + 1 for o, k, s, d, b, e in
            zip(output_size, kernel, attrs["strides"], attrs["dilations"], attrs["pads_begin"],
                attrs["pads_end"])]


def _add_blocks(padded, cols, kernel, counts, strides, dilations) -> None:
    """Adds cols [N, C, KH, KW, rows, cols of blocks] into the padded image with one strided
    slice per loop step. Along each axis the loop runs over the kernel's taps or over the
    block positions, whichever are fewer, the other taken whole by the slice: the Python loop
    is at most min(KH, rows) * min(KW, cols) steps, never the taps of a huge kernel over a
    few blocks (a 1e5 x 1e5 kernel was 1e10 steps over empty slices)."""
    by_tap = [k <= c for k, c in zip(kernel, counts)]

    def spans(axis: int):
        k, c, s, d = kernel[axis], counts[axis], strides[axis], dilations[axis]
        if by_tap[axis]:  # tap t: positions t*d, t*d + s, ... (one per block)
            return [(slice(t * d, t * d + (c - 1) * s + 1, s), t, slice(None))
                    for t in range(k)]
        # block b: positions b*s, b*s + d, ... (one per tap)
        return [(slice(b * s, b * s + (k - 1) * d + 1, d), slice(None), b) for b in range(c)]

    for rows, tap0, block0 in spans(0):
        for cols_, tap1, block1 in spans(1):
            part = cols[:, :, tap0, tap1, block0, block1]
            if by_tap[0] and not by_tap[1]:  # axes left: KW, block rows -> rows first
                part = part.swapaxes(-1, -2)
            padded[:, :, rows, cols_] += part


@register
class Col2Im(Op):
    spec = OpSpec(
        type="Col2Im",
        numerics="accumulating",
        since=15,
        until=16,
        attrs=(
            Attr("strides", "uint_list", default=(1, 1), doc="[rows, cols] between blocks"),
            Attr("dilations", "uint_list", default=(1, 1),
                 doc="[rows, cols] between the pixels of a block"),
            Attr("pads_begin", "uint_list", default=(0, 0),
                 doc="[rows, cols] of padding before the image (cut off at the end)"),
            Attr("pads_end", "uint_list", default=(0, 0),
                 doc="[rows, cols] of padding after the image (cut off at the end)"),
        ),
        inputs=(
            Input("data", T, Rank(min=2, max=3),
                  doc="[N, C * KH * KW, L] or [C * KH * KW, L]: each block's values"),
            Input("output_size", SHAPE_INDEX, VECTOR, doc="[H, W] of the image"),
            Input("kernel_size", SHAPE_INDEX, VECTOR, doc="[KH, KW] of a block"),
        ),
        outputs=(Output("output", "[N, C, H, W] or [C, H, W]: the blocks summed into the "
                                  "image", type=T),),
        doc="Sums sliding blocks into an image (the inverse layout of im2col; PyTorch's fold).",
    )

    @staticmethod
    def infer(ctx):
        attrs = ctx.attrs
        windows.check_attrs(attrs, 2, _ATTRS)
        data = ctx.input_shape(0)
        et = ctx.output_element_types(1)[0]
        size, kernel = _pair(ctx, 1, "output_size"), _pair(ctx, 2, "kernel_size")
        if not data.rank_is_static:
            return [TensorType(et, PartialShape.dynamic())]
        batched = len(data) == 3
        cdim, ldim = data[len(data) - 2], data[len(data) - 1]
        channels = Dimension.dynamic()
        if kernel is not None:
            k = math.prod(kernel)
            if cdim.is_static:
                if cdim.min % k:
                    raise OpError(f"the data has {cdim} values per block, which a {kernel[0]}x"
                                  f"{kernel[1]} kernel does not divide into channels",
                                  code="IR307")
                channels = Dimension.static(cdim.min // k)
        hw = [Dimension.dynamic()] * 2 if size is None else [Dimension.static(v) for v in size]
        if size is not None and kernel is not None:
            counts = blocks(size, kernel, attrs)
            if any(c < 1 for c in counts):
                raise OpError(f"a {kernel[0]}x{kernel[1]} block (dilations "
                              f"{list(attrs['dilations'])}) does not fit a {size[0]}x{size[1]} "
                              f"image with pads {list(attrs['pads_begin'])} and "
                              f"{list(attrs['pads_end'])}", code="IR346")
            if not ldim.contains(counts[0] * counts[1]):
                raise OpError(f"the data holds {ldim} blocks but a {size[0]}x{size[1]} image "
                              f"takes {counts[0]}x{counts[1]} = {counts[0] * counts[1]} blocks "
                              f"of {kernel[0]}x{kernel[1]}", code="IR307")
        dims = ([data[0]] if batched else []) + [channels] + hw
        return [TensorType(et, PartialShape(dims))]

    @staticmethod
    def kernel(data, output_size, kernel_size, *, strides, dilations, pads_begin, pads_end):
        ct = compute_dtype(data.dtype)
        size = [int(v) for v in as_int64(np.asarray(output_size)).reshape(-1)]
        kernel = [int(v) for v in as_int64(np.asarray(kernel_size)).reshape(-1)]
        attrs = dict(strides=strides, dilations=dilations, pads_begin=pads_begin,
                     pads_end=pads_end)
        counts = blocks(size, kernel, attrs)
        x = data if data.ndim == 3 else data[None]
        n = x.shape[0]
        c = x.shape[1] // math.prod(kernel)
        cols = x.astype(ct, copy=False).reshape(n, c, kernel[0], kernel[1], *counts)
        padded = np.zeros((n, c, size[0] + pads_begin[0] + pads_end[0],
                           size[1] + pads_begin[1] + pads_end[1]), ct)
        if padded.size and cols.size:
            _add_blocks(padded, cols, kernel, counts, strides, dilations)
        y = padded[:, :, pads_begin[0]:pads_begin[0] + size[0],
                   pads_begin[1]:pads_begin[1] + size[1]]
        y = finish(np.ascontiguousarray(y), data.dtype)
        return y if data.ndim == 3 else y[0]
