"""Clamp-1: limit every element to [min, max]."""

import math

import numpy as np

from irexec.diagnostics.codes import ERROR, Code
from irexec.kernels import buffers, half, numeric
from irexec.ops.spec import register
from irexec.ops.spec import NUMERIC, Attr, Input, Op, OpSpec, Output, TypeVar

T = TypeVar("T", NUMERIC)


def _integer_bounds(dtype, low: float, high: float) -> tuple[int, int]:
    """OpenVINO's bounds for an integer tensor: ceil(min) and floor(max), saturated to the type."""
    info = np.iinfo(dtype)

    def clip(v):
        if math.isinf(v):
            return info.min if v < 0 else info.max
        return max(info.min, min(info.max, v))
    return clip(math.ceil(low) if math.isfinite(low) else low), \
        clip(math.floor(high) if math.isfinite(high) else high)


def _bounds(dtype, low: float, high: float):
    if dtype.kind in "iu":
        low, high = _integer_bounds(dtype, low, high)
        return np.asarray(low, dtype), np.asarray(high, dtype)
    return tuple(np.asarray(v).astype(dtype) for v in (low, high))  # rounded to the type


def clamp(x, *, min, max, out=None):
    """min where x < min, max where x > max, else x (NaN stays NaN); computed in x's own type,
    with the bounds rounded to it first (OpenVINO's rule). f32, f64 and integers are written
    into ``out`` (a pooled array, or x itself when it dies here)."""
    low, high = _bounds(x.dtype, min, max)
    if x.dtype.kind in "iu" or x.dtype in (np.float32, np.float64):
        return np.clip(x, low, high, out=buffers.empty(x.shape, x.dtype) if out is None
                       else out)

    def widened(v):  # exact: the result is v, low or high, all of v's type
        w = numeric.widen(v)
        return numeric.narrow(np.clip(w, low.astype(w.dtype), high.astype(w.dtype)), v.dtype)
    if not (x.dtype in half.HALVES and x.size >= half.USE_MIN and half.active()):
        return widened(x)
    # f16/bf16: on the bits, or by table (irexec/kernels/half.py), the same results
    if out is None or not out.flags.c_contiguous:
        out = buffers.empty(x.shape, x.dtype)
    key = half.key("Clamp", min, max)
    return half.clamp(x, low, high, lambda: half.table(x.dtype, key, widened), out)


def _clamp_over(x, *, min, max):
    """Clamp written over its input (the run loop proves nothing else sees it)."""
    return clamp(x, min=min, max=max, out=x)


@register
class Clamp(Op):
    spec = OpSpec(
        type="Clamp",
        numerics="exact",
        since=1,
        until=16,
        attrs=(Attr("min", "float", doc="the lower bound (ceil(min) for integer data)"),
               Attr("max", "float", doc="the upper bound, at least min (floor(max) for integer "
                                        "data)")),
        inputs=(Input("data", T, doc="a numeric tensor"),),
        outputs=(Output("output", "data limited to [min, max]; same type and shape", type=T),),
        doc="Limits every element to the range [min, max].",
        codes=(Code("IR320", "clamp-min-above-max", ERROR,
                    "give Clamp a min that is at most its max (and neither nan)"),),
        in_place=_clamp_over,
    )

    @staticmethod
    def infer(ctx):
        low, high = ctx.attrs["min"], ctx.attrs["max"]
        if not low <= high:
            ctx.error("IR320", f"min is {low:g} and max is {high:g}; min must be at most max")
        return ctx.default_outputs()

    kernel = staticmethod(clamp)
