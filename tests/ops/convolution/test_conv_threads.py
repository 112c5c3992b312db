"""A convolution's product of kernels/blas.py's SMALL_MACS multiply-adds or more takes the free
cores, a smaller one one thread: the same results
bit for bit either way (OpenBLAS splits a product by rows and columns of the output, never
along the summed axis)."""

from __future__ import annotations

import numpy as np
import pytest

from irexec.kernels import blas, conv

LAYERS = [  # (data, grouped weights, strides, pads): a ResNet's and a MobileNet's layers
    ((1, 16, 56, 56), (1, 16, 16, 3, 3), (1, 1), (1, 1)),
    ((1, 32, 28, 28), (1, 64, 32, 3, 3), (2, 2), (1, 1)),
    ((1, 128, 7, 7), (1, 128, 128, 3, 3), (1, 1), (1, 1)),
    ((1, 3, 112, 112), (1, 16, 3, 7, 7), (2, 2), (3, 3)),
    ((1, 32, 112, 112), (1, 16, 32, 1, 1), (1, 1), (0, 0)),
    ((1, 96, 56, 56), (1, 24, 96, 1, 1), (1, 1), (0, 0)),
    ((2, 48, 28, 28), (2, 24, 24, 3, 3), (1, 1), (1, 1)),
]


def _multi_threaded():
    blas.threads()
    if blas._set is None:
        pytest.skip("numpy's BLAS is not a multi-threaded OpenBLAS here")


@pytest.mark.parametrize("x_shape, w_shape, strides, pads", LAYERS)
def test_one_or_two_threads_give_the_same_bits(monkeypatch, x_shape, w_shape, strides, pads):
    _multi_threaded()
    rng = np.random.default_rng(sum(x_shape) + sum(w_shape))
    x = rng.standard_normal(x_shape, dtype=np.float32)
    w = rng.standard_normal(w_shape, dtype=np.float32)
    kernel = w_shape[3:]
    out = [(s + 2 * p - k) // st + 1 for s, p, k, st in zip(x_shape[2:], pads, kernel, strides)]
    counts, results = [], []
    real_enter = blas._enter
    monkeypatch.setattr(blas, "_enter", lambda wanted: (counts.append(wanted),
                                                        real_enter(wanted))[1])
    for cores in (1, 2):
        monkeypatch.setattr(blas, "free_cores", lambda cores=cores: cores)
        results.append(conv.forward(x, w, strides, (1, 1), pads, out).copy())
    np.testing.assert_array_equal(results[0].view(np.uint32), results[1].view(np.uint32))
    gc, co, ci = w_shape[:3]
    work = co * ci * int(np.prod(kernel)) * int(np.prod(out))
    if work >= blas.SMALL_MACS:  # the product took the free cores: 1, then 2
        assert counts[-1] == 2 and 1 in counts
    else:
        assert set(counts) <= {1}


def test_the_free_cores_from_small_macs(monkeypatch):
    _multi_threaded()
    seen = []
    real_enter = blas._enter
    monkeypatch.setattr(blas, "_enter", lambda wanted: (seen.append(wanted),
                                                        real_enter(wanted))[1])
    monkeypatch.setattr(blas, "free_cores", lambda: 2)
    b = np.ones((256, 256), np.float32)
    blas.matmul(np.ones((8, 256), np.float32), b)  # 0.5M multiply-adds: one thread
    blas.matmul(np.ones((64, 256), np.float32), b)  # 4.2M: the free cores
    assert seen == [1, 2]
