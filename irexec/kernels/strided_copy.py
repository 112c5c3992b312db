"""Copy a strided view into a C-contiguous array at near memory speed (Transpose, DepthToSpace,
ShuffleChannels ... are such copies).

numpy copies a transposed view element by element in the output's order; when the output's
fastest axis is not the input's, every element read touches another cache line (and page), and
a 64 MiB transpose takes 10 to 35 times a memcpy. Copying tile by tile instead keeps each tile in
cache while it is used: the tile spans the two axes that matter, the output's last by up to
``EDGE`` elements and the input's fastest by up to ``RUN`` elements, and other axes until it
holds about ``TILE`` bytes; it is read in the input's order into a scratch array, then written
in the output's. A Python loop over tiles costs a few microseconds each, little beside the
copying.

The scratch array's rows are one cache line longer than the tile's (``PAD``): with rows of a
power-of-two size, the column the transposing copy reads lies in a handful of cache sets and
evicts itself (a 2D f32 transpose took 4.5 times a memcpy so, 2.3 times with the padding).

Before tiling, neighbouring axes that are contiguous in both arrays are merged, so a transpose
that keeps the inner axes together is one plain copy of long runs. When the output's rows or
the input's runs are shorter than ``NARROW`` (the blocks of DepthToSpace and SpaceToDepth), a
tile has no room to transpose in: the copy goes band by band (``BAND`` bytes) instead, each
band in cache while it is written or read.
"""

from __future__ import annotations

import itertools

import numpy as np
from numpy.lib.stride_tricks import as_strided

TILE = 1 << 17  # bytes per tile, at least
EDGE = 256  # elements along the output's last axis (at most EDGE_BYTES)
RUN = 2048  # elements along the input's fastest axis (at most RUN_BYTES)
EDGE_BYTES, RUN_BYTES = 2048, 16384
# (EDGE and RUN measured against 128 to 1024 and 512 to 2048 elements on 64 MiB transposes of
# u8, f32 and f64: 2D, NCHW <-> NHWC, all axes reversed)
PAD = 64  # bytes added to each scratch row: one cache line
SMALL = 1 << 18  # bytes: smaller copies go in one call
BAND = 1 << 19  # bytes copied at a time when the output's rows or input's runs are short
NARROW = 16  # elements: a shorter output row or input run is copied band by band, untiled


def _merged(out: np.ndarray, src: np.ndarray) -> tuple[list[int], list[int], list[int]]:
    """Shape and the two arrays' strides with size-1 axes dropped and neighbours merged where
    both arrays step over them as over one axis."""
    shape, so, ss = [], [], []
    for n, a, b in zip(out.shape, out.strides, src.strides):
        if n == 1:
            continue
        if shape and so[-1] == a * n and ss[-1] == b * n:
            shape[-1] *= n
            so[-1], ss[-1] = a, b
        else:
            shape.append(n)
            so.append(a)
            ss.append(b)
    return shape, so, ss


def copy_into(out: np.ndarray, src: np.ndarray) -> None:
    """``out[...] = src`` for a C-contiguous ``out`` of ``src``'s shape and dtype."""
    if out.nbytes <= SMALL or out.dtype.hasobject:
        np.copyto(out, src)
        return
    if out.itemsize in (1, 2, 4, 8):
        # The bits as unsigned integers: the same copy, and ml_dtypes' types (bf16, f8 ...)
        # never reach as_strided, which rebuilds a dtype from its string and fails on them.
        raw = np.dtype(f"u{out.itemsize}")
        out, src = out.view(raw), src.view(raw)
    shape, so, ss = _merged(out, src)
    if not shape:
        np.copyto(out, src)
        return
    item = out.itemsize
    fast = min(range(len(shape)), key=lambda i: abs(ss[i]))
    last = len(shape) - 1
    o = as_strided(out, shape, so)
    s = as_strided(src, shape, ss)
    if abs(ss[last]) == item or fast == last:  # the runs are contiguous in both
        np.copyto(o, s)
        return
    if shape[fast] < NARROW:
        _short_runs(o, s, shape, ss, item)
        return
    if shape[last] < NARROW:
        _short_rows(o, s, shape, item)
        return
    tile_size = max(TILE // item, 256)
    blocks = [1] * len(shape)
    blocks[last] = min(shape[last], max(min(EDGE, EDGE_BYTES // item), NARROW))
    blocks[fast] = min(shape[fast], max(min(RUN, RUN_BYTES // item), NARROW))
    size = blocks[last] * blocks[fast]
    for i in range(last - 1, -1, -1):  # grow the tile along the output's inner axes first
        if i != fast and size < tile_size:
            blocks[i] = min(shape[i], max(1, tile_size // size))
            size *= blocks[i]
    # Each tile goes through a small scratch array laid out in the input's memory order: the
    # read is then a copy of contiguous runs (fast, few pages at a time), and the transposing
    # copy happens in cache. Its rows are padded (see the module's doc).
    order = sorted(range(len(shape)), key=lambda i: -abs(ss[i]))
    back = [order.index(i) for i in range(len(shape))]
    dims = [blocks[i] for i in order]
    scratch = np.empty(dims[:-1] + [dims[-1] + -(-PAD // item)], out.dtype)[..., :dims[-1]]
    full = tuple(blocks)
    ranges = [[slice(c, min(c + b, n)) for c in range(0, n, b)] for n, b in zip(shape, blocks)]
    for tile in itertools.product(*ranges):
        part = s[tile]
        held = scratch if part.shape == full else \
            scratch[tuple(slice(0, part.shape[i]) for i in order)]
        np.copyto(held, part.transpose(order))
        np.copyto(o[tile], held.transpose(back))


def _bands(shape: list[int], order: list[int], inner: int):
    """Index tuples that cut the array into bands of about ``BAND`` bytes along ``order``'s
    outer axes (outermost first); ``inner`` is the bytes of one element of the axes not in
    ``order``. Every tuple keeps every axis (slices only)."""
    for pos in range(len(order) - 1, -1, -1):
        i = order[pos]
        if inner * shape[i] > BAND:
            step = max(1, BAND // inner)
            outer = order[:pos]
            for at in itertools.product(*(range(shape[a]) for a in outer)):
                where = [slice(None)] * len(shape)
                for a, v in zip(outer, at):
                    where[a] = slice(v, v + 1)
                for c in range(0, shape[i], step):
                    where[i] = slice(c, c + step)
                    yield tuple(where)
            return
        inner *= shape[i]
    yield (slice(None),) * len(shape)


def _short_rows(o: np.ndarray, s: np.ndarray, shape: list[int], item: int) -> None:
    """The output's rows are short (DepthToSpace's block, 2 to 8 elements): numpy would copy
    them one short row at a time. Instead, for each position along the rows, one copy whose
    innermost loop follows the input's runs (writing every few elements of the output);
    band by band, so that a band of the output stays in cache while its rows fill."""
    rows = shape[-1]
    for where in _bands(shape, list(range(len(shape) - 1)), rows * item):
        for k in range(rows):
            np.copyto(o[where[:-1] + (k,)], s[where[:-1] + (k,)])


def _short_runs(o: np.ndarray, s: np.ndarray, shape: list[int], ss: list[int],
                item: int) -> None:
    """The input's runs are short (SpaceToDepth's block): numpy's copy follows the output's
    rows, reading every few elements of the input, and reads each input line once per element
    in it unless the line is still in cache. Band by band in the input's order, it is."""
    order = sorted(range(len(shape)), key=lambda i: -abs(ss[i]))
    for where in _bands(shape, order, item):
        np.copyto(o[where], s[where])


def transposed(data: np.ndarray, order) -> np.ndarray:
    """A new C-contiguous array holding ``data.transpose(order)`` (from the pool of reused
    memory when a call is running: kernels/buffers.py)."""
    from irexec.kernels import buffers

    src = data.transpose(order)
    out = buffers.empty(src.shape, data.dtype)
    copy_into(out, src)
    return out
