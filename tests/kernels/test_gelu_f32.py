"""kernels/special.gelu_erf in float32 (erfc by Abramowitz and Stegun's 7.1.26, in blocks):
within the transcendental family's f32 tolerance of the exact value everywhere, the same through
any layout, and float64 unchanged (fdlibm's erf)."""

import math

import numpy as np

from irexec import numerics
from irexec.ir import element_type as et_table
from irexec.kernels import special


def _exact(x):
    return np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.astype(np.float64)])


def test_f32_within_the_transcendental_tolerance_over_a_dense_sweep():
    # every 1/2048 over [-12, 12] (the negative side is where 1 + erf cancels), past the
    # saturation of erf, and more than one block of GELU_BLOCK elements
    x = np.arange(-12 * 2048, 12 * 2048 + 1, dtype=np.float32) / np.float32(2048)
    assert x.size > special.GELU_BLOCK
    got = np.empty_like(x)
    special.gelu_erf(x, got)
    tol = numerics.tolerance("transcendental", et_table.from_name("f32"))
    exact = _exact(x)
    err = np.abs(got.astype(np.float64) - exact)
    assert np.all(err <= tol.bound(exact)), x[err > tol.bound(exact)]
    assert got[x > 6].tolist() == x[x > 6].tolist()  # erf is 1 in f32 there


def test_f32_same_in_place_and_through_strided_views():
    x = np.random.default_rng(1).standard_normal((6, 50, 70)).astype(np.float32) * 3
    want = np.empty_like(x)
    special.gelu_erf(x, want)
    same = x.copy()
    special.gelu_erf(same, same)  # in place
    assert np.array_equal(same, want)
    t = x.transpose(2, 0, 1)  # a strided input
    out = np.empty(t.shape, np.float32)
    special.gelu_erf(t, out)
    assert np.array_equal(out, want.transpose(2, 0, 1))
    strided = np.empty((70, 6, 50), np.float32).transpose(1, 2, 0)  # a strided output
    special.gelu_erf(x, strided)
    assert np.array_equal(strided, want)


def test_f64_keeps_fdlibm_erf():
    x = np.linspace(-7, 7, 3001)
    got = np.empty_like(x)
    special.gelu_erf(x, got)
    np.testing.assert_allclose(got, _exact(x), rtol=1e-14, atol=1e-300)


def test_f32_special_values():
    x = np.array([np.nan, np.inf, 0.0, -0.0, 1e30, -1e30, -40.0, 40.0], np.float32)
    got = np.empty_like(x)
    with np.errstate(all="ignore"):
        special.gelu_erf(x, got)
    assert np.isnan(got[0])
    assert got[1] == np.inf
    assert got[2] == 0 and got[3] == 0 and np.signbit(got[3])
    assert got[4] == np.float32(1e30) and got[5] == 0 and got[6] == 0 and got[7] == 40


def test_f32_infinities_and_signed_zero_keep_their_limits():
    # |x| Q(|x|) with |x| infinite would be inf * 0: the product holds |x| at a cap
    x = np.array([-np.inf, np.inf, -0.0, 0.0, -1e-30, 1e-30], np.float32)
    got = np.empty_like(x)
    special.gelu_erf(x, got)
    assert got[0] == 0 and got[1] == np.inf
    assert got[2] == 0 and np.signbit(got[2]) and got[3] == 0 and not np.signbit(got[3])
    assert got[4] == np.float32(-5e-31) and got[5] == np.float32(5e-31)
