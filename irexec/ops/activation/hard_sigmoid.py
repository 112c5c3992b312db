"""HardSigmoid-1: max(0, min(1, alpha * x + beta)), alpha and beta given as inputs."""

import numpy as np

from irexec.kernels import numeric
from irexec.ops.activation.params import ONE_ELEMENT, check_one_element
from irexec.ops.spec import register
from irexec.ops.spec import REAL, SCALAR_OR_VECTOR, Input, Op, OpSpec, Output, TypeVar

T = TypeVar("T", REAL)


def hard_sigmoid(x, o, alpha, beta):
    """max(0, min(1, alpha * x + beta))."""
    t = np.multiply(x, alpha)  # a temporary: o may be x itself
    t += beta
    np.clip(t, 0, 1, out=o)


_HARD_SIGMOID = numeric.unary(hard_sigmoid, params=2)  # f16/bf16 in f32, rank 0 ...


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
        in_place=_HARD_SIGMOID.in_place,
    )

    @staticmethod
    def infer(ctx):
        check_one_element(ctx, (1, 2))
        return ctx.default_outputs()

    kernel = staticmethod(_HARD_SIGMOID.kernel)
