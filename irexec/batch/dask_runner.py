"""The same job on a ``dask.distributed`` cluster (the ``dask`` extra); the only module that
imports Dask, and only when a scheduler is asked for.

* ``connect("tcp://host:8786")`` joins a running scheduler (``dask scheduler`` and ``dask worker``
  started as Dask documents), within ``IREXEC_CONNECT_TIMEOUT`` seconds (default 10);
  ``connect("local")`` starts a ``LocalCluster`` of worker processes, one thread each.
* The job (model recipe, seed, options) is scattered to every worker once; a worker compiles the
  model once (irexec/pickling.py caches it per process) and runs tasks of a few consecutive
  samples each (one each for a short dataset; up to 16 for a long one, so that the scheduler's
  cost per task is shared).
* The model goes as its path and digest when every worker finds the same files there, else as
  its bytes; samples go as paths when every worker sees the same input files (same names and
  sizes), else as arrays read here.
* A worker that dies is Dask's to handle: the scheduler reruns its tasks elsewhere (up to
  ``distributed.scheduler.allowed-failures`` times). Outcomes come back here, and the caller
  writes the files: one writer, each file once.
* BLAS: workers started by a nanny get ``OMP_NUM_THREADS=1`` and its kin from Dask's own
  ``distributed.nanny.pre-spawn-environ``; the first task in each worker process also holds its
  BLAS pools to one thread (one per task thread), for workers started without a nanny.
* Memory: the same nanny setting also sets ``MALLOC_TRIM_THRESHOLD_``, which makes glibc map
  every large array afresh (page faults on each touch: about 1.5x the CPU per ResNet-18 sample);
  the first task puts glibc's thresholds back (:func:`_keep_freed_memory`).
"""

from __future__ import annotations

import os

from irexec.batch.datasets import Sample
from irexec.batch.work import Job, Outcome, cores, limit_blas, run_sample
from irexec.diagnostics.diagnostic import Location
from irexec.errors import IRError

ENV = "IREXEC_SCHEDULER"
TIMEOUT_ENV = "IREXEC_CONNECT_TIMEOUT"
DEFAULT_TIMEOUT = 10.0
INSTALL_DASK = ("--scheduler needs Dask's distributed scheduler, which is not installed here; "
                "install it with: pip install 'dask[distributed]' (in a clone of irexec: "
                "pip install '.[dask]')")
# Dask's statistical profiler samples every worker thread's stack every 10 ms; on irexec's many
# short numpy calls it cost up to 40% of a ResNet-18 call on a worker (docs/scale.md).
WORKER_CONFIG = {"distributed.worker.profile.enabled": False}
WINDOW_PER_WORKER = 4  # tasks in flight per worker thread: enough to keep each busy
TASKS_PER_THREAD = 16  # a dataset is cut in about this many tasks per worker thread ...
MAX_CHUNK = 16  # ... of at most this many samples each


def connect_timeout() -> float:
    text = os.environ.get(TIMEOUT_ENV)
    try:
        value = float(text) if text else DEFAULT_TIMEOUT
    except ValueError:
        value = DEFAULT_TIMEOUT
    return value if value > 0 else DEFAULT_TIMEOUT


def connect(address: str, jobs: int | None = None):
    """(client, cluster): a client of the scheduler at ``address``, or of a new LocalCluster for
    ``"local"`` (``cluster`` is then to be closed by the caller; None otherwise). IRError in one
    line when Dask is missing or the scheduler cannot be reached in time."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise IRError.make("IR001", INSTALL_DASK) from None
    if address == "local":
        import logging

        import dask

        with dask.config.set(WORKER_CONFIG):
            cluster = LocalCluster(n_workers=jobs or cores(), threads_per_worker=1,
                                   processes=True, dashboard_address=None,
                                   silence_logs=logging.ERROR)
        return Client(cluster), cluster
    timeout = connect_timeout()
    try:
        return Client(address, timeout=timeout), None
    except (OSError, TimeoutError, ValueError, TypeError) as e:
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise IRError.make("IR001", f"cannot reach the Dask scheduler at '{address}' within "
                                    f"{timeout:g} s ({reason}); start one with 'dask scheduler' "
                                    f"and workers with 'dask worker {address}', or use "
                                    f"--scheduler local", Location(None)) from None


# --- on the workers ----------------------------------------------------------------------------

_prepared = False
# glibc's mallopt parameters, and the values given to a Dask worker (see _keep_freed_memory)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 32 << 20  # glibc's own upper bound for its moving threshold on 64 bits
TRIM_THRESHOLD = 64 << 20  # twice it, as glibc's moving rule keeps it


def _prepare_worker() -> None:
    """Once per worker process: BLAS held to one thread per task thread, and freed memory kept
    for the next sample (:func:`_keep_freed_memory`)."""
    global _prepared
    if _prepared:
        return
    _prepared = True
    _hold_blas()
    _keep_freed_memory()


def _hold_blas() -> None:
    """One BLAS thread per task: a Dask worker runs one task per thread, and its threads are
    what the cluster's operator gave it for this machine's cores (as Dask's own nanny sets
    OMP_NUM_THREADS=1). Through threadpoolctl when installed, else OpenBLAS's own setter."""
    limit_blas(1)


def _keep_freed_memory() -> bool:
    """Undo what Dask's nanny's ``MALLOC_TRIM_THRESHOLD_`` does to a numpy workload.

    The nanny starts each worker with ``MALLOC_TRIM_THRESHOLD_=65536`` (Dask's
    ``distributed.nanny.pre-spawn-environ``, to hand freed memory back to the system). Setting
    it also turns off glibc's moving mmap threshold, so every array above 128 KiB is mapped
    afresh and unmapped when freed: a ResNet-18 call then took 11,000 page faults and 45 ms of
    system time on a worker, against 800 and 4 ms in a local pool worker (about 1.5x the CPU
    per sample). So, where that variable is set, the thresholds are put where glibc's own rule
    would take them (arrays up to 32 MiB reused from the heap, at most 64 MiB of free heap kept
    before trimming). Whether they were set (glibc only)."""
    if not os.environ.get("MALLOC_TRIM_THRESHOLD_"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):  # no C library by that call (Windows): as is
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))


def _chunk_task(job: Job, samples: list[Sample]) -> list[Outcome]:
    _prepare_worker()
    return [run_sample(job, sample) for sample in samples]


def _sees(paths: list[tuple[str, int]]) -> bool:
    """Whether this worker sees these files with these sizes."""
    try:
        return all(os.path.getsize(p) == size for p, size in paths)
    except OSError:
        return False


def _finds_model(job: Job) -> bool:
    return job.source.found_here()


# --- on the client -----------------------------------------------------------------------------

def _everywhere(client, function, *args) -> bool:
    try:
        answers = client.run(function, *args)
    except Exception:  # noqa: BLE001  (a worker that cannot answer: assume it lacks the files)
        return False
    return bool(answers) and all(answers.values())


def prepare(client, job: Job, samples: list[Sample], image_options=None, compiled=None,
            ship: str = "auto") -> tuple[Job, list[Sample]]:
    """The job and samples as they are best sent to this cluster's workers (``ship``: "auto",
    "paths" or "arrays")."""
    if job.source.path and job.source.weights_path and \
            _everywhere(client, _finds_model, job.without_bytes()):
        job = job.without_bytes()
    files = [s for s in samples if s.kind != "arrays" and s.path]
    if ship == "arrays" or (ship == "auto" and files and not _everywhere(
            client, _sees, [(s.path, os.path.getsize(s.path)) for s in files])):
        samples = [s.as_arrays(image_options, compiled) if s.kind != "arrays" else s
                   for s in samples]
    return job, samples


def chunk_size(count: int, threads: int) -> int:
    """Samples per task: one for a short dataset (every sample its own task, for balance), up to
    MAX_CHUNK when there are many (each task costs the scheduler a round of messages)."""
    return max(1, min(MAX_CHUNK, count // max(1, threads * TASKS_PER_THREAD)))


def imap(client, job: Job, samples: list[Sample]):
    """(index, Outcome) as the cluster finishes them, a bounded number of tasks in flight, each
    task a run of consecutive samples."""
    from distributed import as_completed

    threads = sum(client.nthreads().values()) or 1
    window = max(2, WINDOW_PER_WORKER * threads)
    size = chunk_size(len(samples), threads)
    chunks = iter([list(range(i, min(i + size, len(samples))))
                   for i in range(0, len(samples), size)])
    job_future = client.scatter(job, broadcast=True, hash=False)
    chunk_of = {}

    def submit(indices):
        future = client.submit(_chunk_task, job_future, [samples[i] for i in indices],
                               pure=False, key=f"irexec-samples-{indices[0]}-{os.urandom(4).hex()}")
        chunk_of[future.key] = indices
        return future

    pending = as_completed([submit(c) for _, c in zip(range(window), chunks)], with_results=True,
                           raise_errors=False)
    try:
        for future, result in pending:
            indices = chunk_of.pop(future.key)
            if future.status == "error":  # KilledWorker after too many deaths, ...
                result = [_lost(samples[i], future) for i in indices]
            future.release()
            following = next(chunks, None)
            if following is not None:
                pending.add(submit(following))
            yield from zip(indices, result)
    finally:
        for future in list(getattr(pending, "futures", ())):
            future.cancel()
        job_future.release()


def _lost(sample: Sample, future) -> Outcome:
    try:
        e = future.exception()
        reason = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    except Exception as other:  # noqa: BLE001
        reason = type(other).__name__
    return Outcome(errors=list(IRError.make(
        "IR001", f"the cluster could not run this sample: {reason}",
        Location(sample.path or sample.name)).diagnostics))
