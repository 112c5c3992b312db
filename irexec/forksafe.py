"""Locks a forked process can use.

A lock that another thread holds at the moment the process forks stays held for ever in the
child, where that thread does not exist: the child's first use of it hangs. irexec forks its
dataset workers from a process that may run other threads (irexec/batch/pool.py), and programs
around irexec fork too. So every lock irexec keeps is registered here, and a forked child
starts with fresh, free ones: a module's through :func:`at_fork` (a function that makes its
locks and state afresh), an object's through :func:`renew` (its lock attributes replaced).
Where the platform has no ``fork`` (Windows) nothing is registered.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable

_objects: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # object -> lock attributes
_objects_lock = threading.Lock()


def at_fork(renew_module: Callable[[], None]) -> None:
    """Call ``renew_module()`` in every forked child, before anything else of irexec runs."""
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=renew_module)


def renew(owner: object, *attributes: str) -> None:
    """In a forked child, give ``owner`` a fresh ``threading.Lock`` in each of ``attributes``."""
    with _objects_lock:
        _objects[owner] = attributes


def _renew_objects() -> None:
    global _objects_lock
    _objects_lock = threading.Lock()
    for owner, attributes in list(_objects.items()):
        for name in attributes:
            setattr(owner, name, threading.Lock())


at_fork(_renew_objects)
