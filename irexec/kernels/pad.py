"""Pad: a tensor grown (positive pads) or cropped (negative pads) on each side of each axis.

Output position ``j`` along an axis holds input position ``j - pads_begin`` when that lies in the
data; elsewhere ``constant`` fills a value and the other modes take an input position mapped into
the data: ``edge`` the nearest end, ``reflect`` the mirror image without repeating the end,
``symmetric`` the mirror image repeating it. The mapping always works in the data's own positions,
even on an axis whose other side is cropped (Pad-12's specification, mixed-pads example).

Constant mode copies the kept part once and fills the rest. The other modes gather along one
padded axis at a time (each of them separable), copying only the kept range of the axes not
padded.
"""

from __future__ import annotations

import numpy as np

from irexec.kernels import buffers


def source_positions(n: int, begin: int, end: int, mode: str) -> np.ndarray:
    """The data position each output position of one axis copies, for edge, reflect and
    symmetric padding of a dim of ``n`` (n >= 1; reflect needs n >= 2 to pad)."""
    t = np.arange(-begin, n + end, dtype=np.int64)
    if mode == "edge":
        return np.clip(t, 0, n - 1)
    if mode == "reflect":
        period = 2 * (n - 1)
        if period == 0:
            return np.zeros_like(t)
        t = np.abs(t) % period
        return np.where(t >= n, period - t, t)
    period = 2 * n  # symmetric
    t = np.where(t < 0, -t - 1, t) % period
    return np.where(t >= n, period - 1 - t, t)


def pad(data: np.ndarray, begins: list[int], ends: list[int], mode: str, value=None) \
        -> np.ndarray:
    shape = data.shape
    out_shape = tuple(max(n + b + e, 0) for n, b, e in zip(shape, begins, ends))
    if mode == "constant":
        out = buffers.empty(out_shape, data.dtype)
        if out.size == 0:
            return out
        src, dst = [], []
        for n, b, size in zip(shape, begins, out_shape):
            lo = max(b, 0)  # first output position that holds data
            hi = min(b + n, size)  # one past the last
            src.append(slice(max(-b, 0), max(-b, 0) + max(hi - lo, 0)))
            dst.append(slice(lo, max(hi, lo)))
        fill = _zero(data.dtype) if value is None else value
        if all(s.stop > s.start for s in dst):
            out[tuple(dst)] = data[tuple(src)]
            for axis, (s, size) in enumerate(zip(dst, out_shape)):
                head = tuple(dst[:axis]) + (slice(0, s.start),)
                tail = tuple(dst[:axis]) + (slice(s.stop, size),)
                # Slabs before and after the kept range of this axis; the axes before it are
                # already done over their kept range only, the full range of later ones.
                out[_full(head, axis, dst)] = fill
                out[_full(tail, axis, dst)] = fill
        else:
            out[...] = fill
        return out
    result, copied = data, False
    for axis, (n, b, e) in enumerate(zip(shape, begins, ends)):
        if b == 0 and e == 0:
            continue
        if b <= 0 and e <= 0:  # a crop only: a view
            index = [slice(None)] * data.ndim
            index[axis] = slice(-b, n + e if n + e > -b else -b)
            result = result[tuple(index)]
            continue
        positions = source_positions(n, b, e, mode)
        taken_shape = result.shape[:axis] + (positions.size,) + result.shape[axis + 1:]
        taken = buffers.empty(taken_shape, data.dtype)
        np.take(result, positions, axis=axis, out=taken, mode="clip")
        result, copied = taken, True
    return result if copied else buffers.copy(result)


def _full(index: tuple, axis: int, kept: list[slice]) -> tuple:
    """``index`` (the kept ranges of the axes before ``axis``, then a slab of ``axis``)
    extended by every later axis in full."""
    return index + (slice(None),) * (len(kept) - axis - 1)


def _zero(dtype: np.dtype):
    """Pad's fill when no value is given: zero bits (an empty string for strings)."""
    return "" if dtype.hasobject else np.zeros((), dtype)
