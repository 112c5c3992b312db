"""kernels/special.exp_scaled: exp(c x) as numpy's exp2 of (c log2 e) x in float32. The functions
built on it (Swish, attention's softmax weights) stay within the transcendental family's f32
tolerance of the exact value over a dense sweep, tails included (Sigmoid, on numpy's exp, too);
float64 keeps numpy's exp."""

import math

import numpy as np
import pytest

from irexec import numerics
from irexec.ir import element_type as et_table
from irexec.kernels import special
from irexec.kernels.numeric import ignoring
from irexec.ops.activation.swish import swish
from irexec.ops.activation.unary import sigmoid
from irexec.ops.sequence.scaled_dot_product_attention import ScaledDotProductAttention

TOL = numerics.tolerance("transcendental", et_table.from_name("f32"))
SWEEP = np.arange(-100 * 256, 100 * 256 + 1, dtype=np.float32) / np.float32(256)


def _within(got, exact):
    err = np.abs(got.astype(np.float64) - exact)
    assert np.all(err <= TOL.bound(exact)), SWEEP[err > TOL.bound(exact)][:8]


def test_exp_scaled_is_exp_near_the_origin_and_exp_in_f64():
    x = np.linspace(-4, 4, 4001, dtype=np.float32)
    got = special.exp_scaled(x, -1.5, np.empty_like(x))
    exact = np.exp(-1.5 * x.astype(np.float64))
    assert np.max(np.abs(got / exact - 1)) < 2e-6  # |c x| <= 6 here
    w = x.astype(np.float64)
    assert np.array_equal(special.exp_scaled(w, -1.5, np.empty_like(w)), np.exp(-1.5 * w))


def test_sigmoid_within_tolerance_over_a_dense_sweep():
    got = np.empty_like(SWEEP)
    with ignoring():
        sigmoid(SWEEP, got)
    _within(got, 1 / (1 + np.exp(-SWEEP.astype(np.float64))))


@pytest.mark.parametrize("beta", [None, np.float32(0.75), np.float32(2.5)])
def test_swish_within_tolerance_over_a_dense_sweep(beta):
    got = np.empty_like(SWEEP)
    with ignoring():
        swish(SWEEP, got, beta)
    b = 1.0 if beta is None else float(beta)
    w = SWEEP.astype(np.float64)
    _within(got, w / (1 + np.exp(-b * w)))


@pytest.mark.parametrize("causal", [False, True])
def test_attention_weights_within_tolerance(causal):
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((2, 3, 9, 16)).astype(np.float32) * 3 for _ in range(3))
    got = ScaledDotProductAttention.kernel(q, k, v, causal=causal)
    s = (q.astype(np.float64) @ k.astype(np.float64).swapaxes(-1, -2)) / math.sqrt(16)
    if causal:
        s = np.where(np.triu(np.ones((9, 9), bool), 1), -np.inf, s)
    w = np.exp(s - s.max(-1, keepdims=True))
    want = (w / w.sum(-1, keepdims=True)) @ v.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
