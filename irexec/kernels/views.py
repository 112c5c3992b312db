"""Kernels that may return a view of their first input instead of new memory (Reshape, Squeeze,
Split along the outer axis ...): moving no data at all is the fastest data movement.

A view is never written through: irexec writes only into memory that Python's reference count
proves nobody else can see (kernels/buffers.py), and a view keeps its base referenced, so neither
the view nor its base ever passes that proof while the other is alive. What the plan must still
do is hand the caller a copy when an output is a view of the caller's own input or of a constant:
it asks :func:`returns_view` for the kernels between them.
"""

from __future__ import annotations

from collections.abc import Callable

_VIEWS: set[Callable] = set()


def register(kernel: Callable) -> Callable:
    """Mark ``kernel`` as one whose result may share memory with its first input."""
    _VIEWS.add(kernel)
    return kernel


def returns_view(kernel: Callable | None) -> bool:
    return kernel is not None and kernel in _VIEWS
