"""tools/bench.py --quick runs and prints every case (timings are never checked: they mean
nothing at these sizes, and the machine is shared)."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import bench  # noqa: E402


def test_quick_bench_prints_every_case(tmp_path):
    out_json = tmp_path / "bench.json"
    run = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "bench.py"), "--quick",
                          "--json", str(out_json)],
                         capture_output=True, text=True, timeout=600)
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
