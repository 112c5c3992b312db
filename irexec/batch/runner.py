"""Where the samples of a job run: here one after another, in a local pool of worker processes,
or on a Dask cluster; in every case the outcomes are handed back in sample order.

The three places run the same function on the same recipe (irexec/batch/work.py), so their
outputs are the same bit for bit; only where and when differ.
"""

from __future__ import annotations

import os

from irexec.batch import pool as local_pool
from irexec.batch.datasets import Sample, folder_samples, given_samples
from irexec.batch.work import Job, Outcome, cores, run_sample
from irexec.pickling import ModelSource


class Place:
    """Where to run: ``jobs`` worker processes here (1: in this process), or a Dask ``client``
    (or a scheduler ``address``, "local" for a LocalCluster of ``jobs`` workers)."""

    def __init__(self, jobs: int | None = None, client=None, address: str | None = None,
                 ship: str = "auto"):
        self.jobs = jobs if jobs is not None else cores()
        self.client, self.address, self.ship = client, address, ship
        self._cluster = None
        self._opened = False  # whether the client is ours to close
        self.pool: local_pool.Pool | None = None  # the running pool, for tests and progress

    @property
    def distributed(self) -> bool:
        return self.client is not None or self.address is not None

    def describe(self) -> str:
        if self.distributed:
            workers = len(self.client.nthreads()) if self.client is not None else 0
            where = "a local Dask cluster" if self.address == "local" else \
                f"the Dask scheduler at {self.client.scheduler.address}"
            return f"on {workers} worker{'s' * (workers != 1)} of {where}"
        if self.jobs <= 1:
            return "in this process"
        return f"on {self.jobs} worker processes"

    def open(self) -> Place:
        if self.client is None and self.address is not None:
            from irexec.batch import dask_runner

            self.client, self._cluster = dask_runner.connect(self.address, self.jobs)
            self._opened = True
        return self

    def close(self) -> None:
        if self._opened:
            self.client.close()
            if self._cluster is not None:
                self._cluster.close()
            self.client = self._cluster = None
            self._opened = False

    def __enter__(self) -> Place:
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()

    def outcomes(self, job: Job, samples: list[Sample], compiled=None):
        """(index, Outcome) for every sample, as they finish (any order). ``compiled``: the
        job's model already compiled here (with its config, within its memory budget), used
        in this process and inherited by forked workers instead of compiling it again."""
        if not samples:
            return
        if self.distributed:
            from irexec.batch import dask_runner

            self.open()
            job, samples = dask_runner.prepare(self.client, job, samples, job.image, compiled,
                                               self.ship)
            yield from dask_runner.imap(self.client, job, samples)
        elif self.jobs <= 1 or len(samples) == 1:
            if compiled is not None:
                job.source.remember(compiled, job.config, job.memory_budget)
            for index, sample in enumerate(samples):
                yield index, run_sample(job, sample)
        else:
            if compiled is not None:  # forked workers inherit it
                job.source.remember(compiled, job.config, job.memory_budget)
            self.pool = local_pool.Pool(job, min(self.jobs, len(samples)))
            try:
                yield from self.pool.imap(samples)
            finally:
                self.pool = None


def in_order(pairs, first: int = 0):
    """(index, value) pairs arriving in any order, yielded in index order from ``first``."""
    waiting: dict[int, object] = {}
    following = first
    for index, value in pairs:
        waiting[index] = value
        while following in waiting:
            yield following, waiting.pop(following)
            following += 1


def compiled_and_source(model, config: dict | None = None):
    """(CompiledModel, ModelSource) for a path, a Model or a CompiledModel."""
    from irexec.api import compile_model, read_model
    from irexec.runtime.compiled_model import CompiledModel

    if isinstance(model, (str, os.PathLike)):
        compiled = compile_model(read_model(model), config=config)
        return compiled, ModelSource.of_file(model, with_bytes=True)
    if isinstance(model, CompiledModel):
        return model, ModelSource.of_model(model.model)
    return compile_model(model, config=config), ModelSource.of_model(model)


def samples_of(samples) -> list[Sample]:
    if isinstance(samples, (str, os.PathLike)):
        return folder_samples(samples)
    return given_samples(samples)


__all__ = ["Outcome", "Place", "compiled_and_source", "in_order", "samples_of"]
