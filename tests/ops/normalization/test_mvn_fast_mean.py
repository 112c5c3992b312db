"""MVN's kernel takes its means without np.mean's wrapper (ops/normalization/mvn.py): the
results are np.mean's bit for bit, on random shapes (empty ones too), types, axes and modes."""

import warnings

import numpy as np

from irexec.kernels.numeric import compute_dtype, narrow
from irexec.ops.normalization import mvn as mvn_op


def _with_np_mean(x, axes, normalize_variance, eps, inside_sqrt):
    ct = compute_dtype(x.dtype)
    xc = x.astype(ct, copy=False)
    centred = xc - xc.mean(axis=axes, keepdims=True, dtype=ct) if axes else xc - xc
    if normalize_variance:
        variance = np.mean(centred * centred, axis=axes, keepdims=True, dtype=ct) if axes \
            else np.zeros_like(centred)
        e = ct.type(eps)
        centred = centred / (np.sqrt(variance + e) if inside_sqrt else np.sqrt(variance) + e)
    return narrow(centred, x.dtype)


def test_mvn_equals_the_np_mean_form_bit_for_bit():
    rng = np.random.default_rng(7)
    for i in range(240):
        shape = tuple(int(d) for d in rng.integers(0, 6, size=rng.integers(0, 5)))
        dtype = (np.float32, np.float64, np.float16)[i % 3]
        x = (rng.standard_normal(shape) * rng.choice([1e-3, 1.0, 1e3])).astype(dtype)
        axes = tuple(sorted({int(a) for a in rng.integers(0, len(shape),
                                                          size=rng.integers(0, len(shape) + 1))}))
        for normalize_variance in (True, False):
            for inside in (True, False):
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # the mean of nothing
                    got = mvn_op.mvn(x, axes, normalize_variance, 1e-5, inside)
                    want = _with_np_mean(x, axes, normalize_variance, 1e-5, inside)
                assert got.dtype == want.dtype and got.shape == want.shape
                assert np.array_equal(got, want, equal_nan=True), (shape, dtype, axes)


def test_f32_means_divided_in_f32_are_np_means_bit_for_bit():
    # f32 sums divided by the count in f32 (not f64): the same bits, tiny, huge and subnormal
    # means included, and long axes
    rng = np.random.default_rng(11)
    for scale in (1e-42, 1e-38, 1e-3, 1.0, 1e30, 3e38):
        for count in (1, 3, 7, 48, 4097):
            x = (rng.standard_normal((3, count)) * scale).astype(np.float32)
            with np.errstate(all="ignore"):
                got = mvn_op._mean(x, (1,), count)
                want = x.mean(axis=(1,), keepdims=True, dtype=np.float32)
            assert got.dtype == want.dtype
            assert np.array_equal(got, want, equal_nan=True), (scale, count)
