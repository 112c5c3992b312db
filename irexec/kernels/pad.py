"""Pad: a tensor grown (positive pads) or cropped (negative pads) on each side of each axis.

Output position ``j`` along an axis holds input position ``j - pads_begin`` when that lies in the
data; elsewhere ``constant`` fills a value and the other modes take an input position mapped into
the data: ``edge`` the nearest end, ``reflect`` the mirror image without repeating the end,
``symmetric`` the mirror image repeating it. The mapping always works in the data's own positions,
even on an axis whose other side is cropped (Pad-12's specification, mixed-pads example).

The output is written once: the kept part is one copy from the data, and the rest is cut into
slabs, one pair per axis k -- positions before and after the kept range of axis k, every position
of the axes before k, the kept range of the axes after k. These slabs do not overlap and cover
everything else. Each slab is filled with the value, or gathered from the data (the modes are
separable: a slab is the data taken at the mapped positions of each axis in turn, smallest first).
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
    rank = data.ndim
    out_shape = tuple(max(n + b + e, 0) for n, b, e in zip(shape, begins, ends))
    out = buffers.empty(out_shape, data.dtype)
    if out.size == 0:
        return out
    kept_src, kept_dst = [], []  # per axis: the data range kept and where it lands
    for n, b, size in zip(shape, begins, out_shape):
        lo, hi = min(max(b, 0), size), max(min(b + n, size), 0)
        hi = max(hi, lo)
        kept_dst.append(slice(lo, hi))
        kept_src.append(slice(lo - b, hi - b))
    if all(s.stop > s.start for s in kept_dst):
        out[tuple(kept_dst)] = data[tuple(kept_src)]
    fill = _zero(data.dtype) if value is None else value
    maps = None if mode == "constant" else [
        source_positions(n, b, e, mode) for n, b, e in zip(shape, begins, ends)]
    for k in range(rank):
        later_dst = tuple(kept_dst[k + 1:])
        for part in (slice(0, kept_dst[k].start), slice(kept_dst[k].stop, out_shape[k])):
            if part.stop <= part.start or any(s.stop <= s.start for s in later_dst):
                continue
            where = (slice(None),) * k + (part,) + later_dst
            if maps is None:
                out[where] = fill
                continue
            # the data at axis k's mapped positions, the kept range after k, then every
            # output position before k (each axis taken in turn, the slab's own axis first)
            slab = data[(slice(None),) * (k + 1) + tuple(kept_src[k + 1:])]
            slab = np.take(slab, maps[k][part], axis=k)
            for i in range(k):
                slab = np.take(slab, maps[i], axis=i)
            out[where] = slab
    return out


def _zero(dtype: np.dtype):
    """Pad's fill when no value is given: zero bits (an empty string for strings)."""
    return "" if dtype.hasobject else np.zeros((), dtype)
