"""Elu-1: the exponential linear unit."""

import numpy as np

from irexec.kernels import numeric
from irexec.ops.spec import register
from irexec.ops.spec import REAL, Attr, Input, Op, OpSpec, Output, TypeVar

T = TypeVar("T", REAL)


def elu(x, o, *, alpha):
    """x where x >= 0, alpha * (exp(x) - 1) below (NaN stays NaN)."""
    keep = x >= 0
    t = np.expm1(x, out=None if o is x else o)
    if alpha != 1:
        t *= x.dtype.type(alpha)
    np.copyto(t, x, where=keep)
    if t is not o:
        o[...] = t


_ELU = numeric.unary(elu)


@register
class Elu(Op):
    spec = OpSpec(
        type="Elu",
        numerics="transcendental",
        since=1,
        until=16,
        attrs=(Attr("alpha", "float", doc="the scale of the negative part"),),
        inputs=(Input("data", T, doc="a floating-point tensor"),),
        outputs=(Output("output", "Elu of each element; same type and shape", type=T),),
        doc="Computes x for x >= 0 and alpha * (exp(x) - 1) for x < 0, element-wise.",
        in_place=_ELU.in_place,
    )
    kernel = staticmethod(_ELU.kernel)
