"""Unary arithmetic, one table: Negative-1, Abs-1, Sqrt-1, Exp-1, Log-1, Erf-1, Floor-1,
Ceiling-1, Sign-1, Sin-1, Cos-1, Tan-1, Asin-1, Acos-1, Atan-1, Sinh-1, Cosh-1, Tanh-1, Asinh-3,
Acosh-3, Atanh-3 (the last three in opset4 and later), and Round-5 (opset5 and later).

Every row takes one input of a numeric type T and gives T, same shape, by the numeric contract of
irexec/kernels/numeric.py: f16/bf16/f8 compute in f32 and round once; a real-valued function
of an integer computes in f64 and rounds to the nearest integer (halves away from zero; NaN -> 0,
saturating). Floor, Ceiling and Round leave integers as they are.
"""

from __future__ import annotations

import numpy as np

from irexec.kernels import numeric
from irexec.kernels.erf import erf as erf64
from irexec.kernels.erf import erf32
from irexec.ops.spec import register
from irexec.ops.spec import NUMERIC, Attr, Input, Op, OpSpec, Output, TypeVar

T = TypeVar("T", NUMERIC)


def _erf(x, out=None):
    return _into(erf64(x) if x.dtype == numeric.F64 else erf32(x), out)


def _round_half_away(x, out=None):
    return _into(numeric.round_half_away(x), out)


def _into(result, out):
    if out is None:
        return result
    out[...] = result
    return out


def _copy(x, out=None):
    if out is None:
        return np.array(x, copy=True)
    np.copyto(out, x)
    return out


def _kernel(float_fn, int_fn=None, *, half_native: bool = False) -> numeric.Kernels:
    """A unary kernel for every type path (irexec/kernels/numeric.py's ``unary``). ``int_fn``:
    what integers get (default: ``float_fn`` in f64, rounded half away from zero);
    ``half_native``: numpy's f16 / ml_dtypes' bf16 loop of ``float_fn`` already rounds once.
    Functions take ``out`` as numpy's ufuncs do."""
    return numeric.unary(float_fn, ints=int_fn, half_native=half_native)


def _round_kernel() -> numeric.Kernels:
    even = _kernel(np.rint, _copy, half_native=True)
    away = _kernel(_round_half_away, _copy)

    def kernel(x, *, mode="half_to_even"):
        return (even if mode == "half_to_even" else away).kernel(x)

    def kernel_in_place(x, *, mode="half_to_even"):
        return (even if mode == "half_to_even" else away).in_place(x)

    return numeric.Kernels(kernel, kernel_in_place)


ROUND_MODE = Attr("mode", "enum", default="half_to_even",
                  values=("half_to_even", "half_away_from_zero"),
                  doc="how halves round: to the even neighbour, or away from zero")

# type, since, doc, kernel, extra attributes
_ROWS = (
    ("Negative", 1, "-x (integers wrap: the negative of the lowest value is itself; unsigned "
                    "values wrap modulo 2^bits)", _kernel(np.negative, np.negative,
                                                          half_native=True), ()),
    ("Abs", 1, "|x| (the absolute value of the lowest signed value is itself)",
     _kernel(np.abs, np.abs, half_native=True), ()),
    ("Sqrt", 1, "the square root", _kernel(np.sqrt, half_native=True), ()),
    ("Exp", 1, "e to the power x", _kernel(np.exp), ()),
    ("Log", 1, "the natural logarithm (log 0 = -inf, negative -> NaN)", _kernel(np.log), ()),
    ("Erf", 1, "the Gauss error function", _kernel(_erf), ()),
    ("Floor", 1, "the largest integer not above x", _kernel(np.floor, _copy, half_native=True), ()),
    ("Ceiling", 1, "the smallest integer not below x", _kernel(np.ceil, _copy, half_native=True),
     ()),
    ("Round", 5, "x rounded to the nearest integer, halves by the mode", _round_kernel(),
     (ROUND_MODE,)),
    ("Sign", 1, "-1, 0 or 1 by the sign of x (NaN stays NaN; -0.0 and 0.0 give 0)",
     _kernel(np.sign, np.sign, half_native=True), ()),
    ("Sin", 1, "the sine (radians)", _kernel(np.sin), ()),
    ("Cos", 1, "the cosine (radians)", _kernel(np.cos), ()),
    ("Tan", 1, "the tangent (radians)", _kernel(np.tan), ()),
    ("Asin", 1, "the arcsine (NaN outside [-1, 1])", _kernel(np.arcsin), ()),
    ("Acos", 1, "the arccosine (NaN outside [-1, 1])", _kernel(np.arccos), ()),
    ("Atan", 1, "the arctangent", _kernel(np.arctan), ()),
    ("Sinh", 1, "the hyperbolic sine", _kernel(np.sinh), ()),
    ("Cosh", 1, "the hyperbolic cosine", _kernel(np.cosh), ()),
    ("Tanh", 1, "the hyperbolic tangent", _kernel(np.tanh), ()),
    ("Asinh", 4, "the inverse hyperbolic sine", _kernel(np.arcsinh), ()),
    ("Acosh", 4, "the inverse hyperbolic cosine (NaN below 1)", _kernel(np.arccosh), ()),
    ("Atanh", 4, "the inverse hyperbolic tangent (+-inf at +-1, NaN outside)",
     _kernel(np.arctanh), ()),
)

# How each result is computed, for the tolerances of irexec/numerics.py: the sign and rounding
# functions are exact, Sqrt is one correctly rounded operation, the rest are transcendental.
NUMERICS = {**{t: "exact" for t in ("Negative", "Abs", "Floor", "Ceiling", "Round", "Sign")},
            "Sqrt": "rounded"}


def _make(type_name: str, since: int, doc: str, kernels: numeric.Kernels, attrs) -> type[Op]:
    spec = OpSpec(
        type=type_name,
        numerics=NUMERICS.get(type_name, "transcendental"),
        one_rounding=type_name == "Sqrt",
        since=since,
        attrs=attrs,
        inputs=(Input("x", T, doc="the operand"),),
        outputs=(Output("output", f"{doc}, element by element; x's type and shape", type=T),),
        doc=f"Element-wise {doc}.",
        in_place=kernels.in_place,
        ufunc=kernels.ufunc,
    )
    return register(type(type_name, (Op,), {"spec": spec,
                                            "kernel": staticmethod(kernels.kernel),
                                            "__doc__": spec.doc, "__module__": __name__}))


OPS = {row[0]: _make(*row) for row in _ROWS}
