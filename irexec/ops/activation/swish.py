"""Swish-4: x * sigmoid(beta * x)."""

import numpy as np

from irexec.kernels import buffers, numeric
from irexec.kernels.special import exp_scaled
from irexec.ops.spec import register
from irexec.ops.spec import REAL, SCALAR, Input, Op, OpSpec, Output, TypeVar

T = TypeVar("T", REAL)


def swish(x, o, beta=None):
    """x / (1 + exp(-beta * x)); beta 1 when not given (exp by kernels/special.py's
    exp_scaled)."""
    t = buffers.empty(x.shape, x.dtype)  # reused memory: a fresh array page-faults
    exp_scaled(x, -1.0 if beta is None else -float(beta), t)
    t += 1
    np.divide(x, t, out=o)


_SWISH = numeric.unary(swish, params=1)  # f16/bf16 in f32 (by table when large), rank 0 ...


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
        in_place=_SWISH.in_place,
    )
    kernel = staticmethod(_SWISH.kernel)
