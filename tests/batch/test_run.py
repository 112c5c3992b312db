"""Datasets through ``irexec run --input-dir`` and ``irexec.batch.run``: worker processes give
the outputs of a sequential run bit for bit, in the same files; a killed worker loses nothing; an
interrupted run leaves only whole files and ``--resume`` finishes it; a bad sample is one line
while the rest complete; the dataset forms (.npy folder, one file along a batch axis, images)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import irexec
import irexec.batch
from irexec.batch import sink
from irexec.batch.datasets import folder_samples
from irexec.batch.runner import Place, in_order
from irexec.batch.work import Job
from irexec.errors import IRError
from irexec.pickling import ModelSource
from tests.batch.models import IMAGE_SHAPE, conv_model, write_samples
from tests.cli.conftest import parse_errors, run_cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return conv_model(tmp_path_factory.mktemp("model"))


@pytest.fixture(scope="module")
def expected(model):
    """Each sample's outputs from a plain loop over compiled(x), the independent reference."""
    compiled = irexec.compile_model(model)
    return lambda path: compiled({k: v for k, v in np.load(path).items()})


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _rows(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines()[2:-1]]


def test_jobs_give_the_sequential_outputs_bit_for_bit(model, expected, tmp_path):
    data = write_samples(tmp_path / "in", 12)
    one = run_cli("run", model, "--input-dir", data, "--output-dir", tmp_path / "o1", "--jobs", 1)
    two = run_cli("run", model, "--input-dir", data, "--output-dir", tmp_path / "o2", "--jobs", 2)
    assert one.returncode == two.returncode == 0, two.stderr
    assert "in this process" in one.stdout.splitlines()[0]
    assert "on 2 worker processes" in two.stdout.splitlines()[0]
    assert _rows(one.stdout) == _rows(two.stdout)  # the same CRCs, in sorted order
    assert [r.split()[0] for r in _rows(two.stdout)] == [f"s{i:03d}.npz" for i in range(12)]
    assert _files(tmp_path / "o1") == _files(tmp_path / "o2")  # the same bytes, same names
    for path in sorted(data.iterdir()):
        with np.load(tmp_path / "o2" / path.name) as saved:
            assert np.array_equal(saved["score"], expected(path)["score"])


def test_a_bad_sample_is_one_line_and_the_rest_complete(model, tmp_path):
    data = write_samples(tmp_path / "in", 6)
    np.savez(data / "s002b.npz", image=np.zeros([1, 3, 5, 5], np.float32))  # wrong shape
    (data / "s004b.npz").write_bytes(b"not a zip")
    proc = run_cli("run", model, "--input-dir", data, "--output-dir", tmp_path / "out",
                   "--jobs", 2)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert [e["file"] for e in parse_errors(proc)] == [str(data / "s002b.npz"),
                                                       str(data / "s004b.npz")]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == \
        [f"s{i:03d}.npz" for i in range(6)]
    assert "2 failed (s002b.npz, s004b.npz" in proc.stdout.splitlines()[-1]
    fast = run_cli("run", model, "--input-dir", data, "--output-dir", tmp_path / "fast",
                   "--jobs", 2, "--fail-fast")
    assert fast.returncode == 1 and len(fast.stderr.splitlines()) == 1  # said once
    assert sorted(p.name for p in (tmp_path / "fast").iterdir()) == \
        ["s000.npz", "s001.npz", "s002.npz"]  # the samples before the bad one, no other


def _outcomes_killing_one_worker(job, samples):
    place = Place(jobs=2)
    outcomes, killed, pool = {}, [], None
    for index, outcome in place.outcomes(job, samples):
        outcomes[index] = outcome
        if not killed and place.pool is not None and place.pool.busy_pids():
            killed.append(place.pool.busy_pids()[0])  # a worker holding samples, mid-run
            os.kill(killed[0], signal.SIGKILL)
            pool = place.pool
    return outcomes, killed, pool


def test_a_killed_worker_loses_nothing(model, expected, tmp_path):
    data = write_samples(tmp_path / "in", 24)
    samples = folder_samples(data)
    job = Job(ModelSource.of_file(model))
    outcomes, killed, pool = _outcomes_killing_one_worker(job, samples)
    assert killed and pool.replaced >= 1
    assert sorted(outcomes) == list(range(24))  # every sample once
    for index, sample in enumerate(samples):
        assert outcomes[index].ok
        assert np.array_equal(outcomes[index].outputs["score"],
                              expected(sample.path)["score"])


def test_interrupted_then_resumed(model, expected, tmp_path):
    """SIGTERM part-way: only whole output files, no temporaries; --resume does the rest."""
    data = write_samples(tmp_path / "in", 60)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "irexec", "run", str(model), "--input-dir", str(data),
               "--output-dir", str(out), "--jobs", "2"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and \
            len([p for p in out.glob("s*.npz")] if out.exists() else []) < 3:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    left = sorted(out.iterdir())
    assert all(p.name.startswith("s") and p.suffix == ".npz" for p in left)  # no temporaries
    assert all(sink.is_whole(str(p), ["score"]) for p in left)
    assert len(left) < 60
    again = run_cli("run", model, "--input-dir", data, "--output-dir", out, "--jobs", 2,
                    "--resume")
    assert again.returncode == 0, again.stderr
    assert f"{len(left)} kept from before (--resume)" in again.stdout.splitlines()[-1]
    assert sorted(p.name for p in out.iterdir()) == [f"s{i:03d}.npz" for i in range(60)]
    for path in sorted(data.iterdir()):
        with np.load(out / path.name) as saved:
            assert np.array_equal(saved["score"], expected(path)["score"])


def test_resume_redoes_a_broken_file(model, tmp_path):
    data = write_samples(tmp_path / "in", 3)
    out = tmp_path / "out"
    assert run_cli("run", model, "--input-dir", data, "--output-dir", out, "-j", 1).returncode == 0
    whole = (out / "s000.npz").read_bytes()
    (out / "s001.npz").write_bytes(whole[:40])  # cut short
    (out / "s002.npz").unlink()
    again = run_cli("run", model, "--input-dir", data, "--output-dir", out, "-j", 1, "--resume")
    assert again.returncode == 0
    assert "ran 2 files; 1 kept from before" in again.stdout
    assert sink.is_whole(str(out / "s001.npz"), ["score"])


def test_python_api_yields_results_in_order(model, expected, tmp_path):
    data = write_samples(tmp_path / "in", 5)
    arrays = [dict(np.load(p)) for p in sorted(data.iterdir())]
    for jobs in (1, 2):
        got = list(irexec.batch.run(model, arrays, jobs=jobs))
        assert len(got) == 5
        for results, path in zip(got, sorted(data.iterdir())):
            assert np.array_equal(results[0], expected(path)["score"])  # OpenVINO's results
            assert np.array_equal(results["score"], results[0])
    folder = list(irexec.batch.run(irexec.read_model(model), str(data), jobs=2))
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(folder, got))


def test_python_api_raises_the_failed_samples_error(model):
    bad = [np.zeros(IMAGE_SHAPE, np.float32), np.zeros([2, 2], np.float32)]
    results = irexec.batch.run(model, bad, jobs=1)
    next(results)
    with pytest.raises(IRError, match="shape"):
        next(results)


def test_memory_budget_holds_in_every_worker(model, tmp_path):
    data = write_samples(tmp_path / "in", 2)
    for jobs in (2, 1, 2):  # in this process too, and after a run without the budget
        with pytest.raises(IRError) as caught:  # the 12 KiB input fits, a 64 KiB activation not
            list(irexec.batch.run(model, str(data), jobs=jobs, memory_budget=32 << 10))
        assert caught.value.code == "IR109" and "memory budget" in str(caught.value)
        assert len(list(irexec.batch.run(model, str(data), jobs=jobs))) == 2


def test_npy_folder_and_batch_file(model, expected, tmp_path):
    data = write_samples(tmp_path / "npy", 4, suffix=".npy")
    stacked = np.concatenate([np.load(p) for p in sorted(data.iterdir())], axis=0)
    np.save(tmp_path / "all.npy", stacked)
    compiled = irexec.compile_model(model)
    a = run_cli("run", model, "--input-dir", data, "--output-dir", tmp_path / "a", "-j", 2)
    b = run_cli("run", model, "--input-dir", tmp_path / "all.npy", "--batch-axis", 0,
                "--output-dir", tmp_path / "b", "-j", 2)
    assert a.returncode == b.returncode == 0, a.stderr + b.stderr
    assert [r.split()[0] for r in _rows(b.stdout)] == [f"all.npy[{i}]" for i in range(4)]
    for i, path in enumerate(sorted(data.iterdir())):
        want = compiled({"image": np.load(path)})["score"]
        with np.load(tmp_path / "a" / f"s{i:03d}.npz") as x, \
                np.load(tmp_path / "b" / f"all_{i}.npz") as y:
            assert np.array_equal(x["score"], want) and np.array_equal(y["score"], want)
    bad = run_cli("run", model, "--input-dir", tmp_path / "all.npy", "--batch-axis", 5)
    assert bad.returncode == 1 and len(bad.stderr.splitlines()) == 1 and "axis 5" in bad.stderr


def test_images_are_laid_out_resized_and_normalised(model, tmp_path):
    Image = pytest.importorskip("PIL.Image")
    folder = tmp_path / "img"
    folder.mkdir()
    rng = np.random.default_rng(1)
    pixels = [rng.integers(0, 256, (32, 32, 3), dtype=np.uint8),
              rng.integers(0, 256, (40, 50, 3), dtype=np.uint8)]
    Image.fromarray(pixels[0]).save(folder / "a.png")
    Image.fromarray(pixels[1]).save(folder / "b.png")
    (folder / "c.jpg").write_bytes(b"not an image")
    compiled = irexec.compile_model(model)
    mean, scale = (10.0, 20.0, 30.0), (2.0, 4.0, 8.0)
    proc = run_cli("run", model, "--input-dir", folder, "--output-dir", tmp_path / "out",
                   "--mean", "10,20,30", "--scale", "2,4,8", "-j", 2)
    assert proc.returncode == 1 and [e["file"] for e in parse_errors(proc)] == \
        [str(folder / "c.jpg")]
    resized = np.asarray(Image.fromarray(pixels[1]).resize((32, 32), Image.BILINEAR))
    for name, hwc in (("a", pixels[0]), ("b", resized)):
        x = ((hwc.astype(np.float32) - np.float32(mean)) / np.float32(scale))
        want = compiled({"image": x.transpose(2, 0, 1)[None]})["score"]
        with np.load(tmp_path / "out" / f"{name}.npz") as saved:
            assert np.array_equal(saved["score"], want)


def test_usage_errors(model, tmp_path):
    for extra in (["--jobs", "2"], ["--scheduler", "local"], ["--resume"]):
        proc = run_cli("run", model, *extra)
        assert proc.returncode == 2 and "needs" in proc.stderr
    proc = run_cli("run", model, "--input-dir", tmp_path, "--jobs", "0")
    assert proc.returncode == 2


def test_each_sample_starts_from_the_initial_state():
    path = ROOT / "tests" / "data" / "subgraphs" / "stateful.xml"
    compiled = irexec.compile_model(path)
    from irexec.runtime.inputs import make_inputs

    x = make_inputs(compiled.model, {}, 0)
    calls = [compiled(x) for _ in range(3)]  # one compiled model carries its state
    assert not all(np.array_equal(calls[0][0], c[0]) for c in calls[1:])
    for jobs in (1, 2):
        got = list(irexec.batch.run(str(path), [x, x, x], jobs=jobs))
        assert all(np.array_equal(r[0], calls[0][0]) for r in got)


def test_large_samples_and_results_do_not_stall_the_pipes(tmp_path):
    """Samples of 1 MiB sent as arrays while results of 1 MiB come back (no side waits for the
    other to read)."""
    from irexec.builder import ModelBuilder

    b = ModelBuilder("big")
    b.result(b.op("Relu", b.parameter("x", "f32", [1, 512, 512]), name="relu"), "y")
    rng = np.random.default_rng(3)
    batch = rng.standard_normal([8, 512, 512]).astype(np.float32)
    samples = [{"x": batch[i:i + 1]} for i in range(8)]
    got = list(irexec.batch.run(b.build(), samples, jobs=2))
    for i, results in enumerate(got):
        assert np.array_equal(results[0], np.maximum(batch[i:i + 1], 0))


def test_images_for_an_nhwc_input(tmp_path):
    """An input of 3 channels last is taken as NHWC; one --mean and --scale value serves every
    channel; a grey image is widened to RGB as Pillow converts it."""
    Image = pytest.importorskip("PIL.Image")
    from irexec.builder import ModelBuilder

    b = ModelBuilder("nhwc")
    x = b.parameter("pixels", "f32", [1, 8, 6, 3])
    b.result(b.op("Relu", x, name="same"), "same")
    model = tmp_path / "nhwc.xml"
    irexec.save_model(b.build(), model)
    folder = tmp_path / "img"
    folder.mkdir()
    rng = np.random.default_rng(5)
    rgb = rng.integers(0, 256, (8, 6, 3), dtype=np.uint8)
    grey = rng.integers(0, 256, (8, 6), dtype=np.uint8)
    Image.fromarray(rgb).save(folder / "a.png")
    Image.fromarray(grey).save(folder / "b.png")
    proc = run_cli("run", model, "--input-dir", folder, "--output-dir", tmp_path / "out",
                   "--mean", "100", "--scale", "2", "-j", 1)
    assert proc.returncode == 0, proc.stderr
    want_a = np.maximum((rgb.astype(np.float32) - 100) / 2, 0)[None]
    want_b = np.maximum((np.repeat(grey[..., None], 3, axis=2).astype(np.float32) - 100) / 2,
                        0)[None]
    with np.load(tmp_path / "out" / "a.npz") as a, np.load(tmp_path / "out" / "b.npz") as bb:
        assert np.array_equal(a["same"], want_a) and np.array_equal(bb["same"], want_b)
    wrong = run_cli("run", model, "--input-dir", folder, "--mean", "1,2", "-j", 1)
    assert wrong.returncode == 1 and "--mean gives 2 values for 3 channels" in wrong.stderr
