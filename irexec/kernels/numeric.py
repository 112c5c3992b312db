"""The numeric contract of irexec's kernels, in one place (docs/numerics.md): the type each element
type computes in, how values are widened to it and rounded back, once, and the kernel of an
element-wise function made from its float function alone.

* f32 and f64 compute in their own type, with numpy's functions directly (no copies).
* f16, bf16 and the f8/f4 floats compute in f32 and are rounded once to their own type at the end:
  what OpenVINO's reference kernels and its CPU plugin with ``INFERENCE_PRECISION_HINT=f32`` do.
  f8/f4 results are rounded by OpenVINO's rule (:func:`irexec.kernels.convert.convert`). Where
  numpy's (or ml_dtypes') own f16/bf16 loop already is that (the correctly rounded operations:
  + - * /, sqrt, comparisons, negation, abs, floor, ceil, rint), it may be used directly, being
  faster than two casts; a large f16/bf16 tensor is computed by table (irexec/kernels/half.py:
  the same results, one gather).
* Integers are exact and wrap on overflow, as C++ does on two's-complement machines (numpy's
  integer loops do). The sub-byte integers (i4, u1 ... u6) compute in int64 and keep their low
  bits.
* A real-valued function of an integer (Exp, Sin, Sqrt ...) computes in f64 and is rounded to the
  nearest integer (halves away from zero) before the conversion back, by convert's float ->
  integer rule: NaN gives 0; out of range saturates for i8 ... u64 and keeps the low bits for the
  sub-byte types.
* Rank 0 is a tensor like any other: numpy's ufuncs turn 0-d arrays into numpy scalars, which take
  no ``out=`` and no item assignment, so a kernel made here computes 0-d inputs as one-element
  vectors (:func:`rank0_safe`) and always returns an ndarray of the output's element type.

:func:`unary` makes a kernel (and its in-place variant) for every element type from the float
function alone: a new element-wise op gets this contract by declaring that function. Kernels that
accumulate (matrix products, convolutions, pooling, reductions) read :func:`compute_dtype` and
round with :func:`narrow`. ``kind(dtype)`` names the path an array takes. Kernels silence numpy's
floating-point warnings: inf and NaN results are values here, not errors.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable
from contextvars import ContextVar
from typing import NamedTuple

import ml_dtypes
import numpy as np

from irexec.ir import element_type as et_table
from irexec.kernels import buffers, half
from irexec.kernels.convert import convert

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
F16 = np.dtype(np.float16)
BF16 = np.dtype(ml_dtypes.bfloat16)

# --- the type paths ------------------------------------------------------------------------------

NATIVE_FLOAT = "float"  # f32, f64
HALF = "half"  # f16, bf16: numpy/ml_dtypes compute them, through f32
LOW_FLOAT = "low_float"  # f8 and f4: explicit f32, rounded by convert
INT = "int"  # numpy's integer types
NARROW_INT = "narrow_int"  # i4, u1, u2, u4 (ml_dtypes) and u3, u6 (structured uint8)
BOOL = "bool"
OTHER = "other"  # string, nf4, complex: no element-wise math here

_KINDS: dict[np.dtype, str] = {}
for _et in (*et_table.SUPPORTED, *et_table.NOT_IN_IR):
    _d = _et.dtype
    if _et.kind == "boolean":
        _KINDS[_d] = BOOL
    elif _et.kind == "float":
        _KINDS[_d] = (NATIVE_FLOAT if _d in (F32, F64) else HALF if _d in (F16, BF16)
                      else LOW_FLOAT)
    elif _et.kind in ("int", "uint"):
        _KINDS[_d] = NARROW_INT if _et.is_narrow else INT
    else:
        _KINDS[_d] = OTHER


def kind(dtype: np.dtype) -> str:
    """The path an array of ``dtype`` takes (KeyError for a dtype no element type has)."""
    return _KINDS[dtype]


def output(shape: tuple, dtype: np.dtype, into: np.ndarray | None = None) -> np.ndarray | None:
    """Where a kernel writes a result of ``shape`` and ``dtype``: ``into`` (the in-place variant's
    first input) when it has that shape and dtype; for a large result, an array from the run's
    pool of dead memory (no page faults: see irexec/kernels/buffers.py); else None (numpy
    allocates)."""
    if into is not None and into.shape == shape and into.dtype == dtype:
        return into
    if len(shape) and math.prod(shape) * dtype.itemsize >= buffers.MIN_BYTES:
        return buffers.empty(shape, dtype)
    return None


# --- the compute type, widening and the one rounding ---------------------------------------------

_COMPUTE: dict = {}


_FILLED: dict = {}  # (value, size, dtype) -> a read-only array of it: see filled
_FILLED_KEPT = 64


def filled(value, size: int, dtype=np.float32) -> np.ndarray:
    """A read-only 1-D array of ``size`` copies of ``value``, made once and kept (a few dozen).
    numpy's maximum, minimum and fmax against an array of the operand's shape run about three
    times as fast as against a scalar (numpy 2.4: their scalar-operand loops are not
    vectorised; add and multiply's are), so a clamp to a constant takes one of these."""
    key = (float(value), size, np.dtype(dtype).str)
    array = _FILLED.get(key)
    if array is None:
        if len(_FILLED) >= _FILLED_KEPT:
            _FILLED.clear()
        array = np.full(size, value, dtype)
        array.flags.writeable = False
        _FILLED[key] = array
    return array


def compute_dtype(dtype) -> np.dtype:
    """The dtype a kernel computes in for inputs of ``dtype``: f32 and f64 their own, every
    narrower float f32, integers (numpy's) and booleans their own."""
    known = _COMPUTE.get(dtype)
    if known is None:
        dtype = np.dtype(dtype)
        k = _KINDS.get(dtype, OTHER)
        known = _COMPUTE[dtype] = F32 if k in (HALF, LOW_FLOAT) else dtype
    return known


def is_float(dtype) -> bool:
    """Whether ``dtype`` holds floating-point values (ml_dtypes' narrow floats included)."""
    return _KINDS.get(np.dtype(dtype)) in (NATIVE_FLOAT, HALF, LOW_FLOAT)


def widen(x: np.ndarray) -> np.ndarray:
    """The values of ``x`` in the type they compute in: a narrow float's in f32 (f16 by lookup,
    faster than numpy's cast), a sub-byte integer's in int64 (exact); other arrays unchanged."""
    k = _KINDS.get(x.dtype, OTHER)
    if x.dtype == F16:
        return half.to_f32(x)
    if k in (HALF, LOW_FLOAT):
        return et_table.plain_values(x).astype(F32)
    if k == NARROW_INT:
        return et_table.plain_values(x).astype(np.int64)
    return x


def narrow(values, dtype) -> np.ndarray:
    """Computed values back in ``dtype``, always an ndarray (no copy when they already are):
    one rounding to a float type (overflow gives inf, as it should; f8/f4 by OpenVINO's rule),
    the low bits of a sub-byte integer (wrapping)."""
    values = values if type(values) is np.ndarray else np.asarray(values)
    if values.dtype == dtype:
        return values
    k = _KINDS.get(np.dtype(dtype), OTHER)
    if k in (HALF, NATIVE_FLOAT) and values.dtype.kind == "f":
        with np.errstate(over="ignore", invalid="ignore"):
            return values.astype(dtype)
    if k == NARROW_INT:  # keep the low bits (convert's rule from integers)
        return convert(values.astype(np.int64), dtype)
    return convert(values, dtype)


def scalar_of(value: np.ndarray, dtype: np.dtype):
    """A one-element input (alpha, beta ...) as a numpy scalar of the type ``dtype`` computes
    in."""
    return np.asarray(value).reshape(-1)[0].astype(compute_dtype(dtype))


def array(result) -> np.ndarray:
    """ufuncs return a numpy scalar for 0-d inputs; kernels return arrays."""
    return result if type(result) is np.ndarray else np.asarray(result)


def rank0_safe(kernel: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """``kernel`` for 0-d inputs too: when every array argument has rank 0 (the output then has
    too), it computes one-element vectors and the results are 0-d arrays again. numpy's ufuncs
    give numpy scalars for 0-d arrays, which a kernel's ``out=`` or item assignment refuses;
    this keeps every element-wise kernel off that path, whatever its float function does."""

    @functools.wraps(kernel)
    def safe(*arrays, **attrs):
        if arrays and not getattr(arrays[0], "ndim", 1) and all(  # the first test is cheap
                type(a) is np.ndarray and a.ndim == 0 for a in arrays):
            result = kernel(*[a.reshape(1) for a in arrays], **attrs)
            if isinstance(result, tuple):
                return tuple(None if r is None else array(r).reshape(()) for r in result)
            return array(result).reshape(())
        return kernel(*arrays, **attrs)

    return safe


# --- element-wise kernels from their float function ----------------------------------------------

class Kernels(NamedTuple):
    """An element-wise kernel and what its spec declares of it (irexec/ops/spec.py)."""

    kernel: Callable[..., np.ndarray]
    in_place: Callable[..., np.ndarray] | None = None
    ufunc: tuple | None = None  # (numpy ufunc, the type paths it is the kernel for)


def unary(fn: Callable, *, ints: Callable | None = None, half_native: bool = False,
          bits: Callable | None = None, params: int = 0) -> Kernels:
    """The kernel ``kernel(x, *params, **attrs)`` of an element-wise function, its in-place
    variant, and the ufunc it is (``fn`` itself, when it is one and takes every float path).

    ``fn(x, out, *params, **attrs)`` writes the function of the float array ``x`` into ``out``
    (x's shape and type; it may be x itself) computing in x's own type, as numpy's ufuncs do
    with a positional ``out``; ``params`` are one-element inputs (alpha, beta ...), handed to
    ``fn`` as scalars of the compute type, or missing when optional and not given.
    ``ints(x, out)``: what integers compute (the default: ``fn`` in f64, rounded half away from
    zero, :func:`real_of_int`); ``half_native``: numpy's f16 / ml_dtypes' bf16 loop of ``fn``
    already rounds once from f32 (a correctly rounded operation); ``bits(x, out, **attrs)``
    computes f16 and bf16 on their bits with the same results (a selection, as Relu's)."""
    float_kinds = (NATIVE_FLOAT, HALF) if half_native else (NATIVE_FLOAT,)

    def call(x, out, scalars, attrs):
        fn(x, out, *scalars, **attrs)
        return out

    def direct(x, scalars, attrs):
        """A narrow float x's result without a table: by numpy's own loop where it already
        rounds once from f32 (``half_native``), else widened to f32, computed and rounded once
        to x's type."""
        if _KINDS[x.dtype] in float_kinds:
            return call(x, np.empty(x.shape, x.dtype), scalars, attrs)
        w = widen(x)
        w = w.copy() if w is x else w
        return narrow(call(w, w, scalars, attrs), x.dtype)

    def compute(x, args, attrs, into):
        if x.ndim == 0:  # as a one-element vector: see rank0_safe
            return compute(x.reshape(1), args, attrs,
                           None if into is None else into.reshape(1)).reshape(())
        k = _KINDS[x.dtype]
        if k in (INT, NARROW_INT):
            if ints is None:
                return real_of_int(lambda v: call(v, np.empty_like(v), (), attrs), x)
            with quiet():
                if k == INT:
                    out = buffers.empty(x.shape, x.dtype) if into is None else into
                    ints(x, out)
                    return out
                w = widen(x)
                ints(w, w)
                return narrow(w, x.dtype)
        if k == BOOL or k == OTHER:
            raise TypeError(f"{getattr(fn, '__name__', fn)} has no {x.dtype} path")
        scalars = tuple(scalar_of(a, x.dtype) for a in args)
        if k == NATIVE_FLOAT:
            with quiet():
                return call(x, buffers.empty(x.shape, x.dtype) if into is None else into,
                            scalars, attrs)
        if bits is not None and x.dtype in half.HALVES and half.active():
            out = buffers.empty(x.shape, x.dtype) if into is None else into
            bits(x, out, **attrs)
            return out
        with quiet():
            if k == HALF and half.wants_table(x):  # one lookup in the table of all 65,536 values
                key = half.key(fn, scalars, attrs)
                return half.mapped(x, key, lambda v: direct(v, scalars, attrs), into)
            if k in float_kinds:  # numpy's own f16/bf16 loop rounds once from f32
                return call(x, buffers.empty(x.shape, x.dtype) if into is None else into,
                            scalars, attrs)
            return direct(x, scalars, attrs)

    def kernel(x, *args, **attrs):
        return compute(x, args, attrs, None)

    def kernel_in_place(x, *args, **attrs):
        return compute(x, args, attrs, x)

    kernel.__name__ = getattr(fn, "__name__", "kernel")
    kernel.__doc__ = fn.__doc__
    plain = float_kinds if isinstance(fn, np.ufunc) and not params else ()
    if plain and ints is fn:
        plain += (INT,)  # numpy's integer loop, wrapping as the contract says
    return Kernels(kernel, kernel_in_place, (fn, plain) if plain else None)


# --- floating-point flags and shapes ------------------------------------------------------------

# Set while a compiled model runs its steps, all under np.errstate(all="ignore"): kernels then
# skip entering errstate themselves (several µs a call, which small tensors in a loop body pay
# every iteration).
_IGNORING = ContextVar("irexec_ignoring_float_errors", default=False)
_NOTHING = contextlib.nullcontext()


def quiet():
    """``np.errstate(all="ignore")``, or nothing where :func:`ignoring` is already in force."""
    return _NOTHING if _IGNORING.get() else np.errstate(all="ignore")


class ignoring:
    """``with ignoring():`` floating-point flags are ignored for a whole run, and kernels'
    :func:`quiet` costs nothing (a class, not a generator: every call of a compiled model
    enters it)."""

    def __enter__(self):
        self.errstate = np.errstate(all="ignore")
        self.errstate.__enter__()
        self.token = _IGNORING.set(True)

    def __exit__(self, *exc):
        _IGNORING.reset(self.token)
        self.errstate.__exit__(*exc)


def broadcast_shape(a: np.ndarray, b: np.ndarray) -> tuple:
    """numpy's broadcast of two shapes, without numpy's cost (several µs a call, which small
    tensors in a loop body pay every iteration); inference has checked they broadcast."""
    return broadcast_dims(a.shape, b.shape)


def broadcast_dims(sa: tuple, sb: tuple) -> tuple:
    """:func:`broadcast_shape` on the shapes themselves; ValueError where numpy's would."""
    if sa == sb or not sb:
        return sa
    if not sa:
        return sb
    if len(sa) < len(sb):
        sa = (1,) * (len(sb) - len(sa)) + sa
    elif len(sb) < len(sa):
        sb = (1,) * (len(sa) - len(sb)) + sb
    out = []
    for x, y in zip(sa, sb):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise ValueError(f"shapes {sa} and {sb} do not broadcast together")
    return tuple(out)




def round_half_away(x: np.ndarray) -> np.ndarray:
    """Round to the nearest integer, halves away from zero (C's ``round``), in x's own type."""
    a = np.abs(x)
    r = np.floor(a)
    r += (a - r) >= 0.5  # a - r is exact for floats
    return np.copysign(r, x)


def real_of_int(fn, x: np.ndarray) -> np.ndarray:
    """A real-valued function of integers: computed in f64, rounded half away from zero, then
    converted back to x's type by convert's rule (NaN -> 0)."""
    with np.errstate(all="ignore"):
        values = fn(et_table.plain_values(x).astype(F64))
        return convert(np.asarray(round_half_away(values)), x.dtype)


# --- precise mode's rounding --------------------------------------------------------------------

def round_once(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A float64 array rounded once (to nearest, ties to even) to the float type ``dtype``.

    numpy rounds float64 to f32 and f16 directly; ml_dtypes rounds float64 to bf16 and the f8/f4
    types through f32, which can round twice. For those, the value goes to f32 rounded to odd
    (truncated, its last bit set when anything was cut off): f32 keeps at least two bits more
    than each of them, so the second rounding then gives the correctly rounded result."""
    if x.dtype == dtype:
        return x
    with np.errstate(all="ignore"):  # overflow to inf is the right rounding
        if dtype == F32 or dtype == F64 or dtype == np.float16 or x.dtype != F64:
            return x.astype(dtype)
        t = x.astype(F32)
        back = t.astype(F64)
        inexact = (back != x) & ~np.isnan(x)
        if inexact.any():
            bits = t.view(np.uint32)
            bits -= (inexact & (np.abs(back) > np.abs(x))).astype(np.uint32)  # toward zero
            bits |= inexact.astype(np.uint32)
        return t.astype(dtype)


def compare_pair(a: np.ndarray, b: np.ndarray):
    """Both arrays in one type that compares their values exactly where it can (integers of
    either sign as int64 or uint64 when all fit, otherwise float64)."""
    if a.dtype.kind in "iub" and b.dtype.kind in "iub":
        common = np.promote_types(a.dtype, b.dtype)
        if common.kind != "f":
            return a.astype(common), b.astype(common)
    return a.astype(np.float64), b.astype(np.float64)
