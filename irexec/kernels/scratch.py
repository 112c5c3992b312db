"""Scratch memory a kernel's temporaries are carved from, kept per thread from call to call.

Why: on the machines irexec is measured on, fresh arrays of a few MiB made the allocator hand
pages back to the system and fault them in again on every call, which cost as much as the
arithmetic (a 3x3 depthwise convolution over [1,64,56,56]: 1.4 ms instead of 0.45). The run's
pool (kernels/buffers.py) is no place for temporaries: its few slots hold layers' outputs.

A kernel names its arena (one per kernel family, so that two never share one), calls
:meth:`Arena.start` before each set of temporaries and :meth:`Arena.take` for each: views of
one buffer, grown to what the previous set needed, up to the arena's limit (beyond it, fresh
arrays every time). A set is valid until the next ``start`` on that thread's arena, so a
kernel uses its temporaries and lets them go before it returns; no result is ever a view of an
arena. :func:`release` drops every thread's buffers (``CompiledModel.release_memory``).
"""

from __future__ import annotations

import math
import threading
import weakref

import numpy as np

from irexec import forksafe

ALIGN = 64  # bytes: each temporary starts on a cache line

_local = threading.local()
_every: weakref.WeakSet = weakref.WeakSet()  # the arenas of all threads, for release()
_every_lock = threading.Lock()


def _after_fork() -> None:
    global _every_lock
    _every_lock = threading.Lock()


forksafe.at_fork(_after_fork)


class Arena:
    """One thread's scratch buffer for one kernel family (see the module's docstring)."""

    def __init__(self, limit: int):
        self.limit = limit
        self.buffer: np.ndarray | None = None
        self.want = 0  # the most the sets so far took within the limit, in bytes
        self.offset = 0

    def start(self, expect: int = 0) -> None:
        """Begin a set of temporaries; ``expect``: the bytes it will take, when known (the
        buffer then grows now rather than at the next set)."""
        want = max(self.want, expect)
        have = 0 if self.buffer is None else self.buffer.nbytes
        if have < want <= self.limit:
            self.buffer = np.empty(want, np.uint8)
        self.offset = 0

    def take(self, shape, dtype) -> np.ndarray:
        """An uninitialised array: a view of the buffer, or a fresh array when it does not
        fit."""
        dtype = np.dtype(dtype)
        size = math.prod(shape) * dtype.itemsize
        begin = -(-self.offset // ALIGN) * ALIGN
        self.offset = begin + size
        if self.offset <= self.limit:  # a set beyond the limit is not what the buffer is for
            self.want = max(self.want, self.offset)
        buffer = self.buffer  # once: release() may drop it from another thread meanwhile
        if buffer is not None and self.offset <= buffer.nbytes:
            return np.ndarray(shape, dtype, buffer, begin)
        return np.empty(shape, dtype)

    def release(self) -> None:
        """Drop the buffer (arrays already taken keep theirs alive until they go)."""
        self.buffer = None
        self.want = 0


def arena(name: str, limit: int) -> Arena:
    """This thread's arena ``name`` (made on first use, at most ``limit`` bytes kept)."""
    arenas = getattr(_local, "arenas", None)
    if arenas is None:
        arenas = _local.arenas = {}
    found = arenas.get(name)
    if found is None or found.limit != limit:
        found = arenas[name] = Arena(limit)
        with _every_lock:
            _every.add(found)
    return found


def temporaries(name: str, limit: int, *specs) -> list[np.ndarray]:
    """Uninitialised arrays of the (shape, dtype) ``specs``, all from this thread's arena
    ``name`` (one set: valid until the next set from it)."""
    a = arena(name, limit)
    a.start(sum(-(-math.prod(s) * np.dtype(d).itemsize // ALIGN) * ALIGN for s, d in specs))
    return [a.take(s, d) for s, d in specs]


def release() -> None:
    """Drop the scratch buffers of every thread."""
    with _every_lock:
        arenas = list(_every)
    for a in arenas:
        a.release()


__all__ = ["Arena", "arena", "release", "temporaries"]
