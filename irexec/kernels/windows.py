"""Sliding windows over the spatial axes of [N, C, *spatial] data, as numpy views.

Convolution and pooling kernels see their input through :func:`window_view`: for every output
position the kernel taps under it, with strides and dilations, without copying. Padding is one
copy into a larger array (:func:`pad`), made only where there is padding. The geometry (how many
windows, how much ``auto_pad`` pads) is the shape rules' (:mod:`irexec.ir.shape_rules`), so the
kernels and inference count the same windows.

Temporaries that grow with the output times the kernel size (a convolution's im2col matrix) are
built a band of output rows at a time: :func:`bands` cuts the first spatial output axis into
bands whose temporaries stay under :func:`tile_bytes` (``TILE_BYTES``, or less when the memory
budget is small).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided

from irexec import budget
from irexec.ir import shape_rules

# Temporaries above this size are built in bands of output rows: small enough to stay far below
# any memory budget, large enough that each band is one efficient BLAS call.
TILE_BYTES = 32 << 20


MIN_TILE_BYTES = 1 << 16  # what tile_bytes() gives at least, whatever the budget


def tile_bytes() -> int:
    """The most a kernel's temporaries may take at once: ``TILE_BYTES``, and at most an eighth
    of the memory budget (irexec/budget.py), never less than ``MIN_TILE_BYTES``."""
    return max(MIN_TILE_BYTES, min(TILE_BYTES, budget.current() // 8))


def geometry(spatial: Sequence[int], kernel: Sequence[int], strides: Sequence[int],
             dilations: Sequence[int], pads_begin: Sequence[int], pads_end: Sequence[int],
             auto_pad: str = "explicit", rounding: str = "floor") \
        -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(pads_begin, pads_end, output sizes) of the windows over ``spatial`` sizes. The rules
    held when the layer was checked, so every axis fits at least one window."""
    pb, pe = shape_rules.window_pads(spatial, kernel, strides, dilations, pads_begin, pads_end,
                                     auto_pad)
    out = tuple(shape_rules.window_count(s, shape_rules.dilated(k, d), st, b, e, rounding)
                for s, k, d, st, b, e in zip(spatial, kernel, dilations, strides, pb, pe))
    return pb, pe, out


def reach(out: Sequence[int], kernel: Sequence[int], strides: Sequence[int],
          dilations: Sequence[int]) -> tuple[int, ...]:
    """How many padded input elements the windows touch on each axis (the last window's end)."""
    return tuple((o - 1) * s + shape_rules.dilated(k, d)
                 for o, k, s, d in zip(out, kernel, strides, dilations))


def pad(x: np.ndarray, pads_begin: Sequence[int], ends: Sequence[int], value=0,
        dtype=None) -> np.ndarray:
    """``x`` placed in a larger array filled with ``value``: ``pads_begin[i]`` elements before
    spatial axis i, and the axis cut or extended to end at padded index ``ends[i]``. Returns
    ``x`` itself when nothing changes and no ``dtype`` conversion is asked for."""
    spatial = x.shape[2:]
    dtype = x.dtype if dtype is None else np.dtype(dtype)
    if dtype == x.dtype and not any(pads_begin) and tuple(ends) == tuple(spatial):
        return x
    out = np.empty(x.shape[:2] + tuple(ends), dtype)
    inner = tuple(slice(b, min(b + s, e)) for b, s, e in zip(pads_begin, spatial, ends))
    src = tuple(slice(0, min(s, e - b)) for b, s, e in zip(pads_begin, spatial, ends))
    if any(pads_begin) or any(e > b + s for b, s, e in zip(pads_begin, spatial, ends)):
        out[...] = value
    out[(Ellipsis, *inner)] = x[(Ellipsis, *src)]
    return out


def window_view(xp: np.ndarray, out: Sequence[int], kernel: Sequence[int],
                strides: Sequence[int], dilations: Sequence[int]) -> np.ndarray:
    """A read-only view [N, C, *out, *kernel] of padded data ``xp`` [N, C, *padded]: element
    (n, c, o..., k...) is ``xp[n, c, o*stride + k*dilation ...]``."""
    nsp = len(kernel)
    st = xp.strides
    shape = xp.shape[:2] + tuple(out) + tuple(kernel)
    strides_ = st[:2] + tuple(st[2 + i] * strides[i] for i in range(nsp)) \
        + tuple(st[2 + i] * dilations[i] for i in range(nsp))
    return as_strided(xp, shape, strides_, writeable=False)


def taps(kernel: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every kernel position, in row-major order (the order windows are scanned)."""
    return np.ndindex(*kernel)


def tap_view(xp: np.ndarray, tap: Sequence[int], out: Sequence[int], strides: Sequence[int],
             dilations: Sequence[int]) -> np.ndarray:
    """The view [N, C, *out] of the elements under kernel position ``tap`` of every window."""
    index = tuple(slice(t * d, t * d + (o - 1) * s + 1, s)
                  for t, o, s, d in zip(tap, out, strides, dilations))
    return xp[(Ellipsis, *index)]


def add_taps(target: np.ndarray, cols: np.ndarray, kernel: Sequence[int],
             counts: Sequence[int], strides: Sequence[int], dilations: Sequence[int],
             starts: Sequence[int] | None = None) -> None:
    """The scatter of sliding windows back onto their positions (a transposed convolution's
    columns, Col2Im's blocks): ``target[..., *spatial] +=`` each ``cols[..., *tap, *block]``
    at position ``start + block * stride + tap * dilation`` on every axis. One strided slice
    per loop step; along each axis the loop runs over the kernel's taps or over the block
    positions, whichever are fewer, the other taken whole by the slice -- so a huge kernel
    over a few blocks costs a few steps, not one per tap. Nothing is done when there is no
    data."""
    nsp = len(kernel)
    if target.size == 0 or cols.size == 0:
        return
    starts = starts or (0,) * nsp
    by_tap = [k <= c for k, c in zip(kernel, counts)]
    steps = []
    for k, c, s, d, b, tap in zip(kernel, counts, strides, dilations, starts, by_tap):
        if tap:  # tap t: one element per block, `stride` apart
            steps.append([(slice(b + t * d, b + t * d + (c - 1) * s + 1, s), t, slice(None))
                          for t in range(k)])
        else:  # block p: one element per tap, `dilation` apart
            steps.append([(slice(b + p * s, b + p * s + (k - 1) * d + 1, d), slice(None), p)
                          for p in range(c)])
    # after indexing, cols keeps its kernel axes looped by block, then its block axes looped
    # by tap: put each back on its spatial axis
    kept = [a for a in range(nsp) if not by_tap[a]] + [a for a in range(nsp) if by_tap[a]]
    lead = cols.ndim - 2 * nsp
    order = list(range(lead)) + [lead + kept.index(a) for a in range(nsp)]
    same = order == list(range(len(order)))
    for combo in itertools.product(*steps):
        part = cols[(Ellipsis, *(c[1] for c in combo), *(c[2] for c in combo))]
        target[(Ellipsis, *(c[0] for c in combo))] += part if same else part.transpose(order)


def bands(rows: int, bytes_per_row: int, limit: int | None = None) -> list[tuple[int, int]]:
    """[start, stop) ranges covering ``rows`` output rows, each band's temporaries under
    ``limit`` bytes (default :func:`tile_bytes`; at least one row a band)."""
    per = max(1, (limit or tile_bytes()) // max(bytes_per_row, 1))
    if per >= rows:
        return [(0, rows)]
    count = math.ceil(rows / per)
    size = math.ceil(rows / count)
    return [(r, min(r + size, rows)) for r in range(0, rows, size)]


# Blocks of channels processed together: small enough that a block's padded data and the
# temporaries of its per-tap operations stay in the CPU's caches, large enough that numpy's
# per-call costs do not dominate (measured on [1, 64, 112, 112] pooling and a 3x3 depthwise
# convolution: 128 KiB blocks 1.5x slower than 512 KiB, the whole tensor 2x slower; 512 KiB to
# 2 MiB within 10% of each other).
BLOCK_BYTES = 1 << 19


def padded_blocks(x: np.ndarray, pads_begin: Sequence[int], ends: Sequence[int], value,
                  dtype, block_bytes: int | None = None) \
        -> Iterator[tuple[int, int, np.ndarray]]:
    """The rows of ``x`` [R, *spatial] a block at a time, each placed in a padded array
    [rows, *ends] of ``dtype`` (``pads_begin`` before, filled with ``value`` up to ``ends``):
    yields (start row, stop row, padded block). The padded block is one buffer reused for
    every block (its padding is filled once): use it before asking for the next.
    ``block_bytes``: the padded block's size (default ``BLOCK_BYTES``)."""
    rows = x.shape[0]
    spatial = x.shape[1:]
    dtype = np.dtype(dtype)
    per_row = math.prod(ends) * dtype.itemsize
    count = max(1, min(rows, (block_bytes or BLOCK_BYTES) // max(per_row, 1)))
    inner = tuple(slice(b, min(b + s, e)) for b, s, e in zip(pads_begin, spatial, ends))
    src = tuple(slice(0, min(s, e - b)) for b, s, e in zip(pads_begin, spatial, ends))
    whole = not any(pads_begin) and tuple(ends) == tuple(spatial)
    scratch = None
    for r0 in range(0, rows, count):
        r1 = min(r0 + count, rows)
        if whole and dtype == x.dtype:
            yield r0, r1, x[r0:r1]
            continue
        if scratch is None:
            scratch = np.empty((count,) + tuple(ends), dtype)
            if not whole:
                scratch[...] = value
        block = scratch[:r1 - r0]
        block[(slice(None), *inner)] = x[(slice(r0, r1), *src)]
        yield r0, r1, block
