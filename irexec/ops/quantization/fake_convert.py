"""FakeConvert-13: emulate f8 storage: scale and shift, round to an f8 type, and undo them.

OpenVINO's rule (its reference kernel and CPU plugin): ``y = x * scale - shift`` is rounded to f16,
then to the f8 type (round half to even) saturating at the type's largest finite value (448 for
f8e4m3, 57344 for f8e5m2); f8e4m3 flushes magnitudes below its smallest subnormal (2**-9) to +0.
NaN stays NaN. The f8 value then comes back as ``(y8 + shift) / scale``."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from irexec.diagnostics.codes import ERROR, Code
from irexec.kernels import numeric
from irexec.ops import rules
from irexec.ops.spec import register
from irexec.ops.spec import Attr, Input, Op, OpSpec, Output, TypeSet, TypeVar

T = TypeVar("T", TypeSet(("f16", "bf16", "f32")))
_F8 = {"f8e4m3": (np.dtype(ml_dtypes.float8_e4m3fn), 448.0),
       "f8e5m2": (np.dtype(ml_dtypes.float8_e5m2), 57344.0)}


def to_f8_values(y: np.ndarray, destination_type: str) -> np.ndarray:
    """f32 values rounded as FakeConvert rounds them (via f16), back in f32."""
    dtype, largest = _F8[destination_type]
    h = y.astype(np.float16)
    if destination_type == "f8e4m3":
        h[np.abs(h) < np.float16(2.0 ** -9)] = 0  # below the smallest subnormal: +0
    f = h.astype(np.float32)
    np.clip(f, -largest, largest, out=f)  # saturate (infinities too); NaN stays
    return f.astype(dtype).astype(np.float32)


@numeric.rank0_safe
def fake_convert(data, scale, shift=None, *, destination_type):
    w = numeric.widen(data)
    s = numeric.widen(scale)
    with np.errstate(all="ignore"):
        y = np.multiply(w, s)
        if shift is not None:
            o = numeric.widen(shift)
            y -= o
        y = to_f8_values(y.astype(np.float32), destination_type).astype(w.dtype)
        if shift is not None:
            y += o
        y /= s
    return numeric.narrow(y, data.dtype)


def _rule(ctx):
    if ctx.attrs["destination_type"] not in _F8:
        ctx.error("IR324", f"destination_type is {ctx.attrs['destination_type']!r}; FakeConvert "
                           f"emulates f8e4m3 or f8e5m2")
    return rules.broadcast()(ctx)


@register
class FakeConvert(Op):
    spec = OpSpec(
        type="FakeConvert",
        numerics="rounded",
        since=13,
        until=16,
        attrs=(Attr("destination_type", "string", doc="the f8 type to emulate: f8e4m3 or "
                                                      "f8e5m2"),),
        inputs=(Input("data", T, doc="the data (f16, bf16 or f32)"),
                Input("scale", T, doc="the scale, broadcast onto data"),
                Input("shift", T, optional=True, doc="the shift, as scale (default 0)")),
        outputs=(Output("output", "data after a round trip through the f8 type", type=T),),
        shape=_rule,
        doc="Emulates storing data in an f8 type: (round_f8(data * scale - shift) + shift) / "
            "scale.",
        codes=(Code("IR324", "fake-convert-destination", ERROR,
                    "set destination_type to f8e4m3 or f8e5m2"),),
    )
    kernel = staticmethod(fake_convert)
