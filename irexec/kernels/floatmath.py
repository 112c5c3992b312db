"""Element-wise float kernels by irexec's numeric contract (docs/numerics.md).

f32 and f64 compute in their own type; f16, bf16 and the f8/f4 floats compute in f32 and are
rounded once to their own type at the end (as OpenVINO's reference kernels do). Integer inputs
(the ops that take them: Relu, Clamp, PRelu) compute in their own type, exactly.

:func:`unary` turns ``fn(x, out)`` -- which writes its result into ``out`` and must stay right when
``out`` is ``x`` itself -- into a kernel and an in-place variant (used when the input dies at the
layer): no Python loop over elements, at most one temporary for the narrow types. A large f16 or
bf16 tensor is computed by table (irexec/kernels/half.py): the same results, one gather.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from irexec.kernels import buffers, half

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)


def work_dtype(dtype: np.dtype) -> np.dtype:
    """The type a float of ``dtype`` computes in; integers compute in their own type."""
    if dtype.kind in "iub" or dtype == F32 or dtype == F64:
        return dtype
    return F32


def widen(x: np.ndarray) -> np.ndarray:
    """``x`` in its compute type (the array itself when it already is)."""
    wd = work_dtype(x.dtype)
    if x.dtype == wd:
        return x
    return half.to_f32(x) if x.dtype == half.F16 else x.astype(wd)  # f16 by lookup: faster


def narrow(result: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A result computed in the compute type, rounded once to ``dtype``."""
    if result.dtype == dtype:
        return result
    with np.errstate(over="ignore", invalid="ignore"):  # overflow gives inf, as it should
        return result.astype(dtype)


def unary(fn: Callable[..., None], bits: Callable[..., None] | None = None) -> dict:
    """The kernel ``kernel(x, **attrs)`` of ``fn(x, out, **attrs)`` and its ``in_place`` variant,
    as the spec's fields.
    ``bits(x, out, **attrs)``, when given, computes the same results for f16 and bf16 on their
    bits (a selection, as Relu's, needs no arithmetic)."""

    def widened(x, **attrs):
        """x widened to f32, computed, rounded once to x's type."""
        with np.errstate(all="ignore"):  # NaN and overflow are values, not errors
            w = x.astype(F32)
            fn(w, w, **attrs)
            return w.astype(x.dtype)

    def kernel(x, *, _out=None, **attrs):
        wd = work_dtype(x.dtype)
        if wd == x.dtype:
            with np.errstate(all="ignore"):
                out = buffers.empty(x.shape, wd) if _out is None else _out
                fn(x, out, **attrs)
                return out
        if bits is not None and x.dtype in half.HALVES and half.active():
            out = buffers.empty(x.shape, x.dtype) if _out is None else _out
            bits(x, out, **attrs)
            return out
        if half.wants_table(x):  # f16/bf16: one lookup in the table of all 65,536 values
            key = half.key(fn, attrs)
            return half.mapped(x, key, lambda v: widened(v, **attrs), _out)
        return widened(x, **attrs)

    def over(x, **attrs):
        return kernel(x, _out=x, **attrs)

    kernel.__name__ = getattr(fn, "__name__", "kernel")
    kernel.__doc__ = fn.__doc__
    return {"kernel": kernel, "in_place": over}


def scalar_of(value: np.ndarray, dtype: np.dtype):
    """A one-element input (alpha, beta ...) as a numpy scalar of the compute type."""
    return np.asarray(value).reshape(-1)[0].astype(work_dtype(dtype))


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
