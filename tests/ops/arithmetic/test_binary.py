"""Binary arithmetic (Add ... Mod): spec examples, integer semantics against Python integers,
floats against a float64 reference, broadcasting (numpy, pdpd, none), scalars, zero-size, NaN,
IR316, and OpenVINO conformance on every type (one model per type, all ten ops)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec.builder import ModelBuilder

from ..elementwise_support import (DTYPES, FLOAT_TYPES, INT_TYPES, assert_close, ov_conformance,
                                   run_op)

BINARY = ["Add", "Subtract", "Multiply", "Divide", "Power", "Maximum", "Minimum",
          "SquaredDifference", "FloorMod", "Mod"]


# --- independent references: Python integers and float64 -----------------------------------------

def _wrap(v: int, type_name: str) -> int:
    bits = int(type_name[1:])
    v &= (1 << bits) - 1
    if type_name.startswith("i") and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def _int_ref(op: str, x: int, y: int, pythondiv: bool = True) -> int:
    if op == "Add":
        return x + y
    if op == "Subtract":
        return x - y
    if op == "Multiply":
        return x * y
    if op == "Divide":
        q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)  # toward zero
        return x // y if pythondiv else q
    if op == "Power":
        if y >= 0:
            return x ** y
        return 1 if x == 1 else (-1) ** (-y) if x == -1 else 0
    if op == "Maximum":
        return max(x, y)
    if op == "Minimum":
        return min(x, y)
    if op == "SquaredDifference":
        return (x - y) ** 2
    if op == "FloorMod":
        return x % y
    if op == "Mod":
        return abs(x) % abs(y) * (-1 if x < 0 else 1)  # C's remainder
    raise KeyError(op)


def _float_ref(op: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return {
            "Add": lambda: x + y, "Subtract": lambda: x - y, "Multiply": lambda: x * y,
            "Divide": lambda: x / y, "Power": lambda: np.power(x, y),
            "Maximum": lambda: np.where(x > y, x, y), "Minimum": lambda: np.where(x < y, x, y),
            "SquaredDifference": lambda: (x - y) ** 2, "FloorMod": lambda: x - y * np.floor(x / y),
            "Mod": lambda: np.fmod(x, y),
        }[op]()


# --- spec examples ------------------------------------------------------------------------------

def test_floor_mod_and_mod_signs():
    """FloorMod takes the divisor's sign, Mod the dividend's (the specs' examples)."""
    a = np.array([1, 2, -3, -4, 7], np.int32)
    b = np.array([2, -3, 3, 3, 5], np.int32)
    assert run_op("FloorMod", a, b).tolist() == [1, -1, 0, 2, 2]
    assert run_op("Mod", a, b).tolist() == [1, 2, 0, -1, 2]


def test_divide_m_pythondiv():
    a = np.array([7, -7, 7, -7], np.int32)
    b = np.array([2, 2, -2, -2], np.int32)
    assert run_op("Divide", a, b).tolist() == [3, -4, -4, 3]
    assert run_op("Divide", a, b, m_pythondiv=False).tolist() == [3, -3, -3, 3]
    f = np.array([7, -7], np.float32)
    assert run_op("Divide", f, np.float32([2, 2]), m_pythondiv=True).tolist() == [3.5, -3.5]


def test_spec_broadcast_example_numpy():
    """The broadcast-rules page: [8,1,6,1] with [7,1,5] gives [8,7,6,5]."""
    a = np.arange(48, dtype=np.float32).reshape(8, 1, 6, 1)
    b = np.arange(35, dtype=np.float32).reshape(7, 1, 5)
    out = run_op("Add", a, b)
    assert out.shape == (8, 7, 6, 5)
    np.testing.assert_array_equal(out, a + b)


# --- integers: exact, wrapping ------------------------------------------------------------------

@pytest.mark.parametrize("type_name", INT_TYPES)
@pytest.mark.parametrize("op", BINARY)
def test_integers_exact_and_wrapping(op, type_name):
    """Every integer type, values near the limits included, against Python integers wrapped to
    the type (C++'s two's-complement rule)."""
    dt = np.dtype(DTYPES[type_name])
    info = np.iinfo(dt)
    rng = np.random.default_rng(hash((op, type_name)) % 2**32)
    edge = [info.min, info.max, 0, 1, 2, 3, info.max - 1, info.min + 1 if info.min else 5]
    a = np.concatenate([np.array(edge, dtype=dt), rng.integers(info.min, info.max, 40,
                                                                dtype=dt, endpoint=True)])
    b = rng.integers(info.min, info.max, a.size, dtype=dt, endpoint=True)
    if op == "Power":
        b = rng.integers(0, 9, a.size).astype(dt)
        if info.min:
            b[:6] = [-1, -2, -3, -1, -2, -5]
            a[:6] = [1, -1, -1, 7, 2, -3]
    if op in ("Divide", "FloorMod", "Mod"):
        b[b == 0] = 3
        if info.min:
            b[:2] = -1  # the lowest value divided by -1 wraps
    for pythondiv in ((True, False) if op == "Divide" else (True,)):
        attrs = {"m_pythondiv": pythondiv} if op == "Divide" else {}
        out = run_op(op, a, b, **attrs)
        expected = [_wrap(_int_ref(op, int(x), int(y), pythondiv), type_name)
                    for x, y in zip(a.tolist(), b.tolist())]
        assert out.dtype == dt
        assert out.tolist() == expected, (op, type_name, pythondiv)


@given(st.lists(st.tuples(st.integers(-2**31, 2**31 - 1), st.integers(-2**31, 2**31 - 1)),
                min_size=1, max_size=20),
       st.sampled_from(BINARY))
@settings(max_examples=50, deadline=None)
def test_i32_property(pairs, op):
    a = np.array([p[0] for p in pairs], np.int32)
    b = np.array([p[1] for p in pairs], np.int32)
    if op in ("Divide", "FloorMod", "Mod"):
        b[b == 0] = 1
    if op == "Power":
        b = np.abs(b % 13).astype(np.int32)
    out = run_op(op, a, b)
    assert out.tolist() == [_wrap(_int_ref(op, x, y), "i32") for x, y in zip(a.tolist(),
                                                                              b.tolist())]


def test_narrow_integers_wrap_in_their_width():
    """i4 and u4 compute exactly and keep their low bits."""
    i4 = np.array([7, -8, 5, -3], DTYPES["i4"])
    one = np.array([1, -1, 5, 2], DTYPES["i4"])
    assert run_op("Add", i4, one).astype(int).tolist() == [-8, 7, -6, -1]
    u4 = np.array([15, 3, 9], DTYPES["u4"])
    assert run_op("Multiply", u4, np.array([2, 6, 9], DTYPES["u4"])).astype(int).tolist() == \
        [14, 2, 1]


# --- floats: against float64 --------------------------------------------------------------------

finite32 = st.floats(-1e4, 1e4, width=32, allow_subnormal=False)


@given(st.lists(st.tuples(finite32, finite32), min_size=1, max_size=30), st.sampled_from(BINARY))
@settings(max_examples=50, deadline=None)
def test_f32_against_float64(pairs, op):
    a = np.array([p[0] for p in pairs], np.float32)
    b = np.array([p[1] for p in pairs], np.float32)
    if op == "Power":
        a = np.abs(a) % 10 + np.float32(0.5)
        b = b % 8
    expected = _float_ref(op, a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    out = run_op(op, a, b)
    if op in ("FloorMod", "Mod"):  # one rounding of x/y apart near a multiple of y
        ok = np.isclose(out, expected, rtol=1e-6, atol=1e-6 * np.abs(b).max() + 1e-6,
                        equal_nan=True) | (
            np.abs(np.abs(out - expected) - np.abs(b)) < 1e-3 * np.abs(b))
        assert ok.all()
        return
    assert_close(out, expected, "f32", op)


@pytest.mark.parametrize("type_name", ["f16", "bf16", "f64"])
@pytest.mark.parametrize("op", BINARY)
def test_low_and_high_precision_round_once(op, type_name):
    """f16/bf16 compute in f32 and round once (within one ulp of the float64 result); f64
    computes in f64."""
    rng = np.random.default_rng(7)
    dt = DTYPES[type_name]
    a = (rng.standard_normal(200) * 4).astype(np.float32).astype(dt)
    b = (rng.standard_normal(200) * 4).astype(np.float32).astype(dt)
    if op == "Power":
        a = np.abs(a)
    out = run_op(op, a, b)
    assert out.dtype == np.dtype(dt)
    with np.errstate(over="ignore"):  # beyond f16's range is inf
        expected = _float_ref(op, a.astype(np.float64), b.astype(np.float64)).astype(dt)
    assert_close(out, expected, type_name, op)


def test_f8_computes_in_f32():
    e4m3 = DTYPES["f8e4m3"]
    a = np.array([1.5, 2, -3.25, 448], e4m3)
    b = np.array([0.25, 3, 1, 1], e4m3)
    out = run_op("Add", a, b)
    assert out.dtype == np.dtype(e4m3)
    assert out[:3].astype(np.float32).tolist() == [1.75, 5, -2.25]


def test_nan_and_inf():
    nan, inf = np.nan, np.inf
    a = np.array([nan, 1, inf, -inf, 0, inf], np.float32)
    b = np.array([1, nan, inf, inf, 0, 0], np.float32)
    with np.errstate(all="ignore"):
        assert np.array_equal(run_op("Add", a, b), a + b, equal_nan=True)
        assert np.array_equal(run_op("Divide", a, b), a / b, equal_nan=True)
    # OpenVINO's a > b ? a : b (its reference and its CPU plugin)
    assert np.array_equal(run_op("Maximum", a, b)[:2], [1, nan], equal_nan=True)
    assert np.array_equal(run_op("Minimum", a, b)[:2], [1, nan], equal_nan=True)
    assert np.isnan(run_op("FloorMod", np.float32([1]), np.float32([0]))[0])


# --- shapes -------------------------------------------------------------------------------------

def _build(op, shape_a, shape_b, **attrs):
    b = ModelBuilder()
    x = b.parameter("a", "f32", shape_a)
    y = b.parameter("b", "f32", shape_b)
    b.result(b.op(op, x, y, name="op", **attrs), name="out")
    return b.build()


@pytest.mark.parametrize("mode, shape_a, shape_b, out_shape", [
    ("numpy", [2, 1, 4], [3, 1], [2, 3, 4]),
    ("numpy", [], [3], [3]),
    ("numpy", [0, 3], [1, 3], [0, 3]),
    ("pdpd", [2, 3, 4, 5], [3, 4], None),  # the spec's pdpd examples, b from the right
    ("pdpd", [2, 3, 4, 5], [4, 5], [2, 3, 4, 5]),
    ("pdpd", [2, 3, 4, 5], [1, 5], [2, 3, 4, 5]),
    ("none", [2, 3], [2, 3], [2, 3]),
])
def test_broadcast_modes(mode, shape_a, shape_b, out_shape):
    model_fn = lambda: _build("Multiply", shape_a, shape_b, auto_broadcast=mode)  # noqa: E731
    if out_shape is None:
        with pytest.raises(irexec.IRError) as info:
            irexec.compile_model(model_fn())
        assert info.value.code == "IR307"
        return
    compiled = irexec.compile_model(model_fn())
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape_a).astype(np.float32)
    b = rng.standard_normal(shape_b).astype(np.float32)
    (out,) = compiled({"a": a, "b": b}).values()
    assert list(out.shape) == out_shape
    np.testing.assert_array_equal(out, np.multiply(a, b))


@pytest.mark.parametrize("mode, shape_a, shape_b", [
    ("none", [2, 3], [3]), ("numpy", [2, 3], [4]), ("pdpd", [3], [2, 3]), ("pdpd", [2, 1], [2, 3])])
def test_incompatible_shapes_are_ir307(mode, shape_a, shape_b):
    with pytest.raises(irexec.IRError) as info:
        irexec.compile_model(_build("Add", shape_a, shape_b, auto_broadcast=mode))
    assert info.value.code == "IR307"
    assert str(shape_a).replace(" ", "") in str(info.value).replace(" ", "") or "shape" in \
        str(info.value)


def test_dynamic_shapes_checked_per_call():
    compiled = irexec.compile_model(_build("Add", [-1, 3], [-1, 3]))
    (out,) = compiled({"a": np.ones((2, 3), np.float32), "b": np.ones((1, 3), np.float32)}).values()
    assert out.shape == (2, 3)
    with pytest.raises(irexec.IRError) as info:
        compiled({"a": np.ones((2, 3), np.float32), "b": np.ones((4, 3), np.float32)})
    assert info.value.code == "IR307"


def test_scalars_give_arrays():
    out = run_op("Add", np.array(2.5, np.float32), np.array(1.0, np.float32))
    assert isinstance(out, np.ndarray) and out.shape == () and out == 3.5


def test_type_mismatch_is_ir304():
    b = ModelBuilder()
    x = b.parameter("a", "f32", [2])
    y = b.parameter("b", "i32", [2])
    b.result(b.op("Add", x, y), name="out")
    with pytest.raises(irexec.IRError) as info:
        irexec.compile_model(b.build())
    assert info.value.code == "IR304"


def test_boolean_is_ir304():
    b = ModelBuilder()
    x = b.parameter("a", "boolean", [2])
    b.result(b.op("Add", x, x), name="out")
    with pytest.raises(irexec.IRError) as info:
        irexec.compile_model(b.build())
    assert info.value.code == "IR304"


# --- division by zero: IR316 --------------------------------------------------------------------

@pytest.mark.parametrize("op", ["Divide", "FloorMod", "Mod"])
def test_integer_division_by_zero_at_run_time(op):
    with pytest.raises(irexec.IRError) as info:
        run_op(op, np.array([1, 2], np.int32), np.array([1, 0], np.int32))
    assert info.value.code == "IR316"
    assert "index [1]" in str(info.value)


def test_power_zero_to_negative_is_ir316():
    with pytest.raises(irexec.IRError) as info:
        run_op("Power", np.array([0], np.int32), np.array([-1], np.int32))
    assert info.value.code == "IR316"


@pytest.mark.parametrize("op", ["Divide", "FloorMod", "Mod"])
def test_constant_zero_divisor_at_read_time(op):
    b = ModelBuilder()
    x = b.parameter("a", "i64", [3])
    b.result(b.op(op, x, b.constant(np.array([1, 0, 2], np.int64))), name="out")
    with pytest.raises(irexec.IRError) as info:
        irexec.compile_model(b.build())
    assert info.value.code == "IR316"


def test_float_division_by_zero_is_inf():
    out = run_op("Divide", np.float32([1, -1]), np.float32([0, 0]))
    assert out.tolist() == [np.inf, -np.inf]


def test_zero_size_divide_by_constant_zero_is_fine():
    b = ModelBuilder()
    x = b.parameter("a", "i32", [0])
    b.result(b.op("Divide", x, b.constant(np.array([0], np.int32))), name="out")
    compiled = irexec.compile_model(b.build())
    (out,) = compiled({"a": np.zeros(0, np.int32)}).values()
    assert out.shape == (0,)


# --- OpenVINO conformance -----------------------------------------------------------------------

def _conformance_inputs(type_name: str, rng):
    """a, b for every op, and p, q for Divide and Power (non-negative dividends, positive
    divisors, small exponents), keeping out of the CPU plugin's known deviations
    (docs/compatibility.md): no 8-bit overflow, no signed floor division."""
    dt = DTYPES[type_name]
    n = 96
    if type_name in FLOAT_TYPES:
        def f(scale):
            return (rng.standard_normal(n) * scale).astype(np.float32).astype(dt)
        a, b = f(4), f(4)
        p, q = np.abs(f(3)), f(2)
        return a, b, p, q
    small = type_name in ("i8", "u8")
    top = 11 if small else 1000
    low = 0 if type_name.startswith("u") else -top
    a = rng.integers(low, top, n).astype(dt)
    b = rng.integers(1, 11, n).astype(dt)
    if low < 0:
        b = (b.astype(np.int64) * rng.choice([-1, 1], n)).astype(dt)
    if type_name.startswith("u"):
        a = np.maximum(a, b)  # the CPU saturates u8 subtraction
    p = rng.integers(0, top, n).astype(dt)
    q = rng.integers(0, 3, n).astype(dt)
    return a, b, p, q


@pytest.mark.parametrize("type_name", FLOAT_TYPES + INT_TYPES)
def test_openvino_conformance(tmp_path, type_name):
    ov = pytest.importorskip("openvino")
    import openvino.opset16 as ops

    rng = np.random.default_rng(abs(hash(type_name)) % 2**32)
    a, b, p, q = _conformance_inputs(type_name, rng)
    eight_bit = type_name in ("i8", "u8")

    def build(prm):
        A, B, P, Q = prm["a"], prm["b"], prm["p"], prm["q"]
        out = {"Add": ops.add(A, B), "Subtract": ops.subtract(A, B),
               "Multiply": ops.multiply(A, B), "Maximum": ops.maximum(A, B),
               "Minimum": ops.minimum(A, B), "FloorMod": ops.floor_mod(A, B),
               "Mod": ops.mod(A, B), "Divide": ops.divide(P, ops.abs(B) if type_name[0] == "i"
                                                          else B),
               "DivideTrunc": _trunc_divide(ops, A, B),
               "Power": ops.power(P, Q), "Broadcast": ops.add(A, ops.constant(
                   np.ones(1, DTYPES[type_name]) if type_name != "bf16" else
                   np.ones(1, np.float32), ov_type_name(type_name)))}
        if not eight_bit:  # the CPU plugin's 8-bit SquaredDifference is wrong
            out["SquaredDifference"] = ops.squared_difference(A, B)
        return out

    inputs = {"a": (type_name, a), "b": (type_name, b), "p": (type_name, p), "q": (type_name, q)}
    ours, theirs = ov_conformance(ov, tmp_path, inputs, build, tag=f"binary_{type_name}")
    for name in theirs:
        assert_close(ours[name], theirs[name], type_name, name)


def _trunc_divide(ops, a, b):
    node = ops.divide(a, b)
    node.set_attribute("m_pythondiv", False)
    return node


def ov_type_name(type_name):
    import openvino as ov
    return getattr(ov.Type, type_name)
