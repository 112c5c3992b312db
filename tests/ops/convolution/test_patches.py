"""A kernel the size of its stride over data it tiles exactly (a ViT's patch embedding) takes
its im2col columns by splitting the data's axes (kernels/conv.py ``_patches``): the same
columns element for element as the window view's, so the same output bit for bit, in every
float type and rank."""

from __future__ import annotations

import numpy as np
import pytest

from irexec.kernels import conv
from irexec.kernels.numeric import compute_dtype

CASES = [((1, 3, 32, 32), (8, 8)), ((2, 5, 12, 18), (3, 6)), ((1, 4, 16), (4,)),
         ((1, 2, 8, 8, 8), (2, 4, 2)), ((1, 3, 64, 64), (16, 16)), ((3, 1, 6, 6), (1, 1))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("shape, kernel", CASES)
def test_patches_give_the_window_views_columns(monkeypatch, shape, kernel, dtype):
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((1, 7, shape[1]) + kernel).astype(dtype)
    out = [s // k for s, k in zip(shape[2:], kernel)]
    ones = (1,) * len(kernel)
    called = []
    real = conv._patches
    monkeypatch.setattr(conv, "_patches", lambda *a: (called.append(1), real(*a))[1])
    got = conv.forward(x, w, kernel, ones, (0,) * len(kernel), out).copy()
    assert called or max(kernel) == 1  # (a 1x1 kernel takes the product of the data itself)
    ct = compute_dtype(x.dtype)
    want = np.empty_like(got)
    conv._im2col(x, w.astype(ct), out, kernel, ones, ct,
                 want.reshape((shape[0], 1, 7, out[0], -1)))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_padded_or_overlapping_windows_take_the_general_path(monkeypatch):
    monkeypatch.setattr(conv, "_patches", lambda *a: pytest.fail("not a patch layer"))
    x = np.ones((1, 2, 8, 8), np.float32)
    w = np.ones((1, 3, 2, 4, 4), np.float32)
    conv.forward(x, w, (4, 4), (1, 1), (1, 1), [2, 2])  # padded
    conv.forward(x, w, (2, 2), (1, 1), (0, 0), [3, 3])  # overlapping
    conv.forward(np.ones((1, 2, 9, 8), np.float32), w, (4, 4), (1, 1), (0, 0), [2, 2])  # a rest
