"""Selu-1: the scaled exponential linear unit, its alpha and lambda given as inputs."""

import numpy as np

from irexec.kernels import numeric
from irexec.ops.activation.params import ONE_ELEMENT, check_one_element
from irexec.ops.spec import register
from irexec.ops.spec import REAL, SCALAR_OR_VECTOR, Input, Op, OpSpec, Output, TypeVar

T = TypeVar("T", REAL)


def selu(x, o, alpha, lambda_):
    """lambda * x for x > 0, lambda * alpha * (exp(x) - 1) otherwise (NaN stays NaN)."""
    t = np.expm1(x)  # a temporary: o may be x itself
    t *= alpha
    np.copyto(t, x, where=x > 0)
    np.multiply(t, lambda_, out=o)


_SELU = numeric.unary(selu, params=2)  # f16/bf16 in f32 (by table when large), rank 0 ...


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
        in_place=_SELU.in_place,
    )

    @staticmethod
    def infer(ctx):
        check_one_element(ctx, (1, 2))
        return ctx.default_outputs()

    kernel = staticmethod(_SELU.kernel)
