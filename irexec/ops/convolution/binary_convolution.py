"""BinaryConvolution-1: convolution of 0/1 data with 1-bit (u1) weights, each read as -1/+1.

In ``xnor-popcount`` mode, as OpenVINO's reference kernel computes it: a tap counts +1 when the
data value equals the weight bit (1.0 and 1, or 0.0 and 0) and -1 otherwise, so a data value
that is neither 0 nor 1 always counts -1; padded positions hold ``pad_value`` and count the same
way. Each output is the sum over its window: 2 * (taps that match) - (taps in the window).

The kernel counts the matches with two ordinary convolutions (irexec/kernels/conv.py, BLAS):
the indicator of data == 1 against the weights, and of data == 0 against their complement,
the padding filled with what pad_value indicates.
"""

from __future__ import annotations

import math

import numpy as np

from irexec.kernels import conv, windows as kwin
from irexec.kernels.numeric import compute_dtype, narrow
from irexec.ops import windows
from irexec.ops.convolution import common
from irexec.ops.spec import register
from irexec.ops.spec import Attr, Input, Op, OpSpec, Output, Rank, TypeSet, TypeVar

T = TypeVar("T", windows.REAL)


@register
class BinaryConvolution(Op):
    spec = OpSpec(
        type="BinaryConvolution",
        numerics="accumulating",
        since=1,
        until=16,
        attrs=(
            windows.strides(),
            windows.pads("pads_begin", True, "before"),
            windows.pads("pads_end", True, "after"),
            windows.dilations(),
            windows.auto_pad(),
            Attr("mode", "enum", values=("xnor-popcount",),
                 doc="xnor-popcount: data 0/1 and weight bits 0/1 read as -1/+1; each tap "
                     "adds +1 where they match, -1 where not"),
            Attr("pad_value", "float", doc="the data value of padded positions"),
        ),
        inputs=(
            Input("data", T, Rank(min=3, max=5),
                  doc="[N, C_IN, *spatial]: values 0 or 1 (any other value matches no bit)"),
            Input("filters", TypeSet(("u1",)), Rank(min=3, max=5),
                  doc="[C_OUT, C_IN, *kernel]: one bit per weight"),
        ),
        outputs=(Output("output", "[N, C_OUT, *out]: 2 * matches - taps per window", type=T),),
        doc="Convolution of binary data with binary weights (xnor-popcount).",
    )

    @staticmethod
    def infer(ctx):
        return common.infer_forward(ctx, grouped=False)

    @staticmethod
    def openvino_refuses(node) -> str | None:
        return ("OpenVINO's CPU plugin computes values no sum of +-1 products gives for "
                "BinaryConvolution (docs/compatibility.md)")

    @staticmethod
    def kernel(data, filters, *, strides, pads_begin, pads_end, dilations, auto_pad, mode,
               pad_value):
        ct = compute_dtype(data.dtype)
        kernel = filters.shape[2:]
        pb, _, out = kwin.geometry(data.shape[2:], kernel, strides, dilations, pads_begin,
                                   pads_end, auto_pad)
        ends = kwin.reach(out, kernel, strides, dilations)
        bits = filters.astype(np.uint8).astype(ct)[None]  # one group
        zero = np.zeros(len(kernel), int)
        total = 0
        for value, weights in ((1.0, bits), (0.0, 1 - bits)):
            indicator = kwin.pad((data == value).astype(ct), pb, ends,
                                 value=float(pad_value == value))
            total = total + conv.forward(indicator, weights, strides, dilations, zero, out)
        taps = filters.shape[1] * math.prod(kernel)
        return narrow(np.asarray(2 * total - taps, ct), data.dtype)
