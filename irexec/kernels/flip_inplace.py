"""Reverse whole axes of an array in its own memory.

The run loop uses this when a Reverse layer's input dies at that layer and Python's reference
count proves nothing else can see it (see ``CompiledModel._run``): the output then needs no
memory of its own, so a chain of Reverse layers holds one intermediate at a time instead of two.

Flipping is an involution: the element at index ``i`` and the one at its mirror index trade
places. The array (dims merged as in :mod:`irexec.kernels.flip`) is cut along its first dim into
blocks of about ``_CHUNK_BYTES``:

* first dim flipped: block ``[lo, lo + g)`` trades places with block ``[n - lo - g, n - lo)``,
  each flipped (the middle block, if any, trades with itself);
* first dim kept: each block is flipped onto itself;
* a single slab larger than a block is entered, one dim down, the same way.

A block is flipped into a buffer of ``_CHUNK_BYTES`` (with :func:`irexec.kernels.flip.flip_into`,
so at the speed and bit for bit as the out-of-place flip), its partner is flipped straight into
its place, and the buffer is copied into the partner's: about one read and one write of each
element, plus a copy that stays in cache, and never more than one block of extra memory.
"""

from __future__ import annotations

import numpy as np

from irexec.kernels.flip import _groups, flip_into

_CHUNK_BYTES = 1024 * 1024  # a block and the buffer: 1 MiB measured best, as for flip.py


def flip_in_place(data: np.ndarray, axes) -> np.ndarray:
    """Overwrite ``data`` with ``np.flip(data, axes)``, bit for bit, and return it.

    ``data``: C-contiguous and writeable, not an object array. ``axes``: non-negative axis
    numbers, each < ``data.ndim`` (repeats allowed)."""
    if not data.flags.c_contiguous or not data.flags.writeable or data.dtype.hasobject:
        raise ValueError("flip_in_place needs a writeable C-contiguous array of numbers")
    flipped = set(axes)
    if data.size == 0 or not flipped:
        return data
    shape, flags = _groups(data.shape, flipped)
    if not any(flags):
        return data  # only dims of size 1 were flipped
    buffer = np.empty(max(1, _CHUNK_BYTES // data.dtype.itemsize), data.dtype)
    _onto_itself(data.reshape(shape), tuple(flags), buffer)
    return data


def _axes(flags: tuple) -> tuple[int, ...]:
    return tuple(d for d, f in enumerate(flags) if f)


def _rows(block: np.ndarray) -> int:
    """How many slabs along the first dim make a block of about ``_CHUNK_BYTES``."""
    return max(1, _CHUNK_BYTES // (block.nbytes // block.shape[0]))


def _onto_itself(a: np.ndarray, flags: tuple, buffer: np.ndarray) -> None:
    """``a`` := its flip along the flagged dims."""
    if a.nbytes <= buffer.nbytes:
        t = buffer[:a.size].reshape(a.shape)
        flip_into(t, a, _axes(flags))
        np.copyto(a, t)
        return
    n = a.shape[0]
    if n == 1:
        _onto_itself(a[0], flags[1:], buffer)
        return
    g = _rows(a)
    if not flags[0]:
        for lo in range(0, n, g):
            _onto_itself(a[lo:lo + g], flags, buffer)
        return
    lo, hi = 0, n
    while hi - lo >= 2:
        h = min(g, (hi - lo) // 2)
        _trade(a[lo:lo + h], a[hi - h:hi], flags, buffer)
        lo, hi = lo + h, hi - h
    if hi > lo:  # the middle slab is its own mirror
        _onto_itself(a[lo:hi], flags, buffer)


def _trade(x: np.ndarray, y: np.ndarray, flags: tuple, buffer: np.ndarray) -> None:
    """``x, y := flip(y), flip(x)`` along the flagged dims (``x`` and ``y``: same shape, no
    shared memory)."""
    if x.nbytes <= buffer.nbytes:
        axes = _axes(flags)
        t = buffer[:x.size].reshape(x.shape)
        flip_into(t, x, axes)
        flip_into(x, y, axes)
        np.copyto(y, t)
        return
    n = x.shape[0]
    if n == 1:
        _trade(x[0], y[0], flags[1:], buffer)
        return
    g = _rows(x)
    for lo in range(0, n, g):
        hi = min(n, lo + g)
        if flags[0]:
            _trade(x[lo:hi], y[n - hi:n - lo], flags, buffer)
        else:
            _trade(x[lo:hi], y[lo:hi], flags, buffer)
