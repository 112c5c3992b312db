"""A state that grows along one axis on every call (an LLM's KV cache): appended in place.

A stateful decoder reads its cache (ReadValue), optionally reorders its beams (Gather along the
batch axis by ``beam_idx``), joins the new position's keys or values after it (Concat) and
writes the result back (Assign). Run as written, every call copies the whole cache twice (the
Gather, the Concat) and the Assign copies it once more unless the plan proves it private. The
plan (runtime/fusion.py, ``kv_appends``) gives those three layers the kernels below instead:

* :func:`rows`: the Gather; indices that keep every row where it is (one prompt, or beams not
  reordered) give the data itself, other indices the layer's own Gather.
* :func:`append`: the Concat; the result is a view of a block with room after it along the
  axis. When the first input is such a view that ends where its block's filled part ends, the
  second input is copied into the room and the longer view returned: nothing already in the
  block is written, so the previous call's value (still the variable's, or held by the caller)
  keeps its contents. Otherwise a new block is made, with room for ``room(n)`` more positions.
* :func:`keep`: the Assign; a view of such a block is kept as it is (no step writes into a
  block: a view is never private, see kernels/buffers.py ``private``), anything else as the
  layer's own Assign keeps it.

The values are the layers' own, bit for bit (copies of the same elements); only where they sit
in memory differs. A block holds a weak reference from this module's table, which also makes
``buffers.private`` refuse it. A call that fails after appending leaves the variable's view
shorter than its block's filled part: the next call copies into a new block.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from irexec import budget, forksafe
from irexec.kernels import state

ROOM_FRACTION = 4  # a new block has room for a quarter of its length more (at least MIN_ROOM)
MIN_ROOM = 16
MIN_BYTES = 32 << 10  # a smaller cache is concatenated as the layer does (as cheap, measured)

_lock = threading.Lock()
# id(block) -> [weakref to it, axis, filled length, weakref to the view of the filled part,
# the slices (a tuple) before the axis]
_blocks: dict[int, list] = {}


def _after_fork() -> None:
    global _lock
    _lock = threading.Lock()


forksafe.at_fork(_after_fork)


def _forget(key: int):
    def forget(_ref) -> None:
        with _lock:
            _blocks.pop(key, None)
    return forget


def room(length: int) -> int:
    """The positions a new block of ``length`` filled positions has room for after them."""
    return max(MIN_ROOM, length // ROOM_FRACTION)


def rows(data: np.ndarray, indices: np.ndarray, axis, *, gather):
    """Gather along axis 0 (the plan checked the axis): the data itself when ``indices`` are
    0, 1, ... n-1 for its n rows, else ``gather(data, indices, axis)``."""
    n = data.shape[0] if data.ndim else -1
    if type(indices) is np.ndarray and indices.ndim == 1 and indices.size == n \
            and indices.dtype.kind in "iu" and n <= 64:
        if indices.tolist() == list(range(n)):
            return data
    return gather(data, indices, axis)


def append(past: np.ndarray, new: np.ndarray, *, axis: int) -> np.ndarray:
    """``np.concatenate((past, new), axis)``, as a view of a block with room (see above); a
    cache under ``MIN_BYTES`` as numpy's concatenation (a new array is as cheap)."""
    block = getattr(past, "base", None)
    if type(block) is np.ndarray:  # the view made last, extended in its block's room
        entry = _blocks.get(id(block))
        if entry is not None and entry[3]() is past and type(new) is np.ndarray \
                and new.dtype == past.dtype:
            head, at = entry[4], entry[1]
            shape = new.shape
            with _lock:
                filled = entry[2]
                total = filled + shape[at]
                if entry[3]() is past and total <= block.shape[at] \
                        and (axis - at) % past.ndim == 0 and len(shape) == past.ndim \
                        and shape[:at] == past.shape[:at] \
                        and shape[at + 1:] == past.shape[at + 1:]:
                    view = block[head + (slice(0, total),)]
                    entry[2], entry[3] = total, weakref.ref(view)
                else:
                    view = None
            if view is not None:
                block[head + (slice(filled, total),)] = new
                return view
    if type(past) is not np.ndarray or type(new) is not np.ndarray or past.ndim != new.ndim \
            or past.ndim == 0 or past.dtype != new.dtype or past.dtype.kind not in "biuf" \
            or past.nbytes + new.nbytes < MIN_BYTES:
        return np.concatenate((past, new), axis=axis)
    axis = axis % past.ndim
    if past.shape[:axis] != new.shape[:axis] or past.shape[axis + 1:] != new.shape[axis + 1:]:
        return np.concatenate((past, new), axis=axis)  # its own error
    head = (slice(None),) * axis
    filled = past.shape[axis]
    total = filled + new.shape[axis]
    shape = list(past.shape)
    shape[axis] = total + room(total)
    if np.prod(shape, dtype=np.int64) * past.itemsize > budget.current():
        return np.concatenate((past, new), axis=axis)  # no room past the memory budget
    block = np.empty(shape, past.dtype)
    block[head + (slice(0, filled),)] = past
    block[head + (slice(filled, total),)] = new
    key = id(block)
    view = block[head + (slice(0, total),)]
    with _lock:
        _blocks[key] = [weakref.ref(block, _forget(key)), axis, total, weakref.ref(view), head]
    return view


def grown(value) -> bool:
    """Whether ``value`` is the view of a block's filled part :func:`append` returned last."""
    block = getattr(value, "base", None)
    if type(block) is not np.ndarray:
        return False
    entry = _blocks.get(id(block))
    return entry is not None and entry[3]() is value and entry[0]() is block


def keep(value, *, variable_id, assign):
    """An Assign of an appended cache: a view of a block kept as it is, any other value by the
    layer's own kernel ``assign`` (which copies it)."""
    if grown(value):
        state.assign(variable_id, value)
        return value
    return assign(value)
