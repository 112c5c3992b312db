"""Exact element-type conversion.

numpy's casts are exact (correctly rounded, round-to-nearest-even) for every pair irexec supports
except two families, which are handled here:

* float -> integer: numpy leaves out-of-range values and NaN undefined. irexec truncates toward
  zero, saturates at the target's limits and maps NaN to 0, so every input has one answer.
* anything wider than f32 (f64, and integers above 24 bits) -> bf16: ml_dtypes goes through f32,
  rounding twice (f64 1 + 2**-8 + 2**-30 gives 1.0 instead of 1.0078125). irexec first rounds to
  f32 *to odd* (truncate, then set the last bit if anything was dropped), after which the single
  round-to-nearest-even step to bf16 is exact.

Integer narrowing wraps (two's complement), as numpy and OpenVINO do. Anything to boolean is
``x != 0`` (so NaN is true).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

BF16 = np.dtype(ml_dtypes.bfloat16)


def convert(x: np.ndarray, dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    if x.ndim == 0:  # ufuncs turn 0-d arrays into numpy scalars; work on one element instead
        return convert(x.reshape(1), dtype).reshape(())
    # Signalling NaNs raise numpy's "invalid" flag in casts, and beyond a float type's range is
    # +-inf by IEEE rounding: the rules above define every result, so numpy need not warn.
    with np.errstate(invalid="ignore", over="ignore"):
        return _convert(x, dtype)


def _convert(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if dtype == np.bool_:
        return x != 0
    if _is_float(x.dtype) and dtype.kind in "iu":
        return _float_to_int(x, dtype)
    if dtype == BF16 and x.dtype != BF16 and (x.dtype == np.float64 or x.dtype.kind in "iu"):
        return _round_to_odd_f32(x).astype(BF16)
    return x.astype(dtype)


def _is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or dtype == BF16


def _float_to_int(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    wide = x.astype(np.float64)  # exact for every float type irexec holds
    with np.errstate(invalid="ignore", over="ignore"):
        out = np.trunc(wide).astype(dtype)
    # float(info.max) may round up past the maximum (2**63 for i64), so compare as floats.
    out[wide >= float(info.max)] = info.max
    out[wide <= float(info.min)] = info.min
    out[np.isnan(wide)] = 0
    return out


def _round_to_odd_f64_from_int(x: np.ndarray) -> np.ndarray:
    """Integers to f64, rounded to odd (exact whenever |x| < 2**53)."""
    negative = x < 0 if x.dtype.kind == "i" else np.zeros(x.shape, dtype=bool)
    magnitude = x.astype(np.int64).astype(np.uint64) if x.dtype.kind == "i" else x.astype(np.uint64)
    magnitude[negative] = (~magnitude[negative]) + np.uint64(1)  # |INT64_MIN| fits in uint64
    f = magnitude.astype(np.float64)
    f[f >= 2.0**64] = np.nextafter(2.0**64, 0)  # keep back-conversion in range
    with np.errstate(invalid="ignore"):
        back = f.astype(np.uint64)
    up = back > magnitude
    f[up] = np.nextafter(f[up], 0)
    inexact = f.astype(np.uint64) != magnitude
    bits = f.view(np.uint64)
    bits[inexact] |= np.uint64(1)
    f[negative] = -f[negative]
    return f


def _round_to_odd_f32(x: np.ndarray) -> np.ndarray:
    """f64 (or integers) to f32 rounded to odd: later rounding to bf16 is then exact."""
    wide = _round_to_odd_f64_from_int(x) if x.dtype.kind in "iu" else x.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        f = wide.astype(np.float32)
    finite = np.isfinite(wide)
    back = f.astype(np.float64)
    away = finite & (np.abs(back) > np.abs(wide))  # rounding went away from zero: step back
    f[away] = np.nextafter(f[away], np.float32(0))
    inexact = finite & (f.astype(np.float64) != wide)
    bits = f.view(np.uint32)
    bits[inexact] |= np.uint32(1)
    return f
