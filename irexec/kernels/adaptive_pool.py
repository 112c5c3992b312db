"""Adaptive pooling: output element i of an axis of size O covers the input elements
floor(i*I/O) to ceil((i+1)*I/O) - 1 of that axis (size I). The windows are boxes, so both
poolings go one spatial axis at a time:

* average: a [O, I] matrix of weights 1/window-size per axis, applied by one ``einsum`` (BLAS);
* max: the windows of one axis gathered as [.., O, L, ..] (L the longest window; shorter ones
  repeat their last element, which changes neither the maximum nor which element comes first),
  reduced with ``argmax``. The last axis goes first, so that a tie keeps the first element in
  row-major order, and the indices count positions within each channel's spatial elements.
"""

from __future__ import annotations

import numpy as np

from irexec.kernels.numeric import compute_dtype, narrow


def bounds(size: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(out, dtype=np.int64)
    return (i * size) // out, -((-(i + 1) * size) // out)


def avg(x: np.ndarray, out: tuple[int, ...]) -> np.ndarray:
    ct = compute_dtype(x.dtype)
    nsp = x.ndim - 2
    letters = "defgh"[:nsp]
    operands, subscripts = [x.astype(ct, copy=False)], ["bc" + letters]
    for i, (size, o) in enumerate(zip(x.shape[2:], out)):
        start, end = bounds(size, o)
        cols = np.arange(size)
        inside = (cols[None, :] >= start[:, None]) & (cols[None, :] < end[:, None])
        weights = inside / (end - start)[:, None]
        operands.append(weights.astype(ct))
        subscripts.append(letters[i].upper() + letters[i])
    spec = ",".join(subscripts) + "->bc" + letters.upper()
    return narrow(np.einsum(spec, *operands, optimize=True), x.dtype)


def max_with_indices(x: np.ndarray, out: tuple[int, ...], index_dtype) \
        -> tuple[np.ndarray, np.ndarray]:
    values = x
    index = None
    step = 1  # elements between neighbours of the axis being reduced
    for axis in range(x.ndim - 1, 1, -1):
        size, o = x.shape[axis], out[axis - 2]
        start, end = bounds(size, o)
        longest = int((end - start).max()) if o else 1
        gather = np.minimum(start[:, None] + np.arange(longest)[None, :], end[:, None] - 1)
        g = np.take(values, gather, axis=axis)  # [..., O, L, ...]
        pick = np.expand_dims(np.argmax(g, axis=axis + 1), axis + 1)
        values = np.take_along_axis(g, pick, axis=axis + 1).squeeze(axis + 1)
        position = np.take_along_axis(np.broadcast_to(
            gather.reshape(gather.shape + (1,) * (x.ndim - 1 - axis)), g.shape[:axis]
            + gather.shape + g.shape[axis + 2:]), pick, axis=axis + 1).squeeze(axis + 1)
        if index is None:
            index = position * step
        else:
            index = np.take_along_axis(np.take(index, gather, axis=axis), pick,
                                       axis=axis + 1).squeeze(axis + 1) + position * step
        step *= size
    return np.ascontiguousarray(values), index.astype(index_dtype)
