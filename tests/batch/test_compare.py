"""``irexec compare MODEL --input-dir D``: per layer over a dataset, against a twin model
(``--against``) or OpenVINO; the worst errors equal those of a plain loop over the samples'
traces, ``--jobs 2`` gives the report of ``--jobs 1``, a bad sample is one line, the JSON report
and the plot are written."""

from __future__ import annotations

import json

import numpy as np
import pytest

import irexec
import irexec.batch
from irexec import numerics
from irexec.ir.element_type import ElementType
from tests.batch.models import conv_model, write_samples
from tests.cli.conftest import parse_errors, run_cli


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    return conv_model(folder), conv_model(folder, name="twin", f16_weights=True)


def _traces(path, sample):
    values = {}
    compiled = irexec.compile_model(path)
    compiled(dict(np.load(sample)),
             trace=lambda node, port, array: values.__setitem__(node.name, np.asarray(array)))
    return values


def test_against_a_twin_worst_errors_are_the_plain_loops(models, tmp_path):
    original, twin = models
    data = write_samples(tmp_path / "in", 4)
    report = tmp_path / "r.json"
    proc = run_cli("compare", twin, "--against", original, "--input-dir", data, "--report",
                   report, "-j", 2)
    assert "Traceback" not in proc.stderr
    found = {layer["layer"]: layer for layer in json.loads(report.read_text())["layers"]}
    worst: dict[str, float] = {}
    over: dict[str, int] = {}
    for sample in sorted(data.iterdir()):
        ours, theirs = _traces(twin, sample), _traces(original, sample)
        for name in ours:
            if name == "image":
                continue
            e = numerics.errors(ours[name], theirs[name], ElementType.f32)
            worst[name] = max(worst.get(name, 0.0), e.max_abs)
    assert set(found) == set(worst)
    for name, value in worst.items():
        assert found[name]["worst_abs"] == pytest.approx(value, rel=0, abs=0)
        assert found[name]["samples"] == 4
    assert found["conv0"]["samples_over_tolerance"] == 4  # f16-rounded weights: beyond f32's
    samples = json.loads(report.read_text())["samples"]
    assert [s["first_departing"]["layer"] for s in samples] == ["conv0"] * 4
    assert proc.returncode == 1  # the samples depart
    assert "s000.npz: first departing layer 'conv0' (Convolution)" in proc.stdout
    one = run_cli("compare", twin, "--against", original, "--input-dir", data, "--report",
                  tmp_path / "r1.json", "-j", 1)
    assert json.loads((tmp_path / "r1.json").read_text())["layers"] == \
        json.loads(report.read_text())["layers"]
    assert one.stdout.splitlines()[1:-1] == proc.stdout.splitlines()[1:-1]


def test_a_model_against_itself_agrees(models, tmp_path):
    original, _ = models
    data = write_samples(tmp_path / "in", 3)
    got = list(irexec.batch.compare(original, str(data), jobs=1, against=original))
    assert [name for name, _ in got] == ["s000.npz", "s001.npz", "s002.npz"]
    assert all(s.agrees for _, s in got)
    assert all(layer.verdict == "bit-exact" for _, s in got for layer in s.layers)


def test_against_openvino_and_a_bad_sample(models, tmp_path):
    pytest.importorskip("openvino")
    original, _ = models
    data = write_samples(tmp_path / "in", 3)
    np.savez(data / "s001b.npz", image=np.zeros([2, 2], np.float32))
    proc = run_cli("compare", original, "--input-dir", data, "--report", tmp_path / "r.json",
                   "-j", 2)
    assert proc.returncode == 1
    assert [e["file"] for e in parse_errors(proc)] == [str(data / "s001b.npz")]
    result = json.loads((tmp_path / "r.json").read_text())
    assert [s["sample"] for s in result["samples"]] == \
        ["s000.npz", "s001.npz", "s001b.npz", "s002.npz"]
    assert "error" in result["samples"][2]
    assert all(s["first_departing"] is None for i, s in enumerate(result["samples"]) if i != 2)
    assert {layer["layer"] for layer in result["layers"]} == \
        {"conv0", "relu0", "conv1", "relu1", "conv2", "relu2", "score"}
    assert "3 of 4 samples agree; 1 could not be compared" in proc.stdout


def test_plot_is_a_png(models, tmp_path):
    pytest.importorskip("matplotlib")
    original, twin = models
    data = write_samples(tmp_path / "in", 2)
    proc = run_cli("compare", twin, "--against", original, "--input-dir", data, "--plot",
                   tmp_path / "p.png", "-j", 1)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_dataset_options_need_input_dir(models):
    original, twin = models
    for extra in (["--report", "r.json"], ["--jobs", "2"]):
        proc = run_cli("compare", original, *extra)
        assert proc.returncode == 2 and "needs --input-dir" in proc.stderr


def test_a_model_object_is_compared_from_its_bytes(models, tmp_path):
    """A Model (not a path) goes to the workers as IR bytes; OpenVINO reads those bytes."""
    pytest.importorskip("openvino")
    original, _ = models
    data = write_samples(tmp_path / "in", 2)
    got = list(irexec.batch.compare(irexec.read_model(original), str(data), jobs=2))
    assert [name for name, _ in got] == ["s000.npz", "s001.npz"]
    assert all(s.agrees and s.layers[0].key == "conv0" and s.layers[0].verdict != "DIFFERS"
               for _, s in got)


def test_against_on_one_input_and_default_jobs(models, tmp_path):
    """--against without --input-dir compares the --input/--seed inputs; without --jobs the
    dataset runs on the default workers."""
    original, twin = models
    proc = run_cli("compare", twin, "--against", original, "--seed", "3")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "over 1 sample of inputs generated from seed 3" in proc.stdout.splitlines()[0]
    assert "inputs: first departing layer 'conv0' (Convolution)" in proc.stdout
    same = run_cli("compare", original, "--against", original, "--input-dir",
                   write_samples(tmp_path / "in", 2))
    assert same.returncode == 0, same.stderr
    assert same.stdout.splitlines()[-1] == "2 of 2 samples agree"


@pytest.mark.parametrize("dataset", [False, True])
def test_a_missing_against_model_is_one_error_line(tmp_path, dataset):
    """--against a file that is not there: exit 1 and one line naming it (it was an internal
    error from hashing the absent file)."""
    model = conv_model(tmp_path)
    extra = ["--input-dir", write_samples(tmp_path / "in", 2)] if dataset else []
    proc = run_cli("compare", model, "--against", tmp_path / "absent.xml", *extra)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "absent.xml" in lines[0] and lines[0].startswith("error: ")
