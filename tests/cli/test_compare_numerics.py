"""``irexec compare`` and the numeric contract: tolerances from the one table (or exact, or given
per layer), relative and ULP errors per layer, and --precise against irexec's precise mode."""

from __future__ import annotations

import builtins

import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder
from tests.cli.conftest import run_cli
from tests.cli.inproc import irexec_cli


def rows(out: str) -> dict[str, list[str]]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:4] == ["layer", "type",
                                                                           "output", "result"])
    header = lines[start]
    cols = [header.index(h) for h in ("layer", "type", "output", "result", "max abs diff",
                                      "differing", "max rel diff", "ulps", "note")]
    table = {}
    for line in lines[start + 1:]:
        if not line.startswith("  "):
            break
        cells = [line[a:b].strip() for a, b in zip(cols, cols[1:] + [None])]
        table[cells[0]] = cells[1:]
    return table


@pytest.fixture
def model_path(tmp_path):
    b = ModelBuilder()
    x = b.parameter("x", "f32", [4, 8])
    y = b.op("Sigmoid", x, name="sig")
    b.result(b.op("Relu", y, name="relu"), "out")
    path = tmp_path / "m.xml"
    irexec.save_model(b.build(), path)
    return path


def _nudge_f32(monkeypatch, ulps=1):
    """Sigmoid's f32 result moved up by ``ulps`` units in the last place at element 3."""
    from irexec.ops.activation.unary import OPS

    op = OPS["Sigmoid"]
    original = op.kernel

    def nudged(x):
        out = np.array(original(x))
        if out.dtype == np.float32:
            flat = out.reshape(-1)
            for _ in range(ulps):
                flat[3] = np.nextafter(flat[3], np.float32(2))
        return out
    monkeypatch.setattr(op, "kernel", staticmethod(nudged))


def test_table_tolerance_accepts_what_exact_refuses(monkeypatch, model_path):
    pytest.importorskip("openvino")
    _nudge_f32(monkeypatch, ulps=3)
    code, out, _ = irexec_cli("compare", model_path)
    row = rows(out)["sig"]
    assert code == 0 and row[2] in ("close", "bit-exact") and "the table" in out
    code, out, _ = irexec_cli("compare", model_path, "--tolerance", "exact")
    row = rows(out)["sig"]
    assert code == 1 and row[2] == "DIFFERS"
    assert f"first diverging layer: 'sig' (Sigmoid) at {model_path}:" in out
    code, out, _ = irexec_cli("compare", model_path, "--tolerance", "exact", "--rtol", "sig=1e-5",
                              "--rtol", "relu=1e-5")
    assert code == 0 and rows(out)["sig"][2] == "close" and "rtol 1e-05 for sig" in out


def test_a_layer_fed_by_a_close_layer_inherits_its_tolerance(monkeypatch, model_path):
    """Relu is exact, but OpenVINO's Relu sees OpenVINO's Sigmoid: in table mode it may differ
    as much as its input does; in exact mode it may not."""
    pytest.importorskip("openvino")
    _nudge_f32(monkeypatch, ulps=3)
    code, out, _ = irexec_cli("compare", model_path)
    assert code == 0 and rows(out)["relu"][2] in ("close", "bit-exact")
    code, out, _ = irexec_cli("compare", model_path, "--tolerance", "exact", "--rtol", "sig=1e-5")
    assert code == 1 and "first diverging layer: 'relu' (Relu)" in out


def test_far_off_values_fail_the_table(monkeypatch, model_path):
    pytest.importorskip("openvino")
    _nudge_f32(monkeypatch, ulps=4000)
    code, out, _ = irexec_cli("compare", model_path)
    assert code == 1 and rows(out)["sig"][2] == "DIFFERS"
    last = out.splitlines()[-1]
    assert "max rel diff" in last and "ulps" in last


def test_precise_needs_no_openvino_and_reports_ulps(monkeypatch, model_path):
    real_import = builtins.__import__

    def no_openvino(name, *args, **kwargs):
        if name == "openvino" or name.startswith("openvino."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_openvino)
    code, out, err = irexec_cli("compare", model_path, "--precise")
    assert code == 0, out + err
    assert "precise mode" in out.splitlines()[0]
    # f32 default against f64 rounded once: within a few ulps, reported per layer
    sig = rows(out)["sig"]
    assert sig[2] in ("bit-exact", "close")
    if sig[2] == "close":
        assert 0 < float(sig[6]) <= 4
    _nudge_f32(monkeypatch, ulps=4000)  # precise mode runs the kernel on f64: not nudged
    code, out, _ = irexec_cli("compare", model_path, "--precise")
    sig = rows(out)["sig"]
    assert code == 1 and sig[2] == "DIFFERS" and float(sig[6]) >= 2000


@pytest.mark.parametrize("flag", ["--rtol=nope=1", "--rtol=sig=-1", "--atol=sig=x",
                                  "--tolerance=loose"])
def test_bad_tolerance_options_are_usage_errors(flag, model_path):
    proc = run_cli("compare", model_path, flag)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_data_movement_after_a_close_layer_carries_its_difference(monkeypatch, tmp_path):
    """A Reshape (exact) fed by a Sigmoid that differs from OpenVINO's by a few ulps differs as
    much: close, not "data movement must be bit-exact" (a converted ResNet's flatten after its
    pooling was reported so). Fed by bit-exact inputs it must still be bit-exact."""
    pytest.importorskip("openvino")
    b = ModelBuilder()
    x = b.parameter("x", "f32", [4, 8])
    y = b.op("Sigmoid", x, name="sig")
    flat = b.op("Reshape", y, b.constant(np.array([32], np.int64)), special_zero=False,
                name="flat")
    b.result(flat, "out")
    path = tmp_path / "m.xml"
    irexec.save_model(b.build(), path)
    _nudge_f32(monkeypatch, ulps=3)
    code, out, _ = irexec_cli("compare", path)
    assert code == 0 and rows(out)["flat"][2] in ("close", "bit-exact"), out
    assert "data movement must be bit-exact" not in out


def test_data_movement_on_agreeing_inputs_must_be_bit_exact():
    from irexec.cli.compare import LayerResult, Tolerances, judge
    from irexec.ops.shape.reshape import Reshape

    class Node:
        op, name, type = Reshape, "flat", "Reshape"
    a = np.array([0.5, 0.25], np.float32)
    b = np.array([0.5, np.nextafter(np.float32(0.25), np.float32(1))], np.float32)
    r = LayerResult(Node(), 0, a, b)
    judge(r, Tolerances())
    assert r.verdict == "DIFFERS"
