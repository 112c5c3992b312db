"""Select-1: the spec example, broadcasting by numpy/pdpd/none (OpenVINO's three-input rule),
types, zero-size, and OpenVINO conformance."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder

from ..elementwise_support import DTYPES, FLOAT_TYPES, INT_TYPES, ov_conformance


def _select(cond, then, other, **attrs):
    b = ModelBuilder()
    ports = [b.parameter(n, t, list(np.shape(v))) for n, t, v in (
        ("cond", "boolean", cond), ("then", _et(then), then), ("else", _et(other), other))]
    b.result(b.op("Select", *ports, name="select", **attrs), name="out")
    compiled = irexec.compile_model(b.build())
    (out,) = compiled({"cond": cond, "then": then, "else": other}).values()
    return out


def _et(a):
    from irexec.ir import element_type as et_table
    return et_table.from_dtype(np.asarray(a).dtype).name


def test_spec_example():
    cond = np.array([[False, False], [True, False], [True, True]])
    then = np.array([[-1, 0], [1, 2], [3, 4]], np.int32)
    other = np.array([[11, 10], [9, 8], [7, 6]], np.int32)
    assert _select(cond, then, other).tolist() == [[11, 10], [1, 8], [3, 4]]


def test_numpy_broadcasts_all_three():
    cond = np.array([True, False, True])
    then = np.arange(2, dtype=np.float32).reshape(2, 1, 1) + np.zeros((2, 1, 3), np.float32)
    other = np.float32(-1) * np.ones((1, 4, 1), np.float32)
    out = _select(cond, then, other)
    assert out.shape == (2, 4, 3)
    np.testing.assert_array_equal(out, np.where(cond, then, other))


def test_pdpd_output_has_then_shape():
    then = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    other = np.full((3, 1), -1, np.float32)
    cond = np.array([True, False, True, False])
    out = _select(cond, then, other, auto_broadcast="pdpd")
    assert out.shape == (2, 3, 4)
    np.testing.assert_array_equal(out, np.where(cond, then, other))


@pytest.mark.parametrize("mode, shapes", [
    ("pdpd", ([2], [2], [3, 2])),  # else may not be larger than then
    ("none", ([2], [2], [1])),
    ("numpy", ([3], [2], [2])),
])
def test_incompatible_shapes_are_ir307(mode, shapes):
    b = ModelBuilder()
    c = b.parameter("c", "boolean", shapes[0])
    t = b.parameter("t", "f32", shapes[1])
    e = b.parameter("e", "f32", shapes[2])
    b.result(b.op("Select", c, t, e, auto_broadcast=mode), name="out")
    with pytest.raises(irexec.IRError) as info:
        irexec.compile_model(b.build())
    assert info.value.code == "IR307"


def test_condition_must_be_boolean_and_branches_agree():
    for cond_type, else_type in (("i32", "f32"), ("boolean", "f16")):
        b = ModelBuilder()
        c = b.parameter("c", cond_type, [2])
        t = b.parameter("t", "f32", [2])
        e = b.parameter("e", else_type, [2])
        b.result(b.op("Select", c, t, e), name="out")
        with pytest.raises(irexec.IRError) as info:
            irexec.compile_model(b.build())
        assert info.value.code == "IR304"


def test_every_type_exact_and_zero_size():
    for t in FLOAT_TYPES + INT_TYPES + ["boolean"]:
        dt = DTYPES[t]
        then = np.array([1, 0, 1], np.int8).astype(dt)
        other = np.array([0, 1, 0], np.int8).astype(dt)
        out = _select(np.array([True, True, False]), then, other)
        assert out.dtype == np.dtype(dt) and out.astype(np.int8).tolist() == [1, 0, 0]
    out = _select(np.zeros((0, 2), bool), np.zeros(2, np.float32), np.zeros(2, np.float32))
    assert out.shape == (0, 2)


def test_nan_payloads_move_unchanged():
    then = np.array([0x7FC00123, 0xFFC00001], np.uint32).view(np.float32)
    other = np.zeros(2, np.float32)
    out = _select(np.array([True, True]), then, other)
    assert out.view(np.uint32).tolist() == [0x7FC00123, 0xFFC00001]


def test_openvino_conformance(tmp_path):
    """Every numeric type in one model, numpy broadcasting (the CPU plugin refuses boolean
    branches and pdpd broadcasting: docs/compatibility.md)."""
    ov = pytest.importorskip("openvino")
    import openvino.opset16 as ops

    rng = np.random.default_rng(9)
    inputs = {"cond": ("boolean", rng.integers(0, 2, (3, 4)).astype(bool)),
              "row": ("boolean", rng.integers(0, 2, 4).astype(bool))}
    types = FLOAT_TYPES + INT_TYPES
    for t in types:
        dt = DTYPES[t]
        inputs[f"{t}_then"] = (t, rng.integers(0, 100, (3, 4)).astype(dt))
        inputs[f"{t}_else"] = (t, rng.integers(0, 100, (3, 1)).astype(dt))

    def build(p):
        out = {}
        for t in types:
            out[f"{t}_numpy"] = ops.select(p["row"], p[f"{t}_then"], p[f"{t}_else"])
            out[f"{t}_full"] = ops.select(p["cond"], p[f"{t}_then"], p[f"{t}_else"])
        return out

    ours, theirs = ov_conformance(ov, tmp_path, inputs, build, tag="select")
    for name in theirs:
        assert ours[name].tolist() == theirs[name].tolist(), name
