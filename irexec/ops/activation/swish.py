"""Swish-4: x * sigmoid(beta * x)."""

import numpy as np

from irexec.kernels import buffers, floatmath, half
from irexec.ops.spec import register
from irexec.ops.spec import REAL, SCALAR, Input, Op, OpSpec, Output, TypeVar

T = TypeVar("T", REAL)


def swish(x, beta=None):
    if half.wants_table(x):  # f16/bf16: by table (irexec/kernels/half.py), same results
        return half.mapped(x, half.key(_swish, beta),
                           lambda v: _swish(v, beta))
    return _swish(x, beta)


def _swish(x, beta):
    w = floatmath.widen(x)
    with np.errstate(all="ignore"):
        t = buffers.empty(w.shape, w.dtype)  # reused memory: a fresh array page-faults
        if beta is None:
            np.negative(w, out=t)
        else:
            np.multiply(w, -floatmath.scalar_of(beta, x.dtype), out=t)
        np.exp(t, out=t)
        t += 1
        np.divide(w, t, out=t)
    return floatmath.narrow(t, x.dtype)


@register
class Swish(Op):
    spec = OpSpec(
        type="Swish",
        numerics="transcendental",
        since=4,
        until=16,
        inputs=(Input("data", T, doc="a floating-point tensor"),
                Input("beta", T, SCALAR, optional=True, doc="a scalar multiplier of x inside "
                                                            "the sigmoid (default 1)")),
        outputs=(Output("output", "x * sigmoid(beta * x); same type and shape as data",
                        type=T),),
        doc="Computes x / (1 + exp(-beta * x)) element-wise.",
    )
    kernel = staticmethod(swish)
