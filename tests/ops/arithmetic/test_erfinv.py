"""ErfInv-17: special values, erf(erfinv(x)) = x against Python's math.erf, every float type,
and OpenVINO (whose CPU kernel is accurate to about 1e-4)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ops.build import run_op
from tests.ops.shapeops_oracle import check, openvino


def erfinv_bisect(x: float) -> float:
    """The inverse of math.erf by bisection (independent of irexec's Newton steps)."""
    lo, hi = -6.0, 6.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if math.erf(mid) < x:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def test_special_values():
    x = np.array([0.0, -0.0, 1.0, -1.0, 1.5, -2.0, np.nan], np.float32)
    (got,), _ = run_op("ErfInv", x, version="opset17")
    assert got[0] == 0 and np.signbit(got[1]) and got[1] == 0
    assert got[2] == np.inf and got[3] == -np.inf and np.isnan(got[4:]).all()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-0.999999, 0.999999), min_size=1, max_size=20))
def test_inverts_math_erf(values):
    x = np.array(values, np.float64)
    (got,), _ = run_op("ErfInv", x, version="opset17")
    back = np.array([math.erf(v) for v in got.tolist()])
    # irexec's float64 erf is within a few 1e-16 of math.erf; the inverse is met to that
    assert np.all(np.abs(back - x) <= 3e-15)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_narrow_types_round_the_f64_result_once(dtype):
    x = np.linspace(-0.99, 0.99, 41).astype(dtype)
    (got,), _ = run_op("ErfInv", x, version="opset17")
    expected = np.array([erfinv_bisect(float(v)) for v in x]).astype(dtype)
    assert got.dtype == x.dtype and np.array_equal(got, expected)


def test_openvino_conformance(tmp_path):
    openvino()
    import openvino.opset16 as o16
    import openvino.opset17 as o
    x = o16.parameter([64], np.float32)
    xs = [[np.linspace(-0.95, 0.95, 64).astype(np.float32)]]
    check(tmp_path, [o.erfinv(x).output(0)], [x], xs, exact=False, rtol=2e-4, atol=2e-4)
