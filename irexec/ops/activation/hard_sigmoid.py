"""HardSigmoid-1: max(0, min(1, alpha * x + beta)), alpha and beta given as inputs."""

import numpy as np

from irexec.kernels import floatmath, half
from irexec.ops.activation.params import ONE_ELEMENT, check_one_element
from irexec.ops.spec import register
from irexec.ops.spec import REAL, SCALAR_OR_VECTOR, Input, Op, OpSpec, Output, TypeVar

T = TypeVar("T", REAL)


def hard_sigmoid(x, alpha, beta):
    if half.wants_table(x):  # f16/bf16: by table (irexec/kernels/half.py), same results
        return half.mapped(x, half.key(_hard_sigmoid, alpha, beta),
                           lambda v: _hard_sigmoid(v, alpha, beta))
    return _hard_sigmoid(x, alpha, beta)


def _hard_sigmoid(x, alpha, beta):
    w = floatmath.widen(x)
    with np.errstate(all="ignore"):
        t = np.multiply(w, floatmath.scalar_of(alpha, x.dtype))
        t += floatmath.scalar_of(beta, x.dtype)
        np.clip(t, 0, 1, out=t)
    return floatmath.narrow(t, x.dtype)


@register
class HardSigmoid(Op):
    spec = OpSpec(
        type="HardSigmoid",
        numerics="rounded",
        since=1,
        until=16,
        inputs=(Input("data", T, doc="a floating-point tensor"),
                Input("alpha", T, SCALAR_OR_VECTOR, doc="one element: the slope"),
                Input("beta", T, SCALAR_OR_VECTOR, doc="one element: the offset")),
        outputs=(Output("output", "max(0, min(1, alpha * x + beta)); same type and shape as "
                                  "data", type=T),),
        doc="Computes max(0, min(1, alpha * x + beta)) element-wise.",
        codes=(ONE_ELEMENT,),
    )

    @staticmethod
    def infer(ctx):
        check_one_element(ctx, (1, 2))
        return ctx.default_outputs()

    kernel = staticmethod(hard_sigmoid)
