"""ExtractImagePatches-3: every sizes[0] x sizes[1] patch of data [N, C, H, W] (taken every
``strides``, its pixels ``rates`` apart) laid out along the channel axis.

Output [N, sizes[0] * sizes[1] * C, out_rows, out_cols]; channel (kh * sizes[1] + kw) * C + c
holds pixel (kh, kw) of channel c's patch (TensorFlow's order); pixels outside the data are 0.
As OpenVINO computes it:

* ``valid``: out = floor((in - rate * (size - 1) - 1) / stride) + 1, at least 0 (whole patches
  only);
* ``same_upper`` / ``same_lower``: out = ceil(in / stride); the padding P = (out - 1) * stride
  + rate * (size - 1) + 1 - in is split in two only when 0 < P < the dilated patch size (an odd
  P puts the larger half at the start for same_lower, at the end for same_upper), else the
  patches start at the first pixel.

The kernel is one strided view of the zero-padded data and one copy.
"""

from __future__ import annotations

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.kernels import windows as kwin
from irexec.ops.spec import register
from irexec.ops.spec import Attr, Input, Op, OpSpec, Output, Rank, TensorType, Types, TypeVar

T = TypeVar("T", Types("numeric_or_boolean"))


def _out_size(size: int, k: int, stride: int, rate: int, auto_pad: str) -> int:
    if auto_pad == "valid":
        out = (size - rate * (k - 1) - 1) // stride + 1
    else:
        out = 1 + (size - 1) // stride
    return max(out, 0)


def _pad_start(size: int, k: int, stride: int, rate: int, auto_pad: str) -> int:
    if auto_pad == "valid":
        return 0
    step = k + (rate - 1) * (k - 1)
    total = (-(-size // stride) - 1) * stride + step - size
    if not 0 < total < step:
        return 0
    if total % 2 == 0:
        return total // 2
    return (total + 1) // 2 if auto_pad == "same_lower" else (total - 1) // 2


def _check(attrs) -> None:
    for name in ("sizes", "strides", "rates"):
        values = attrs[name]
        if len(values) != 2:
            raise OpError(f"{name} has {len(values)} values ({list(values)}); it gives [rows, "
                          f"cols]", code="IR345")
        if any(v < 1 for v in values):
            raise OpError(f"{name} ({list(values)}) has a value below 1", code="IR347")


def _dim(d: Dimension, i: int, attrs) -> Dimension:
    args = (attrs["sizes"][i], attrs["strides"][i], attrs["rates"][i], attrs["auto_pad"])
    return Dimension(_out_size(d.min, *args), None if d.max is None else _out_size(d.max, *args))


@register
class ExtractImagePatches(Op):
    spec = OpSpec(
        type="ExtractImagePatches",
        since=3,
        until=16,
        attrs=(
            Attr("sizes", "uint_list", doc="[rows, cols] of a patch"),
            Attr("strides", "uint_list", doc="[rows, cols] between patch starts"),
            Attr("rates", "uint_list", doc="[rows, cols] between the pixels of a patch"),
            Attr("auto_pad", "enum", values=("valid", "same_upper", "same_lower"),
                 doc="valid (whole patches only, no padding) or same_upper/same_lower "
                     "(ceil(size / stride) patches, zero padding split as OpenVINO does)"),
        ),
        inputs=(Input("data", T, Rank(exact=4), doc="[N, C, H, W]"),),
        outputs=(Output("output", "[N, rows * cols * C, out_rows, out_cols]: each patch's "
                                  "pixels along the channels", type=T),),
        doc="Extracts image patches into the channel axis (TensorFlow's "
            "extract_image_patches).",
        exact=True,
    )

    @staticmethod
    def infer(ctx):
        data = ctx.input_shape(0)
        attrs = ctx.attrs
        _check(attrs)
        et = ctx.output_element_types(1)[0]
        if not data.rank_is_static:
            return [TensorType(et, PartialShape([Dimension.dynamic()] * 4))]
        if data[2].is_static and data[3].is_static and 0 in (data[2].min, data[3].min):
            return [TensorType(et, data)]  # OpenVINO's shape inference: the input's shape
        k = attrs["sizes"][0] * attrs["sizes"][1]
        channels = Dimension(data[1].min * k, None if data[1].max is None else data[1].max * k)
        return [TensorType(et, PartialShape([data[0], channels, _dim(data[2], 0, attrs),
                                             _dim(data[3], 1, attrs)]))]

    @staticmethod
    def kernel(data, *, sizes, strides, rates, auto_pad):
        n, c, h, w = data.shape
        if h == 0 or w == 0:
            return data.copy()
        out = [_out_size(s, k, st, r, auto_pad) for s, k, st, r in
               zip((h, w), sizes, strides, rates)]
        starts = [_pad_start(s, k, st, r, auto_pad) for s, k, st, r in
                  zip((h, w), sizes, strides, rates)]
        result = np.zeros((n, sizes[0], sizes[1], c, out[0], out[1]), data.dtype)
        if n and c and out[0] and out[1]:
            ends = kwin.reach(out, sizes, strides, rates)
            padded = kwin.pad(data, starts, ends)
            view = kwin.window_view(padded, out, sizes, strides, rates)  # [N, C, oh, ow, kh, kw]
            result[...] = view.transpose(0, 4, 5, 1, 2, 3)
        return result.reshape(n, sizes[0] * sizes[1] * c, out[0], out[1])
