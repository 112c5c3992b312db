"""Gelu-7: Gelu with a choice of the exact (erf) or the tanh approximation."""

from irexec.kernels import numeric
from irexec.kernels.special import gelu_erf, gelu_tanh
from irexec.ops.spec import register
from irexec.ops.spec import REAL, Attr, Input, Op, OpSpec, Output, TypeVar

T = TypeVar("T", REAL)
_ERF = numeric.unary(gelu_erf)
_TANH = numeric.unary(gelu_tanh)


def _gelu(x, *, approximation_mode):
    return (_TANH if approximation_mode == "tanh" else _ERF).kernel(x)


def _gelu_in_place(x, *, approximation_mode):
    return (_TANH if approximation_mode == "tanh" else _ERF).in_place(x)


@register
class Gelu7(Op):
    spec = OpSpec(
        type="Gelu",
        numerics="transcendental",
        since=7,
        until=16,
        attrs=(Attr("approximation_mode", "enum", default="erf", values=("erf", "tanh"),
                    doc="erf: 0.5 x (1 + erf(x / sqrt 2)); tanh: 0.5 x (1 + tanh(sqrt(2/pi) "
                        "(x + 0.044715 x^3)))"),),
        inputs=(Input("data", T, doc="a floating-point tensor"),),
        outputs=(Output("output", "Gelu of each element; same type and shape", type=T),),
        doc="Computes the Gaussian error linear unit element-wise, exactly (erf) or by the "
            "tanh approximation.",
        in_place=_gelu_in_place,
    )
    kernel = staticmethod(_gelu)
