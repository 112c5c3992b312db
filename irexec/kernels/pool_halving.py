"""Pooling windows that halve every spatial axis, without a padded copy (MaxPool and AvgPool
values): the 3-wide windows at stride 2 with one element of padding before (ResNet's 3x3/2
MaxPool) and the 2-wide windows at stride 2 without padding, on any number of spatial axes.

On such an axis the data splits into its even elements E and its odd ones O, and window i is
``E[i] + O[i]`` (2-wide) or ``O[i-1] + E[i] + O[i]`` (3-wide; window 0 has padding in place of
O[-1]) for the reduction + (max or add). So a pass over an axis is two or three operations on
arrays of half its length, and the padding never exists: window 0 simply has one term less. The
outer axes are done first (the rows of an outer axis are contiguous runs, so the operations run
at full vector speed); the last axis is split by reading each pair of 4-byte elements as one
8-byte integer and casting it to 4 bytes (its low half: the even element; the same from one
element further on: the odd one), exact bit copies that numpy vectorizes, where a stride-2 view
would make every operation a scalar loop. The work goes a block of channels at a time so that
the temporaries stay in the CPU's cache, and the last pass writes into the output.

Nothing here rounds differently from ``pool._separable`` for a max; a sum adds the same terms
in another order (outer axes first), which may differ in the last bit.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence

import numpy as np

from irexec.kernels import windows

PAIRS = "pairs"      # kernel 2, stride 2, no padding before
OVERLAP = "overlap"  # kernel 3, stride 2, one element of padding before


def modes(spatial: Sequence[int], kernel: Sequence[int], strides: Sequence[int],
          dilations: Sequence[int], pads_begin: Sequence[int], out: Sequence[int]) \
        -> tuple[str, ...] | None:
    """The pattern of each spatial axis, or None when some axis has windows of another kind
    (the general kernel then runs). The windows must end inside the data: ``2 * out <= size``,
    so padding after the data and ceil rounding's extra windows are never read."""
    found = []
    for n, k, s, d, b, o in zip(spatial, kernel, strides, dilations, pads_begin, out):
        if s != 2 or d != 1 or 2 * o > n or o < 1:
            return None
        if k == 3 and b == 1:
            found.append(OVERLAP)
        elif k == 2 and b == 0:
            found.append(PAIRS)
        else:
            return None
    return tuple(found)


def _last_axis(even, odd, mode, combine, dest, period):
    """The last axis: ``dest`` [M] from its even and odd elements [M] (contiguous), M rows of
    ``period`` windows each (the axis's output size)."""
    if mode == PAIRS:
        combine(even, odd, out=dest)
        return
    # window i: odd[i-1], even[i], odd[i]; over the whole block at once, then the first
    # window of each row (whose odd[i-1] was the previous row's last) again without it
    combine(odd[:-1], even[1:], out=dest[1:])
    combine(dest[1:], odd[1:], out=dest[1:])
    combine(even[::period], odd[::period], out=dest[::period])


def _outer_axis(cur, shape, axis, mode, combine, near, far, dest):
    """An outer axis of ``cur`` [*shape] (flat): its windows into ``dest`` [*shape with the axis
    halved] (a contiguous array), through ``near`` and ``far`` (flat scratch, as large as
    ``cur``). Whole rows (``inner`` elements: the axes after this one) combine with the next
    row and then the one after, at every row: a third of that work is for windows that do not
    exist (rows at odd positions, and rows straddling two outer slices), but each operation
    runs over one contiguous range; picking the windows' rows alone would be operations over
    short rows, and numpy pays for each row (3x slower measured)."""
    outer = math.prod(shape[:axis])
    n = shape[axis]
    inner = math.prod(shape[axis + 1:])
    size = cur.size
    near, far = near[:size], far[:size]
    combine(cur[:size - inner], cur[inner:], out=near[:size - inner])  # rows r and r+1
    rows = dest.reshape(outer, n // 2, inner)
    if mode == PAIRS:
        np.copyto(rows, near.reshape(outer, n, inner)[:, 0::2])
        return
    rows[:, 0] = near.reshape(outer, n, inner)[:, 0]  # window 0: rows 0 and 1
    if n > 2:
        combine(near[:size - 2 * inner], cur[2 * inner:],
                out=far[:size - 2 * inner])  # rows r, r+1, r+2
        np.copyto(rows[:, 1:], far.reshape(outer, n, inner)[:, 1:n - 1:2])


# Pairs of 4-byte elements split by integer casts: only where the first of a pair is the low
# half of the 8-byte integer.
_SPLIT_BY_CAST = sys.byteorder == "little"


def _split_last(flat, even, odd):
    """The even and odd elements of the contiguous 1-D array ``flat`` (even length) into
    ``even`` and ``odd`` (half its length, same dtype)."""
    if flat.dtype.itemsize == 4 and _SPLIT_BY_CAST:
        u32 = np.uint32
        np.copyto(even.view(u32), flat.view(np.uint64), casting="unsafe")
        # the odd elements: the pairs from one element on (unaligned), and the last one
        np.copyto(odd[:-1].view(u32), flat[1:-1].view(np.uint64), casting="unsafe")
        odd[-1] = flat[-1]
    else:
        np.copyto(even, flat[0::2])
        np.copyto(odd, flat[1::2])


def pool(x: np.ndarray, mode: Sequence[str], out: Sequence[int], combine, dtype,
         result: np.ndarray, finish_block=None, block_bytes: int | None = None) -> None:
    """Reduce the windows of ``x`` [R, *spatial] with ``combine`` (np.fmax, np.maximum,
    np.add) in ``dtype``, into ``result`` [R, *out] (C-contiguous, ``dtype``).
    ``finish_block(values)`` is called on each block of ``result`` once it is complete (while it
    is in the cache). ``mode``: :func:`modes`."""
    dtype = np.dtype(dtype)
    rows = x.shape[0]
    nsp = len(out)
    used = tuple(2 * o for o in out)  # the data the windows read, from the start of each axis
    per_row = math.prod(used)
    count = max(1, min(rows, (block_bytes or windows.BLOCK_BYTES) // (per_row * dtype.itemsize)))
    direct = x.dtype == dtype and x.shape[1:] == used and x.flags.c_contiguous
    # scratch made once and reused by every block: the input in dtype (when it is not
    # already), the last axis's halves (reused by the outer axes), each axis's result
    staged = None if direct else np.empty(count * per_row, dtype)
    half = count * per_row // 2
    even, odd, first = np.empty(half, dtype), np.empty(half, dtype), np.empty(half, dtype)
    second = np.empty(half // 2, dtype) if nsp > 2 else None
    flat_result = result.reshape(-1)
    per_out = math.prod(out)
    for r0 in range(0, rows, count):
        r1 = min(r0 + count, rows)
        b = r1 - r0
        if direct:
            cur = x[r0:r1].reshape(-1)
        else:
            cur = staged[:b * per_row]
            cur.reshape((b,) + used)[...] = x[(slice(r0, r1),) + tuple(slice(0, u)
                                                                       for u in used)]
        m = cur.size // 2
        e, o = even[:m], odd[:m]
        _split_last(cur, e, o)
        dest = flat_result[r0 * per_out:r1 * per_out] if nsp == 1 else first[:m]
        _last_axis(e, o, mode[-1], combine, dest, out[-1])
        shape = (b,) + used[:-1] + (out[-1],)
        spare = second
        for axis in range(nsp - 1, 0, -1):  # the outer axes, inner to outer
            cur = dest
            if axis == 1:
                dest = flat_result[r0 * per_out:r1 * per_out]
            else:
                dest, spare = spare[:cur.size // 2], cur
            _outer_axis(cur, shape, axis, mode[axis - 1], combine, odd, even, dest)
            shape = shape[:axis] + (out[axis - 1],) + shape[axis + 1:]
        if finish_block is not None:
            finish_block(dest.reshape((b,) + tuple(out)))
