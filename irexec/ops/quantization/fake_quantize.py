"""FakeQuantize-1: quantize to ``levels`` steps and back, element-wise with broadcast ranges."""

from __future__ import annotations

import numpy as np

from irexec.kernels import numeric
from irexec.ops import rules
from irexec.ops.spec import register
from irexec.ops.spec import REAL, Attr, Input, Op, OpSpec, Output, TypeVar

T = TypeVar("T", REAL)


@numeric.rank0_safe
def fake_quantize(x, input_low, input_high, output_low, output_high, *, levels, auto_broadcast):
    """x <= min(il, ih): ol; x > max(il, ih): oh; else
    round((x - il) / (ih - il) * (levels - 1)) / (levels - 1) * (oh - ol) + ol,
    rounding half to even; computed in f32 (f64 for f64)."""
    w = numeric.widen(x)
    il, ih, ol, oh = (numeric.widen(a) for a in (input_low, input_high, output_low,
                                                    output_high))
    steps = w.dtype.type(levels - 1)
    with np.errstate(all="ignore"):
        q = np.subtract(w, il)
        q /= ih - il
        q *= steps
        np.rint(q, out=q)
        q /= steps
        q *= oh - ol
        q += ol
        out = np.where(w <= np.minimum(il, ih), ol, np.where(w > np.maximum(il, ih), oh, q))
    out = np.broadcast_to(out, np.broadcast_shapes(x.shape, out.shape))
    return numeric.narrow(np.ascontiguousarray(out), x.dtype)


def _fq_rule(ctx):
    if ctx.attrs["levels"] < 2:
        ctx.error("IR302", f"levels is {ctx.attrs['levels']}; FakeQuantize needs at least 2")
    (out,) = rules.broadcast()(ctx)
    x = ctx.input_shape(0)
    if x.rank_is_static and out.rank_is_static and (
            len(out) != len(x) or any(o.is_static and d.is_static and o.min != d.min
                                      for o, d in zip(out, x))):
        # The limits broadcast onto X, never X onto them (OpenVINO passes X's shape through,
        # leaving the values of a larger broadcast undefined).
        ctx.error("IR307", f"the limits broadcast X {x} to {out}; they must broadcast onto X "
                           f"(each limit's dims 1 or X's)")
    return [out]


@register
class FakeQuantize(Op):
    spec = OpSpec(
        type="FakeQuantize",
        numerics="rounded",
        since=1,
        until=16,
        attrs=(Attr("levels", "uint", doc="the number of quantization levels, at least 2"),
               rules.AUTO_BROADCAST),
        inputs=(Input("X", T, doc="the data"),
                Input("input_low", T, doc="the low end of the input range (broadcast onto X)"),
                Input("input_high", T, doc="the high end of the input range"),
                Input("output_low", T, doc="the value the lowest level maps to"),
                Input("output_high", T, doc="the value the highest level maps to")),
        outputs=(Output("output", "X quantized to levels steps of the output range", type=T),),
        shape=_fq_rule,
        doc="Clamps X to [input_low, input_high], rounds it to one of levels evenly spaced "
            "steps and maps the steps onto [output_low, output_high].",
    )
    kernel = staticmethod(fake_quantize)
