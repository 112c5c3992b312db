"""2-D depthwise layers of few output positions and many channels (irexec/kernels/conv.py's
``_depthwise_channels_last``: channels-last, tap by tap), held to the float64 direct loop of
reference.py within the accumulating family's tolerance, NaN and infinities included, and
proven to be the path these layers take."""

from __future__ import annotations

import numpy as np
import pytest

from irexec.kernels import conv
from tests.ops.compute_support import assert_close
from tests.ops.convolution.reference import conv as reference

CASES = [  # (batch, channels, spatial, kernel, strides, dilations, pads_begin, pads_end)
    (1, 1152, (2, 2), (5, 5), (1, 1), (1, 1), (2, 2), (2, 2)),
    (1, 672, (4, 4), (5, 5), (1, 1), (1, 1), (2, 2), (2, 2)),
    (2, 384, (4, 4), (3, 3), (1, 1), (1, 1), (1, 1), (1, 1)),
    (1, 128, (5, 3), (3, 2), (1, 1), (2, 1), (2, 0), (1, 1)),
    (1, 200, (4, 4), (3, 3), (1, 1), (1, 1), (0, 0), (0, 0)),  # no padding: 2x2 out
    (1, 160, (3, 3), (1, 3), (1, 1), (1, 1), (0, 1), (0, 1)),
]


def _out(spatial, kernel, strides, dilations, pads_begin, pads_end):
    return tuple((s + b + e - (k - 1) * d - 1) // st + 1 for s, k, st, d, b, e in
                 zip(spatial, kernel, strides, dilations, pads_begin, pads_end))


@pytest.mark.parametrize("n, c, spatial, kernel, strides, dilations, pb, pe", CASES)
def test_against_the_float64_loop(n, c, spatial, kernel, strides, dilations, pb, pe):
    rng = np.random.default_rng(c)
    x = rng.standard_normal((n, c) + spatial, dtype=np.float32)
    w = rng.standard_normal((c, 1, 1) + kernel, dtype=np.float32)
    out = _out(spatial, kernel, strides, dilations, pb, pe)
    assert conv._few_positions(c, 1, out) and not conv._small_strided(kernel, out, strides)
    got = conv.forward(x, w, strides, dilations, pb, out)
    want, magnitude = reference(x, w, strides, dilations, pb, pe)
    assert got.shape == want.shape
    assert_close(got, want.astype(np.float32), magnitude)


def test_nan_and_infinities_reach_their_outputs_only():
    x = np.zeros((1, 256, 4, 4), np.float32)
    x[0, 3, 0, 0] = np.nan
    x[0, 7, 3, 3] = np.inf
    w = np.ones((256, 1, 1, 3, 3), np.float32)
    got = conv.forward(x, w, (1, 1), (1, 1), (1, 1), (4, 4))
    assert np.isnan(got[0, 3, :2, :2]).all() and np.isfinite(got[0, 3, 2:, :]).all()
    assert (got[0, 7, 2:, 2:] == np.inf).all() and np.isfinite(got[0, 7, :2, :]).all()
    assert (got[0, [0, 1, 2, 4, 5, 6, 8]] == 0).all()


def test_more_positions_or_fewer_channels_keep_the_products():
    assert not conv._few_positions(240, 1, (8, 8))
    assert not conv._few_positions(96, 1, (4, 4))
    assert not conv._few_positions(512, 2, (2, 2))  # a depth multiplier: the products
    assert not conv._few_positions(512, 1, (4,))  # one spatial axis
