"""The memory budget: the most bytes one tensor may need before irexec refuses to make it.

A hostile or broken file can declare a shape of 10**12 elements in twenty bytes of XML. Every
place that would allocate from a declared shape (a Const's payload, an input made from a seed, a
layer's output) asks :func:`check_shape` first, which refuses with IR109 naming the layer and the
size, before anything is allocated. Python integers never overflow, so dims whose product
overflows int64 are caught here too, by the same comparison.

The budget is, in order: the innermost :func:`limit` in force (``irexec run --memory-budget``
uses one), the environment variable ``IREXEC_MEMORY_BUDGET``, or half the machine's physical
memory. Sizes are bytes, with an optional K, M, G or T suffix (powers of 1024), or a percentage
of physical memory (``25%``).
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import threading

from irexec.errors import IRError
from irexec.diagnostics.diagnostic import Location

ENV = "IREXEC_MEMORY_BUDGET"
DEFAULT_FRACTION = 0.5
FALLBACK_MEMORY = 8 << 30  # where the machine will not say how much memory it has
INT64_MAX = 2**63 - 1
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*", re.IGNORECASE)
_PERCENT = re.compile(r"\s*(\d+(?:\.\d+)?)\s*%\s*")

_lock = threading.Lock()
_overrides: list[int] = []


def physical_memory() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return FALLBACK_MEMORY


def parse_size(text: str) -> int:
    """``"512M"`` -> 536870912; ``"25%"`` -> a quarter of physical memory. ValueError if the
    text is not a size."""
    m = _PERCENT.fullmatch(text)
    if m:
        value = int(physical_memory() * float(m.group(1)) / 100)
    else:
        m = _SIZE.fullmatch(text)
        if not m:
            raise ValueError(f"'{text[:40]}' is not a size (bytes, with an optional K, M, G or T "
                             f"suffix, or a percentage of memory like 25%)")
        value = int(float(m.group(1)) * _UNITS[m.group(2).upper()])
    if value <= 0:
        raise ValueError(f"'{text[:40]}' is not a positive size")
    return value


def current() -> int:
    """The budget in force, in bytes."""
    with _lock:
        if _overrides:
            return _overrides[-1]
    text = os.environ.get(ENV)
    if text:
        try:
            return parse_size(text)
        except ValueError as e:
            raise IRError.make("IR109", f"{ENV}: {e}") from None
    return int(physical_memory() * DEFAULT_FRACTION)


@contextlib.contextmanager
def limit(nbytes: int):
    """``with limit(1 << 30):`` the budget is 1 GiB inside (for every thread)."""
    with _lock:
        _overrides.append(int(nbytes))
    try:
        yield
    finally:
        with _lock:
            _overrides.remove(int(nbytes))


def describe(nbytes: int) -> str:
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= size:
            return f"{nbytes / size:.1f} {unit}"
    return f"{nbytes} bytes"


def shape_problem(shape, itemsize: int, budget: int | None = None,
                  element_type=None) -> str | None:
    """Why a tensor of ``shape`` (sizes) and ``itemsize`` bytes per element may not be made, or
    None if it may. An itemsize of None checks only that the element count fits int64 (the
    dims of a port whose tensor is costed elsewhere)."""
    count = math.prod(shape)
    if count > INT64_MAX:
        return (f"shape {list(shape)} holds {count} elements, more than a 64-bit size can count "
                f"(the dims overflow int64 when multiplied)")
    if itemsize is None:
        return None
    nbytes = count * max(int(itemsize), 1)
    budget = current() if budget is None else budget
    if nbytes > budget:
        size = describe(nbytes)
        if not size.endswith(" bytes"):
            size += f" ({nbytes} bytes)"
        of = f" of {element_type}" if element_type is not None else ""
        return (f"shape {list(shape)}{of} needs {size}, more than the memory budget of "
                f"{describe(budget)}; raise the budget with --memory-budget or {ENV} if the "
                f"machine has the memory")
    return None


def check_shape(shape, itemsize: int, what: str, location: Location | None = None) -> None:
    """IRError IR109 if a tensor of this shape may not be made; ``what`` names it."""
    problem = shape_problem(shape, itemsize)
    if problem is not None:
        raise IRError.make("IR109", f"{what}: {problem}", location)


__all__ = ["ENV", "check_shape", "current", "limit", "parse_size", "shape_problem"]
