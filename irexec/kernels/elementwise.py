"""What every element-wise kernel shares: how each element type computes (the numeric contract).

* f32 and f64 compute in their own type, with numpy's function directly (no copies).
* f16, bf16 and the f8/f4 floats compute in f32 and are rounded once to their own type. Where
  numpy's (or ml_dtypes') own loop for f16/bf16 already is that (the correctly rounded operations:
  + - * /, sqrt, comparisons, negation, abs, floor, ceil, rint), it is used directly, being faster
  than two explicit casts; f8/f4 results are rounded by OpenVINO's rule
  (:func:`irexec.kernels.convert.convert`).
* Integers are exact and wrap on overflow, as C++ does on two's-complement machines (numpy's
  integer loops do). The sub-byte integers (i4, u1 ... u6) compute in int64 and keep their low
  bits.
* A real-valued function of an integer (Exp, Sin, Sqrt ...) computes in f64 and is rounded to the
  nearest integer (halves away from zero) before the conversion back, by irexec.kernels.convert's
  float -> integer rule: NaN gives 0; out of range saturates for i8 ... u64 and keeps the low
  bits for the sub-byte types.

``kind(dtype)`` names the path an array takes; ``to_compute`` / ``from_compute`` move values in
and out of the type a path computes in. Kernels silence numpy's floating-point warnings: inf and
NaN results are values here, not errors.
"""

from __future__ import annotations

import contextlib
import math
from contextvars import ContextVar

import ml_dtypes
import numpy as np

from irexec.ir import element_type as et_table
from irexec.kernels import buffers, half
from irexec.kernels.convert import convert

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
F16 = np.dtype(np.float16)
BF16 = np.dtype(ml_dtypes.bfloat16)

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
    return _KINDS[dtype]


def to_compute(x: np.ndarray) -> np.ndarray:
    """The values of a low-precision float in f32, of a sub-byte integer in int64 (exact); other
    arrays unchanged."""
    k = _KINDS[x.dtype]
    if x.dtype == F16:
        return half.to_f32(x)  # by lookup: faster than numpy's cast
    if k in (HALF, LOW_FLOAT):
        return et_table.plain_values(x).astype(F32)
    if k == NARROW_INT:
        return et_table.plain_values(x).astype(np.int64)
    return x


def from_compute(values, dtype: np.dtype) -> np.ndarray:
    """Computed values back in ``dtype``: one rounding to a float type, or the low bits of a
    sub-byte integer (wrapping)."""
    values = np.asarray(values)
    if values.dtype == dtype:
        return values
    if _KINDS[dtype] == HALF:
        return values.astype(dtype)
    if _KINDS[dtype] == NARROW_INT:  # keep the low bits (convert's rule from integers)
        return convert(values.astype(np.int64), dtype)
    return convert(values, dtype)


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
    sa, sb = a.shape, b.shape
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
            raise ValueError(f"shapes {a.shape} and {b.shape} do not broadcast")
    return tuple(out)


def array(result) -> np.ndarray:
    """ufuncs return a numpy scalar for 0-d inputs; kernels return arrays."""
    return result if type(result) is np.ndarray else np.asarray(result)


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
