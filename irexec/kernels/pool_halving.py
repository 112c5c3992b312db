"""Pooling windows that halve every spatial axis, without a padded copy (MaxPool and AvgPool
values): the 3-wide windows at stride 2 with one element of padding before (ResNet's 3x3/2
MaxPool) and the 2-wide windows at stride 2 without padding, on any number of spatial axes.

On such an axis, window i is elements 2i and 2i+1 (2-wide), or 2i-1, 2i and 2i+1 (3-wide;
window 0 has padding in place of element -1), under the reduction + (max or add). The last
axis first: it splits into its even elements E and its odd ones O by reading each pair of
4-byte elements as one 8-byte integer and casting it to 4 bytes (the low half: the even
element; the same from one element further on: the odd one) -- exact bit copies that numpy
vectorizes, where a stride-2 view makes every operation a scalar loop; then window i is
``E[i] + O[i] (+ O[i-1])``, operations over contiguous arrays. The outer axes after it, as
whole rows: each row plus the next (plus the one before), and the windows' rows picked from
that. Where window 0 would read the padding, the reduction's neutral value (-inf, 0) stands
in the element or row before the data, so no window is a special case. The work goes a block
of channels at a time, in scratch arrays made once, so that it stays in the CPU's cache.

A max is the same as ``pool._separable``'s but for the sign of a zero (which numpy's own
fmax does not fix either); a sum adds the same terms in another order, which may change the
last bit.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence

import numpy as np

PAIRS = "pairs"      # kernel 2, stride 2, no padding before
OVERLAP = "overlap"  # kernel 3, stride 2, one element of padding before

# The input a block holds. Its even and odd elements take as much again, and the block, these
# and the output should stay in the CPU's L2 cache (1 MiB a core here). Measured on a 3x3/2
# MaxPool of [1,64,112,112] f32: 256 to 400 KiB within 5% of each other, 512 KiB 1.4x slower,
# 1 MiB 2x, 128 KiB 1.3x (numpy's cost per call, about 10 us a block, then counts).
BLOCK_BYTES = 3 << 17


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


# Pairs of 4-byte elements split by integer casts: only where the first of a pair is the low
# half of the 8-byte integer.
_SPLIT_BY_CAST = sys.byteorder == "little"


class _Program:
    """The operations on a block of ``b`` rows, on views of the scratch arrays made once: a
    call runs the same program on every full block (numpy's cost per call, not per element, is
    what small blocks pay: about 16 us a block when the views were made for each).

    ``even`` and ``odd`` (flat, each half a block after ``lead`` elements) receive the last
    axis's even and odd elements. Each axis's result goes back into the array it was read
    from, and the windows' rows from there to the other one (or the output). The ``lead``
    elements before each array hold the reduction's ``neutral`` value (-inf for a max, 0 for
    a sum) wherever a window reaches back into the padding, so that window 0 is no special
    case: the one element (last axis) or row (outer axis) before a slice of the data is
    made neutral, after the operation that needed its value, before the one that would add
    it to the next slice's window 0."""

    def __init__(self, b, used, out, mode, combine, neutral, even, odd, lead):
        nsp = len(out)
        m = b * math.prod(used) // 2
        e, o = even[lead:lead + m], odd[lead:lead + m]
        self.split = (e, o)
        if e.dtype.itemsize == 4 and _SPLIT_BY_CAST:
            self.split_cast = (e.view(np.uint32), o[:-1].view(np.uint32))
        else:
            self.split_cast = None
        ops = self.ops = []  # (function, inputs, output or None)
        period = out[-1]
        ops.append((combine, (e, o), e))  # even[i] + odd[i]
        if mode[-1] == OVERLAP:
            # + odd[i-1]: the element before each row's first is neutral from now on
            ops.append((_fill, (odd[lead - 1:lead + m - 1:period], neutral), None))
            ops.append((combine, (e, odd[lead - 1:lead + m - 1]), e))
        src, other = even, odd
        shape = (b,) + used[:-1] + (out[-1],)
        self.last = e, np.s_[:]
        for axis in range(nsp - 1, 0, -1):  # the outer axes, inner to outer
            outer = math.prod(shape[:axis])
            n = shape[axis]
            inner = math.prod(shape[axis + 1:])
            size = outer * n * inner
            cur = src[lead:lead + size]
            near = other[lead:lead + size]
            # Whole rows combine with the next row (and then with the one before): a third of
            # the work is for windows that do not exist (rows at odd positions, rows across
            # two outer slices), but each operation runs over one contiguous range, where
            # picking the windows' rows alone is an operation over many short rows, for which
            # numpy pays per row (3x slower measured).
            ops.append((combine, (cur[:size - inner], cur[inner:]), near[:size - inner]))
            if mode[axis - 1] == PAIRS:
                rows = near  # window i: near's row 2i (rows 2i, 2i+1)
            else:
                # window i: row 2i-1 of cur + row 2i of near, into cur's row 2i-1 (window 0:
                # the neutral row before each slice + rows 0 and 1)
                before = src[lead - inner:lead - inner + size].reshape(outer, n, inner)
                ops.append((_fill, (before[:, 0], neutral), None))
                t = src[lead - inner:lead + size - 2 * inner]
                ops.append((combine, (t, near[:size - inner]), t))
                rows = src[lead - inner:lead - inner + size]
            windows_ = rows.reshape(outer, n, inner)[:, 0::2]
            shape = shape[:axis] + (n // 2,) + shape[axis + 1:]
            if axis == 1:
                self.last = windows_, None
            else:  # into the array the windows are not in; the next axis reads it
                if mode[axis - 1] == OVERLAP:
                    src, other = other, src
                dest = src[lead:lead + size // 2]
                ops.append((np.copyto, (dest.reshape(outer, n // 2, inner), windows_), None))
        self.shape = (b,) + tuple(out)

    def run(self, src, dest):
        """``src``: the block's data (flat, contiguous); ``dest``: its output (flat)."""
        e, o = self.split
        if self.split_cast is not None:
            ce, co = self.split_cast
            np.copyto(ce, src.view(np.uint64), casting="unsafe")
            # the odd elements: the pairs from one element on (unaligned), and the last one
            np.copyto(co, src[1:-1].view(np.uint64), casting="unsafe")
            o[-1] = src[-1]
        else:
            np.copyto(e, src[0::2])
            np.copyto(o, src[1::2])
        for fn, args, out in self.ops:
            if out is None:
                fn(*args)
            else:
                fn(*args, out=out)
        source, _ = self.last
        np.copyto(dest.reshape(source.shape), source)


def _fill(view, value):
    view[...] = value


def pool(x: np.ndarray, mode: Sequence[str], out: Sequence[int], combine, neutral, dtype,
         result: np.ndarray, finish_block=None, block_bytes: int | None = None) -> None:
    """Reduce the windows of ``x`` [R, *spatial] with ``combine`` (np.fmax, np.maximum,
    np.add), whose ``neutral`` value changes nothing (-inf, the type's lowest, 0), in
    ``dtype``, into ``result`` [R, *out] (C-contiguous, ``dtype``). ``finish_block(values)``
    is called on each block of ``result`` once it is complete (while it is in the cache).
    ``mode``: :func:`modes`."""
    dtype = np.dtype(dtype)
    rows = x.shape[0]
    used = tuple(2 * o for o in out)  # the data the windows read, from the start of each axis
    per_row = math.prod(used)
    per_out = math.prod(out)
    count = max(1, min(rows, (block_bytes or BLOCK_BYTES) // (per_row * dtype.itemsize)))
    direct = x.dtype == dtype and x.shape[1:] == used and x.flags.c_contiguous
    flat_x = x.reshape(-1) if direct else None
    # scratch made once and reused by every block: the input in dtype (when it is not
    # already), its even and odd elements on the last axis after room for a neutral row
    staged = None if direct else np.empty(count * per_row, dtype)
    lead = math.prod(out[1:])  # the longest row: the first axis's
    half = count * per_row // 2
    even, odd = np.empty(lead + half, dtype), np.empty(lead + half, dtype)
    flat_result = result.reshape(-1)
    programs = {}
    for r0 in range(0, rows, count):
        r1 = min(r0 + count, rows)
        b = r1 - r0
        program = programs.get(b)
        if program is None:
            program = programs[b] = _Program(b, used, out, mode, combine, neutral, even, odd,
                                             lead)
        if direct:
            src = flat_x[r0 * per_row:r1 * per_row]
        else:
            src = staged[:b * per_row]
            src.reshape((b,) + used)[...] = x[(slice(r0, r1),) + tuple(slice(0, u)
                                                                       for u in used)]
        dest = flat_result[r0 * per_out:r1 * per_out]
        program.run(src, dest)
        if finish_block is not None:
            finish_block(dest.reshape((b,) + tuple(out)))
