"""Kernels that can write their output over their first input, found by the kernel they stand
in for. The run loop uses one only when that input dies at the layer and Python's reference
count proves nothing else can see it (see kernels/buffers.py and docs/performance.md); the
variant must compute exactly what the kernel computes, over an array of the output's shape and
element type. This is speed machinery: an op works the same without it.
"""

from __future__ import annotations

from collections.abc import Callable

_VARIANTS: dict[Callable, Callable] = {}


def register(kernel: Callable, variant: Callable) -> None:
    """``variant(*arrays, **attrs)`` computes ``kernel``'s result in the first array."""
    _VARIANTS[kernel] = variant


def variant(kernel: Callable | None) -> Callable | None:
    return _VARIANTS.get(kernel) if kernel is not None else None
