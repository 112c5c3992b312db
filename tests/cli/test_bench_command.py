"""``irexec bench MODEL``: timings of one model, a progress bar only on a terminal, clear errors.
(No test asserts a timing: only that each is reported.)"""

from __future__ import annotations

import re

import pytest

from tests.cli.conftest import SAMPLES, one_error, run_cli, run_on_terminal
from tests.cli.inproc import SAMPLE_MODELS, irexec_cli, sample_ids

CHAIN = SAMPLES / "convert_reverse_chain.xml"
LINES = ("model:", "read:", "compile:", "call:", "throughput:", "data:", "memory:")


@pytest.mark.parametrize("path", SAMPLE_MODELS, ids=sample_ids)
def test_bench_reports_every_line_on_every_sample(path):
    code, out, err = irexec_cli("bench", path, "--runs", "3", "--warmup", "1")
    assert (code, err) == (0, "")
    assert [line.split()[0] for line in out.splitlines()] == list(LINES)
    assert "(3 runs after 1 warm-up)" in out
    assert re.search(r"median [\d.]+ (s|ms|us), p90 [\d.]+ (s|ms|us), p99 [\d.]+ (s|ms|us), "
                     r"fastest", out)
    assert re.search(r"^throughput: [\d.]+(e\+\d+)? inferences/s", out, re.M)


def test_bench_with_a_given_input(tmp_path):
    import numpy as np

    np.save(tmp_path / "lengths.npy", np.array([5, 1, 0, 2], np.int64))
    code, out, err = irexec_cli("bench", CHAIN, "-i", f"seq_lengths={tmp_path / 'lengths.npy'}",
                                "-n", "1", "--warmup", "0")
    assert (code, err) == (0, "") and "(1 run after 0 warm-up)" in out


@pytest.mark.parametrize("args", [["--runs", "0"], ["--warmup", "-1"], ["--runs", "x"]])
def test_bench_usage_errors_exit_2(args):
    proc = run_cli("bench", CHAIN, *args)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_bench_bad_model_is_one_line(tmp_path):
    m = one_error(run_cli("bench", tmp_path / "missing.xml"), None, None, None, None,
                  "No such file")
    assert m["file"].endswith("missing.xml")


def test_bench_progress_bar_on_a_terminal_only():
    proc, text = run_on_terminal("bench", CHAIN, "-n", "4")
    assert proc.returncode == 0
    assert "\r[" in text and "6/6" in text and text.endswith("\r")
    piped = run_cli("bench", CHAIN, "-n", "4")
    assert piped.stderr == "" and piped.returncode == 0


def test_bench_precise_times_precise_mode(monkeypatch):
    """``--precise`` compiles the model in precise mode (float64), and says so."""
    import irexec.cli.bench as bench

    configs = []
    real = bench.compile_model

    def recording(model, config=None):
        configs.append(config)
        return real(model, config=config)

    monkeypatch.setattr(bench, "compile_model", recording)
    code, out, err = irexec_cli("bench", CHAIN, "--precise", "-n", "1", "--warmup", "0")
    assert (code, err) == (0, "")
    assert configs == [{"precision": "f64"}]
    assert re.search(r"^compile: .* \(precise mode\)$", out, re.M)
    code, out, err = irexec_cli("bench", CHAIN, "-n", "1", "--warmup", "0")
    assert configs == [{"precision": "f64"}, None] and "precise" not in out
