"""Reverse whole axes of an array into a new array, as fast as numpy allows.

``np.flip(x, axes).copy()`` is exact but slow when the innermost axis is reversed: numpy copies
a short reversed row at a time, at 3-8x the time of a memory copy (8x for 1-byte types). Two
numpy operations are close to memory speed instead: copying a whole contiguous array reversed
as one 1-D sequence, and copying contiguous rows in any order. This module builds every flip
from those two (measured with `python -m tools.bench kernels`; see docs/performance.md):

* adjacent dims that are both flipped or both kept merge into one (flipping [a, b] as a whole is
  flipping a and b), and dims of size 1 drop out;
* innermost dim kept: numpy's own copy of the flipped view, which moves contiguous rows;
* innermost dim flipped: each contiguous slab [rows, n] is cut into blocks of about
  ``_BLOCK_BYTES``; a block reversed as one 1-D sequence into a small buffer has every row
  reversed but the rows in reverse order, which a row-order copy into the output undoes while
  the buffer is still in cache;
* 1-, 2- and 4-byte elements move as 64-bit words where a row is a whole number of words: the
  words are reversed as above while numpy casts them from the other byte order (one pass that
  also reverses the bytes of each word), and the copy of the buffer's rows back in order casts
  2- and 4-byte elements from the other byte order (putting each element's bytes back); a
  fully flipped 1-D array of 2-byte elements gets a byteswap of its 16-bit elements in cache.

Elements are moved as unsigned integers of their size (or opaque bytes), never as their own
type, so every dtype (floats with NaN payloads, ml_dtypes' 1-byte types) is copied bit for bit.
Object arrays and non-contiguous inputs go through numpy's copy of the flipped view.

The result is always a new C-contiguous array that shares no memory with ``data``.
"""

from __future__ import annotations

import numpy as np

from irexec.kernels import buffers

_BLOCK_BYTES = 1024 * 1024  # a block and its buffer: 1 MiB measured best (L2 is 1 MiB per core)
_MIN_SLAB_BYTES = 16 * 1024  # below this, numpy's own copy costs less than our Python loop
_SMALL_BYTES = 4096  # numpy's own flip: least overhead per call
_WORD = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_SWAPPED = np.dtype(np.uint64).newbyteorder()  # a copy cast from it byteswaps each word
_SMALL_INDEX: dict[tuple, tuple] = {}  # (rank, axes) -> the index of np.flip's reversed view


def flip(data: np.ndarray, axes) -> np.ndarray:
    """``np.flip(data, axes).copy()``, bit for bit, as a new C-contiguous array.

    ``axes``: non-negative axis numbers, each < ``data.ndim`` (repeats allowed)."""
    data = np.asarray(data)
    if data.nbytes <= _SMALL_BYTES:
        if not axes:
            return data.copy()
        # What np.flip does (a view with reversed slices), with the index made once per rank
        # and axes: np.flip's own axis checks cost more than the copy of a small array.
        key = (data.ndim, axes if type(axes) is tuple else tuple(axes))
        index = _SMALL_INDEX.get(key)
        if index is None:
            if not all(type(a) is int and 0 <= a < data.ndim for a in key[1]):
                return np.flip(data, tuple(set(axes))).copy()
            if len(_SMALL_INDEX) >= 1024:
                _SMALL_INDEX.clear()
            index = _SMALL_INDEX[key] = tuple(slice(None, None, -1) if d in key[1]
                                              else slice(None) for d in range(data.ndim))
        return data[index].copy()
    out = buffers.empty(data.shape, data.dtype)
    flip_into(out, data, axes)
    return out


def flip_into(out: np.ndarray, data: np.ndarray, axes) -> None:
    """Write ``np.flip(data, axes)`` into ``out`` (C-contiguous, same shape and dtype, not
    overlapping ``data``)."""
    flipped = set(axes)
    if data.size == 0:
        return
    if not flipped:
        np.copyto(out, data)
        return
    word = _WORD.get(data.dtype.itemsize)
    if data.dtype.hasobject or word is None or not data.flags.c_contiguous:
        np.copyto(out, np.flip(data, tuple(flipped)))
        return
    shape, flags = _groups(data.shape, flipped)
    src = data.view(word).reshape(shape)
    dst = out.view(word).reshape(shape)
    if not flags[-1]:
        np.copyto(dst, src[tuple(slice(None, None, -1) if f else slice(None) for f in flags)])
        return
    _flip_rows(dst, src, shape, flags)


def _groups(shape, flipped) -> tuple[list[int], list[bool]]:
    """Merge adjacent dims with the same flip flag; drop dims of size 1."""
    sizes: list[int] = []
    flags: list[bool] = []
    for d, n in enumerate(shape):
        if n == 1:
            continue
        f = d in flipped
        if flags and flags[-1] == f:
            sizes[-1] *= n
        else:
            sizes.append(n)
            flags.append(f)
    if not sizes:
        return [1], [False]
    return sizes, flags


def _flip_rows(dst, src, shape, flags) -> None:
    """The innermost merged dim is flipped: reverse each row, and flip the outer dims."""
    itemsize = src.dtype.itemsize
    if len(shape) == 1:
        _flip_1d(dst, src, itemsize)
        return
    rows, m = shape[-2], shape[-1]
    if len(shape) > 2 and rows * m * itemsize < _MIN_SLAB_BYTES:
        np.copyto(dst, src[tuple(slice(None, None, -1) if f else slice(None) for f in flags)])
        return
    # 1-, 2- and 4-byte elements as 64-bit words, when a row is a whole number of words: the
    # words are reversed with their bytes (one copy cast from the other byte order), and the
    # copy of the rows back in order casts 2- and 4-byte elements from the other byte order,
    # which puts each element's bytes back: two passes, as for 8-byte elements.
    words = itemsize < 8 and (m * itemsize) % 8 == 0
    if words:
        src = src.view(np.uint64)
        m = m * itemsize // 8
    block_rows = min(rows, max(1, _BLOCK_BYTES // (m * src.dtype.itemsize)))
    buf = np.empty((block_rows, m), src.dtype)
    flat = buf.reshape(-1)
    back = buf
    if words:
        element = np.dtype(_WORD[itemsize])
        back = buf.view(element if itemsize == 1 else element.newbyteorder())
    # Outer dims (all but the last two) are walked in Python, flipped ones backwards.
    outer = src[tuple(slice(None, None, -1) if f else slice(None) for f in flags[:-2])]
    for index in np.ndindex(*shape[:-2]):
        s, d = outer[index], dst[index]
        for r0 in range(0, rows, block_rows):
            r1 = min(rows, r0 + block_rows)
            k = r1 - r0
            if words:
                np.copyto(flat[:k * m], s[r0:r1].reshape(-1).view(_SWAPPED)[::-1])
            else:
                np.copyto(flat[:k * m], s[r0:r1].reshape(-1)[::-1])
            np.copyto(d[r0:r1], back[k - 1::-1])


def _flip_1d(dst, src, itemsize) -> None:
    """Everything flipped: one reversed 1-D copy (numpy moves it at memory speed), for 1- and
    2-byte elements as 64-bit words, a chunk at a time so each byteswap runs in cache."""
    n = src.shape[0]
    if itemsize >= 4 or (n * itemsize) % 8:
        np.copyto(dst, src[::-1])
        return
    src, dst = src.view(np.uint64), dst.view(np.uint64)
    narrow = dst.view(np.uint16) if itemsize == 2 else None
    n = src.shape[0]
    chunk = max(1, _BLOCK_BYTES // 8)
    for c0 in range(0, n, chunk):
        c1 = min(n, c0 + chunk)
        np.copyto(dst[c0:c1], src[n - c1:n - c0].view(_SWAPPED)[::-1])
        if narrow is not None:
            narrow[4 * c0:4 * c1].byteswap(inplace=True)
