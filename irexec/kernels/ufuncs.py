"""Kernels that, for some element types, compute exactly one call of a numpy ufunc, found by the
kernel. The loop fast path (irexec/runtime/loop_code.py) calls the ufunc itself for a body layer
of such types whose output has a rank (a ufunc gives a numpy scalar for 0-d inputs, where the
kernel gives an array) and is small (the kernel would take a large output from the pool), under
``np.errstate(all="ignore")`` as the kernels run: the same values without the kernel's dispatch
on the element type, which costs more than the ufunc on a few floats. Speed machinery, like
kernels/in_place.py: an op works the same without it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from irexec.kernels import elementwise as ew

_UFUNCS: dict[Callable, tuple[np.ufunc, tuple[str, ...]]] = {}


def register(kernel: Callable, ufunc: np.ufunc, kinds: tuple[str, ...]) -> None:
    """``kernel(*arrays, **attrs)`` is ``ufunc(*arrays)`` when the arrays all have one dtype of
    one of ``kinds`` (irexec.kernels.elementwise's type paths)."""
    if kinds:
        _UFUNCS[kernel] = (ufunc, kinds)


def ufunc_for(kernel: Callable, dtype: np.dtype) -> np.ufunc | None:
    """The ufunc that ``kernel`` is over arrays of ``dtype``, if it is one."""
    entry = _UFUNCS.get(kernel)
    if entry is None:
        return None
    try:
        kind = ew.kind(dtype)
    except KeyError:  # a dtype no element type has
        return None
    return entry[0] if kind in entry[1] else None
