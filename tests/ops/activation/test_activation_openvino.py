"""Conformance of the activations against OpenVINO's CPU plugin: one model per element type
holding every activation, written by irexec, run in both, compared within the tolerance table
(irexec/numerics.py); Relu and Clamp bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec import numerics
from irexec.ir import element_type as et_table
from irexec.builder import ModelBuilder
from tests.conformance.oracle import run_openvino
from tests.ops.activation.cases import CASES
from tests.helpers_ir import op_family

ov = pytest.importorskip("openvino")

SHAPE = (2, 3, 40)
TYPES = ["f32", "f16", "bf16", "f64"]


def _data(type_name: str) -> np.ndarray:
    rng = np.random.default_rng(7)
    x = rng.uniform(-6, 6, size=SHAPE)
    x.reshape(-1)[:8] = [0.0, -0.0, 1.0, -1.0, 0.5, 20.0, -20.0, 3.0]
    return x.astype(np.float32).astype(et_table.from_name(type_name).dtype)


def _model(type_name: str, path):
    dtype = et_table.from_name(type_name).dtype
    b = ModelBuilder("activations")
    x = b.parameter("x", type_name, list(SHAPE))
    for name, (op, version, attrs, params, _) in CASES.items():
        inputs = [b.constant(np.asarray(p, dtype=np.float32).astype(dtype)) for p in params]
        b.result(b.op(op, x, *inputs, version=version, name=name, **attrs))
    irexec.save_model(b.build(), path)


@pytest.mark.parametrize("type_name", TYPES)
def test_activations_agree_with_openvino(type_name, tmp_path):
    xml = tmp_path / "m.xml"
    _model(type_name, xml)
    x = _data(type_name)
    ours = irexec.compile_model(irexec.read_model(xml))({"x": x})
    theirs = run_openvino(ov, xml, {"x": x}, list(ours))
    et = et_table.from_name(type_name)
    failures = []
    for name, (op, *_rest) in CASES.items():
        a, b = ours[name], theirs[name]
        assert a.dtype == b.dtype and a.shape == b.shape, name
        tol = numerics.tolerance(op_family(op), et)
        magnitude = 1.0 if op_family(op) == numerics.ACCUMULATING else None
        bad = tol.outside(a, b, magnitude)
        if bad.any():
            e = numerics.errors(a, b, et)
            i = int(np.argmax(bad.reshape(-1)))
            failures.append(f"{name}: {int(bad.sum())} outside; max abs {e.max_abs:.3g} ulps "
                            f"{e.max_ulps:.3g}; x={x.reshape(-1)[i]} ours={a.reshape(-1)[i]} "
                            f"theirs={b.reshape(-1)[i]}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("type_name", ["i8", "u8", "i32", "i64"])
def test_integer_relu_clamp_prelu_are_bit_exact_with_openvino(type_name, tmp_path):
    """Values within 2**24: OpenVINO's CPU computes i32 Relu through f32 (facts)."""
    from tests.conformance.oracle import same_bits

    dtype = et_table.from_name(type_name).dtype
    b = ModelBuilder("integers")
    x = b.parameter("x", type_name, [2, 3, 8])
    b.result(b.op("Relu", x, name="relu"))
    b.result(b.op("Clamp", x, min=-2.5, max=7.5, name="clamp"))
    b.result(b.op("PRelu", x, b.constant(np.array([1, 2, 3], dtype)), name="prelu"))
    xml = tmp_path / "m.xml"
    irexec.save_model(b.build(), xml)
    rng = np.random.default_rng(3)
    low = 0 if dtype.kind == "u" else -40
    data = rng.integers(low, 40, (2, 3, 8)).astype(dtype)
    ours = irexec.compile_model(irexec.read_model(xml))({"x": data})
    theirs = run_openvino(ov, xml, {"x": data}, list(ours))
    for name in ours:
        assert same_bits(ours[name], theirs[name]), (name, ours[name], theirs[name])
