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

MaxPool's indices (:func:`max_with_offsets`) come the same way: each axis's pass keeps,
beside each partial max, the offset of its first element, and picks among its candidates the
first that reaches the max -- the window's first maximum in row-major order.

A max is the same as ``pool._separable``'s but for the sign of a zero (which numpy's own
fmax does not fix either); a sum adds the same terms in another order, which may change the
last bit.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence

import numpy as np

def _block(x, flat_x, staged, r0: int, r1: int, used, per_row: int) -> np.ndarray:
    """Rows r0..r1 of ``x`` (its first ``used`` elements on each spatial axis), flat: a slice
    of ``flat_x`` (x itself, flat, when it needs no staging) or copied into ``staged``."""
    if flat_x is not None:
        return flat_x[r0 * per_row:r1 * per_row]
    src = staged[:(r1 - r0) * per_row]
    src.reshape((r1 - r0,) + tuple(used))[...] = x[(slice(r0, r1),) + tuple(slice(0, u)
                                                                             for u in used)]
    return src


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
    what small blocks pay: about 16 us a block when the views were made for each, 11 us
    now).

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
        ops = self.ops = []  # (function, inputs, output or None)
        period = out[-1]
        ops.append((combine, (e, o), e))  # even[i] + odd[i]
        if mode[-1] == OVERLAP:
            # + odd[i-1]: the element before each row's first is neutral from now on
            ops.append((_fill, (odd[lead - 1:lead + m - 1:period], neutral), None))
            ops.append((combine, (e, odd[lead - 1:lead + m - 1]), e))
        src, other = even, odd
        shape = (b,) + used[:-1] + (out[-1],)
        self.last = e  # what goes to the output
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
                self.last = windows_
            else:  # into the array the windows are not in; the next axis reads it
                if mode[axis - 1] == OVERLAP:
                    src, other = other, src
                dest = src[lead:lead + size // 2]
                ops.append((np.copyto, (dest.reshape(outer, n // 2, inner), windows_), None))

    def run(self, src, dest):
        """``src``: the block's data (flat, contiguous); ``dest``: its output (flat)."""
        _split(src, *self.split)
        for fn, args, out in self.ops:
            if out is None:
                fn(*args)
            else:
                fn(*args, out=out)
        np.copyto(dest.reshape(self.last.shape), self.last)


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
        src = _block(x, flat_x, staged, r0, r1, used, per_row)
        dest = flat_result[r0 * per_out:r1 * per_out]
        program.run(src, dest)
        if finish_block is not None:
            finish_block(dest.reshape((b,) + tuple(out)))


def _rows_of(flat, outer, n, inner, start, lead, buffer):
    """Rows ``start, start+2, ...`` of ``flat`` [outer, n, inner] copied to ``buffer`` after
    ``lead`` elements (cast to its type); returns the copy (flat)."""
    size = outer * (n // 2) * inner
    dest = buffer[lead:lead + size]
    np.copyto(dest.reshape(outer, n // 2, inner), flat.reshape(outer, n, inner)[:, start::2],
              casting="unsafe")
    return dest


def _split(src, e, o):
    """The even and odd elements of ``src`` (flat, even length) into ``e`` and ``o``."""
    if e.dtype.itemsize == 4 and _SPLIT_BY_CAST:
        np.copyto(e.view(np.uint32), src.view(np.uint64), casting="unsafe")
        # the odd elements: the pairs from one element on (unaligned), and the last one
        np.copyto(o[:-1].view(np.uint32), src[1:-1].view(np.uint64), casting="unsafe")
        o[-1] = src[-1]
    else:
        np.copyto(e, src[0::2])
        np.copyto(o, src[1::2])


def _code(first, second, out):
    """0 where ``first``, else 1 where ``second``, else 2: (1 - first) * (2 - second), in
    uint8 (``first`` and ``second`` are bool arrays, overwritten)."""
    a, b = first.view(np.uint8), second.view(np.uint8)
    np.subtract(1, a, out=a)
    np.subtract(2, b, out=b)
    return np.multiply(a, b, out=out)


def max_with_offsets(x: np.ndarray, mode: Sequence[str], out: Sequence[int], combine, neutral,
                     dtype, values: np.ndarray, finish_block) -> None:
    """The max of each window, as :func:`pool` with ``combine`` np.fmax or np.maximum, and
    where the first element equal to it is in row-major order over the window: its offset in
    the data from the window's first position (padding included). Window by window this is the first axis's first position whose
    slice (a box over the other axes) reaches the max, then the same within that slice: so
    each axis's pass, from the last, keeps beside each partial max the offset of its first
    element, and picks among its 2 or 3 candidates the first whose partial max equals the
    window's. Where the max is the neutral value or NaN (nothing to pick) the offset is
    meaningless. ``finish_block(r0, r1, offsets)`` is called when rows r0 to r1 of
    ``values`` are complete, with their offsets [r1 - r0, *out] (scratch: use them before
    returning).
    Choices are arithmetic on 0/1 masks (``np.where`` and masked copies are 20x slower on
    random masks); offsets are int32 until the output."""
    dtype = np.dtype(dtype)
    rows = x.shape[0]
    nsp = len(out)
    used = tuple(2 * o for o in out)
    per_row = math.prod(used)
    # the data strides of the spatial axes (x.shape[1 + a] is spatial axis a)
    elem = [math.prod(x.shape[2 + a:]) for a in range(nsp)]
    offset_type = np.int32 if math.prod(x.shape[1:]) < 2**31 else np.int64
    count = max(1, min(rows, (BLOCK_BYTES // 2) // (per_row * dtype.itemsize)))
    direct = x.dtype == dtype and x.shape[1:] == used and x.flags.c_contiguous
    flat_x = x.reshape(-1) if direct else None
    staged = None if direct else np.empty(count * per_row, dtype)
    half = count * per_row // 2
    lead = math.prod(out[1:])
    even, odd, peak_buf = (np.empty(lead + half, dtype) for _ in range(3))
    eq1, eq2 = np.empty(half, bool), np.empty(half, bool)
    codes = np.empty(half, np.uint8)
    quarter = half // 2
    va, vb_buf, new_peak = (np.empty(lead + quarter, dtype) for _ in range(3))
    ka, kb_buf, chosen, other, rank = (np.empty(lead + quarter, offset_type) for _ in range(5))
    flat_values = values.reshape(-1)
    per_out = math.prod(out)
    for r0 in range(0, rows, count):
        r1 = min(r0 + count, rows)
        b = r1 - r0
        src = _block(x, flat_x, staged, r0, r1, used, per_row)
        m = src.size // 2
        e, o, peak = even[:m], odd[lead:lead + m], peak_buf[:m]
        _split(src, e, o)
        combine(e, o, out=peak)  # the last axis: window j is odd[j-1], even[j], odd[j]
        at = codes[:m]
        if mode[-1] == OVERLAP:
            before = odd[lead - 1:lead - 1 + m]
            before[::out[-1]] = neutral  # odd[-1] of each row: the padding
            combine(peak, before, out=peak)
            # offset 0 (odd[j-1]), 1 (even[j]) or 2 (odd[j])
            _code(np.equal(before, peak, out=eq1[:m]), np.equal(e, peak, out=eq2[:m]), at)
        else:  # window j is even[j], odd[j]
            np.subtract(1, np.equal(e, peak, out=eq1[:m]).view(np.uint8), out=at)
        shape = (b,) + used[:-1] + (out[-1],)
        for axis in range(nsp - 1, 0, -1):  # the outer axes, inner to outer
            outer = math.prod(shape[:axis])
            n = shape[axis]
            inner = math.prod(shape[axis + 1:])
            q = outer * (n // 2) * inner
            # candidates: rows 2i (a), 2i+1 (b) and, 3 wide, 2i-1 (b of i-1: p)
            a_v = _rows_of(peak, outer, n, inner, 0, 0, va)
            b_v = _rows_of(peak, outer, n, inner, 1, lead, vb_buf)
            a_k = _rows_of(at, outer, n, inner, 0, 0, ka)
            b_k = _rows_of(at, outer, n, inner, 1, lead, kb_buf)
            top = combine(a_v, b_v, out=new_peak[:q])
            if mode[axis - 1] == OVERLAP:
                p_v = vb_buf[lead - inner:lead - inner + q]
                p_v.reshape(outer, n // 2, inner)[:, 0] = neutral  # row -1: the padding
                combine(top, p_v, out=top)
            ea = np.equal(a_v, top, out=eq1[:q])
            pick = chosen[:q]  # the chosen candidate's offset, from its own row
            np.subtract(a_k, b_k, out=pick)
            np.multiply(pick, ea.view(np.uint8), out=pick)
            pick += b_k
            rank_codes = codes[:q]
            if mode[axis - 1] == OVERLAP:
                ep = np.equal(p_v, top, out=eq2[:q])
                p_k = kb_buf[lead - inner:lead - inner + q]
                earlier = np.subtract(p_k, pick, out=other[:q])
                np.multiply(earlier, ep.view(np.uint8), out=earlier)
                pick += earlier
                _code(ep, ea, rank_codes)  # row 0 (2i-1), 1 (2i) or 2 (2i+1)
            else:
                np.subtract(1, ea.view(np.uint8), out=rank_codes)
            total = np.multiply(rank_codes, offset_type(elem[axis - 1]), out=rank[:q],
                                dtype=offset_type)
            total += pick
            peak, at = top, total  # the next axis copies its rows out before writing these
            shape = shape[:axis] + (n // 2,) + shape[axis + 1:]
        np.copyto(flat_values[r0 * per_out:r1 * per_out], peak)
        finish_block(r0, r1, at.reshape((b,) + tuple(out)))
