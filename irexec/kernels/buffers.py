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

A view that is the only reference to its block (the Reshape, Squeeze or Split part of a kernel's
output: an op whose spec says ``returns_view``) gives the pool the whole block, under the block's own shape: the
kernel that made it asks for that shape again on the next call.

The proof (:func:`private`) also refuses an array with a weak reference to it, and is off
altogether where reference counts cannot be trusted to prove it (``COUNTS_PROVE``: CPython 3.14
and later, free-threaded builds): there every output is fresh memory.

The run loop installs a :class:`Pool` for the duration of a call (:func:`using`); kernels ask
for arrays with :func:`empty` and :func:`copy`, which take an array of exactly that shape and
dtype from the pool, or allocate one. Outside a call (kernels used directly) they allocate.
Object arrays are never pooled.

4K aliasing: big numpy arrays all start at the same offset in a 4 KiB page (16 here), so an output
row and the input row it is copied from have the same low 12 address bits, and a copy loop of
small memmoves (a row gather) stalls on false store-to-load dependencies: measured 1.5x slower on
the ReverseSequence gather. :func:`empty_apart` returns an array whose page offset differs from
its input's by about half a page: a spare that already does, or a fresh one placed inside a
slightly larger block (a view of it, 64-byte aligned). The pool accepts such views back only when
the block, too, is referred to by the view alone.
"""

from __future__ import annotations

import contextvars
import math
import sys
import sysconfig
import weakref

import numpy as np

_current: contextvars.ContextVar[Pool | None] = contextvars.ContextVar("irexec_pool",
                                                                        default=None)
MIN_BYTES = 1 << 16  # smaller arrays come from malloc's free lists, already touched
# Whether sys.getrefcount can prove that nothing else refers to an array. CPython 3.14 may
# skip counting references the interpreter borrows on its stack (what broke numpy's own
# check for temporaries, numpy#28681), so a count can read too low; free-threaded builds
# count references per thread. There,
# irexec neither reuses memory nor writes over an input: it allocates, as numpy does.
COUNTS_PROVE = sys.version_info < (3, 14) and not sysconfig.get_config_var("Py_GIL_DISABLED")
APART_MIN_BYTES = 1 << 20  # smaller outputs are not placed apart from their input
_PAGE = 4096
_APART = 2048  # wanted distance between an output's and its input's page offsets
_NEAR = 256  # page offsets closer than this (either way) alias; measured
_ALIGN = 64


class Pool:
    """Spare arrays by (shape, dtype); at most ``limit`` of them."""

    def __init__(self, limit: int = 8):
        self.limit = limit
        self.spare: dict[tuple, list[np.ndarray]] = {}
        self.count = 0

    def take(self, shape: tuple, dtype: np.dtype, apart_from: int | None = None
             ) -> np.ndarray | None:
        """A spare of ``shape`` and ``dtype``; with ``apart_from`` (an address), only one whose
        page offset is at least ``_NEAR`` bytes from that address's (see :func:`empty_apart`).
        A pool serves one call at a time (the run loop takes it for itself)."""
        spares = self.spare.get((shape, dtype))
        if not spares:
            return None
        if apart_from is None:
            array = spares.pop()
        else:
            for i in range(len(spares) - 1, -1, -1):
                if _apart(spares[i].ctypes.data, apart_from):
                    array = spares.pop(i)
                    break
            else:
                return None
        self.count -= 1
        return array

    def give(self, array: np.ndarray, refs: int) -> None:
        """Keep ``array`` for reuse if the ``refs`` references the caller holds (the variable
        or list entry it passes) are the only ones anywhere."""
        if self.count < self.limit and private(array, refs + 1):  # + this call's argument
            array = _whole(array)
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


def empty_apart(shape, dtype, other: np.ndarray) -> np.ndarray:
    """As :func:`empty`, but for arrays of at least ``APART_MIN_BYTES``: 64-byte aligned, at a
    page offset about half a page (``_APART``) from ``other``'s first byte's, so that copying
    rows between the two does not 4K-alias. From the pool if a spare is apart already;
    otherwise a fresh one, a view into a block one page larger (a spare that is not apart
    stays in the pool for other kernels)."""
    shape, dtype = tuple(shape), np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < APART_MIN_BYTES or dtype.hasobject:
        return empty(shape, dtype)
    address = other.ctypes.data
    pool = _current.get()
    if pool is not None:
        array = pool.take(shape, dtype, apart_from=address)
        if array is not None:
            return array
    block = np.empty(nbytes + _PAGE, np.uint8)
    want = (address + _APART) % _PAGE // _ALIGN * _ALIGN  # the page offset wanted
    start = (want - block.ctypes.data) % _PAGE
    return block[start:start + nbytes].view(dtype).reshape(shape)


def _whole(array: np.ndarray) -> np.ndarray:
    """For a private view of a kernel's output (a Reshape, Squeeze or Split of it, which nothing
    else refers to), the whole block, kept under the shape the kernel that made it asks for
    again; otherwise (an array of its own, a block of empty_apart) the array itself."""
    base = array.base
    if (type(base) is np.ndarray and base.flags.owndata and base.flags.c_contiguous
            and base.dtype == array.dtype
            and not (base.ndim == 1 and base.nbytes == array.nbytes + _PAGE)):
        return base
    return array


def _apart(address: int, other: int) -> bool:
    return _NEAR <= (address - other) % _PAGE <= _PAGE - _NEAR


def _sole_view(array: np.ndarray) -> bool:
    """``array`` is a view (as :func:`empty_apart` makes) of a block that owns its memory, that
    nothing but ``array`` refers to (numpy makes every view of a view refer to the owner, so a
    view of ``array`` would be seen), and that is aligned as numpy aligns its own arrays."""
    base = array.base
    # getrefcount counts `array`'s reference, the local name and its own argument.
    return (type(base) is np.ndarray and base.base is None and base.flags.owndata
            and base.flags.writeable and sys.getrefcount(base) <= 3
            and not weakref.getweakrefcount(base) and array.ctypes.data % 16 == 0)


def copy(data: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of ``data``."""
    out = empty(data.shape, data.dtype)
    np.copyto(out, data)
    return out


def private(array: np.ndarray, refs: int) -> bool:
    """True if the ``refs`` references the caller holds (the variable or list entry it
    passes) are the only ones to ``array`` anywhere, and it is a writeable C-contiguous array
    of numbers of at least ``MIN_BYTES`` that owns its memory (or is the sole view of a block
    that does): nothing else can see a write into it. A weak reference counts as one; and
    where reference counts cannot prove this (see ``COUNTS_PROVE``), always False."""
    # getrefcount also counts this call's argument and its own.
    return (COUNTS_PROVE and sys.getrefcount(array) <= refs + 2
            and not weakref.getweakrefcount(array) and array.nbytes >= MIN_BYTES
            and array.flags.writeable and array.flags.c_contiguous
            and not array.dtype.hasobject
            and (array.flags.owndata and array.base is None or _sole_view(array)))
