"""Unary arithmetic (Negative ... Atanh, Round): spec examples, float64 references, integers,
f16/bf16, NaN/inf, erf's accuracy, and OpenVINO conformance on every type (one model per type)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec.builder import ModelBuilder

from ..elementwise_support import (DTYPES, FLOAT_TYPES, INT_TYPES, assert_close, ov_conformance,
                                   run_op)

# op -> (float64 reference, domain of the random inputs)
_ERF = np.vectorize(math.erf)
REFERENCE = {
    "Negative": (np.negative, (-50, 50)), "Abs": (np.abs, (-50, 50)),
    "Sqrt": (np.sqrt, (0, 100)), "Exp": (np.exp, (-20, 20)), "Log": (np.log, (0.01, 100)),
    "Erf": (_ERF, (-5, 5)), "Floor": (np.floor, (-50, 50)), "Ceiling": (np.ceil, (-50, 50)),
    "Sign": (np.sign, (-5, 5)), "Sin": (np.sin, (-10, 10)), "Cos": (np.cos, (-10, 10)),
    "Tan": (np.tan, (-1.5, 1.5)), "Asin": (np.arcsin, (-1, 1)), "Acos": (np.arccos, (-1, 1)),
    "Atan": (np.arctan, (-50, 50)), "Sinh": (np.sinh, (-10, 10)), "Cosh": (np.cosh, (-10, 10)),
    "Tanh": (np.tanh, (-10, 10)), "Asinh": (np.arcsinh, (-50, 50)),
    "Acosh": (np.arccosh, (1, 50)), "Atanh": (np.arctanh, (-0.99, 0.99)),
}
VERSION = {"Asinh": "opset4", "Acosh": "opset4", "Atanh": "opset4"}


def test_round_spec_example():
    x = np.array([-4.5, -1.9, -1.5, 0.5, 0.9, 1.5, 2.3, 2.5], np.float32)
    assert run_op("Round", x, version="opset5").tolist() == [-4, -2, -2, 0, 1, 2, 2, 2]
    assert run_op("Round", x, version="opset5", mode="half_away_from_zero").tolist() == \
        [-5, -2, -2, 1, 1, 2, 2, 3]


def test_round_half_away_near_half():
    """0.49999997 is below a half: it rounds to 0, not to 1 (adding 0.5 would round up)."""
    x = np.array([0.49999997, -0.49999997, 2.5, -2.5, 8388609], np.float32)
    assert run_op("Round", x, version="opset5", mode="half_away_from_zero").tolist() == \
        [0, -0, 3, -3, 8388609]


def test_versions():
    with pytest.raises(irexec.IRError):
        run_op("Round", np.float32([1]), version="opset4")
    with pytest.raises(irexec.IRError):
        run_op("Asinh", np.float32([1]), version="opset3")
    assert run_op("Asinh", np.float32([0]), version="opset16").tolist() == [0]


@pytest.mark.parametrize("op", sorted(REFERENCE))
def test_f32_against_float64(op):
    ref, (lo, hi) = REFERENCE[op]
    rng = np.random.default_rng(len(op))
    x = rng.uniform(lo, hi, 300).astype(np.float32)
    out = run_op(op, x, version=VERSION.get(op))
    assert out.dtype == np.float32
    assert_close(out, ref(x.astype(np.float64)).astype(np.float32), "f32", op)


@pytest.mark.parametrize("type_name", ["f16", "bf16", "f64"])
@pytest.mark.parametrize("op", sorted(REFERENCE))
def test_other_float_types(op, type_name):
    """f16/bf16 within one ulp of the float64 result (computed in f32, rounded once)."""
    ref, (lo, hi) = REFERENCE[op]
    rng = np.random.default_rng(len(op) + 1)
    dt = DTYPES[type_name]
    x = rng.uniform(lo, hi, 200).astype(np.float32).astype(dt)
    out = run_op(op, x, version=VERSION.get(op))
    assert out.dtype == np.dtype(dt)
    with np.errstate(all="ignore"):
        expected = ref(x.astype(np.float64)).astype(dt)
    assert_close(out, expected, type_name, op)


@given(st.lists(st.floats(-30, 30, width=32), min_size=1, max_size=40),
       st.sampled_from(["Exp", "Sin", "Tanh", "Erf", "Atan", "Sinh"]))
@settings(max_examples=50, deadline=None)
def test_f32_property(values, op):
    x = np.array(values, np.float32)
    ref = REFERENCE[op][0]
    with np.errstate(all="ignore"):
        assert_close(run_op(op, x), ref(x.astype(np.float64)).astype(np.float32), "f32", op)


@pytest.mark.parametrize("type_name", INT_TYPES)
def test_integers(type_name):
    dt = np.dtype(DTYPES[type_name])
    info = np.iinfo(dt)
    x = np.array([0, 1, 2, 3, 4, 9, 10, info.max] + ([-1, -4, info.min] if info.min else []), dt)
    wide = x.astype(object)
    assert run_op("Negative", x).tolist() == [(-v) & ((1 << info.bits) - 1) if not info.min else
                                              (info.min if v == info.min else -v) for v in wide]
    assert run_op("Abs", x).tolist() == [info.min if v == info.min else abs(v) for v in wide]
    for op in ("Floor", "Ceiling"):
        assert run_op(op, x).tolist() == x.tolist()
    assert run_op("Round", x, version="opset5").tolist() == x.tolist()
    assert run_op("Sign", x).tolist() == [(v > 0) - (v < 0) for v in x.tolist()]
    # real-valued functions: computed in f64, rounded half away from zero; NaN gives 0
    small = x[(x.astype(np.float64) >= 0) & (x.astype(np.float64) < 100)]
    assert run_op("Sqrt", small).tolist() == [int(math.floor(math.sqrt(v) + 0.5)) for v in
                                              small.tolist()]
    assert run_op("Exp", small[:6]).tolist() == [  # out of range saturates
        min(int(math.floor(math.exp(v) + 0.5)), info.max) for v in small[:6].tolist()]
    if info.min:
        assert run_op("Sqrt", np.array([-4], dt)).tolist() == [0]


def test_nan_and_inf():
    nan, inf = np.nan, np.inf
    x = np.array([nan, inf, -inf, -0.0, 0.0], np.float32)
    assert np.array_equal(run_op("Sign", x), [nan, 1, -1, 0, 0], equal_nan=True)
    assert np.array_equal(run_op("Exp", x), [nan, inf, 0, 1, 1], equal_nan=True)
    assert np.array_equal(run_op("Log", x), [nan, inf, nan, -inf, -inf], equal_nan=True)
    assert np.array_equal(run_op("Erf", x), [nan, 1, -1, 0, 0], equal_nan=True)
    assert np.array_equal(run_op("Tanh", x), [nan, 1, -1, 0, 0], equal_nan=True)
    assert np.array_equal(run_op("Round", x, version="opset5"), x, equal_nan=True)


def test_zero_size_and_scalar():
    assert run_op("Exp", np.zeros((0, 3), np.float32)).shape == (0, 3)
    out = run_op("Sqrt", np.array(4.0, np.float32))
    assert isinstance(out, np.ndarray) and out.shape == () and out == 2


def test_string_input_is_ir304():
    b = ModelBuilder()
    x = b.parameter("x", "boolean", [2])
    b.result(b.op("Exp", x), name="out")
    with pytest.raises(irexec.IRError) as info:
        irexec.compile_model(b.build())
    assert info.value.code == "IR304"


def test_bad_round_mode_is_ir302(tmp_path):
    with pytest.raises(irexec.IRError) as info:
        run_op("Round", np.float32([1]), version="opset5", mode="half_up")
    assert info.value.code == "IR302"


# --- OpenVINO conformance -----------------------------------------------------------------------

def _ov_ops():
    import openvino.opset16 as ops
    return {"Negative": ops.negative, "Abs": ops.abs, "Sqrt": ops.sqrt, "Exp": ops.exp,
            "Log": ops.log, "Erf": ops.erf, "Floor": ops.floor, "Ceiling": ops.ceiling,
            "RoundEven": lambda x: ops.round(x, "half_to_even"),
            "RoundAway": lambda x: ops.round(x, "half_away_from_zero"), "Sign": ops.sign,
            "Sin": ops.sin, "Cos": ops.cos, "Tan": ops.tan, "Asin": ops.asin, "Acos": ops.acos,
            "Atan": ops.atan, "Sinh": ops.sinh, "Cosh": ops.cosh, "Tanh": ops.tanh,
            "Asinh": ops.asinh, "Acosh": ops.acosh, "Atanh": ops.atanh}


# Integer inputs: each function's domain (the CPU plugin gives INT_MIN where the result is NaN,
# and computes in f32: docs/compatibility.md), values whose results stay below 2**24.
_INT_DOMAIN = {"Sqrt": (0, 40), "Log": (1, 40), "Exp": (-5, 10), "Asin": (-1, 1),
               "Acos": (-1, 1), "Acosh": (1, 40), "Atanh": (0, 0), "Sinh": (-10, 10),
               "Cosh": (-10, 10)}
# Unsigned types: no negative results (irexec saturates them to 0, the CPU plugin wraps).
_UNSIGNED_DOMAIN = {"Sin": (0, 3), "Cos": (0, 1), "Tan": (0, 1)}


@pytest.mark.parametrize("type_name", FLOAT_TYPES + INT_TYPES)
def test_openvino_conformance(tmp_path, type_name):
    ov = pytest.importorskip("openvino")
    dt = DTYPES[type_name]
    ovops = _ov_ops()
    if type_name in FLOAT_TYPES:
        rng = np.random.default_rng(3)
        x = np.concatenate([rng.standard_normal(150) * 3, np.arange(-4, 4.5, 0.5),
                            rng.uniform(-1, 1, 60)]).astype(np.float32).astype(dt)
        inputs = {"x": (type_name, x)}
        ours, theirs = ov_conformance(ov, tmp_path, inputs,
                                      lambda p: {k: f(p["x"]) for k, f in ovops.items()},
                                      tag=f"unary_{type_name}")
        for name in theirs:
            expected = theirs[name]
            if type_name == "f64":  # the CPU plugin's f64 infinities are +-FLT_MAX
                big = np.abs(expected) == np.finfo(np.float32).max
                expected = np.where(big, np.copysign(np.inf, expected), expected)
            assert_close(ours[name], expected, type_name, name)
        return
    signed = type_name.startswith("i")
    inputs, plan = {}, {}
    for name in ovops:
        lo, hi = _INT_DOMAIN.get(name, (-20 if signed else 0, 20))
        if not signed:
            lo, hi = _UNSIGNED_DOMAIN.get(name, (lo, hi))
        lo = lo if signed else max(lo, 0)
        if name == "Negative" and not signed:
            continue  # refused by the CPU plugin for unsigned types
        inputs[name] = (type_name, np.arange(lo, hi + 1).astype(dt))
        plan[name] = ovops[name]
    ours, theirs = ov_conformance(ov, tmp_path, inputs,
                                  lambda p: {f"out_{k}": f(p[k]) for k, f in plan.items()},
                                  tag=f"unary_{type_name}")
    for name in theirs:
        assert_close(ours[name], theirs[name], type_name, name)
