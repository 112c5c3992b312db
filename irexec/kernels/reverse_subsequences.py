"""Reverse the first ``n`` elements of every fibre along one axis, ``n`` given per fibre.

The one reversal kernel of irexec. OpenVINO ReverseSequence-1, ONNX ReverseSequence-10/28 and
DirectML's reverse-subsequences all call it after applying their own rules (axes, types, clamping,
range checks) to turn their inputs into valid lengths; Reverse-1 is the special case of full
lengths (its op uses ``np.flip``, and a test pins the equivalence). See docs/reverse-semantics.md.

Contract of :func:`reverse_subsequences` (it is also public, as ``irexec.kernels.
reverse_subsequences``, for numpy users):

* ``data``: any array of rank >= 1 (any dtype, any strides); it is never modified.
* ``axis``: the axis to reverse along, in ``[-data.ndim, data.ndim - 1]``.
* ``lengths``: an integer array broadcastable to ``data`` (numpy's rules) whose size along ``axis``
  (after broadcasting) is 1: one length per fibre, shared by the fibres along dims where
  ``lengths`` has size 1. Per-batch lengths ``L`` of a ReverseSequence are
  ``L.reshape([B if d == batch_axis else 1 for d in range(data.ndim)])``; DirectML's lengths are
  already of this shape. Each value must lie in ``[0, data.shape[axis]]``: the kernel is strict —
  it neither clamps nor wraps, and raises ``ValueError`` for anything else (ops check their own
  rules first, so this never fires for them).
* Output ``j < n`` of a fibre takes input ``n - 1 - j``; the rest is copied. 0 and 1 change
  nothing. The result is a new C-ordered array of ``data``'s dtype and shape, never a view of it.

How: when the lengths vary along a dim after ``axis`` (e.g. ReverseSequence with batch_axis >
seq_axis) every fibre is strided, and the result is a permutation of the contiguous rows after
the last dim the lengths vary along: for C-contiguous, non-object data of at least
``_MIN_GATHER_BYTES`` with rows of at least ``_MIN_GATHER_ROW_BYTES``, one ``np.put`` moves
each row (as one opaque item) to its place, reading the data in order, into an output placed
apart from the data in the 4 KiB page (:func:`irexec.kernels.buffers.empty_apart`; same page
offsets made the row copies 1.5x slower). Measured 2x faster than the per-batch strided slice
copies on [512, 64, 512] f32, batch_axis 1, seq_axis 0 (1.2-1.5x a memory copy: numpy copies
each 2 KiB row with its own memmove), and faster down to 64-byte rows.
Otherwise (lengths varying only before ``axis``, short rows, object or strided data), per-batch
lengths have few entries, so each entry (or, when many entries share few values, each distinct
value with one fancy-indexed copy) moves a whole block with slice copies over a full copy of
the data. All-equal lengths are one block written once; when they span the whole axis,
:func:`irexec.kernels.flip.flip` writes it (near memory speed). The other per-fibre lengths use
the same grouping by distinct value, which measured faster than a ``take_along_axis`` gather
with a computed index on the layouts tried. Distinct lengths along the innermost axis (rows of at
least ``_MIN_ROW_BYTES``): a block of rows is reversed at once in cache by the flip's 1-D
reversal (1-byte elements as 64-bit words, byteswapped by a cast), copied as it is, and each
row's reversed prefix then moved into place by a memoryview slice (a C memmove with no numpy
call per row); shorter rows are 1-D slices of the flat arrays. Outputs come from
:mod:`irexec.kernels.buffers` (reused memory in a run).
"""

from __future__ import annotations

import math

import numpy as np

from irexec.kernels import buffers
from irexec.kernels.flip import _WORD, _flip_1d, flip

_MIN_GATHER_ROW_BYTES = 64  # an index of 8 bytes per row: at most 1/8 of the data
_MIN_GATHER_BYTES = 1 << 15  # smaller data: building the index costs more than it saves
_MIN_ROW_BYTES = 64  # shorter rows: the per-row loop costs more than numpy's grouped copies
_ROWS_BLOCK_BYTES = 1024 * 1024  # rows reversed together in a buffer (1 MiB measured best)


def reverse_subsequences(data, lengths, axis: int) -> np.ndarray:
    data, lengths = np.asarray(data), np.asarray(lengths)
    axis = _checked_axis(data, axis)
    lengths = _checked_lengths(data, lengths, axis)
    dim = data.shape[axis]
    index: list = [slice(None)] * data.ndim
    flat = lengths.reshape(-1)
    if data.size == 0:
        return data.copy()
    first = int(flat[0])
    if flat.size == 1 or (flat == flat[0]).all():
        # One length for every fibre: one block, each element written once.
        if first == dim:
            return flip(data, (axis,))  # the whole axis: the fast full flip
        out = buffers.empty(data.shape, data.dtype)
        _move(out, data, index, axis, first, dim, whole=True)
        return out
    varying = [d for d in range(data.ndim) if lengths.shape[d] != 1]
    if varying[-1] > axis and data.flags.c_contiguous and not data.dtype.hasobject:
        row = math.prod(data.shape[varying[-1] + 1:])  # elements that share one length
        if row * data.dtype.itemsize >= _MIN_GATHER_ROW_BYTES \
                and data.nbytes >= _MIN_GATHER_BYTES:
            return _gather_rows(data, lengths, axis, varying[-1], row)
    vshape = tuple(lengths.shape[d] for d in varying)
    rows = np.flatnonzero(flat > 1)
    row_lengths = flat[rows]
    distinct = np.unique(row_lengths)
    out = buffers.reused(data.shape, data.dtype)
    if out is not None and flat.size <= 1024:
        # Memory already touched, few blocks: one pass, each element written once (fresh
        # memory measured faster filled by one sequential copy first, as below).
        parts = [p.tolist() for p in np.unravel_index(np.arange(flat.size), vshape)]
        for k, n in enumerate(flat.tolist()):
            for d, part in zip(varying, parts):
                index[d] = part[k]
            _move(out, data, index, axis, n, dim, whole=True)
        return out
    if (axis == data.ndim - 1 and lengths.shape[:-1] == data.shape[:-1]
            and data.flags.c_contiguous and not data.dtype.hasobject
            and data.dtype.itemsize in _WORD and dim * data.dtype.itemsize >= _MIN_ROW_BYTES):
        # A length per innermost row: rows reversed a block at a time in cache, then each
        # prefix copied into place by a memoryview (a C memmove, no numpy call per row).
        if out is None:
            out = buffers.empty(data.shape, data.dtype)
        _innermost_rows(out, data, flat, dim)
        return out
    # A copy, then only the reversed prefixes written again: measured fastest.
    out = buffers.copy(data) if out is None else _copied_into(out, data)
    if distinct.size * 4 < rows.size:
        # Many fibres share few lengths: one fancy-indexed copy per distinct length.
        for n in distinct.tolist():
            group = rows[row_lengths == n]
            parts = (group,) if len(varying) == 1 else np.unravel_index(group, vshape)
            for d, part in zip(varying, parts):
                index[d] = part
            _move(out, data, index, axis, n, dim, whole=False)
    elif axis == data.ndim - 1 and lengths.shape[:-1] == data.shape[:-1] \
            and data.flags.c_contiguous:
        # A length per innermost fibre: each fibre is a run of the flat arrays, and a 1-D
        # slice costs far less to index than a tuple.
        source, target = data.reshape(-1), out.reshape(-1)
        for start, n in zip((rows * dim).tolist(), row_lengths.tolist()):
            target[start:start + n] = source[start + n - 1:start - 1 if start else None:-1]
    else:
        parts = [p.tolist() for p in np.unravel_index(rows, vshape)]
        for k, n in enumerate(row_lengths.tolist()):
            for d, part in zip(varying, parts):
                index[d] = part[k]
            _move(out, data, index, axis, n, dim, whole=False)
    return out


def _gather_rows(data: np.ndarray, lengths: np.ndarray, axis: int, last: int,
                 row: int) -> np.ndarray:
    """Lengths varying along a dim after ``axis`` (``last``, the last dim they vary along):
    every fibre is strided, so the result is a permutation of the contiguous rows of ``row``
    elements after ``last``. Row ``(p, s, q)`` of ``data`` viewed as ``[P, dim, Q]`` rows
    (``n`` its length) goes to ``(p, n - 1 - s, q)`` if ``s < n``, else stays: the map is its
    own inverse, so one ``np.put`` of the rows as opaque items writes it, reading ``data`` in
    order (measured faster than ``np.take`` in output order, which reads scattered rows). The
    output is placed apart from ``data`` in the page (buffers.empty_apart: 4K aliasing)."""
    dim = data.shape[axis]
    outer, inner = math.prod(data.shape[:axis]), math.prod(data.shape[axis + 1:last + 1])
    n = np.broadcast_to(lengths, data.shape[:axis] + (1,) + data.shape[axis + 1:last + 1]
                        + (1,) * (data.ndim - last - 1)).reshape(outer, 1, inner)
    s = np.arange(dim, dtype=np.intp).reshape(1, dim, 1)
    source = np.empty((outer, dim, inner), np.intp)  # the index, built in place: small peak
    np.subtract(n.astype(np.intp) - 1, s, out=source)
    np.copyto(source, s, where=s >= n)
    source += np.arange(outer, dtype=np.intp).reshape(outer, 1, 1) * dim
    source *= inner
    source += np.arange(inner, dtype=np.intp)
    out = buffers.empty_apart(data.shape, data.dtype, data)
    item = np.dtype((np.void, row * data.dtype.itemsize))
    rows_in = data.reshape(-1).view(np.uint8).view(item)
    rows_out = out.reshape(-1).view(np.uint8).view(item)
    np.put(rows_out, source.reshape(-1), rows_in, mode="wrap")  # every index is in range
    return out


def _innermost_rows(out: np.ndarray, data: np.ndarray, lengths: np.ndarray, dim: int) -> None:
    """``out``'s rows (the innermost fibres of C-contiguous ``data``) with their first
    ``lengths[r]`` elements reversed. Per block of rows of about ``_ROWS_BLOCK_BYTES``: the
    block is reversed as one 1-D sequence into a buffer (every row reversed, the rows in
    reverse order; 1- and 2-byte elements as 64-bit words, see flip._flip_1d) and copied as
    it is into ``out``; then each row's reversed prefix, the last ``n`` elements of its
    reversed row in the buffer, overwrites the row's first ``n`` elements."""
    itemsize = data.dtype.itemsize
    word = _WORD[itemsize]
    src = data.view(word).reshape(-1)
    dst = out.view(word).reshape(-1)
    rows = src.size // dim
    block = max(8, _ROWS_BLOCK_BYTES // (dim * itemsize) // 8 * 8)  # 8 rows: whole words
    block = min(block, rows)
    buf = np.empty(block * dim, word)
    target, reversed_rows = memoryview(dst), memoryview(buf)
    counts = lengths.tolist()
    for r0 in range(0, rows, block):
        r1 = min(rows, r0 + block)
        size = (r1 - r0) * dim
        part = src[r0 * dim:r0 * dim + size]
        _flip_1d(buf[:size], part, itemsize)
        np.copyto(dst[r0 * dim:r0 * dim + size], part)
        start, end = r0 * dim, size  # a row in out, and the end of its reversed copy in buf
        for n in counts[r0:r1]:
            if n > 1:
                target[start:start + n] = reversed_rows[end - n:end]
            start += dim
            end -= dim


def _copied_into(out: np.ndarray, data: np.ndarray) -> np.ndarray:
    np.copyto(out, data)
    return out


def _move(out, data, index: list, axis: int, n: int, dim: int, whole: bool) -> None:
    """Write the block ``index`` selects (``index[axis]`` is set here): its first ``n`` elements
    along ``axis`` reversed; with ``whole``, the rest of the block copied as well."""
    if n > 1:
        index[axis] = slice(0, n)
        target = tuple(index)
        index[axis] = slice(n - 1, None, -1)
        out[target] = data[tuple(index)]
        if not whole or n == dim:
            return
        index[axis] = slice(n, None)
    elif not whole:
        return
    else:
        index[axis] = slice(None)
    block = tuple(index)
    out[block] = data[block]


def _checked_axis(data: np.ndarray, axis) -> int:
    if data.ndim == 0:
        raise ValueError("data is a scalar; reverse_subsequences needs rank >= 1")
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise ValueError(f"axis {axis!r} is not an integer")
    if not -data.ndim <= axis < data.ndim:
        raise ValueError(f"axis {axis} is out of range [-{data.ndim}, {data.ndim - 1}] for data "
                         f"of rank {data.ndim}")
    return int(axis) % data.ndim


def _checked_lengths(data: np.ndarray, lengths: np.ndarray, axis: int) -> np.ndarray:
    """``lengths`` with ``data``'s rank (leading 1s added); ValueError if they break the
    contract."""
    if lengths.dtype.kind not in "iu":
        raise ValueError(f"lengths have dtype {lengths.dtype}; an integer dtype is needed")
    expected = list(data.shape)
    expected[axis] = 1
    if lengths.ndim > data.ndim:
        raise ValueError(f"lengths of shape {list(lengths.shape)} have more dims than data of "
                         f"shape {list(data.shape)}")
    lengths = lengths.reshape((1,) * (data.ndim - lengths.ndim) + lengths.shape)
    if any(g not in (1, e) for g, e in zip(lengths.shape, expected)):
        raise ValueError(f"lengths of shape {list(lengths.shape)} do not broadcast to "
                         f"{expected} (data {list(data.shape)} with 1 at axis {axis})")
    if lengths.size:
        dim = data.shape[axis]
        low, high = lengths.min(), lengths.max()
        if low < 0 or high > dim:
            bad = int(low) if low < 0 else int(high)
            raise ValueError(f"length {bad} is not in [0, {dim}] (data.shape[{axis}] = {dim})")
    return lengths
