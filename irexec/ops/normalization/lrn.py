"""LRN-1: local response normalization over a window along some axes."""

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape_rules import normalize_axes
from irexec.kernels.numeric import compute_dtype, narrow
from irexec.ops import windows
from irexec.ops.domains import AxisIndices, as_int64
from irexec.ops.spec import register
from irexec.ops.spec import INTEGER, VECTOR, Attr, Input, Op, OpSpec, Output, TypeVar

T = TypeVar("T", windows.REAL)


def window_sums(squares: np.ndarray, axes, size: int) -> np.ndarray:
    """The sum of each element's window along each axis: (size-1)//2 elements before it and as
    many after, cut at the edges -- so an even size spans size-1 elements, as in OpenVINO
    (the scale still divides by size). One axis at a time; a window never reaches further than
    the axis is long, so the work is bounded by the data, not by ``size`` (2**40 is a valid
    attribute)."""
    total = squares
    for axis in axes:
        n = total.shape[axis]
        half = min((size - 1) // 2, max(n - 1, 0))
        if half <= _SHIFTED_ADDS:
            total = _shifted_adds(total, axis, half)
        else:
            total = _doubling_sums(total, axis, half)
    return total


_SHIFTED_ADDS = 16  # half-widths up to this: one shifted add per position; above: doubling


def _shifted_adds(total: np.ndarray, axis: int, half: int) -> np.ndarray:
    """Element i + shift adds to i, and i - shift too, for each shift up to ``half``."""
    n = total.shape[axis]
    lead = (slice(None),) * axis
    acc = total.copy()
    for shift in range(1, half + 1):
        acc[lead + (slice(0, n - shift),)] += total[lead + (slice(shift, n),)]
        acc[lead + (slice(shift, n),)] += total[lead + (slice(0, n - shift),)]
    return acc


def _doubling_sums(total: np.ndarray, axis: int, half: int) -> np.ndarray:
    """Window sums of width 2 * half + 1 in O(n log width) array additions: sums of 1, 2, 4 ...
    consecutive elements, each from two of the previous length, and every window made of the
    blocks its width's binary digits name. Every addition adds non-negative partial sums of the
    same window (no prefix-sum differences, which would cancel)."""
    n = total.shape[axis]
    lead = (slice(None),) * axis
    pad = [(0, 0)] * total.ndim
    pad[axis] = (half, half)
    blocks = np.pad(total, pad)  # blocks[i] = sum of `length` elements from i
    width, length, offset = 2 * half + 1, 1, 0
    result = None
    while True:
        if width & length:
            part = blocks[lead + (slice(offset, offset + n),)]
            result = part.copy() if result is None else result + part
            offset += length
        if length * 2 > width:
            return result
        m = blocks.shape[axis] - length
        blocks = blocks[lead + (slice(0, m),)] + blocks[lead + (slice(length, length + m),)]
        length *= 2


@register
class LRN(Op):
    spec = OpSpec(
        type="LRN",
        since=1,
        until=16,
        attrs=(
            Attr("alpha", "float", doc="scales the sum (divided by size^len(axes))"),
            Attr("beta", "float", doc="the exponent of the divisor"),
            Attr("bias", "float", doc="added to the scaled sum"),
            Attr("size", "int", doc="the window's side along each axis (at least 1)"),
        ),
        inputs=(
            Input("data", T, doc="the tensor to normalize"),
            Input("axes", INTEGER, VECTOR, domain=AxisIndices(0),
                  doc="the axes the window spans, in [-rank, rank-1]"),
        ),
        outputs=(Output("output", "data / (bias + alpha / size^len(axes) * window sum of "
                                  "squares)^beta, same shape", type=T),),
        doc="Local response normalization: each element divided by a power of the sum of "
            "squares of its neighbourhood.",
    )

    @staticmethod
    def infer(ctx):
        if ctx.attrs["size"] < 1:
            raise OpError(f"size is {ctx.attrs['size']}; the window has at least 1 element",
                          code="IR347")
        values = ctx.input_value(1)
        if values is not None:
            normalize_axes([int(a) for a in as_int64(values)], ctx.input_shape(0).rank)
        return ctx.default_outputs()

    @staticmethod
    def kernel(data, axes, *, alpha, beta, bias, size):
        ct = compute_dtype(data.dtype)
        x = data.astype(ct, copy=False)
        reduce = sorted({int(a) % data.ndim for a in as_int64(axes)})
        sums = window_sums(x * x, reduce, size)
        scale = ct.type(alpha / size ** len(reduce))
        divisor = (ct.type(bias) + scale * sums) ** ct.type(beta)
        return narrow(x / divisor, data.dtype)
