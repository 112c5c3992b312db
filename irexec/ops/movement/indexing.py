"""What the gather and scatter ops share: index arrays as int64, range checks, and index tuples
(GatherND, ScatterNDUpdate) as flat row numbers."""

from __future__ import annotations

import math

import numpy as np

from irexec.errors import OpError
from irexec.ops.domains import as_int64


def index_values(indices: np.ndarray) -> np.ndarray:
    """Indices of any integer type as int64 of the same shape (unsigned read as signed)."""
    return as_int64(indices).reshape(np.shape(indices))


def check_range(idx: np.ndarray, dim: int, negative: bool, what: str = "indices") -> None:
    """OpError IR325 naming the first index outside [-dim, dim-1] (or [0, dim-1])."""
    low = -dim if negative else 0
    bad = (idx < low) | (idx >= dim)
    if bad.any():
        where = np.unravel_index(int(np.flatnonzero(bad.reshape(-1))[0]), idx.shape)
        allowed = f"[{low}, {dim - 1}]" if dim else "nothing (the dim is empty)"
        at = list(map(int, where))  # plain ints, not numpy's reprs (np.int64(0))
        raise OpError(f"{what}{at} = {int(idx[where])} is outside {allowed}, the "
                      f"indices of a dim of {dim}", code="IR325")


def check_tuples(idx: np.ndarray, dims: tuple[int, ...], what: str = "indices") -> None:
    """OpError IR325 naming the first tuple element outside [-s, s-1] of its dim."""
    limit = np.array(dims, np.int64)
    bad = (idx < -limit) | (idx >= limit)
    if bad.any():
        where = np.unravel_index(int(np.flatnonzero(bad.reshape(-1))[0]), idx.shape)
        s = dims[where[-1]]
        at = list(map(int, where))  # plain ints, not numpy's reprs (np.int64(0))
        raise OpError(f"{what}{at} = {int(idx[where])} is outside [{-s}, {s - 1}], the "
                      f"indices of a dim of {s}", code="IR325")


def tuple_rows(idx: np.ndarray, dims: tuple[int, ...]) -> np.ndarray:
    """Index tuples (last axis) as flat row numbers into the ``dims`` they index."""
    idx = np.where(idx < 0, idx + np.array(dims, np.int64), idx)
    strides = np.array([math.prod(dims[i + 1:]) for i in range(len(dims))], np.int64)
    return idx @ strides if len(dims) else np.zeros(idx.shape[:-1], np.int64)
