"""Interval rules of irexec/ops/bounds.py: for any values inside the input bounds, the op's
result lies inside the output bounds (checked on random intervals and points)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.ir.shape import Dimension, PartialShape
from irexec.ops import bounds

ends = st.one_of(st.integers(-50, 50).map(float), st.just(np.inf), st.just(-np.inf))


@st.composite
def interval(draw):
    a, b = draw(ends), draw(ends)
    lo, hi = min(a, b), max(a, b)
    if lo == np.inf or hi == -np.inf:
        lo = hi = 0.0
    finite_lo = lo if np.isfinite(lo) else (hi - 60 if np.isfinite(hi) else -60)
    finite_hi = hi if np.isfinite(hi) else finite_lo + 60
    point = draw(st.integers(int(finite_lo), int(finite_hi)))
    return (np.array([lo]), np.array([hi])), point


def inside(b, value):
    lo, hi = b
    return lo[0] <= value <= hi[0]


@settings(max_examples=300, deadline=None)
@given(a=interval(), b=interval(), floor=st.booleans())
def test_results_stay_inside_the_bounds(a, b, floor):
    (ia, x), (ib, y) = a, b
    assert inside(bounds.add(ia, ib), x + y)
    assert inside(bounds.subtract(ia, ib), x - y)
    assert inside(bounds.multiply(ia, ib), x * y)
    if y != 0:
        q = x // y if floor else int(x / y)
        assert inside(bounds.divide(ia, ib, floor), q)


def test_shape_of_bounds_and_dims_back():
    lo, hi = bounds.of_shape(PartialShape([(1, 8), -1, 768]))
    assert lo.tolist() == [1, 0, 768] and hi.tolist() == [8, np.inf, 768]
    assert bounds.as_dims((lo, hi)) == [Dimension(1, 8), Dimension.dynamic(),
                                        Dimension.static(768)]


def test_exact_values_and_back():
    b = bounds.exact(np.array([2**63 - 1, 3], np.uint64))
    assert bounds.as_values(b, np.int64) is None  # beyond 2**53: not trusted as values
    b = bounds.exact(np.array([4, 3], np.int32))
    assert bounds.as_values(b, np.int32).tolist() == [4, 3]
