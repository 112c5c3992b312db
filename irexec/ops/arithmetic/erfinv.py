"""ErfInv-17: the inverse of the Gauss error function, element by element.

Computed in float64 for every float type and rounded once: Giles' rational approximation (the one
OpenVINO's reference uses) as the start, then four Newton steps on erf, so the result is the
inverse of irexec's own float64 erf to within its rounding (OpenVINO's reference stops at the
bare approximation, which is up to 2e-3 off in the far tail; its CPU plugin is about 1e-4 off).
erfinv(+-1) = +-inf, NaN beyond [-1, 1] and for NaN.
"""

from __future__ import annotations

import numpy as np

from irexec.kernels import numeric
from irexec.kernels.erf import erf
from irexec.ops.spec import REAL, Input, Op, OpSpec, Output, TypeVar, register

T = TypeVar("T", REAL)

_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
            -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
         -0.0076224613, -0.00943887047, 1.00167406, 2.83297682)
_SLOPE = 2.0 / np.sqrt(np.pi)


def erfinv64(x: np.ndarray) -> np.ndarray:
    """erfinv of every element, as a new float64 array."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        w = -np.log((1.0 - x) * (1.0 + x))
        central = w < 5.0
        s = np.where(central, w - 2.5, np.sqrt(w) - 3.0)
        r = np.zeros_like(x)
        for a, b in zip(_CENTRAL, _TAIL):
            r = np.where(central, a, b) + r * s
        y = r * x
        inside = np.abs(x) < 1.0
        for _ in range(4):  # the start is 2e-3 off in the far tail: four steps reach it
            step = (erf(y) - x) / (_SLOPE * np.exp(-y * y))
            y = np.where(inside & np.isfinite(step), y - step, y)
        y = np.where(np.abs(x) == 1.0, np.copysign(np.inf, x), y)
        y = np.where((np.abs(x) > 1.0) | np.isnan(x), np.nan, y)
        return np.where(x == 0.0, x, y)


@register
class ErfInv(Op):
    spec = OpSpec(
        type="ErfInv",
        since=17,
        inputs=(Input("x", T, doc="the operand; erf's range is (-1, 1)"),),
        outputs=(Output("output", "y with erf(y) = x, element by element (+-inf at +-1, NaN "
                                  "beyond); x's type and shape", type=T),),
        doc="Element-wise inverse error function.",
    )

    @staticmethod
    @numeric.rank0_safe
    def kernel(x):
        return numeric.narrow(erfinv64(x), x.dtype)
