"""The benchmark suites keep working (tools/bench/): `python -m tools.bench` lists them and each
answers --help; the kernels and activation suites' quick modes run and print every case (timings
are never checked: they mean nothing at these sizes, and the machine is shared)."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tools.bench import kernels as bench  # noqa: E402


def test_quick_bench_prints_every_case(tmp_path):
    out_json = tmp_path / "bench.json"
    run = subprocess.run([sys.executable, "-m", "tools.bench", "kernels", "--quick",
                          "--json", str(out_json)],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    table = run.stdout
    for case in bench.KERNEL_CASES:
        assert f"| {case.name} |" in table
    for case in bench.RATIO_CASES:
        assert f"| {case.name} |" in table
    for case in bench.MOVE_CASES:
        assert f"| {case.name[len('move: '):]} |" in table
    assert "DIFFERENT from numpy" not in table
    for layers in (10, 100):
        assert f"| {layers} |" in table
    assert "irexec / memcpy: median" in table
    assert "| chain of 100 Reverse layers on" in table
    assert "GiB of unused weights" in table
    assert "| RandomUniform f32 [16,384] |" in table
    assert "| EmbeddingBagOffsets sum, 100 indices" in table
    assert "DIFFERENT from OpenVINO" not in table
    assert "| one-layer call [1,64]: `compiled(x)`" in table
    assert "| AsyncInferQueue(2) on" in table and "DIFFERENT results" not in table
    assert "| --jobs 2 |" in table and "fixed cost per sample" in table  # the batch case
    assert out_json.exists()


def _bench(*args, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tools.bench", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


def test_the_suites_are_listed_and_an_unknown_one_is_a_usage_error():
    from tools.bench.__main__ import SUITES

    run = _bench("nope")
    assert run.returncode == 2
    for suite in SUITES:
        assert f"    {suite}" in run.stderr


@pytest.mark.parametrize("suite", ["kernels", "compute", "elementwise", "activation", "models",
                                   "sequence"])
def test_each_suite_runs_from_the_one_entry(suite):
    run = _bench(suite, "--help", timeout=120)
    assert run.returncode == 0, run.stderr
    assert "usage:" in run.stdout


def test_quick_activation_bench_reports_every_case():
    run = _bench("activation", "--quick")
    assert run.returncode == 0, run.stderr
    for name in ("Relu", "Sigmoid", "Gelu tanh", "Swish"):
        assert f"  {name}" in run.stdout
    assert "precise mode on a CNN-like chain" in run.stdout


def test_models_nine_covers_the_whole_model_speed_issue():
    # the nine models of the issue, each either a zoo entry or built by the bench itself
    from tools import model_zoo
    from tools.bench import models

    assert [label for label, _, _ in models.NINE] == [
        "ResNet-18", "ResNet-50", "BERT tiny", "MobileNet-V2", "ViT tiny", "EfficientNet-B0",
        "GPT-2 tiny", "Swin-T", "Whisper tiny encoder"]
    zoo = {e.name for e in model_zoo.ZOO}
    for _, origin, name in models.NINE:
        assert (name in zoo) if origin == "zoo" else (name in models.BUILDERS)


def test_models_nine_refuses_a_name_it_does_not_measure(tmp_path, capsys):
    # a name of the zoo's smaller variants (or a typo) measured nothing before, silently
    from tools.bench import models

    with pytest.raises(SystemExit) as caught:
        models.main(["--nine", "--cache", str(tmp_path), "--only", "resnet18"])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert "'resnet18' is not one of the nine" in err and "resnet18_full" in err
    assert not any(tmp_path.iterdir())  # nothing built
