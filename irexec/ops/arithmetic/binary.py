"""Binary arithmetic, one table: Add-1, Subtract-1, Multiply-1, Divide-1, Power-1, Maximum-1,
Minimum-1, SquaredDifference-1, FloorMod-1, Mod-1.

Every row takes two inputs of one numeric type T, broadcast by ``auto_broadcast`` (numpy, pdpd,
none), and computes by the numeric contract of irexec/kernels/numeric.py. What a row needs
beyond its numpy function is said in the row: integer division by zero is IR316 (at read time
when the divisor is a Constant, else when the layer runs).
"""

from __future__ import annotations

import numpy as np

from irexec.diagnostics.codes import ERROR, Code
from irexec.errors import OpError
from irexec.ir.element_type import plain_values
from irexec.kernels import half, numeric
from irexec.ops import bounds, rules
from irexec.ops.spec import register
from irexec.ops.spec import NUMERIC, Attr, Input, Op, OpSpec, Output, TypeVar

T = TypeVar("T", NUMERIC)

DIVISION_BY_ZERO = Code("IR316", "division-by-zero", ERROR,
                        "an integer divisor (Divide, Mod, FloorMod) must not be 0, nor may an "
                        "integer 0 be raised to a negative power (Power): integers have no "
                        "infinity; use a floating-point type or keep 0 out of the divisor")


def _no_zero(b: np.ndarray, what: str = "the divisor") -> None:
    """OpError IR316 when an integer divisor holds a 0 (kernels call it for integer types)."""
    values = plain_values(b)
    if values.size and not values.all():
        index = np.unravel_index(int(np.argmin(values != 0)), values.shape)
        raise OpError(f"integer division by zero: {what} (input 1) is 0 at index "
                      f"{list(map(int, index))}", code="IR316")


# --- the kernels' arithmetic, per type path ------------------------------------------------------
# Each function takes ``out`` (an array of the result's shape and type, or None) as numpy's
# ufuncs do.

def _trunc_divide(a, b, out=None):
    """C++'s integer division (toward zero): floor division of the exact multiple."""
    if a.dtype.kind == "u":
        return np.floor_divide(a, b, out=out)
    return np.floor_divide(a - np.fmod(a, b), b, out=out)


def _int_power(a, b, out=None):
    """Exact integer power, wrapping; a negative exponent gives the real power truncated toward
    zero (1 for 1, +-1 for -1, 0 otherwise), and 0 to a negative power is IR316."""
    if b.dtype.kind == "u" or not (b < 0).any():
        return np.power(a, b, out=out)
    negative = b < 0
    if (negative & (a == 0)).any():
        raise OpError("integer division by zero: 0 raised to a negative power", code="IR316")
    positive = np.power(a, np.where(negative, 0, b).astype(b.dtype))
    odd = (b % 2) != 0
    inverse = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0)).astype(a.dtype)
    return _into(np.where(negative, inverse, positive), out)


def _into(result: np.ndarray, out):
    if out is None:
        return result
    out[...] = result
    return out


_SMALL = 4096  # elements: below, one np.where costs less than a NaN search and a maximum


def _float_max(a, b, out=None):
    """OpenVINO's ``a > b ? a : b`` (its reference and CPU plugin): a NaN in ``a`` gives ``b``,
    a NaN in ``b`` gives NaN. numpy's maximum agrees unless ``a`` holds a NaN (np.min finds one
    in one fast pass: it propagates NaN); small arrays take the comparison at once."""
    if a.size < _SMALL or np.isnan(np.min(a)):
        return _into(np.where(a > b, a, b), out)
    return np.maximum(a, b, out=out)


def _float_min(a, b, out=None):
    """OpenVINO's ``a < b ? a : b``, as for Maximum."""
    if a.size < _SMALL or np.isnan(np.max(a)):
        return _into(np.where(a < b, a, b), out)
    return np.minimum(a, b, out=out)


def _squared_difference(a, b, out=None):
    d = np.subtract(a, b, out=out)
    return np.multiply(d, d, out=d)


def _kernel(float_fn, int_fn=None, *, half_native: bool = False, divides: bool = False,
            half_select=None, half_arith: str | None = None) -> numeric.Kernels:
    """A binary kernel for every type path, as the spec's fields: ``kernel``, its ``in_place``
    variant (writing over ``a`` when ``a`` has the result's shape) and the ``ufunc`` it is for
    some type paths (or None). ``half_native``: numpy's f16 / ml_dtypes' bf16 loop of
    ``float_fn`` already computes in f32 and rounds once (a correctly rounded operation);
    ``divides``: integer inputs are checked for a zero divisor first; ``half_select``: a
    comparison ``c`` for which ``float_fn`` is ``c(a, b) ? a : b``, which f16/bf16 take on their
    own bits; ``half_arith``: the name of ``float_fn`` in half.arith, which computes f16 the
    same way with vectorised integer and f32 passes (irexec/kernels/half.py)."""
    int_fn = int_fn or float_fn
    float_kinds = (numeric.NATIVE_FLOAT, numeric.HALF) if half_native else (numeric.NATIVE_FLOAT,)
    # numpy's integer add, subtract, multiply, maximum, minimum wrap without a warning
    ints_may_warn = divides or int_fn in (np.power, _int_power)

    def half_direct(a, b, out):
        """The f16 result without half.arith (its chunks with an infinity or a NaN)."""
        if half_native:
            float_fn(a, b, out=out)
        else:
            out[...] = numeric.narrow(float_fn(numeric.widen(a), numeric.widen(b)), a.dtype)

    def compute(a, b, into):
        k = numeric.kind(a.dtype)
        if k == numeric.INT:
            out = numeric.output(numeric.broadcast_shape(a, b), a.dtype, into)
            if not ints_may_warn:
                return int_fn(a, b, out=out)
            if divides and a.size:  # an empty output divides nothing
                _no_zero(b)
            with numeric.quiet():  # the lowest value // -1 flags an overflow
                return int_fn(a, b, out=out)
        if (half_select is not None and k == numeric.HALF and max(a.size, b.size) >= half.USE_MIN
                and (a.shape == b.shape or min(a.size, b.size) == 1) and half.active()):
            shape = numeric.broadcast_shape(a, b)
            out = numeric.output(shape, a.dtype, into)
            with numeric.quiet():
                return half.select(a, b, half_select,
                                   np.empty(shape, a.dtype) if out is None else out)
        if (half_arith is not None and a.dtype == half.F16 and max(a.size, b.size) >= half.USE_MIN
                and (a.shape == b.shape or min(a.size, b.size) == 1) and half.active()):
            shape = numeric.broadcast_shape(a, b)
            out = numeric.output(shape, a.dtype, into)
            with numeric.quiet():
                return half.arith(half_arith, a, b, half_direct,
                                  np.empty(shape, a.dtype) if out is None else out)
        with numeric.quiet():
            if k in float_kinds:
                return float_fn(a, b, out=numeric.output(numeric.broadcast_shape(a, b), a.dtype, into))
            if k == numeric.NARROW_INT:
                if divides and a.size:
                    _no_zero(b)
                return numeric.narrow(int_fn(numeric.widen(a), numeric.widen(b)), a.dtype)
            return numeric.narrow(float_fn(numeric.widen(a), numeric.widen(b)), a.dtype)

    @numeric.rank0_safe
    def kernel(a, b, **_attrs):
        return numeric.array(compute(a, b, None))

    @numeric.rank0_safe
    def kernel_in_place(a, b, **_attrs):
        return numeric.array(compute(a, b, a))

    plain = float_kinds if isinstance(float_fn, np.ufunc) else ()
    if int_fn is float_fn and not ints_may_warn and plain:
        plain += (numeric.INT,)  # numpy's integer loop, wrapping as the contract says
    return numeric.Kernels(kernel, kernel_in_place, (float_fn, plain) if plain else None)


def _divide_kernel() -> numeric.Kernels:
    floor = _kernel(np.true_divide, np.floor_divide, half_native=True, divides=True,
                    half_arith="divide")
    trunc = _kernel(np.true_divide, _trunc_divide, half_native=True, divides=True,
                    half_arith="divide")

    def kernel(a, b, *, m_pythondiv=True, **_attrs):
        return (floor if m_pythondiv else trunc).kernel(a, b)

    def kernel_in_place(a, b, *, m_pythondiv=True, **_attrs):
        return (floor if m_pythondiv else trunc).in_place(a, b)

    # floats divide alike either way: numpy's true_divide, as for floor's own float paths
    return numeric.Kernels(kernel, kernel_in_place, floor.ufunc)


def _divisor_infer(ctx):
    """The shared rules, and IR316 for a Constant integer divisor holding a 0 (unless the output
    is empty, when nothing is divided)."""
    outputs = ctx.default_outputs()
    b = ctx.input_value(1)
    if b is not None and numeric.kind(b.dtype) in (numeric.INT, numeric.NARROW_INT):
        shape = outputs[0].shape
        empty = shape.rank_is_static and any(d.is_static and d.min == 0 for d in shape)
        if not empty:
            try:
                _no_zero(b)
            except OpError as e:
                ctx.error("IR316", str(e))
    return outputs


PYTHONDIV = Attr("m_pythondiv", "bool", default=True,
                 doc="for integer types: true rounds the quotient down (floor, as Python's //), "
                     "false toward zero (as C++); no effect on floating-point types")

# type, result, more doc, kernel, extra attributes, the divisor rule
_ROWS = (
    ("Add", "a + b", "", _kernel(np.add, half_native=True, half_arith="add"), (), False),
    ("Subtract", "a - b", "", _kernel(np.subtract, half_native=True, half_arith="subtract"), (),
     False),
    ("Multiply", "a * b", "", _kernel(np.multiply, half_native=True, half_arith="multiply"), (),
     False),
    ("Divide", "a / b", "Integers: the quotient rounded down (m_pythondiv=true) or toward zero; "
                        "an integer divisor of 0 is IR316.", _divide_kernel(), (PYTHONDIV,), True),
    ("Power", "a to the power b", "Integers exact (wrapping); a negative integer exponent "
                                  "truncates the real power toward zero; 0 to a negative power "
                                  "is IR316.", _kernel(np.power, _int_power), (), False),
    ("Maximum", "the larger of a and b", "As OpenVINO, `a > b ? a : b`: a NaN in a gives b, a "
                                         "NaN in b gives NaN.",
     _kernel(_float_max, np.maximum, half_select=np.greater), (), False),
    ("Minimum", "the smaller of a and b", "As OpenVINO, `a < b ? a : b`: a NaN in a gives b, a "
                                          "NaN in b gives NaN.",
     _kernel(_float_min, np.minimum, half_select=np.less), (), False),
    ("SquaredDifference", "(a - b) squared", "",
     _kernel(_squared_difference, half_arith="squared_difference"), (), False),
    ("FloorMod", "a modulo b, with the sign of b", "Python's %; an integer divisor of 0 is "
                                                   "IR316.", _kernel(np.mod, divides=True), (),
     True),
    ("Mod", "the remainder of a / b, with the sign of a", "C's fmod; an integer divisor of 0 is "
                                                          "IR316.",
     _kernel(np.fmod, divides=True), (), True),
)

# How each result is computed, for the tolerances of irexec/numerics.py: Maximum and Minimum
# select, Power is transcendental, the rest are one or two correctly rounded operations.
NUMERICS = {"Maximum": "exact", "Minimum": "exact", "Power": "transcendental"}
# One IEEE operation per element for floats (precise mode needs no float64 for them); not
# SquaredDifference (two roundings), FloorMod or Mod (numpy's fmod/mod are exact but not these).
ONE_ROUNDING = ("Add", "Subtract", "Multiply", "Divide")


def _make(type_name: str, result: str, doc: str, kernels: numeric.Kernels, attrs,
          divides: bool) -> type[Op]:
    spec = OpSpec(
        type=type_name,
        numerics=NUMERICS.get(type_name, "rounded"),
        one_rounding=type_name in ONE_ROUNDING,
        since=1,
        attrs=(rules.AUTO_BROADCAST, *attrs),
        inputs=(Input("a", T, doc="the first operand"),
                Input("b", T, doc="the second operand" + (" (the divisor)" if divides else ""))),
        outputs=(Output("output", f"{result}, element by element; the inputs' type, their "
                                  f"broadcast shape", type=T),),
        shape=rules.broadcast(),
        doc=f"Element-wise {result}. {doc}".strip(),
        codes=(DIVISION_BY_ZERO,) if divides or type_name == "Power" else (),
        in_place=kernels.in_place,
        ufunc=kernels.ufunc,
    )
    members = {"spec": spec, "kernel": staticmethod(kernels.kernel), "__doc__": spec.doc,
               "__module__": __name__}
    if divides:
        members["infer"] = staticmethod(_divisor_infer)
    if type_name in _BOUNDS:  # how shape arithmetic's value bounds pass through
        members["bounds"] = staticmethod(_BOUNDS[type_name])
    return register(type(type_name, (Op,), members))


_BOUNDS = {"Add": bounds.binary(bounds.add), "Subtract": bounds.binary(bounds.subtract),
           "Multiply": bounds.binary(bounds.multiply), "Divide": bounds.divide_rule,
           "Maximum": bounds.monotone(np.maximum), "Minimum": bounds.monotone(np.minimum)}


OPS = {row[0]: _make(*row) for row in _ROWS}
