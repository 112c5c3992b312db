"""Gelu's erf (irexec/kernels/special.py, fdlibm's rational approximations in float64): within
1 ulp of math.erf in every branch and at every branch edge, each element computed alike
whichever branches the other elements of its array take (the whole-array path of a branch that
holds every element, the tail's two approximations each on its own elements)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.kernels.special import erf, gelu_erf

EDGES = [0.84375, 1.25, 1 / 0.35, 6.0]


def _ulps(got: float, want: float) -> float:
    return abs(got - want) / math.ulp(want) if want else abs(got)


def _values() -> np.ndarray:
    rng = np.random.default_rng(0)
    around = [np.nextafter(e, d) for e in EDGES for d in (0, 10)] + EDGES
    values = np.concatenate([rng.standard_normal(2000) * s for s in (0.3, 1, 2.5, 5)] +
                            [np.array(around)])
    return np.concatenate([values, -values, [0.0, -0.0, 1e-300, 2.0 ** -28, 5e-324]])


def test_within_one_ulp_of_math_erf_in_every_branch():
    x = _values()
    got = erf(x)
    worst = max(_ulps(float(g), math.erf(float(v))) for g, v in zip(got, x))
    assert worst <= 1.0, worst
    assert np.signbit(erf(np.array([-0.0])))[0] and erf(np.array([0.0]))[0] == 0.0


def test_specials():
    got = erf(np.array([np.nan, np.inf, -np.inf, 6.0, -7.0, 40.0]))
    assert np.isnan(got[0]) and got[1:].tolist() == [1.0, -1.0, 1.0, -1.0, 1.0]
    assert erf(np.array(0.5)).shape == () and float(erf(np.array(0.5))) == float(erf(
        np.array([0.5]))[0])
    assert erf(np.zeros((2, 0))).shape == (2, 0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(EDGES + [0.1, 1.0, 2.0, 4.0, 5.9, 7.0, np.nan, 0.0])
                | st.floats(-8, 8), min_size=1, max_size=12))
def test_an_element_is_computed_alike_whatever_its_neighbours(values):
    x = np.array(values, np.float64)
    together = erf(x)
    alone = np.array([erf(np.array([v]))[0] for v in x])
    nan = np.isnan(x)
    assert np.array_equal(np.isnan(together), nan)
    assert together[~nan].tobytes() == alone[~nan].tobytes()


def test_gelu_erf_in_float64_is_its_formula_to_a_few_ulps():
    # (float32 takes OpenVINO's series instead: tests/kernels/test_gelu_f32.py)
    x = np.linspace(-7, 7, 1001)
    out = np.empty_like(x)
    gelu_erf(x, out)
    want = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x])
    assert np.allclose(out, want, rtol=2 ** -48, atol=2 ** -52)
