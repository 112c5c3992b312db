"""Strided depthwise layers of few columns per channel (irexec/kernels/conv.py's
``_small_strided``) run as im2col columns and one batched product: the same products as the
phase path (``_depthwise``), so the same results bit for bit, and within the float64 direct
loop's tolerance."""

from __future__ import annotations

import math

import numpy as np
import pytest

from irexec.kernels import conv, windows
from tests.ops.compute_support import assert_close
from tests.ops.convolution.reference import conv as reference

CASES = [  # (channels, spatial, kernel, strides, dilations, pads, multiplier, batch)
    (96, (32, 32), (3, 3), (2, 2), (1, 1), (1, 1), 1, 1),
    (144, (16, 16), (5, 5), (2, 2), (1, 1), (2, 2), 1, 1),
    (672, (4, 4), (5, 5), (2, 2), (1, 1), (2, 2), 1, 1),
    (8, (9, 11), (3, 2), (2, 3), (2, 1), (1, 0), 2, 2),
    (5, (17,), (3,), (2,), (1,), (1,), 1, 3),
    (4, (6, 7, 5), (3, 3, 3), (2, 1, 2), (1, 1, 1), (1, 1, 0), 1, 1),
]


def _phases(x, w, strides, dilations, pads, out):
    """The result of the phase path, which these layers took before."""
    n, g = x.shape[:2]
    co = w.shape[1]
    y = np.empty((n, g * co) + tuple(out), np.float32)
    conv._depthwise(x, w, out, strides, dilations, pads, np.dtype(np.float32),
                    y.reshape((n * g, co) + tuple(out)))
    return y


@pytest.mark.parametrize("c, spatial, kernel, strides, dilations, pads, mult, batch", CASES)
def test_same_bits_as_the_phase_path(c, spatial, kernel, strides, dilations, pads, mult, batch):
    rng = np.random.default_rng(c)
    x = rng.standard_normal((batch, c) + spatial, dtype=np.float32)
    w = rng.standard_normal((c, mult, 1) + kernel, dtype=np.float32)
    reach = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    out = tuple((s + 2 * p - r) // st + 1 for s, p, r, st in zip(spatial, pads, reach, strides))
    assert conv._small_strided(kernel, out, strides)
    got = conv.forward(x, w, strides, dilations, pads, out)
    assert np.array_equal(got, _phases(x, w, strides, dilations, pads, out))
    want, magnitude = reference(x, w, strides, dilations, pads, pads)
    assert want.shape == got.shape
    assert_close(got, want.astype(np.float32), magnitude)


def test_larger_layers_keep_the_phase_path():
    assert not conv._small_strided((3, 3), (28, 28), (2, 2))  # [1,144,56,56] 3x3/2
    assert not conv._small_strided((3, 3), (4, 4), (1, 1))  # stride 1: the rows path
    assert conv.forward_scratch((1, 96, 32, 32), np.float32, (96, 1, 1, 3, 3), (2, 2), (1, 1),
                                (1, 1), (16, 16)) == \
        96 * math.prod(windows.reach((16, 16), (3, 3), (2, 2), (1, 1))) * 4 + 96 * 9 * 256 * 4
