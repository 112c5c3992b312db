"""The local pool's two ways of starting a worker: forked from the irexec process once it has
compiled the model (Linux), or a fresh interpreter (spawn). Both give the outputs of a plain
sequential loop bit for bit and lose nothing when a worker is killed; a forked worker holds its
BLAS to its share of the cores; the choice between them follows the platform, the job and
IREXEC_WORKER_START."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import irexec
from irexec.batch import pool as pool_module
from irexec.batch.comparison import Comparison
from irexec.batch.datasets import folder_samples
from irexec.batch.pool import Pool, start_method
from irexec.batch.work import Job, Outcome, blas_threads, limit_blas
from irexec.errors import IRError, UsageError
from irexec.pickling import ModelSource
from tests.batch.models import conv_model, write_samples

ROOT = Path(__file__).resolve().parents[2]
STARTS = ["fork", "spawn"] if pool_module._can_fork() else ["spawn"]  # noqa: SLF001


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return conv_model(tmp_path_factory.mktemp("model"))


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return write_samples(tmp_path_factory.mktemp("in"), 10)


@pytest.fixture(scope="module")
def expected(model, data):
    """Each sample's output from a plain loop over compiled(x) in this process."""
    compiled = irexec.compile_model(model)
    return [compiled(dict(np.load(p)))["score"] for p in sorted(data.iterdir())]


@pytest.mark.parametrize("start", STARTS)
def test_workers_give_the_sequential_outputs_bit_for_bit(model, data, expected, start):
    pool = Pool(Job(ModelSource.of_file(model)), 2, start=start)
    assert pool.start_method == start
    got = dict(pool.imap(folder_samples(data)))
    assert sorted(got) == list(range(10))
    for index, want in enumerate(expected):
        assert got[index].ok and np.array_equal(got[index].outputs["score"], want)
        assert got[index].outputs["score"].tobytes() == want.tobytes()


@pytest.mark.parametrize("start", STARTS)
def test_a_killed_worker_loses_nothing(model, data, expected, start):
    pool = Pool(Job(ModelSource.of_file(model)), 2, start=start)
    got, killed = {}, []
    for index, outcome in pool.imap(folder_samples(data) * 3):
        got[index] = outcome
        if not killed and pool.busy_pids():
            killed.append(pool.busy_pids()[0])  # a worker holding samples, mid-run
            os.kill(killed[0], signal.SIGKILL)
    assert killed and pool.replaced >= 1
    assert sorted(got) == list(range(30))  # every sample, once
    for index, outcome in got.items():
        assert outcome.ok and np.array_equal(outcome.outputs["score"], expected[index % 10])


@pytest.mark.skipif("fork" not in STARTS, reason="no fork on this platform")
def test_a_forked_worker_holds_blas_to_its_share(monkeypatch):
    before = blas_threads()
    if before is None:
        pytest.skip("no BLAS library found in this process")
    limit_blas(2)  # the parent's pool wider than a worker's share (where the machine allows)
    parent = blas_threads()

    def report(job, sample):  # what each worker runs instead of a sample (inherited by fork)
        return Outcome(outputs={"threads": np.array(blas_threads()),
                                "pid": np.array(os.getpid())})

    monkeypatch.setattr(pool_module, "run_sample", report)
    monkeypatch.setattr(pool_module, "cores", lambda: 2)  # two workers: one thread each
    monkeypatch.setattr(Job, "compiled", lambda self: None)
    try:
        pool = Pool(Job(ModelSource("0" * 64, None)), 2, start="fork")
        got = [outcome.outputs for _, outcome in pool.imap(list(range(6)))]
        assert pool.threads == 1
        assert all(int(o["threads"]) == 1 for o in got)
        assert all(int(o["pid"]) != os.getpid() for o in got)  # they ran in the workers
        assert blas_threads() == parent  # the parent's own BLAS is left as it was
    finally:
        limit_blas(before)


def test_how_workers_start(model, monkeypatch):
    job = Job(ModelSource.of_file(model))
    monkeypatch.delenv(pool_module.START_ENV, raising=False)
    assert start_method(job) == STARTS[0]  # fork where the system has it
    monkeypatch.setenv(pool_module.START_ENV, "spawn")
    assert start_method(job) == "spawn"
    monkeypatch.setenv(pool_module.START_ENV, "fork")
    assert start_method(job) == STARTS[0]
    monkeypatch.setenv(pool_module.START_ENV, "threads")
    with pytest.raises(UsageError, match="IREXEC_WORKER_START"):
        start_method(job)
    monkeypatch.delenv(pool_module.START_ENV)
    # OpenVINO's thread pools are not safe to fork: an OpenVINO comparison spawns
    assert start_method(Job(job.source, comparison=Comparison("openvino"))) == "spawn"
    assert start_method(Job(job.source, comparison=Comparison("against", job.source))) == \
        STARTS[0]
    monkeypatch.setattr(pool_module, "_can_fork", lambda: False)  # macOS, Windows
    assert start_method(job) == "spawn"
    monkeypatch.setenv(pool_module.START_ENV, "fork")
    assert start_method(job) == "spawn"


@pytest.mark.skipif("fork" not in STARTS, reason="no fork on this platform")
def test_a_model_that_does_not_compile_is_raised_before_forking(tmp_path):
    from irexec.builder import ModelBuilder

    b = ModelBuilder("big")
    b.result(b.op("Relu", b.parameter("x", "f32", [1, 64, 64]), name="relu"), "y")
    path = tmp_path / "big.xml"
    irexec.save_model(b.build(), path)
    pool = Pool(Job(ModelSource.of_file(path), memory_budget=1024), 2, start="fork")
    with pytest.raises(IRError) as caught:
        list(pool.imap([{"x": np.zeros([1, 64, 64], np.float32)}] * 2))
    assert caught.value.code == "IR109"
    assert pool.workers == []  # none was started


def test_blas_is_held_without_threadpoolctl(monkeypatch):
    """OpenBLAS's own setter, found by ctypes, when threadpoolctl is not installed."""
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # its import now fails
    before = blas_threads()
    if before is None:
        pytest.skip("no OpenBLAS found in this process")
    try:
        assert limit_blas(1) and blas_threads() == 1
        limit_blas(before)
        assert blas_threads() == before
    finally:
        limit_blas(before)


FAULTS = """
import resource, sys
import numpy as np
from irexec.batch.dask_runner import _keep_freed_memory

def faults():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(50):
        a = np.ones(1 << 18, np.float32)  # 1 MiB, every page written
        del a
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

faults()
without = faults()
kept = _keep_freed_memory()
faults()
print(without, faults(), kept)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_a_dask_worker_keeps_freed_memory_for_the_next_array(tmp_path):
    """Dask's nanny sets MALLOC_TRIM_THRESHOLD_, which makes glibc map and unmap every large
    array afresh (page faults on every touch); a worker's first task puts the thresholds back
    where glibc's own rule would take them: a freed 1 MiB array is then reused, not faulted in
    again."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    got = subprocess.run([sys.executable, "-c", FAULTS], capture_output=True, text=True,
                         env={**env, "MALLOC_TRIM_THRESHOLD_": "65536"}, timeout=120)
    without, with_, kept = got.stdout.split()
    assert kept == "True", got.stderr
    assert int(without) >= 50 * 200  # 256 pages of 4 KiB each time
    assert int(with_) < int(without) // 10
    plain = subprocess.run([sys.executable, "-c", FAULTS], capture_output=True, text=True,
                           env={k: v for k, v in env.items() if k != "MALLOC_TRIM_THRESHOLD_"},
                           timeout=120)
    assert plain.stdout.split()[2] == "False"  # left alone where the variable is not set
