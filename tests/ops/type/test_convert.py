"""Convert-1 over every pair of the element types numpy computes with (the narrow types:
tests/ops/type/test_convert_narrow.py).

The expected values come from exact arithmetic (Python ints and Fractions, rounded to each float
format by hand, ties to even), not from numpy's casts: numpy/ml_dtypes round some casts to bf16
twice (through f32), which is not a correctly rounded conversion.

irexec's documented rules (irexec/ops/type/convert.py):
* in range: float -> int truncates toward zero; int -> int keeps the value; anything -> float
  rounds to nearest, ties to even, from the exact value; bool -> 0/1;
* to boolean: nonzero is true (NaN too, as in OpenVINO's core reference and C++; the CPU plugin
  gives false for NaN, see tests/conformance);
* out of range: float -> int saturates (NaN -> 0, +-inf -> max/min); int -> narrower int wraps
  (two's complement, as OpenVINO's CPU does for destinations of up to 32 bits); a finite value
  beyond a float format's range gives +-inf.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec.builder import ModelBuilder
from irexec.ops.type.convert import Convert

from tests.ops.convert_reference import (INF, INT_RANGES, expected_in_range, pool, round_to_format,
                                same)
from tests.ops.support import PLAIN_TYPE_NAMES as TYPE_NAMES, bits, convert, dtype_of, random_values, special_values

PAIRS = [(s, d) for s in TYPE_NAMES for d in TYPE_NAMES]


@pytest.mark.parametrize("src, dst", PAIRS)
def test_every_pair_in_range(src, dst):
    values = pool(src)
    expected = [expected_in_range(x, dst) for x in values]
    keep = [i for i, e in enumerate(expected) if e is not None]
    assert keep
    data = values[keep]
    out = convert(data, dst)
    assert out.dtype == dtype_of(dst) and out.shape == data.shape
    wrong = [(data[j], out[j], expected[i]) for j, i in enumerate(keep)
             if not same(out[j], expected[i])]
    assert not wrong, f"{src}->{dst}: (input, got, expected) {wrong[:5]}"


@pytest.mark.parametrize("src, dst", [(s, d) for s, d in PAIRS if d != "bf16"])
def test_in_range_agrees_with_numpy_astype_with_truncation(src, dst):
    """Cross-check with numpy's cast, with np.trunc first for float -> int, on in-range values.
    (bf16 as a destination is left out: ml_dtypes rounds wide values to bf16 twice, through f32;
    the exact test above covers it.)"""
    values = pool(src)
    keep = [i for i, x in enumerate(values) if expected_in_range(x, dst) is not None]
    data = values[keep]
    is_float = dtype_of(src).kind == "f" or src == "bf16"
    source = np.trunc(data) if is_float and dtype_of(dst).kind in "iu" else data
    with np.errstate(all="ignore"):
        expected = source.astype(dtype_of(dst)) if dst != "boolean" else data != 0
    assert np.array_equal(bits(convert(data, dst)), bits(expected))


# --- boolean rules ------------------------------------------------------------------------------

@pytest.mark.parametrize("src", TYPE_NAMES)
def test_to_boolean_is_nonzero(src):
    dtype = dtype_of(src)
    if dtype.kind in "iu":
        lo, hi = INT_RANGES[src]
        candidates = [0, 1, hi, lo, hi - 1, -1, -(2**31), 2**31, 2**32, 2**63]
        data = np.array([v for v in candidates if lo <= v <= hi], dtype=dtype)
        expected = [v != 0 for v in data.tolist()]
    elif src == "boolean":
        data, expected = np.array([True, False]), [True, False]
    else:
        data = np.array([0.0, -0.0, 0.5, -0.5, np.inf, -np.inf, np.nan, 1e-7], np.float64)
        data = data.astype(dtype)
        tiny = np.array([1], f"u{dtype.itemsize}").view(dtype)  # smallest subnormal
        data = np.concatenate([data, tiny, -tiny])
        expected = [True if math.isnan(float(v)) else float(v) != 0 for v in data]
    out = convert(data, "boolean")
    assert out.dtype == np.bool_ and out.tolist() == expected


@pytest.mark.parametrize("dst", TYPE_NAMES)
def test_from_boolean_is_zero_or_one(dst):
    out = convert(np.array([True, False, True]), dst)
    assert out.dtype == dtype_of(dst)
    assert [float(v) for v in out] == [1.0, 0.0, 1.0]
    assert not np.signbit(out[1].astype(np.float64)) if dst != "boolean" else True


def test_nan_to_boolean_is_true():
    """irexec follows C++ and OpenVINO's core reference (Node.evaluate, constant folding): NaN is
    nonzero. OpenVINO's CPU plugin gives False (tests/conformance documents it)."""
    for src in ("f16", "bf16", "f32", "f64"):
        assert convert(np.array([np.nan, -np.nan]).astype(dtype_of(src)), "boolean").tolist() == [
            True, True]


# --- documented out-of-range behaviour ----------------------------------------------------------

@pytest.mark.parametrize("src", ["f16", "bf16", "f32", "f64"])
@pytest.mark.parametrize("dst", ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"])
def test_float_to_int_out_of_range_saturates_and_nan_is_zero(src, dst):
    lo, hi = INT_RANGES[dst]
    with np.errstate(over="ignore"):
        data = np.array([np.inf, -np.inf, np.nan, 1e300, -1e300, 3e38, -3e38, 65504, -65504,
                         300.7, -1.5, -0.5, -0.9, 70000, 2.0**31, 2.0**63, 2.0**64],
                        np.float64).astype(dtype_of(src))
    expected = []
    for v in data.tolist():
        if math.isnan(v):
            expected.append(0)
        elif v == math.inf:
            expected.append(hi)
        elif v == -math.inf:
            expected.append(lo)
        else:
            expected.append(min(max(math.trunc(v), lo), hi))
    out = convert(data, dst)
    assert out.dtype == dtype_of(dst) and out.tolist() == expected


@pytest.mark.parametrize("src, dst, value, expected", [
    ("i32", "u8", 300, 44), ("i32", "u8", -1, 255), ("i32", "u16", 65536, 0),
    ("i32", "i16", -32769, 32767), ("i64", "i32", 2**40 + 5, 5), ("u64", "i64", 2**63, -(2**63)),
    ("u64", "i64", 2**64 - 1, -1), ("i64", "u64", -1, 2**64 - 1), ("u32", "i32", 2**31, -(2**31)),
    ("i8", "u64", -1, 2**64 - 1), ("i16", "u32", -2, 2**32 - 2), ("u16", "i8", 0xFF80, -128),
])
def test_integer_narrowing_wraps(src, dst, value, expected):
    out = convert(np.array([value], dtype_of(src)), dst)
    assert out.dtype == dtype_of(dst) and int(out[0]) == expected


@pytest.mark.parametrize("src, dst, value", [
    ("i32", "f16", 65520), ("i32", "f16", 100000), ("u64", "f16", 2**64 - 1),
    ("f32", "f16", 70000.0), ("f64", "f16", 1e300), ("f64", "f32", 1e300),
    ("f64", "f32", 3.4028235677973366e38), ("f64", "bf16", 1e300), ("f32", "bf16", 3.4e38),
    ("u64", "bf16", 2**64 - 1),  # in range: 2**64 is a bf16 value
])
def test_overflow_to_a_float_format_gives_inf(src, dst, value):
    out = convert(np.array([value, -value] if dtype_of(src).kind != "u" else [value],
                           dtype_of(src)), dst)
    expected = round_to_format(Fraction(int(value) if isinstance(value, int) else value), dst)
    if expected is INF:
        assert np.isposinf(out[0].astype(np.float64))
        if out.size > 1:
            assert np.isneginf(out[1].astype(np.float64))
    else:
        assert float(out[0]) == expected


@pytest.mark.parametrize("src", ["f16", "bf16", "f32", "f64"])
@pytest.mark.parametrize("dst", ["f16", "bf16", "f32", "f64"])
def test_infinities_and_nan_stay(src, dst):
    data = np.array([np.inf, -np.inf, np.nan], np.float64).astype(dtype_of(src))
    out = convert(data, dst).astype(np.float64)
    assert np.isposinf(out[0]) and np.isneginf(out[1]) and np.isnan(out[2])


# --- bf16 rounding (exact, ties to even, not through f32) --------------------------------------

@pytest.mark.parametrize("src, value, expected_bits", [
    ("i32", 2**24 + 2**16 + 1, 0x4B81),  # f32 would round to 2**24+2**16, a bf16 tie -> 0x4B80
    ("i64", 2**24 + 2**16 + 1, 0x4B81),
    ("u32", 2**24 + 2**16 + 1, 0x4B81),
    ("u64", 2**40 + 2**32 + 1, 0x5381),
    ("f64", 1 + 2**-8 + 2**-30, 0x3F81),  # just above a bf16 tie
    ("f64", 1 + 2**-8, 0x3F80),  # an exact tie: to even
    ("f64", 1 + 3 * 2**-9, 0x3F81),
    ("i32", 12345, 0x4641),  # OpenVINO's CPU gives 12288 (0x4640)
])
def test_bf16_is_rounded_once_from_the_exact_value(src, value, expected_bits):
    out = convert(np.array([value], dtype_of(src)), "bf16")
    assert int(out.view(np.uint16)[0]) == expected_bits
    assert float(out[0]) == round_to_format(Fraction(value), "bf16")


# --- the kernel and the op --------------------------------------------------------------------

def test_zero_size_and_scalar():
    assert convert(np.zeros((0, 3), np.float32), "i8").shape == (0, 3)
    out = convert(np.array(-2.9, np.float64), "i16")
    assert out.shape == () and int(out) == -2


@pytest.mark.parametrize("src", TYPE_NAMES)
def test_scalars_of_every_pair_stay_arrays(src):
    """A 0-d input gives a 0-d ndarray (float -> int once crashed on numpy scalars)."""
    b = ModelBuilder()
    x = b.parameter("data", src, [])
    for dst in TYPE_NAMES:
        b.result(b.op("Convert", x, destination_type=dst, name=dst))
    outputs = irexec.compile_model(b.build())({"data": np.array(1, dtype_of(src))})
    for dst in TYPE_NAMES:
        out = outputs[dst]
        assert isinstance(out, np.ndarray) and out.shape == () and out.dtype == dtype_of(dst)
        assert float(out) == 1.0


def test_output_never_aliases_the_input_even_for_the_same_type():
    for name in TYPE_NAMES:
        data = random_values(name, (4,), np.random.default_rng(0))
        out = convert(data, name)
        assert np.array_equal(bits(out), bits(data)) and not np.shares_memory(out, data)


@pytest.mark.parametrize("src", TYPE_NAMES)
def test_no_numpy_warnings_for_any_bit_pattern(src):
    """Signalling NaNs, infinities and out-of-range values have defined results: no
    RuntimeWarning leaks to the user."""
    from irexec.kernels.convert import convert as kernel

    data = np.concatenate([random_values(src, (500,), np.random.default_rng(1)),
                           special_values(src)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for dst in TYPE_NAMES:
            kernel(data, dtype_of(dst))


def test_kernel_directly():
    from irexec.ir.element_type import ElementType

    out = Convert.kernel(np.array([2.9, -2.9, 300.0]), destination_type=ElementType.i8)
    assert out.dtype == np.int8 and out.tolist() == [2, -2, 127]


def test_chain_of_converts():
    b = ModelBuilder()
    x = b.parameter("data", "f64", [4])
    y = b.op("Convert", x, destination_type="i16")
    y = b.op("Convert", y, destination_type="u8")
    y = b.op("Convert", y, destination_type="bf16", name="y")
    b.result(y)
    out = irexec.compile_model(b.build())({"data": np.array([-1.5, 255.9, 256.5, 1000.0])})["y"]
    # -1.5 -> -1 -> 255 (wrap); 255.9 -> 255; 256.5 -> 256 -> 0; 1000 -> 1000 -> 232
    assert [float(v) for v in out] == [255.0, 255.0, 0.0, 232.0]


# --- property: random values of every pair --------------------------------------------------

@settings(max_examples=100, deadline=None)
@given(st.sampled_from(PAIRS), st.integers(0, 2**32 - 1))
def test_property_random_bit_patterns(pair, seed):
    src, dst = pair
    data = random_values(src, (16,), np.random.default_rng(seed))
    out = convert(data, dst)
    for x, y in zip(data, out):
        e = expected_in_range(x, dst)
        if e is not None:
            assert same(y, e), (src, dst, x, y, e)
