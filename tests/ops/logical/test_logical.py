"""LogicalAnd/Or/Xor/Not: truth tables, broadcasting, boolean-only inputs, OpenVINO conformance."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder

from ..elementwise_support import ov_conformance, run_op

A = np.array([False, False, True, True])
B = np.array([False, True, False, True])


def test_truth_tables():
    assert run_op("LogicalAnd", A, B).tolist() == [False, False, False, True]
    assert run_op("LogicalOr", A, B).tolist() == [False, True, True, True]
    assert run_op("LogicalXor", A, B).tolist() == [False, True, True, False]
    assert run_op("LogicalNot", A).tolist() == [True, True, False, False]


def test_broadcast_scalar_and_zero_size():
    out = run_op("LogicalAnd", A.reshape(2, 2), np.array(True))
    assert out.tolist() == [[False, False], [True, True]]
    assert run_op("LogicalOr", np.zeros((0, 2), bool), np.array([True, False])).shape == (0, 2)
    out = run_op("LogicalXor", np.array([[True], [False]]), np.array([True, False]),
                 auto_broadcast="numpy")
    assert out.tolist() == [[False, True], [True, False]]


@pytest.mark.parametrize("op", ["LogicalAnd", "LogicalNot"])
def test_numbers_are_ir304(op):
    b = ModelBuilder()
    x = b.parameter("x", "i32", [2])
    b.result(b.op(op, *([x] * (1 if op == "LogicalNot" else 2))), name="out")
    with pytest.raises(irexec.IRError) as info:
        irexec.compile_model(b.build())
    assert info.value.code == "IR304"


def test_openvino_conformance(tmp_path):
    ov = pytest.importorskip("openvino")
    import openvino.opset16 as ops

    rng = np.random.default_rng(4)
    a = rng.integers(0, 2, (8, 6)).astype(bool)
    b = rng.integers(0, 2, (8, 6)).astype(bool)
    c = rng.integers(0, 2, (6,)).astype(bool)

    def build(p):
        return {"and": ops.logical_and(p["a"], p["b"]), "or": ops.logical_or(p["a"], p["b"]),
                "xor": ops.logical_xor(p["a"], p["b"]), "not": ops.logical_not(p["a"]),
                "and_bcast": ops.logical_and(p["a"], p["c"])}

    ours, theirs = ov_conformance(ov, tmp_path, {"a": ("boolean", a), "b": ("boolean", b),
                                                 "c": ("boolean", c)}, build, tag="logical")
    for name in theirs:
        assert ours[name].tolist() == theirs[name].tolist(), name


def test_xor_1_is_opset1s_logical_xor():
    a = np.array([[True, False], [True, False]])
    b = np.array([True, True])
    got = run_op("Xor", a, b, version="opset1")
    assert got.tolist() == [[False, True], [False, True]]
    from irexec.ops import registry
    assert registry.lookup("Xor", "opset1") is not None
    with pytest.raises(Exception):
        registry.lookup("Xor", "opset2")
