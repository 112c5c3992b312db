"""The element-wise kernels' shared pieces: erf in float64, the numeric contract's paths and
conversions (irexec/kernels/numeric.py)."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.kernels import numeric
from irexec.kernels.erf import erf, erf32


def test_erf_against_math_erf():
    """Within 40 ulp of f64 everywhere, tails and tiny arguments included."""
    x = np.concatenate([np.linspace(-7, 7, 20001), np.geomspace(1e-300, 1, 200),
                        -np.geomspace(1e-300, 1, 200), [0.0, 6.0, 5.999999, 2.5, 2.4999999]])
    expected = np.array([math.erf(v) for v in x])
    assert (np.abs(erf(x) - expected) <= 40 * np.spacing(np.abs(expected))).all()


@given(st.lists(st.floats(-10, 10), min_size=1, max_size=50))
@settings(max_examples=50, deadline=None)
def test_erf_property(values):
    x = np.array(values)
    expected = np.array([math.erf(v) for v in values])
    assert (np.abs(erf(x) - expected) <= 40 * np.spacing(np.abs(expected))).all()


def test_erf32_within_3_ulp():
    x = np.concatenate([np.linspace(-7, 7, 100001), np.geomspace(1e-38, 1, 300),
                        -np.geomspace(1e-38, 1, 300)]).astype(np.float32)
    expected = np.array([math.erf(v) for v in x.astype(np.float64)])
    out = erf32(x)
    assert out.dtype == np.float32
    ulp = np.spacing(np.abs(expected).astype(np.float32)).astype(np.float64)
    assert (np.abs(out.astype(np.float64) - expected) <= 3 * ulp).all()
    special = erf32(np.array([np.inf, -np.inf, np.nan, -0.0], np.float32))
    assert special[0] == 1 and special[1] == -1 and np.isnan(special[2])


def test_erf_special_values():
    out = erf(np.array([np.inf, -np.inf, np.nan, -0.0, 0.0]))
    assert out[0] == 1 and out[1] == -1 and np.isnan(out[2])
    assert np.signbit(out[3]) and not np.signbit(out[4]) and out[3] == 0


def test_kinds():
    assert numeric.kind(np.dtype(np.float32)) == numeric.NATIVE_FLOAT
    assert numeric.kind(np.dtype(np.float16)) == numeric.HALF
    assert numeric.kind(np.dtype(ml_dtypes.bfloat16)) == numeric.HALF
    assert numeric.kind(np.dtype(ml_dtypes.float8_e4m3fn)) == numeric.LOW_FLOAT
    assert numeric.kind(np.dtype(np.uint64)) == numeric.INT
    assert numeric.kind(np.dtype(ml_dtypes.int4)) == numeric.NARROW_INT
    assert numeric.kind(np.dtype(np.bool_)) == numeric.BOOL


def test_round_half_away():
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, -0.49999997, 2**23 + 1], np.float32)
    assert numeric.round_half_away(x).tolist() == [1, 2, 3, -1, -3, 0, 0, 2**23 + 1]


def test_narrow_integers_keep_their_low_bits():
    assert numeric.narrow(np.array([16, 17, -1], np.int64),
                           np.dtype(ml_dtypes.uint4)).astype(int).tolist() == [0, 1, 15]
    assert numeric.narrow(np.array([8, -9], np.int64),
                           np.dtype(ml_dtypes.int4)).astype(int).tolist() == [-8, 7]


def test_real_of_int_rounds_and_saturates():
    out = numeric.real_of_int(np.sqrt, np.array([2, 3, 250], np.uint8))
    assert out.dtype == np.uint8 and out.tolist() == [1, 2, 16]
    assert numeric.real_of_int(np.sqrt, np.array([-1], np.int8)).tolist() == [0]  # NaN gives 0
    assert numeric.real_of_int(np.exp, np.array([6], np.int8)).tolist() == [127]


def test_output_takes_the_in_place_array_only_when_it_fits():
    a = np.zeros((2, 3), np.float32)
    assert numeric.output((2, 3), a.dtype, a) is a
    assert numeric.output((4, 3), a.dtype, a) is not a
    assert numeric.output((2, 3), np.dtype(np.float64), a) is not a
    assert numeric.output((2,), a.dtype) is None  # small: numpy allocates
