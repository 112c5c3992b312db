"""Kernels that skip outputs nothing reads, found by the kernel they stand in for. The plan
binds one when a layer of several outputs has outputs no other layer reads (MaxPool-8/14's
indices in converted models); it returns None in their places. This is speed machinery: an op
works the same without it, and its class never names it.
"""

from __future__ import annotations

from collections.abc import Callable

_MAKERS: dict[Callable, Callable] = {}


def register(kernel: Callable, make: Callable) -> None:
    """``make(unread) -> kernel | None``: a kernel computing ``kernel``'s outputs except those
    whose indices are in the frozenset ``unread`` (None in their places), or None when it has
    none for that set."""
    _MAKERS[kernel] = make


def kernel_for(kernel: Callable | None, unread: frozenset[int]) -> Callable | None:
    make = _MAKERS.get(kernel) if kernel is not None else None
    return make(unread) if make is not None and unread else None
