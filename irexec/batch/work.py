"""One job over many samples: what every worker receives once (``Job``), and what it does with
each sample (``run_sample``), wherever it runs (this process, a pool worker, a Dask worker).

A sample's outcome comes back as data (``Outcome``): its outputs, or the problems that stopped it
(the Diagnostics a sequential run would print), or for a comparison its per-layer summary. Output
files are written by the side that asked, never by the worker, so a worker killed mid-sample
leaves nothing behind and a rerun of its sample writes each file once.

Each sample starts from the model's initial state (a stateful model's variables are not carried
from one sample to the next: the samples may run anywhere, in any order).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from irexec import budget
from irexec.batch import datasets
from irexec.batch.datasets import ImageOptions, Sample
from irexec.diagnostics.diagnostic import Diagnostic, Location
from irexec.errors import IRError
from irexec.pickling import ModelSource
from irexec.runtime.inputs import make_inputs
from irexec.runtime.trace import DirectoryTrace

BLAS_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                  "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


@dataclass
class Job:
    """The model (as a recipe), how to compile it and how to make and read samples."""

    source: ModelSource
    config: dict | None = None
    seed: int = 0
    memory_budget: int | None = None  # bytes one tensor may take, in every worker
    image: ImageOptions = field(default_factory=ImageOptions)
    comparison: Any = None  # irexec.batch.comparison.Comparison for a dataset comparison
    trace: str | None = None  # a folder: each sample's layer outputs in trace/<stem>/
    trace_bodies: bool = False
    protected: Any = ()  # files no trace may replace (a safe_write.Guard)

    def compiled(self):
        """The compiled model, read and compiled within the job's memory budget (once here)."""
        with _limit(self):
            return self.source.compile(self.config, self.memory_budget)

    def without_bytes(self) -> Job:
        return dataclasses.replace(self, source=self.source.without_bytes())


@dataclass
class Outcome:
    """What became of one sample."""

    outputs: dict[str, np.ndarray] | None = None
    errors: list[Diagnostic] | None = None  # the problems that stopped it
    summary: Any = None  # a comparison's per-layer summary

    @property
    def ok(self) -> bool:
        return self.errors is None


def _limit(job: Job):
    return budget.limit(job.memory_budget) if job.memory_budget is not None \
        else contextlib.nullcontext()


def _name_the_sample(e: IRError, sample: Sample) -> list[Diagnostic]:
    """The model's diagnostics of a failed run, saying which sample's inputs they came from."""
    where = sample.path or sample.name
    if sample.path and sample.kind == "arrays" and sample.axis is not None:
        where = sample.name
    return [dataclasses.replace(d, message=f"{d.message} (inputs from '{where}')")
            if d.location.file != where else d for d in e.diagnostics]


def run_sample(job: Job, sample: Sample) -> Outcome:
    """Load, complete and run one sample (or compare it, for a comparison job)."""
    with _limit(job):
        compiled = job.compiled()
        try:
            given = datasets.load(sample, compiled, job.image)
        except IRError as e:  # the sample itself does not fit: it names its file already
            return Outcome(errors=list(e.diagnostics))
        except MemoryError:
            return Outcome(errors=[_out_of_memory(sample)])
        try:
            inputs = {**given, **make_inputs(compiled.model, given, job.seed)}
            if job.comparison is not None:
                return Outcome(summary=job.comparison.summarize(compiled, inputs, job))
            trace = None
            if job.trace is not None:
                trace = DirectoryTrace(os.path.join(job.trace, sample.stem), compiled.model,
                                       protected=job.protected)
            outputs = compiled(inputs, variables={}, trace=trace, trace_bodies=job.trace_bodies)
            return Outcome(outputs=outputs.by_name())
        except IRError as e:
            return Outcome(errors=_name_the_sample(e, sample))
        except MemoryError:
            return Outcome(errors=[_out_of_memory(sample)])


def _out_of_memory(sample: Sample) -> Diagnostic:
    return IRError.make("IR109", "not enough memory for this model and these inputs",
                        Location(sample.path or sample.name)).diagnostics[0]


def blas_environment(threads: int) -> dict[str, str]:
    """The variables that hold every BLAS and OpenMP pool a worker may start to ``threads``."""
    return {name: str(max(1, threads)) for name in BLAS_VARIABLES}


def limit_blas(threads: int) -> bool:
    """Hold this process's loaded BLAS and OpenMP pools to ``threads`` from now on (a forked
    worker: the variables of :func:`blas_environment` are read only when a library starts).
    Through threadpoolctl when installed, else OpenBLAS's own setter found by ctypes (numpy's
    wheels bundle OpenBLAS under a prefixed name). Whether a pool was found and set."""
    threads = max(1, threads)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        threadpool_limits = None
    if threadpool_limits is not None:
        threadpool_limits(limits=threads)
        return True
    found = False
    for library in _openblas_libraries():
        setter = _symbol(library, _OPENBLAS_SETTERS)
        if setter is not None:
            setter(threads)
            found = True
    return found


def blas_threads() -> int | None:
    """The thread count of this process's BLAS (the widest pool loaded), or None if none is
    found: for tests and reports."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        threadpool_info = None
    if threadpool_info is not None:
        counts = [p["num_threads"] for p in threadpool_info() if p.get("user_api") == "blas"]
        return max(counts) if counts else None
    counts = []
    for library in _openblas_libraries():
        getter = _symbol(library, _OPENBLAS_GETTERS)
        if getter is not None:
            counts.append(int(getter()))
    return max(counts) if counts else None


_OPENBLAS_SETTERS = ("openblas_set_num_threads", "scipy_openblas_set_num_threads64_",
                     "openblas_set_num_threads64_", "scipy_openblas_set_num_threads")
_OPENBLAS_GETTERS = ("openblas_get_num_threads", "scipy_openblas_get_num_threads64_",
                     "openblas_get_num_threads64_", "scipy_openblas_get_num_threads")


def _openblas_libraries() -> list:
    """The OpenBLAS libraries this process has loaded (Linux: from /proc/self/maps)."""
    import ctypes

    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split(None, 5)[5].strip() for line in f
                            if len(line.split(None, 5)) == 6
                            and "openblas" in os.path.basename(line.split(None, 5)[5]).lower()})
    except OSError:
        return []
    libraries = []
    for path in paths:
        try:
            libraries.append(ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 0)))
        except OSError:
            continue
    return libraries


def _symbol(library, names):
    for name in names:
        function = getattr(library, name, None)
        if function is not None:
            return function
    return None


def cores() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1
