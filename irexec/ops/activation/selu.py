"""Selu-1: the scaled exponential linear unit, its alpha and lambda given as inputs."""

import numpy as np

from irexec.kernels import floatmath, half
from irexec.ops.activation.params import ONE_ELEMENT, check_one_element
from irexec.ops.spec import register
from irexec.ops.spec import REAL, SCALAR_OR_VECTOR, Input, Op, OpSpec, Output, TypeVar

T = TypeVar("T", REAL)


def selu(x, alpha, lambda_):
    if half.wants_table(x):  # f16/bf16: by table (irexec/kernels/half.py), same results
        return half.mapped(x, half.key(_selu, alpha, lambda_),
                           lambda v: _selu(v, alpha, lambda_))
    return _selu(x, alpha, lambda_)


def _selu(x, alpha, lambda_):
    w = floatmath.widen(x)
    a, lam = floatmath.scalar_of(alpha, x.dtype), floatmath.scalar_of(lambda_, x.dtype)
    with np.errstate(all="ignore"):
        t = np.expm1(w)
        t *= a
        np.copyto(t, w, where=w > 0)
        t *= lam
    return floatmath.narrow(t, x.dtype)


@register
class Selu(Op):
    spec = OpSpec(
        type="Selu",
        numerics="transcendental",
        since=1,
        until=16,
        inputs=(Input("data", T, doc="a floating-point tensor"),
                Input("alpha", T, SCALAR_OR_VECTOR, doc="one element: the scale of the "
                                                        "negative part"),
                Input("lambda", T, SCALAR_OR_VECTOR, doc="one element: the overall scale")),
        outputs=(Output("output", "Selu of each element; same type and shape as data",
                        type=T),),
        doc="Computes lambda * x for x > 0 and lambda * alpha * (exp(x) - 1) otherwise, "
            "element-wise.",
        codes=(ONE_ELEMENT,),
    )

    @staticmethod
    def infer(ctx):
        check_one_element(ctx, (1, 2))
        return ctx.default_outputs()

    kernel = staticmethod(selu)
