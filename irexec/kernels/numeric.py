"""The type a compute kernel works in, and the one rounding back to the layer's type.

Kernels that accumulate (matrix products, convolutions, pooling, reductions, normalizations)
compute f32 and f64 in their own type, and every narrower float (f16, bf16, the f8 types) in f32,
rounding once, at the end, to the layer's element type: what OpenVINO's CPU plugin does with
``INFERENCE_PRECISION_HINT=f32``. Integers compute in their own type and wrap as C++ does.

This is the one place that says so: a precise (float64) mode changes ``compute_dtype`` alone.
"""

from __future__ import annotations

import numpy as np

from irexec.ir.element_type import from_dtype

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


_COMPUTE: dict = {}


def compute_dtype(dtype) -> np.dtype:
    """The dtype a kernel accumulates in for inputs of ``dtype``."""
    known = _COMPUTE.get(dtype)
    if known is None:
        known = _COMPUTE[dtype] = _compute_dtype(np.dtype(dtype))
    return known


def _compute_dtype(dtype: np.dtype) -> np.dtype:
    if dtype == _F32 or dtype == _F64:
        return dtype
    if dtype.kind in "iub":
        return dtype
    return _F32 if is_float(dtype) else dtype


def is_float(dtype) -> bool:
    """Whether ``dtype`` holds floating-point values (ml_dtypes' narrow floats included)."""
    dtype = np.dtype(dtype)
    return dtype.kind == "f" or from_dtype(dtype).is_real


def widen(array: np.ndarray) -> np.ndarray:
    """The array in its compute dtype (the array itself when it is already)."""
    return array.astype(compute_dtype(array.dtype), copy=False)


def finish(result: np.ndarray, dtype) -> np.ndarray:
    """The result rounded once to the layer's element type (no copy when it already is); values
    beyond a narrow type's range become infinities, as a cast does."""
    if result.dtype == dtype:
        return result
    with np.errstate(over="ignore"):
        return result.astype(dtype)
