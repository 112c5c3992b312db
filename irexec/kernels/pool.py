"""Max and average pooling over the windows of [N, C, *spatial] data (MaxPool, AvgPool).

Both walk the kernel's taps, not the pixels: for each tap, one numpy operation over the whole
output (the data under that tap of every window is a strided view, kernels/windows.py). The
padding is one copy of the data into a larger array, also covering the partial windows that
``ceil`` rounding adds past the end padding. Windows that halve every axis (ResNet's 3x3/2 with
padding 1, the 2x2/2 ones) take kernels/pool_halving.py instead, without the padded copy,
MaxPool's indices too.

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

from irexec.kernels import buffers, pool_halving, windows
from irexec.kernels.numeric import compute_dtype, narrow, is_float


def lowest(dtype) -> object:
    """The lowest finite value of the type the max is computed in."""
    ct = compute_dtype(dtype)
    return np.finfo(ct).min if is_float(ct) else np.iinfo(ct).min


def _separable(block, kernel, strides, dilations, out, combine, dtype, final=None,
               outer_first=False):
    """Reduce every window of ``block`` [B, *padded] with ``combine`` (np.fmax, np.add ...),
    one spatial axis at a time from the last (``outer_first``: from the first): each axis is k
    strided views and k-1 operations over an array that is already reduced along the axes
    done before. ``final``: where the last pass writes (shape [B, *out]). Windows are boxes,
    so the result is the same as over all taps at once, for any reduction that is associative
    and commutative; for a max the order changes nothing, and outer axes first keeps the
    first passes' inner loops contiguous (a strided last axis then runs over a reduced array:
    half the time of a 3x3/2 MaxPool)."""
    cur = block
    nsp = len(kernel)
    order = list(range(nsp)) if outer_first else list(reversed(range(nsp)))
    for axis in order:
        k, s, d, o = kernel[axis], strides[axis], dilations[axis], out[axis]

        def view(t, cur=cur, axis=axis, s=s, d=d, o=o):
            index = [slice(None)] * cur.ndim
            index[axis + 1] = slice(t * d, t * d + (o - 1) * s + 1, s)
            return cur[tuple(index)]
        if axis == order[-1] and final is not None:
            acc = final
            np.copyto(acc, view(0))
        else:
            acc = np.array(view(0), dtype=dtype)
        for t in range(1, k):
            combine(acc, view(t), out=acc)
        cur = acc
    return cur


def _rows(x: np.ndarray) -> np.ndarray:
    return x.reshape((-1,) + x.shape[2:])


def max_pool(x: np.ndarray, kernel: Sequence[int], strides: Sequence[int],
             dilations: Sequence[int], pads_begin: Sequence[int], out: Sequence[int]) \
        -> np.ndarray:
    """The values only."""
    values, _ = _max_values(x, kernel, strides, dilations, pads_begin, out, None)
    return narrow(values, x.dtype)


def _max_values(x, kernel, strides, dilations, pads_begin, out, on_block):
    """Values [N, C, *out] in the compute type; ``on_block(r0, r1, padded, values)`` is called
    with each block while its padded data is at hand."""
    ct = compute_dtype(x.dtype)
    low = lowest(x.dtype)
    floats = is_float(ct)
    values = buffers.empty((x.shape[0] * x.shape[1],) + tuple(out), ct)
    combine = np.fmax if floats else np.maximum
    halving = None if on_block is not None else \
        pool_halving.modes(x.shape[2:], kernel, strides, dilations, pads_begin, out)
    if halving is not None:
        lows = {}

        def clamp(v):  # fmax with an array of the lowest value: 4x faster than with a scalar
            fill = lows.get(v.shape)
            if fill is None:
                fill = lows[v.shape] = np.full(v.shape, low, ct)
            np.fmax(v, fill, out=v)
        clamp = clamp if floats else None
        pool_halving.pool(_rows(x), halving, out, combine, -np.inf if floats else low, ct,
                          values, clamp)
        return values.reshape(x.shape[:2] + tuple(out)), low
    ends = windows.reach(out, kernel, strides, dilations)
    for r0, r1, block in windows.padded_blocks(_rows(x), pads_begin, ends,
                                               -np.inf if floats else low, ct):
        v = _separable(block, kernel, strides, dilations, out, combine, ct, values[r0:r1],
                       outer_first=True)
        if floats:  # NaN (all NaN) and -inf (all -inf or padding) give the lowest: one pass
            np.fmax(v, low, out=v)
        if on_block is not None:
            on_block(r0, r1, block, v)
    return values.reshape(x.shape[:2] + tuple(out)), low


def max_pool_with_indices(x: np.ndarray, kernel: Sequence[int], strides: Sequence[int],
                          dilations: Sequence[int], pads_begin: Sequence[int],
                          out: Sequence[int], axis: int, index_dtype) \
        -> tuple[np.ndarray, np.ndarray]:
    """Values and the flat index of each maximum in the data: over the whole tensor, or over
    the dims from ``axis`` on (the index modulo their size).

    Which tap won: after the values, each tap k whose element equals the window's maximum
    scores K - k (K taps), and the window keeps its highest score, so the first such tap in
    row-major order wins; 0 means none (no element above the lowest value: index 0 of the
    channel). Masked writes would say the same with fewer operations, but run several times
    slower on random masks. The index is made block by block while the block is in cache.
    Windows that halve each axis take pool_halving.max_with_offsets instead (same result)."""
    taps = list(windows.taps(kernel))
    count = len(taps)
    score_type = np.uint8 if count < 255 else np.uint32
    low = lowest(x.dtype)
    nsp = len(kernel)
    spatial = math.prod(x.shape[2:])
    # the data index of the taps, from the one scoring 1 (the last) to the first; 0 for none
    elem = np.cumprod((1,) + tuple(x.shape[:2:-1]))[::-1]  # strides of the spatial dims
    by_score = np.array([0] + [sum(t * d * int(e) for t, d, e in zip(tap, dilations, elem))
                               for tap in taps][::-1], index_dtype)
    base = np.zeros(tuple(out), index_dtype)  # where each window starts, padding included
    for i in range(nsp):
        start = (np.arange(out[i]) * strides[i] - pads_begin[i]) * int(elem[i])
        base = base + start.reshape(tuple(-1 if j == i else 1 for j in range(nsp)))
    base = base.astype(index_dtype)
    # each (n, c) row's own offset: the dims before axis do not count
    period = math.prod(x.shape[axis:]) if axis < 2 else None
    index = np.empty((x.shape[0] * x.shape[1],) + tuple(out), index_dtype)
    scratch = {}

    def on_block(r0, r1, block, v):
        if scratch.get("shape") != v.shape:
            scratch.update(shape=v.shape, mask=np.empty(v.shape, bool),
                           tmp=np.empty(v.shape, score_type), score=np.empty(v.shape,
                                                                              score_type))
        m, tmp, b = scratch["mask"], scratch["tmp"], scratch["score"]
        hit = m.view(np.uint8)
        b[...] = 0
        for k, tap in enumerate(taps):
            np.equal(windows.tap_view(block, tap, out, strides, dilations), v, out=m)
            np.multiply(hit, score_type(count - k), out=tmp, casting="unsafe")
            np.maximum(b, tmp, out=b)
        np.not_equal(v, low, out=m)  # nothing above the lowest value: no winner
        np.multiply(b, hit, out=b, casting="unsafe")
        np.equal(b, 0, out=m)
        settle(r0, r1, m, by_score[b])

    def settle(r0, r1, none, offsets):
        """index[r0:r1] from each window's offset of its winner in the data; ``none``: the
        windows with no winner."""
        idx = index[r0:r1]
        np.add(offsets, base, out=idx)
        if period is not None:
            rows = (np.arange(r0, r1, dtype=np.int64) * spatial % period).astype(index_dtype)
            idx += rows.reshape((-1,) + (1,) * nsp)
        if none.any():  # no winner: the row's first element
            idx[none] = 0 if period is None else np.broadcast_to(
                rows.reshape((-1,) + (1,) * nsp), idx.shape)[none]

    halving = pool_halving.modes(x.shape[2:], kernel, strides, dilations, pads_begin, out)
    if halving is not None:
        values = _max_offsets(x, halving, out, low, settle)
    else:
        values, _ = _max_values(x, kernel, strides, dilations, pads_begin, out, on_block)
    index = index.reshape(values.shape)
    if axis > 2:
        index %= math.prod(x.shape[axis:])
    return narrow(values, x.dtype), index


def _max_offsets(x, halving, out, low, settle):
    """The values [N, C, *out] by pool_halving; each block's offsets of the windows' winners
    go to ``settle``."""
    ct = compute_dtype(x.dtype)
    floats = is_float(ct)
    values = buffers.empty((x.shape[0] * x.shape[1],) + tuple(out), ct)

    def finish_block(r0, r1, offsets):
        v = values[r0:r1]
        if floats:  # NaN (all NaN) and -inf (all -inf or padding) give the lowest
            np.fmax(v, low, out=v)
        settle(r0, r1, v == low, offsets)
    pool_halving.max_with_offsets(_rows(x), halving, out, np.fmax if floats else np.maximum,
                                  -np.inf if floats else low, ct, values, finish_block)
    return values.reshape(x.shape[:2] + tuple(out))


def avg_pool(x: np.ndarray, kernel: Sequence[int], strides: Sequence[int],
             dilations: Sequence[int], pads_begin: Sequence[int], pads_end: Sequence[int],
             out: Sequence[int], exclude_pad: bool) -> np.ndarray:
    ct = compute_dtype(x.dtype)
    if not is_float(ct):
        ct = np.dtype(np.float64)  # integer sums are exact in f64; rounded at the end
    ends = windows.reach(out, kernel, strides, dilations)
    count = _counts(x.shape[2:], kernel, strides, dilations, pads_begin, pads_end, out,
                    exclude_pad)[0].astype(ct)
    sums = buffers.empty((x.shape[0] * x.shape[1],) + tuple(out), ct)

    spread = {}

    def divide(v):  # by the divisors spread over the block: 2x faster than broadcasting
        by = spread.get(v.shape)
        if by is None:
            by = spread[v.shape] = np.ascontiguousarray(np.broadcast_to(count, v.shape))
        with np.errstate(invalid="ignore", divide="ignore"):
            np.divide(v, by, out=v)
    halving = pool_halving.modes(x.shape[2:], kernel, strides, dilations, pads_begin, out)
    if halving is not None:
        pool_halving.pool(_rows(x), halving, out, np.add, 0, ct, sums, divide)
    else:
        for r0, r1, block in windows.padded_blocks(_rows(x), pads_begin, ends, 0, ct):
            divide(_separable(block, kernel, strides, dilations, out, np.add, ct, sums[r0:r1]))
    sums = sums.reshape(x.shape[:2] + tuple(out))
    if not is_float(x.dtype):
        sums = np.rint(sums)
    return narrow(sums, x.dtype)


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
