"""Scatter with a reduction, exactly as OpenVINO's reference computes it: the updates are
applied one after another in their order, each combined with what the target holds then.

For a sum or product numpy's unbuffered ``ufunc.at`` does exactly that, in order (so float
rounding matches the sequential loop). Minimum and maximum follow C++'s ``a < b ? a : b`` and
``a > b ? a : b``, which are not numpy's (a NaN is dropped again by the next value; of two equal
values, such as -0.0 and 0.0, the later wins), so they are applied in rounds: each round combines
every target's next update at once, and there are as many rounds as the most-updated target has
updates. Booleans reduce as OpenVINO does: sum is or, product is and, sub is xor.
"""

from __future__ import annotations

import numpy as np

from irexec.ir.element_type import from_dtype


def _rounds(rows: np.ndarray):
    """The positions of ``rows`` split into rounds of distinct rows, each in the original
    order: round r holds each row's (r+1)-th occurrence."""
    order = np.argsort(rows, kind="stable")
    ordered = rows[order]
    if ordered.size == 0:
        return
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    run = np.repeat(starts, np.diff(np.r_[starts, ordered.size]))
    rank = np.arange(ordered.size) - run
    for r in range(int(rank.max()) + 1):
        yield order[rank == r]


def _pick(keep_first):
    def combine(acc, value):
        keep = keep_first(acc, value)
        if acc.ndim:
            return np.where(keep, acc, value)
        return acc if keep else value
    return combine


_ORDERED = {
    "max": _pick(lambda a, b: a > b),
    "min": _pick(lambda a, b: a < b),
}
_AT = {"sum": np.add, "prod": np.multiply, "sub": np.subtract}
_AT_BOOL = {"sum": np.logical_or, "prod": np.logical_and, "sub": np.logical_xor,
            "max": np.logical_or, "min": np.logical_and}


def reduce_into(out: np.ndarray, rows: np.ndarray, values: np.ndarray, reduction: str) -> None:
    """``out[rows[i]] = reduction(out[rows[i]], values[i])`` for i in order, along the first
    axis of ``out`` (rows of a 2-D view, or elements of a 1-D one)."""
    if out.dtype == np.bool_:
        _AT_BOOL[reduction].at(out, rows, values)
    elif reduction in _AT:
        with np.errstate(all="ignore"):  # integers wrap, floats overflow to inf: C++ arithmetic
            _AT[reduction].at(out, rows, values)
    elif out.dtype.kind in "iu":  # no NaN, no signed zero: numpy's order-free at() is exact
        (np.maximum if reduction == "max" else np.minimum).at(out, rows, values)
    else:
        combine = _ORDERED[reduction]
        for picked in _rounds(rows):
            target = rows[picked]
            out[target] = combine(out[target], values[picked])


def reducible(et) -> bool:
    """Whether a scatter reduction computes in this element type: booleans, integers of 8 bits
    and more, f16, bf16, f32, f64 (the types OpenVINO's reference implementation reduces in;
    the narrow types have no arithmetic of their own)."""
    return et.is_dynamic or et.kind == "boolean" or (et.is_integral and et.bits >= 8) or (
        et.is_real and et.bits >= 16)


def neutral(dtype: np.dtype, reduction: str):
    """The value a target starts from when the data is not used (``use_init_val`` false): the
    lowest finite value for max, the highest for min, 1 for a product, else 0 (OpenVINO's)."""
    if dtype == np.bool_:
        return np.bool_(reduction in ("min", "prod"))
    if reduction in ("max", "min"):
        info = np.iinfo(dtype) if dtype.kind in "iu" else _finfo(dtype)
        return dtype.type(info.min if reduction == "max" else info.max)
    return dtype.type(1 if reduction == "prod" else 0)


def _finfo(dtype: np.dtype):
    import ml_dtypes

    try:
        return np.finfo(dtype)
    except (TypeError, ValueError):
        return ml_dtypes.finfo(dtype)


def mean_of(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """OpenVINO's mean: integers divided rounding down; f16 and bf16 divided in f32, then
    rounded to the type; f32 and f64 in their own type."""
    if sums.dtype.kind in "iu":
        wide = np.uint64 if sums.dtype == np.uint64 else np.int64
        return np.floor_divide(sums.astype(wide), counts.astype(wide)).astype(sums.dtype)
    et = from_dtype(sums.dtype)
    wide = np.float64 if et.bits == 64 else np.float32
    with np.errstate(all="ignore"):
        return (sums.astype(wide) / counts.astype(wide)).astype(sums.dtype)
