"""Element-wise layers with non-default attributes survive irexec's IR writer: read back by irexec
with the same attributes and results, and read and run by OpenVINO with the same results."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder


def _model():
    b = ModelBuilder("write_back")
    a = b.parameter("a", "i32", [2, 3])
    d = b.parameter("d", "i32", [3])
    f = b.parameter("f", "f32", [2, 3])
    b.result(b.op("Divide", a, d, name="div", m_pythondiv=False, auto_broadcast="numpy"),
             name="div")
    b.result(b.op("Round", f, version="opset5", name="round", mode="half_away_from_zero"),
             name="round")
    b.result(b.op("IsInf", f, version="opset10", name="isinf", detect_negative=False),
             name="isinf")
    b.result(b.op("Maximum", f, b.op("Floor", f, name="floor"), name="max",
                  auto_broadcast="none"), name="max")
    b.result(b.op("BitwiseRightShift", a, d, version="opset15", name="shr"), name="shr")
    return b.build()


INPUTS = {"a": np.array([[-7, 7, 9], [100, -100, 5]], np.int32),
          "d": np.array([2, 3, 1], np.int32),
          "f": np.array([[2.5, -2.5, np.inf], [-np.inf, 0.4, 1.5]], np.float32)}


def test_round_trip(tmp_path):
    model = _model()
    expected = irexec.compile_model(model)(INPUTS)
    path = tmp_path / "m.xml"
    irexec.save_model(model, path)
    text = path.read_text()
    assert 'm_pythondiv="false"' in text and 'mode="half_away_from_zero"' in text
    assert 'detect_negative="false"' in text and 'auto_broadcast="none"' in text
    again = irexec.read_model(path)
    got = irexec.compile_model(again)(INPUTS)
    assert list(got) == list(expected)
    for name in expected:
        np.testing.assert_array_equal(got[name], expected[name])
    assert expected["div"].tolist() == [[-3, 2, 9], [50, -33, 5]]
    assert expected["round"].tolist() == [[3, -3, np.inf], [-np.inf, 0, 2]]
    assert expected["isinf"].tolist() == [[False, False, True], [False, False, False]]


def test_openvino_runs_what_irexec_wrote(tmp_path):
    ov = pytest.importorskip("openvino")
    from tests.conformance.oracle import run_both

    path = tmp_path / "m.xml"
    irexec.save_model(_model(), path)
    ours, theirs = run_both(ov, path, INPUTS)
    for name in ours:
        np.testing.assert_array_equal(ours[name], theirs[name], err_msg=name)
