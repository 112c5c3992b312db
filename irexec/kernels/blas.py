"""Matrix products with numpy's BLAS on one thread when the product is small.

OpenBLAS splits even a small product over all its threads. On a machine whose cores are busy
with other work, the thread that takes the second half may wait a scheduler time slice before
it runs, and the caller spins meanwhile: on a loaded 2-core VM a [100, 64] x [64, 256] product
(a layer of a small transformer) took milliseconds on two threads and microseconds on one. The
split pays only on large products, so :func:`matmul` runs a product of fewer than ``SMALL_MACS``
multiply-adds (one matrix of a batch: numpy's matmul calls BLAS once per matrix) with OpenBLAS
set to one thread, and puts the count it found back as soon as the product is done, so numpy
code around irexec (and irexec's own large products) keeps its threads.

The count never changes a result: OpenBLAS divides a product among its threads by rows and
columns of the output, never along the summed axis, so each output element is summed in the same
order either way (tests/kernels/test_blas.py holds products equal bit for bit on both counts).

A large product runs on OpenBLAS's count, or on fewer threads when fewer cores are free at that
moment (the machine's runnable tasks, read from ``/proc/loadavg``): a thread that waits for a
core makes the others spin as well.

The switch is a few C calls of about a microsecond around each product. Products running at
once in several threads share one count: the first to enter saves it and sets one thread, the
last to leave puts it back. Where OpenBLAS's thread functions are not found (another BLAS,
another platform), where it runs one thread anyway, or with the environment variable
``IREXEC_BLAS_THREADS_AS_IS`` set (to compare), :func:`matmul` is ``np.matmul``.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time

import numpy as np

from irexec import forksafe

# a product of fewer multiply-adds than this runs on one thread; from it, on the free cores.
# One thread against two free ones on this 2-core VM: a small transformer's MLP
# [100,256]x[256,64] (1.6M) 35 -> 22 us, [200,240]x[240,64] 63 -> 35 us; convolutions'
# products: ResNet-18's 3x3 layers (7.2M each) 164-216 -> 103-129 us, MobileNet-V2's
# [16,32]x[32,12544] 178 -> 99 us, [48,48]x[48,784] (1.8M) 40 -> 25 us
SMALL_MACS = 1 << 20
LARGE_MATVEC = 1 << 20  # ... unless it is a matrix-vector product of at least this many (4 MiB f32)
# OpenBLAS runs products of fewer multiply-adds than these on one thread by itself, so no switch
# is needed below them: its matrix-vector threshold (a row or a column), and for a matrix-matrix
# product a bound seen to hold for this OpenBLAS (0.3.31: one busy thread up to [96,96]x[96,96],
# 0.9 M multiply-adds; two from [100,64]x[64,128])
ONE_THREAD_ANYWAY = 2304 * 4
ONE_THREAD_ANYWAY_GEMM = 1 << 18

_NAMES = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
          "openblas_set_num_threads64_", "openblas_set_num_threads")

_set = None  # OpenBLAS's set-threads function once found (None: leave BLAS as it is)
_get = None
_searched = False
try:
    _CORES = max(1, len(os.sched_getaffinity(0)))
except (AttributeError, OSError):
    _CORES = os.cpu_count() or 1
_lock = threading.Lock()
_inside = 0  # products running now under a count set here (in any thread)
FREE_CORES_TTL = 0.01  # seconds a reading of the free cores is used for
_free, _free_at = 1, -1.0
_saved = 1  # the count found when the first of them entered
_changed = False  # whether that first one set another count
_set_to = 1  # the count it set


def _search() -> None:
    """Find OpenBLAS's thread-count functions among the libraries this process has loaded."""
    global _set, _get, _searched
    _searched = True
    if os.environ.get("IREXEC_BLAS_THREADS_AS_IS"):
        return
    try:
        with open("/proc/self/maps") as maps:
            paths = {parts[-1] for parts in map(str.split, maps)
                     if len(parts) > 5 and "openblas" in parts[-1].lower()
                     and ".so" in parts[-1]}
    except OSError:
        return
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _NAMES:
            setter = getattr(lib, name, None)
            getter = getattr(lib, name.replace("_set_", "_get_"), None)
            if setter is not None and getter is not None:
                getter.restype = ctypes.c_int
                getter.argtypes = []
                setter.argtypes = [ctypes.c_int]
                setter.restype = None
                if getter() <= 1:
                    return  # one thread already: nothing to switch
                _set, _get = setter, getter
                return


def macs(a: np.ndarray, b: np.ndarray) -> int:
    """Multiply-adds of one matrix product of ``a @ b`` (one matrix of a batched one)."""
    m = a.shape[-2] if a.ndim > 1 else 1
    n = b.shape[-1] if b.ndim > 1 else 1
    return m * a.shape[-1] * n


def free_cores() -> int:
    """The cores no other process's runnable task wants right now: the usable cores less the
    runnable tasks of the whole machine (``/proc/loadavg``'s instantaneous count) that are not
    this process's own threads (``/proc/self/task``: BLAS's or another library's workers still
    spinning after their last product are no reason to run on one thread). At least 1; the
    usable cores where it cannot be read. Read at most every ``FREE_CORES_TTL`` seconds."""
    global _free, _free_at
    now = time.monotonic()
    if now - _free_at < FREE_CORES_TTL:
        return _free
    try:
        with open("/proc/loadavg", "rb") as f:
            running = int(f.read().split()[3].split(b"/")[0])
        own = 0
        for task in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{task}/stat", "rb") as f:
                    own += f.read().rsplit(b")", 1)[1].split()[0] == b"R"
            except OSError:  # the thread ended meanwhile
                pass
    except (OSError, ValueError, IndexError):
        return _CORES
    _free, _free_at = max(1, min(_CORES, _CORES - (running - max(own, 1)))), now
    return _free


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``np.matmul(a, b, out=out)``: on one BLAS thread when each product is small; a large
    one (``SMALL_MACS`` multiply-adds or more a matrix) on OpenBLAS's count, or on as many
    threads as there are free cores when fewer (a thread that has to wait for a core makes
    the others spin: on the loaded 2-core machine, ResNet-50's convolutions took 546 ms on
    two threads, 295 ms on one)."""
    if not _searched:
        _search()
    if _set is None:
        return np.matmul(a, b, out=out)
    work = macs(a, b)
    gemm = a.ndim > 1 and b.ndim > 1 and a.shape[-2] > 1 and b.shape[-1] > 1
    if work < (ONE_THREAD_ANYWAY_GEMM if gemm else ONE_THREAD_ANYWAY):
        return np.matmul(a, b, out=out)
    # a matrix-vector product over a large matrix (an LLM's decode step) is bound by memory,
    # which a second core's loads speed up: 1.55x on a [1,1024]x[1024,2816] product streamed
    # from memory on this VM; it takes the free cores as a large product does
    large = work >= SMALL_MACS or (not gemm and work >= LARGE_MATVEC)
    _enter(free_cores() if large else 1)
    try:
        return np.matmul(a, b, out=out)
    finally:
        _leave()


def _after_fork() -> None:
    """A forked child: no product of the parent's other threads runs here (see forksafe)."""
    global _lock, _inside, _changed
    _lock, _inside, _changed = threading.Lock(), 0, False


forksafe.at_fork(_after_fork)


def _enter(wanted: int) -> None:
    """Set OpenBLAS to at most ``wanted`` threads until the matching :func:`_leave` (products
    running at once in other threads keep the count the first of them set)."""
    global _inside, _saved, _changed, _set_to
    with _lock:
        if _inside == 0:
            _saved = _get()
            _changed = wanted < _saved
            if _changed:
                _set(wanted)
                _set_to = wanted
        _inside += 1


def _leave() -> None:
    global _inside
    with _lock:
        _inside -= 1
        # (the count is the process's: where other code set another meanwhile, theirs stays)
        if _inside == 0 and _changed and _get() == _set_to:
            _set(_saved)


def threads() -> int:
    """OpenBLAS's thread count now (1 where it is not found)."""
    if not _searched:
        _search()
    return _get() if _get is not None else 1
