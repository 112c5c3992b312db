"""Reading the small integer tensors that steer an op: axes, shapes, indices of one axis, pads.

Such a tensor is known before running when it is a Constant (or folded from constants), and at
run time from the call's inputs; the same helpers read it in both places, so an op's rule says the
same thing then and now. Values come as Python ints, unsigned types read as signed 64-bit (as
OpenVINO reads them: u64 2**64-1 is -1).

Small tensors are converted once per distinct content: a model calls its Reshape with the same
shape constant on every run.
"""

from __future__ import annotations

import functools

import numpy as np

from irexec.errors import OpError
from irexec.ops.domains import as_int64

_CACHED = 64  # tensors of at most this many elements are converted once per distinct content


@functools.lru_cache(maxsize=1024)
def _ints_of(raw: bytes, dtype: np.dtype) -> tuple[int, ...]:
    return tuple(as_int64(np.frombuffer(raw, dtype)).tolist())


def ints(values: np.ndarray) -> tuple[int, ...]:
    """Every element of an integer tensor as a Python int, flat, in C order."""
    if type(values) is not np.ndarray:
        values = np.asarray(values)
    if values.size <= _CACHED and values.dtype.kind in "iub":  # tobytes: C order, any strides
        return _ints_of(values.tobytes(), values.dtype)
    return tuple(as_int64(values).tolist())


def scalar(values: np.ndarray, what: str) -> int:
    """The one integer of a scalar or one-element tensor (an axis given as a tensor);
    OpError IR308 naming ``what`` when it holds another number of elements."""
    flat = ints(values)
    if len(flat) != 1:
        raise OpError(f"{what} holds {len(flat)} values {list(flat)[:8]}; it must hold exactly "
                      f"one", code="IR308")
    return flat[0]
