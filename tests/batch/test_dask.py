"""The same jobs on a Dask cluster started in the test process (LocalCluster, two worker
processes of one thread each): results identical to a sequential run, a killed worker loses
nothing, samples sent as arrays when asked, a bad sample reported while the rest complete, the
workers' BLAS held to one thread, and an unreachable scheduler as one line."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

import irexec  # noqa: E402
import irexec.batch  # noqa: E402
from irexec.batch.datasets import folder_samples  # noqa: E402
from irexec.batch.runner import Place  # noqa: E402
from irexec.batch.work import Job  # noqa: E402
from irexec.pickling import ModelSource  # noqa: E402
from tests.batch.models import conv_model, write_samples  # noqa: E402
from tests.cli.conftest import parse_errors, run_cli  # noqa: E402
from tests.cli.inproc import irexec_cli  # noqa: E402


@pytest.fixture(scope="module")
def client():
    import logging

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.CRITICAL)
    with distributed.Client(cluster) as c:
        c.wait_for_workers(2, timeout=120)
        yield c
    cluster.close()


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return conv_model(tmp_path_factory.mktemp("model"))


def _sequential(model, samples):
    compiled = irexec.compile_model(model)
    return [compiled({k: v for k, v in np.load(s.path).items()}) for s in samples]


def test_identical_to_a_sequential_run(client, model, tmp_path):
    samples = folder_samples(write_samples(tmp_path / "in", 10))
    want = _sequential(model, samples)
    got = list(irexec.batch.run(model, samples, client=client))
    assert len(got) == 10
    for a, b in zip(got, want):
        assert np.ascontiguousarray(a[0]).tobytes() == np.ascontiguousarray(b[0]).tobytes()


def test_samples_as_arrays_when_asked(client, model, tmp_path):
    samples = folder_samples(write_samples(tmp_path / "in", 4))
    place = Place(client=client, ship="arrays")
    job = Job(ModelSource.of_file(model, with_bytes=True))
    outcomes = dict(place.outcomes(job, samples, irexec.compile_model(model)))
    for i, want in enumerate(_sequential(model, samples)):
        assert np.array_equal(outcomes[i].outputs["score"], want["score"])


def test_a_killed_worker_loses_nothing(client, model, tmp_path):
    samples = folder_samples(write_samples(tmp_path / "in", 40))
    want = _sequential(model, samples)
    pids = client.run(os.getpid)
    outcomes = {}
    job = Job(ModelSource.of_file(model, with_bytes=True))
    for index, outcome in Place(client=client).outcomes(job, samples):
        outcomes[index] = outcome
        if len(outcomes) == 3:
            os.kill(next(iter(pids.values())), signal.SIGKILL)  # mid-run
    assert sorted(outcomes) == list(range(40))
    for i in range(40):
        assert outcomes[i].ok, outcomes[i].errors
        assert np.array_equal(outcomes[i].outputs["score"], want[i]["score"])
    client.wait_for_workers(2, timeout=120)  # the nanny restarted it
    assert set(client.run(os.getpid).values()) != set(pids.values())


def test_workers_blas_is_one_thread(client, model, tmp_path):
    list(irexec.batch.run(model, str(write_samples(tmp_path / "in", 2)), client=client))

    def blas_threads():
        from threadpoolctl import threadpool_info

        return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]

    pytest.importorskip("threadpoolctl")
    for threads in client.run(blas_threads).values():
        assert threads and all(t == 1 for t in threads)


def test_cli_on_the_scheduler_bad_sample_and_the_rest(client, model, tmp_path):
    data = write_samples(tmp_path / "in", 5)
    np.savez(data / "s001b.npz", image=np.zeros([1, 3, 4, 4], np.float32))
    out = tmp_path / "out"
    code, stdout, stderr = irexec_cli("run", model, "--input-dir", data, "--output-dir", out,
                                      "--scheduler", client.scheduler.address)
    assert code == 1
    assert len(stderr.strip().splitlines()) == 1 and "s001b.npz" in stderr
    assert sorted(p.name for p in out.iterdir()) == [f"s{i:03d}.npz" for i in range(5)]
    assert "2 workers of the Dask scheduler" in stdout.splitlines()[0]
    seq = run_cli("run", model, "--input-dir", data, "--output-dir", tmp_path / "seq", "-j", 1)
    assert [line.split()[1:] for line in seq.stdout.splitlines()[2:-1]] == \
        [line.split()[1:] for line in stdout.splitlines()[2:-1]]
    for p in out.iterdir():
        assert p.read_bytes() == (tmp_path / "seq" / p.name).read_bytes()


def test_unreachable_scheduler_is_one_line(model, tmp_path):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    data = write_samples(tmp_path / "in", 1)
    os.environ["IREXEC_CONNECT_TIMEOUT"] = "2"
    try:
        started = time.monotonic()
        proc = run_cli("run", model, "--input-dir", data, "--scheduler", f"tcp://127.0.0.1:{port}")
        elapsed = time.monotonic() - started
    finally:
        del os.environ["IREXEC_CONNECT_TIMEOUT"]
    assert proc.returncode == 1, proc.stderr
    (error,) = proc.stderr.splitlines()  # one line, no traceback
    assert error.startswith("error: cannot reach the Dask scheduler at 'tcp://127.0.0.1:")
    assert "within 2 s" in error and "--scheduler local" in error
    assert elapsed < 60  # a guard against hanging, not a timing


def test_dataset_comparison_on_the_cluster(client, tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    original = conv_model(folder)
    twin = conv_model(folder, name="twin", f16_weights=True)
    data = str(write_samples(tmp_path / "in", 3))
    here = list(irexec.batch.compare(twin, data, jobs=1, against=original))
    there = list(irexec.batch.compare(twin, data, client=client, against=original))
    assert [n for n, _ in there] == [n for n, _ in here] == ["s000.npz", "s001.npz", "s002.npz"]
    for (_, a), (_, b) in zip(here, there):
        assert a.first.key == b.first.key == "conv0"
        assert [(x.key, x.verdict, x.max_abs, x.max_ulps) for x in a.layers] == \
            [(x.key, x.verdict, x.max_abs, x.max_ulps) for x in b.layers]


def test_the_scheduler_from_the_environment(client, model, tmp_path, monkeypatch):
    data = write_samples(tmp_path / "in", 2)
    monkeypatch.setenv("IREXEC_SCHEDULER", client.scheduler.address)
    code, stdout, _ = irexec_cli("run", model, "--input-dir", data)
    assert code == 0 and "of the Dask scheduler at" in stdout.splitlines()[0]
    code, stdout, _ = irexec_cli("run", model, "--input-dir", data, "--jobs", "1")
    assert code == 0 and "in this process" in stdout.splitlines()[0]  # --jobs: here


def test_scheduler_local_starts_a_cluster_for_the_run(model, tmp_path):
    data = write_samples(tmp_path / "in", 3)
    proc = run_cli("run", model, "--input-dir", data, "--output-dir", tmp_path / "out",
                   "--scheduler", "local", "--jobs", "2")
    assert proc.returncode == 0, proc.stderr
    assert "on 2 workers of a local Dask cluster" in proc.stdout.splitlines()[0]
    seq = run_cli("run", model, "--input-dir", data, "--output-dir", tmp_path / "seq", "-j", 1)
    for p in (tmp_path / "seq").iterdir():
        assert p.read_bytes() == (tmp_path / "out" / p.name).read_bytes()
