"""The memory budget: the most bytes one tensor may need before irexec refuses to make it.

A hostile or broken file can declare a shape of 10**12 elements in twenty bytes of XML. Every
place that would allocate from a declared shape (a Const's payload, an input made from a seed, a
layer's output) asks :func:`check_shape` first, which refuses with IR109 naming the layer and the
size, before anything is allocated. Python integers never overflow, so dims whose product
overflows int64 are caught here too, by the same comparison.

Every dim is bounded, not only the product: a shape with a 0 dim holds nothing, but numpy still
multiplies its other dims (``[2**62, 0]`` f32 is "array is too big"), so the dims other than 0
must multiply to a size within the budget too. And numpy holds at most ``MAX_RANK`` (64) dims:
more is IR114, whatever the size.

The budget is, in order: the innermost :func:`limit` in force (``irexec run --memory-budget``
uses one), the environment variable ``IREXEC_MEMORY_BUDGET``, or half the machine's physical
memory. Sizes are bytes, with an optional K, M, G or T suffix (powers of 1024), or a percentage
of physical memory (``25%``).

Time has a budget of its own where a file alone decides how long a run takes: the iterations of
sub-graph bodies (Loop, TensorIterator). A trip count of 10**15, or -1 with a body that never
says stop, is twenty bytes of XML; one outermost loop runs at most :func:`max_iterations` body
iterations, its nested loops' included (``IREXEC_MAX_ITERATIONS``, default 100,000; IR115).
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import re
import threading

from irexec import forksafe

from irexec.diagnostics.diagnostic import Location
from irexec.errors import IRError, UsageError

ENV = "IREXEC_MEMORY_BUDGET"
DEFAULT_FRACTION = 0.5
FALLBACK_MEMORY = 8 << 30  # where the machine will not say how much memory it has
INT64_MAX = 2**63 - 1
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
# ASCII digits and spaces only: Python's \d and float() also take "\uff11" (a fullwidth 1).
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?)(?:I?B)?\s*", re.IGNORECASE | re.ASCII)
_PERCENT = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*%\s*", re.ASCII)

RANK_CODE, SIZE_CODE = "IR114", "IR109"
ITERATIONS_ENV = "IREXEC_MAX_ITERATIONS"
DEFAULT_ITERATIONS = 100_000
ITERATIONS_CODE = "IR115"


def _numpy_max_rank() -> int:
    import importlib

    for name in ("numpy._core.multiarray", "numpy.core.multiarray"):
        try:
            return int(importlib.import_module(name).MAXDIMS)
        except (ImportError, AttributeError):
            continue
    import numpy

    return 64 if int(numpy.__version__.split(".")[0]) >= 2 else 32


MAX_RANK = _numpy_max_rank()

_lock = threading.Lock()
_overrides: list[int] = []


def _after_fork() -> None:
    global _lock
    _lock = threading.Lock()


forksafe.at_fork(_after_fork)


@functools.lru_cache(maxsize=1)
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
    """The budget in force, in bytes. UsageError (naming the variable) if ``IREXEC_MEMORY_BUDGET``
    holds something that is not a size."""
    overrides = _overrides
    if overrides:  # no lock: reading a list's last item is atomic (one may go meanwhile)
        try:
            return overrides[-1]
        except IndexError:
            pass
    text = os.environ.get(ENV)
    if text:
        return _from_environment(text)
    return int(physical_memory() * DEFAULT_FRACTION)


@functools.lru_cache(maxsize=4)
def _from_environment(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as e:
        raise UsageError(f"{ENV}: {e}") from None


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


def max_iterations() -> int:
    """The most body iterations one outermost Loop or TensorIterator may run, nested loops'
    included. UsageError (naming the variable) if ``IREXEC_MAX_ITERATIONS`` is not a positive
    integer."""
    text = os.environ.get(ITERATIONS_ENV)
    if not text:
        return DEFAULT_ITERATIONS
    stripped = text.strip()
    if not (stripped.isascii() and stripped.isdigit()) or int(stripped) <= 0:
        raise UsageError(f"{ITERATIONS_ENV}: '{text[:40]}' is not a positive whole number of "
                         f"iterations")
    return int(stripped)


_iterations = threading.local()


@contextlib.contextmanager
def counting_iterations():
    """Count body iterations from the outermost loop in: ``with counting_iterations() as
    spend:`` ... ``spend()`` once per iteration, which returns why to stop once the loops
    together ran more than :func:`max_iterations` (else None)."""
    depth = getattr(_iterations, "depth", 0)
    if depth == 0:
        _iterations.used, _iterations.limit = 0, max_iterations()
    _iterations.depth = depth + 1

    def spend() -> str | None:
        _iterations.used += 1
        if _iterations.used > _iterations.limit:
            return (f"the loops ran more than {_iterations.limit} body iterations, the most "
                    f"irexec runs for one loop and the loops inside it; raise "
                    f"{ITERATIONS_ENV} if the model really needs more")
        return None

    try:
        yield spend
    finally:
        _iterations.depth = depth


def describe(nbytes: int) -> str:
    for unit, size in (("EiB", 1 << 60), ("PiB", 1 << 50), ("TiB", 1 << 40), ("GiB", 1 << 30),
                       ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= size:
            return f"{nbytes / size:.1f} {unit}"
    return f"{nbytes} bytes"


RAISE = f"raise the budget with --memory-budget or {ENV} if the machine has the memory"


def describe_bytes(nbytes: int) -> str:
    """A size as :func:`describe` says it, with the exact count of bytes beside it."""
    size = describe(nbytes)
    return size if size.endswith(" bytes") else f"{size} ({nbytes} bytes)"


def shape_problem(shape, itemsize: int, budget: int | None = None,
                  element_type=None) -> str | None:
    """Why a tensor of ``shape`` (sizes) and ``itemsize`` bytes per element may not be made, or
    None if it may. An itemsize of None checks only that numpy can make it at all -- its rank,
    and its dims, those other than 0 too, within a 64-bit count (the dims of a port whose tensor
    is costed elsewhere). :func:`problem_code` gives the code that goes with the answer."""
    if len(shape) > MAX_RANK:
        return (f"the shape has {len(shape)} dims; numpy, which irexec computes with, holds at "
                f"most {MAX_RANK}")
    count = math.prod(shape)
    span = math.prod(d for d in shape if d)  # what numpy multiplies, whatever is 0
    besides = " besides its 0 dims" if not count else ""
    if span > INT64_MAX:
        return (f"shape {list(shape)} holds {span} elements{besides}, more than a 64-bit size "
                f"can count (the dims overflow int64 when multiplied); numpy cannot make it")
    if itemsize is None:
        return None
    itemsize = max(int(itemsize), 1)
    if span * itemsize > INT64_MAX:
        return (f"shape {list(shape)} holds {span} elements{besides} of {itemsize} bytes: "
                f"more bytes than a 64-bit size can count, past the largest array numpy can "
                f"make (2**63 - 1 bytes, whatever the memory budget)")
    budget = current() if budget is None else budget
    nbytes = count * itemsize
    if nbytes > budget:
        of = f" of {element_type}" if element_type is not None else ""
        return (f"shape {list(shape)}{of} needs {describe_bytes(nbytes)}, more than the memory "
                f"budget of {describe(budget)}; {RAISE}")
    if span * itemsize > budget:
        return (f"shape {list(shape)} holds no element, but its other dims multiply to {span} "
                f"elements ({describe(span * itemsize)}), more than the memory budget of "
                f"{describe(budget)}: every dim is bounded, not only the product")
    return None


def problem_code(shape) -> str:
    """IR114 for a rank numpy cannot hold, IR109 for a size (see :func:`shape_problem`)."""
    return RANK_CODE if len(shape) > MAX_RANK else SIZE_CODE


def check_shape(shape, itemsize: int, what: str, location: Location | None = None) -> None:
    """IRError IR109 (IR114 for too many dims) if a tensor of this shape may not be made;
    ``what`` names it."""
    problem = shape_problem(shape, itemsize)
    if problem is not None:
        raise IRError.make(problem_code(shape), f"{what}: {problem}", location)


__all__ = ["ENV", "ITERATIONS_ENV", "MAX_RANK", "check_shape", "counting_iterations", "current",
           "limit", "max_iterations", "parse_size", "problem_code", "shape_problem"]
