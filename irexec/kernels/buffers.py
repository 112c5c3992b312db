"""Output arrays for kernels, from memory nobody can see any more when there is some.

On Linux a fresh large array costs a page fault per 4 KiB page the first time it is written:
for 64 MiB that is about as long as copying 64 MiB. OpenVINO avoids it by writing every infer
request's outputs into the same buffers, which the caller must copy out before the next call.
irexec keeps its results safe instead (an array it returns is never written again) and reuses
only memory no one else can reach:

* an intermediate array the run loop frees and nothing else refers to (Python's reference count
  proves it: no view, no other slot, no caller holds it);
* an output of an earlier call that the caller has since dropped (same proof, checked when the
  next call starts).

The run loop installs a :class:`Pool` for the duration of a call (:func:`using`); kernels ask
for arrays with :func:`empty` and :func:`copy`, which take an array of exactly that shape and
dtype from the pool, or allocate one. Outside a call (kernels used directly) they allocate.
Object arrays are never pooled.
"""

from __future__ import annotations

import contextvars
import sys

import numpy as np

_current: contextvars.ContextVar[Pool | None] = contextvars.ContextVar("irexec_pool",
                                                                        default=None)
MIN_BYTES = 1 << 16  # smaller arrays come from malloc's free lists, already touched


class Pool:
    """Spare arrays by (shape, dtype); at most ``limit`` of them."""

    def __init__(self, limit: int = 8):
        self.limit = limit
        self.spare: dict[tuple, list[np.ndarray]] = {}
        self.count = 0

    def take(self, shape: tuple, dtype: np.dtype) -> np.ndarray | None:
        try:
            array = self.spare[(shape, dtype)].pop()  # pop is atomic: no array goes out twice
        except (KeyError, IndexError):
            return None
        self.count -= 1
        return array

    def give(self, array: np.ndarray, refs: int) -> None:
        """Keep ``array`` for reuse if the ``refs`` references the caller holds (the variable
        or list entry it passes) are the only ones anywhere."""
        # getrefcount also counts this call's argument and its own.
        if (self.count < self.limit and sys.getrefcount(array) <= refs + 2
                and array.base is None and array.flags.owndata and array.flags.writeable
                and array.flags.c_contiguous and not array.dtype.hasobject
                and array.nbytes >= MIN_BYTES):
            self.spare.setdefault((array.shape, array.dtype), []).append(array)
            self.count += 1

    def clear(self) -> None:
        self.spare.clear()
        self.count = 0


class using:
    """``with using(pool):`` kernels draw their arrays from ``pool``."""

    def __init__(self, pool: Pool):
        self.pool = pool

    def __enter__(self):
        self.token = _current.set(self.pool)
        return self.pool

    def __exit__(self, *exc):
        _current.reset(self.token)


def current() -> Pool | None:
    """The pool of the call in progress, if any."""
    return _current.get()


def reused(shape, dtype) -> np.ndarray | None:
    """An array from the pool (memory already touched), or None."""
    pool = _current.get()
    return None if pool is None else pool.take(tuple(shape), np.dtype(dtype))


def empty(shape, dtype) -> np.ndarray:
    """A C-contiguous array of ``shape`` and ``dtype`` that nobody else refers to; its contents
    are undefined, as with ``np.empty``."""
    pool = _current.get()
    if pool is not None:
        array = pool.take(tuple(shape), np.dtype(dtype))
        if array is not None:
            return array
    return np.empty(shape, dtype)


def copy(data: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of ``data``."""
    out = empty(data.shape, data.dtype)
    np.copyto(out, data)
    return out
