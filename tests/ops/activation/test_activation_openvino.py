"""Conformance of the activations against OpenVINO's CPU plugin: one model per element type
holding every activation, written by irexec, run in both, compared within the tolerance table
(irexec/numerics.py); Relu and Clamp bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec import numerics
from irexec.ir import element_type as et_table
from irexec.ir.builder import ModelBuilder
from tests.conformance.oracle import run_openvino
from tests.ops.activation.cases import CASES

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
        tol = numerics.tolerance(numerics.family(op), et)
        magnitude = 1.0 if numerics.family(op) == numerics.ACCUMULATING else None
        bad = tol.outside(a, b, magnitude)
        if bad.any():
            e = numerics.errors(a, b, et)
            i = int(np.argmax(bad.reshape(-1)))
            failures.append(f"{name}: {int(bad.sum())} outside; max abs {e.max_abs:.3g} ulps "
                            f"{e.max_ulps:.3g}; x={x.reshape(-1)[i]} ours={a.reshape(-1)[i]} "
                            f"theirs={b.reshape(-1)[i]}")
    assert not failures, "\n".join(failures)
