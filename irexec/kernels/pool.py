"""Max and average pooling over the windows of [N, C, *spatial] data (MaxPool, AvgPool).

Both walk the kernel's taps, not the pixels: for each tap, one numpy operation over the whole
output (the data under that tap of every window is a strided view, kernels/windows.py). The
padding is one copy of the data into a larger array, also covering the partial windows that
``ceil`` rounding adds past the end padding.

Max pooling follows OpenVINO: a window's value is the largest of its elements that are greater
than the type's lowest finite value, NaN never being greater, and the lowest finite value when
there is none (a window of -inf, NaN or padding only); its index is that of the first such largest
element in row-major order over the window, 0 when there is none. Average pooling divides by the
number of the window's elements inside the data (``exclude_pad``), or, counting padding as zeros,
by the kernel's size -- OpenVINO's rule, even where a ceil-rounded window reaches past the end
padding; without padding, a window cut short by ceil rounding divides by what it covers. A window
with no element to count gives NaN (0 / 0).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from irexec.kernels import windows
from irexec.kernels.numeric import compute_dtype, finish, is_float


def lowest(dtype) -> object:
    """The lowest finite value of the type the max is computed in."""
    ct = compute_dtype(dtype)
    return np.finfo(ct).min if is_float(ct) else np.iinfo(ct).min


def max_pool(x: np.ndarray, kernel: Sequence[int], strides: Sequence[int],
             dilations: Sequence[int], pads_begin: Sequence[int], out: Sequence[int]) \
        -> np.ndarray:
    """The values only."""
    ct = compute_dtype(x.dtype)
    low = lowest(x.dtype)
    ends = windows.reach(out, kernel, strides, dilations)
    floats = is_float(ct)
    xp = windows.pad(x, pads_begin, ends, -np.inf if floats else low, dtype=ct)
    acc = None
    for tap in windows.taps(kernel):
        v = windows.tap_view(xp, tap, out, strides, dilations)
        if acc is None:
            acc = np.array(v, dtype=ct)
        elif floats:
            np.fmax(acc, v, out=acc)
        else:
            np.maximum(acc, v, out=acc)
    if floats:
        acc[~(acc > low)] = low  # NaN (all NaN) and -inf (all -inf or padding)
    return finish(acc, x.dtype)


def max_pool_with_indices(x: np.ndarray, kernel: Sequence[int], strides: Sequence[int],
                          dilations: Sequence[int], pads_begin: Sequence[int],
                          out: Sequence[int], axis: int, index_dtype) \
        -> tuple[np.ndarray, np.ndarray]:
    """Values and the flat index of each maximum in the data: over the whole tensor, or over
    the dims from ``axis`` on (the index modulo their size)."""
    ct = compute_dtype(x.dtype)
    low = lowest(x.dtype)
    ends = windows.reach(out, kernel, strides, dilations)
    xp = windows.pad(x, pads_begin, ends, low, dtype=ct)
    acc = np.full(x.shape[:2] + tuple(out), low, ct)
    best = np.full(acc.shape, -1, np.int64)
    mask = np.empty(acc.shape, bool)
    for k, tap in enumerate(windows.taps(kernel)):
        v = windows.tap_view(xp, tap, out, strides, dilations)
        np.greater(v, acc, out=mask)
        np.copyto(acc, v, where=mask)
        np.copyto(best, k, where=mask)
    index = _flat_index(x.shape, best, kernel, strides, dilations, pads_begin, out)
    if axis:
        index %= math.prod(x.shape[axis:])
    return finish(acc, x.dtype), index.astype(index_dtype)


def _flat_index(shape, best, kernel, strides, dilations, pads_begin, out) -> np.ndarray:
    """The flat data index of tap ``best`` of every window (0 plus the (n, c) offset where no
    element won: ``best`` -1)."""
    nsp = len(kernel)
    elem = np.cumprod((1,) + tuple(shape[:2:-1]))[::-1]  # strides of the spatial dims
    spatial = math.prod(shape[2:])
    index = (np.arange(shape[0]).reshape((-1, 1) + (1,) * nsp) * shape[1] * spatial
             + np.arange(shape[1]).reshape((1, -1) + (1,) * nsp) * spatial)
    base = np.zeros((1, 1) + tuple(out), np.int64)
    for i in range(nsp):
        o = np.arange(out[i]) * strides[i] - pads_begin[i]
        base = base + (o * int(elem[i])).reshape((1, 1) + tuple(-1 if j == i else 1
                                                               for j in range(nsp)))
    tap_offsets = np.array([sum(t * d * int(e) for t, d, e in zip(tap, dilations, elem))
                            for tap in windows.taps(kernel)] + [0], np.int64)
    won = best >= 0
    return index + np.where(won, base + tap_offsets[best], 0)


def avg_pool(x: np.ndarray, kernel: Sequence[int], strides: Sequence[int],
             dilations: Sequence[int], pads_begin: Sequence[int], pads_end: Sequence[int],
             out: Sequence[int], exclude_pad: bool) -> np.ndarray:
    ct = compute_dtype(x.dtype)
    if not is_float(ct):
        ct = np.dtype(np.float64)  # integer sums are exact in f64; rounded at the end
    ends = windows.reach(out, kernel, strides, dilations)
    xp = windows.pad(x, pads_begin, ends, 0, dtype=ct)
    acc = None
    for tap in windows.taps(kernel):
        v = windows.tap_view(xp, tap, out, strides, dilations)
        if acc is None:
            acc = np.array(v, dtype=ct)
        else:
            acc += v
    count = _counts(x.shape[2:], kernel, strides, dilations, pads_begin, pads_end, out,
                    exclude_pad)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc /= count.astype(ct)
    if not is_float(x.dtype):
        acc = np.rint(acc)
    return finish(acc, x.dtype)


def _counts(spatial, kernel, strides, dilations, pads_begin, pads_end, out, exclude_pad) \
        -> np.ndarray:
    """How many elements each window averages: [1, 1, *out], one factor per axis."""
    nsp = len(kernel)
    count = np.ones((1, 1) + (1,) * nsp, np.int64)
    if not exclude_pad and any(pads_begin + pads_end):
        # OpenVINO counts the whole kernel whenever there is padding, even for a ceil-rounded
        # window that reaches past the end padding.
        return count * math.prod(kernel)
    for i in range(nsp):
        pos = (np.arange(out[i])[:, None] * strides[i]
               + np.arange(kernel[i])[None, :] * dilations[i])
        if exclude_pad:
            inside = (pos >= pads_begin[i]) & (pos < pads_begin[i] + spatial[i])
        else:
            inside = pos < spatial[i] + pads_begin[i] + pads_end[i]
        n = inside.sum(axis=1).reshape((1, 1) + tuple(-1 if j == i else 1 for j in range(nsp)))
        count = count * n
    return count
