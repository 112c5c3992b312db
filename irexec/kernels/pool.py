"""Max and average pooling over the windows of [N, C, *spatial] data (MaxPool, AvgPool).

Both walk the kernel's taps, not the pixels: for each tap, one numpy operation over the whole
output (the data under that tap of every window is a strided view, kernels/windows.py). Where
padding is a border, it is one copy of a cache-sized block of channels into a larger array,
also covering the partial windows that ``ceil`` rounding adds past the end. Where a padded copy
would be larger than the data and the output together, values are computed without one:
padding and what lies past the data hold the reduction's identity (-inf or the lowest value
for a max, 0 for a sum), so each axis's pass starts from the identity and each tap reduces only
the windows whose element under it lies in the data (``_clipped``); taps that reach no data
cost nothing. A kernel of 1e5 with as much padding over a 3x3 input takes a few taps per axis,
not a padded copy of 150 GB. MaxPool's indices come with the values there (each axis's pass
keeps the first element above what a window holds, and where it is); where padding is a border
they are found by comparing each tap of the padded block with the window's maximum (the op
declares that block as its temporary). Windows that halve every axis (ResNet's 3x3/2 with
padding 1, the 2x2/2 ones) take kernels/pool_halving.py instead, MaxPool's indices too.

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
    done before (or, for a wide kernel, runs of doubling length: ``_doubling``). ``final``:
    where the last pass writes (shape [B, *out]). Windows are boxes, so the result is the
    same as over all taps at once, for any reduction that is associative and commutative; for
    a max the order changes nothing, and outer axes first keeps the first passes' inner loops
    contiguous (a strided last axis then runs over a reduced array: half the time of a 3x3/2
    MaxPool)."""
    cur = block
    nsp = len(kernel)
    order = list(range(nsp)) if outer_first else list(reversed(range(nsp)))
    for axis in order:
        k, s, d, o = kernel[axis], strides[axis], dilations[axis], out[axis]

        if _doubling_pays(cur, axis, k, o):
            acc = _doubling(cur, axis + 1, k, s, d, o, combine, dtype)
            if axis == order[-1] and final is not None:
                np.copyto(final, acc)
                acc = final
            cur = acc
            continue

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


def _tap_runs(n: int, k: int, s: int, d: int, pb: int, out: int) -> list[tuple[int, int]]:
    """The taps (``[first, last]`` runs, increasing) that put an element of the data under some
    window of an axis: data index ``o*s + t*d - pb`` in ``[0, n)`` for some output ``o``."""
    o = np.arange(out, dtype=np.int64)
    lo = np.maximum(-((o * s - pb) // d), 0)  # ceil((pb - o*s) / d)
    hi = np.minimum((pb + n - 1 - o * s) // d, k - 1)
    keep = lo <= hi
    lo, hi = lo[keep][::-1], hi[keep][::-1]  # increasing o moves the taps down: reversed
    if not lo.size:
        return []
    reach = np.maximum.accumulate(hi)
    starts = np.flatnonzero(np.concatenate(([True], lo[1:] > reach[:-1] + 1)))
    ends = np.concatenate((starts[1:], [lo.size])) - 1
    return [(int(lo[a]), int(reach[b])) for a, b in zip(starts, ends)]


def _clipped(cur, kernel, strides, dilations, pads_begin, out, combine, identity, dtype,
             final, outer_first=False):
    """Reduce every window of ``cur`` [B, *spatial] (unpadded) with ``combine``, padding and
    what lies past the data counting as ``identity``: one axis at a time from the last
    (``outer_first``: from the first, as ``_separable``), each tap over the run of windows
    whose element under it is in the data. ``final``: where the last pass writes (shape
    [B, *out])."""
    nsp = len(kernel)
    order = list(range(nsp)) if outer_first else list(reversed(range(nsp)))
    for axis in order:
        k, s, d, pb, o = kernel[axis], strides[axis], dilations[axis], pads_begin[axis], \
            out[axis]
        n = cur.shape[axis + 1]
        shape = cur.shape[:axis + 1] + (o,) + cur.shape[axis + 2:]
        acc = final if axis == order[-1] and final is not None else np.empty(shape, dtype)
        acc[...] = identity
        lead = (slice(None),) * (axis + 1)
        for first, last in _tap_runs(n, k, s, d, pb, o):
            for t in range(first, last + 1):
                off = t * d - pb  # the data index under tap t of window 0
                lo = max(0, -(off // s))  # the first window whose element is in the data
                hi = min(o - 1, (n - 1 - off) // s)
                if lo > hi:
                    continue
                start = lo * s + off
                into = acc[lead + (slice(lo, hi + 1),)]
                combine(into, cur[lead + (slice(start, start + (hi - lo) * s + 1, s),)],
                        out=into)
        cur = acc
    return cur


def _padding_dominates(spatial, kernel, strides, dilations, pads_begin, out) -> bool:
    """Whether a padded copy of a channel would be larger than twice the channel and its
    output together: then the windows are reduced without one (``_clipped``). A padded copy of
    a cache-sized block is faster where padding is a border (a 3x3 window with padding 1:
    about twice as fast), and its size is then bounded by the layer's own input and output."""
    ends = windows.reach(out, kernel, strides, dilations)
    return math.prod(ends) > 2 * (math.prod(spatial) + math.prod(out))


def _blocks(x: np.ndarray):
    """(start, stop) of blocks of rows of ``x`` [R, *spatial] sized for the caches."""
    per_row = max(math.prod(x.shape[1:]) * x.dtype.itemsize, 1)
    count = max(1, windows.BLOCK_BYTES // per_row)
    return [(r, min(r + count, x.shape[0])) for r in range(0, x.shape[0], count)]


_CALL = 4096  # a numpy call's overhead, in elements it could have processed meanwhile


def _doubling_pays(cur, axis: int, k: int, out: int) -> bool:
    """Whether a window axis costs less by doubling (about 2 log2(k) passes over the whole
    axis) than tap by tap (k passes over the output): a kernel of 4e6 taps over one output
    element was 4e6 numpy calls."""
    if k < 8:
        return False
    rest = cur.size // max(cur.shape[axis + 1], 1)
    by_tap = k * (_CALL + out * rest)
    by_doubling = 2 * k.bit_length() * (_CALL + cur.size)
    return by_doubling < by_tap


def _doubling(cur, dim: int, k: int, s: int, d: int, out: int, combine, dtype):
    """Each window's reduction along ``dim`` (k taps d apart, windows s apart, ``out`` of
    them) from runs of 1, 2, 4 ... taps, each run from two of half its length, every window
    the runs its tap count's binary digits name. An element meets only elements of its own
    window (no prefix-sum differences, which would cancel), the sums pairwise."""
    lead = (slice(None),) * dim
    last = (out - 1) * s + (k - 1) * d + 1  # the axis elements any window reads
    runs = cur[lead + (slice(0, last),)]  # runs[i]: taps i, i + d, ... (`length` of them)
    length, offset, acc = 1, 0, None
    while True:
        if k & length:
            part = runs[lead + (slice(offset * d, offset * d + (out - 1) * s + 1, s),)]
            if acc is None:
                acc = np.array(part, dtype=dtype)
            else:
                combine(acc, part, out=acc)
            offset += length
        if length * 2 > k:
            return acc
        m = runs.shape[dim] - length * d
        runs = combine(runs[lead + (slice(0, m),)],
                       runs[lead + (slice(length * d, length * d + m),)]).astype(dtype,
                                                                                 copy=False)
        length *= 2


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
    if on_block is None and _padding_dominates(x.shape[2:], kernel, strides, dilations,
                                               pads_begin, out):
        rows = _rows(x)
        for r0, r1 in _blocks(rows):
            v = _clipped(rows[r0:r1], kernel, strides, dilations, pads_begin, out, combine,
                         -np.inf if floats else low, ct, values[r0:r1], outer_first=True)
            if floats:
                np.fmax(v, low, out=v)
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
    count = math.prod(kernel)
    wide = count > _WIDE_INDEX
    taps = [] if wide else list(windows.taps(kernel))
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
        if wide:  # the first maximum by axis, not tap by tap
            offsets = _first_max_offsets(block, kernel, strides, dilations, out, elem, low)
            settle(r0, r1, offsets < 0, offsets.astype(index_dtype))
            return
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


def _max_clipped_offsets(x, kernel, strides, dilations, pads_begin, out, low, settle):
    """Values [N, C, *out] and each window's winner without a padded copy (where padding
    dominates): one axis at a time from the last, each pass keeping, per window, the first
    element greater than what it holds (starting from the lowest value), with its offset in
    the channel; taps in increasing order and the last axis first make the winner the first
    largest element in row-major order. ``settle(r0, r1, none, offsets)`` gets each block's
    offsets (in the channel; ``none``: no element above the lowest value)."""
    ct = compute_dtype(x.dtype)
    spatial = x.shape[2:]
    nsp = len(kernel)
    elem = [math.prod(spatial[a + 1:]) for a in range(nsp)]  # the spatial dims' strides
    rows = _rows(x)
    values = buffers.empty((rows.shape[0],) + tuple(out), ct)
    for r0, r1 in _blocks(rows):
        cur, offsets = rows[r0:r1], None
        for axis in reversed(range(nsp)):
            k, s, d, pb, o = kernel[axis], strides[axis], dilations[axis], \
                pads_begin[axis], out[axis]
            n = cur.shape[axis + 1]
            shape = cur.shape[:axis + 1] + (o,) + cur.shape[axis + 2:]
            best = np.full(shape, low, ct)
            where = np.full(shape, -1, np.int64)
            lead = (slice(None),) * (axis + 1)
            trail = (1,) * (len(shape) - axis - 2)
            for first, last in _tap_runs(n, k, s, d, pb, o):
                for t in range(first, last + 1):
                    off = t * d - pb
                    lo = max(0, -(off // s))
                    hi = min(o - 1, (n - 1 - off) // s)
                    if lo > hi:
                        continue
                    start = lo * s + off
                    into = lead + (slice(lo, hi + 1),)
                    src = lead + (slice(start, start + (hi - lo) * s + 1, s),)
                    candidate = cur[src]
                    better = candidate > best[into]
                    np.copyto(best[into], candidate, where=better, casting="unsafe")
                    pos = ((np.arange(lo, hi + 1, dtype=np.int64) * s + off) * elem[axis]) \
                        .reshape((-1,) + trail)
                    found = pos if offsets is None else offsets[src] + pos
                    np.copyto(where[into], np.broadcast_to(found, better.shape), where=better)
            cur, offsets = best, where
        values[r0:r1] = cur
        settle(r0, r1, offsets < 0, offsets)
    return values.reshape(x.shape[:2] + tuple(out))


def max_pool_indexed(x: np.ndarray, kernel: Sequence[int], strides: Sequence[int],
                     dilations: Sequence[int], pads_begin: Sequence[int], out: Sequence[int],
                     axis: int, index_dtype) -> tuple[np.ndarray, np.ndarray]:
    """MaxPool's values and indices (as :func:`max_pool_with_indices` gives them): without a
    padded copy where padding dominates (``_max_clipped_offsets``), else by that function."""
    if pool_halving.modes(x.shape[2:], kernel, strides, dilations, pads_begin, out) is not None \
            or not _padding_dominates(x.shape[2:], kernel, strides, dilations, pads_begin, out):
        return max_pool_with_indices(x, kernel, strides, dilations, pads_begin, out, axis,
                                     index_dtype)
    nsp = len(kernel)
    spatial = math.prod(x.shape[2:])
    period = math.prod(x.shape[axis:]) if axis < 2 else None  # the dims before axis: no count
    index = np.empty((x.shape[0] * x.shape[1],) + tuple(out), index_dtype)

    def settle(r0, r1, none, offsets):
        idx = index[r0:r1]
        offsets[none] = 0  # no winner: the row's first element
        if period is not None:
            offsets += (np.arange(r0, r1, dtype=np.int64) * spatial % period).reshape(
                (-1,) + (1,) * nsp)
        idx[...] = offsets

    values = _max_clipped_offsets(x, kernel, strides, dilations, pads_begin, out,
                                  lowest(x.dtype), settle)
    index = index.reshape(values.shape)
    if axis > 2:
        index %= math.prod(x.shape[axis:])
    return narrow(values, x.dtype), index


def indices_scratch(shape, dtype, kernel, strides, dilations, pads_begin, out) -> int:
    """The bytes of the padded block :func:`max_pool_with_indices` makes for data of ``shape``
    (none where the windows halve each axis, need no padding, or padding dominates): at least
    one padded channel, at most twice the channel and its output together."""
    if pool_halving.modes(tuple(shape[2:]), kernel, strides, dilations, pads_begin,
                          out) is not None or _padding_dominates(shape[2:], kernel, strides,
                                                                 dilations, pads_begin, out):
        return 0
    ends = windows.reach(out, kernel, strides, dilations)
    if not any(pads_begin) and all(e <= n for e, n in zip(ends, shape[2:])) \
            and compute_dtype(dtype) == np.dtype(dtype):
        return 0
    per_row = math.prod(ends) * compute_dtype(dtype).itemsize
    rows = math.prod(shape[:2])
    return per_row * max(1, min(rows, windows.BLOCK_BYTES // max(per_row, 1)))


_WIDE_INDEX = 64  # taps above which MaxPool's indices are found axis by axis


def _first_max_offsets(block, kernel, strides, dilations, out, elem, low) -> np.ndarray:
    """Each window's offset in the data of its first largest element above ``low`` (row-major
    order over the window), -1 where no element is above it. One axis at a time from the
    last: each position keeps its best (value, offset) along the axes done, and along the
    next axis a later candidate wins only when strictly greater, so among equal maxima the
    one of the smallest outer position, then of the smallest inner one, wins -- the first in
    row-major order. Wide axes by doubling runs (``_doubling_pays``), as the values."""
    value = np.where(block > low, block, low)  # NaN, -inf, padding and the lowest: no winner
    reach = sum((k - 1) * d * int(e) for k, d, e in zip(kernel, dilations, elem))
    offset = np.zeros(value.shape, np.int32 if reach < 2**31 else np.int64)
    for axis in reversed(range(len(kernel))):
        k, s, d, o = kernel[axis], strides[axis], dilations[axis], out[axis]
        value, offset = _first_max_along(value, offset, axis + 1, k, s, d, o,
                                         d * int(elem[axis]))
    return np.where(value > low, offset, -1)


def _first_max_along(value, offset, dim, k, s, d, o, step):
    """(value, offset) of each window along ``dim``; a tap t further adds t * step."""
    lead = (slice(None),) * dim

    def at(a, start, count, stride):
        return a[lead + (slice(start, start + (count - 1) * stride + 1, stride),)]

    def merge(best, later):  # best: the earlier taps' pair; later wins when strictly greater
        take = later[0] > best[0]
        return np.where(take, later[0], best[0]), np.where(take, later[1], best[1])

    if not _doubling_pays(value, dim - 1, k, o):
        best = (at(value, 0, o, s), at(offset, 0, o, s))
        for t in range(1, k):
            best = merge(best, (at(value, t * d, o, s), at(offset, t * d, o, s) + t * step))
        return np.array(best[0]), np.array(best[1])
    last = (o - 1) * s + (k - 1) * d + 1
    runs = (value[lead + (slice(0, last),)], offset[lead + (slice(0, last),)])
    length, start, best = 1, 0, None
    while True:
        if k & length:
            part = (at(runs[0], start * d, o, s), at(runs[1], start * d, o, s) + start * step)
            best = part if best is None else merge(best, part)
            start += length
        if length * 2 > k:
            return np.array(best[0]), np.array(best[1])
        m = runs[0].shape[dim] - length * d
        head = (runs[0][lead + (slice(0, m),)], runs[1][lead + (slice(0, m),)])
        tail = (runs[0][lead + (slice(length * d, length * d + m),)],
                runs[1][lead + (slice(length * d, length * d + m),)] + length * step)
        runs = merge(head, tail)
        length *= 2


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
    elif _padding_dominates(x.shape[2:], kernel, strides, dilations, pads_begin, out):
        rows = _rows(x)
        for r0, r1 in _blocks(rows):
            divide(_clipped(rows[r0:r1], kernel, strides, dilations, pads_begin, out, np.add,
                            0, ct, sums[r0:r1]))
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
        # taps t in [0, k) with lo <= start + t * d < hi, counted without listing them (a
        # kernel of 4e6 taps over many windows would be a table of billions)
        start = np.arange(out[i], dtype=np.int64) * strides[i]
        lo = pads_begin[i] if exclude_pad else 0
        hi = pads_begin[i] + spatial[i] + (0 if exclude_pad else pads_end[i])
        d = dilations[i]
        first = np.maximum(0, -((start - lo) // d))  # ceil((lo - start) / d)
        last = np.minimum(kernel[i] - 1, (hi - 1 - start) // d)
        n = np.maximum(last - first + 1, 0)
        n = n.reshape((1, 1) + tuple(-1 if j == i else 1 for j in range(nsp)))
        count = count * n
    return count
