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
from irexec.kernels.numeric import compute_dtype, narrow
from irexec.kernels.windows import add_taps
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
        add_taps(padded, cols, kernel, counts, strides, dilations)
        y = padded[:, :, pads_begin[0]:pads_begin[0] + size[0],
                   pads_begin[1]:pads_begin[1] + size[1]]
        y = narrow(np.ascontiguousarray(y), data.dtype)
        return y if data.ndim == 3 else y[0]
