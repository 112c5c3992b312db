"""Large strided kernels (a ResNet's 7x7/2 stem) have their im2col columns copied from the
stride phases of the last axis (irexec/kernels/conv.py's ``_phase_columns``): the same columns
as the window view's copy, element for element, so the same product and the same results bit
for bit; and the layer within the float64 direct loop's tolerance."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.kernels import conv, windows
from tests.ops.compute_support import assert_close
from tests.ops.convolution.reference import conv as reference


@st.composite
def phase_cases(draw):
    """A grouped convolution whose last axis has a stride of 2 or 3 and more than
    PHASE_TAPS_PER_STRIDE taps per stride, any other axes, dilations and pads."""
    nsp = draw(st.integers(1, 3))
    strides = [draw(st.integers(1, 3)) for _ in range(nsp - 1)] + [draw(st.integers(2, 3))]
    least = conv.PHASE_TAPS_PER_STRIDE * strides[-1] + 1
    kernel = [draw(st.integers(1, 3)) for _ in range(nsp - 1)] + \
        [draw(st.integers(least, least + 3))]
    dilations = [draw(st.integers(1, 2)) for _ in range(nsp)]
    pads = [draw(st.integers(0, 3)) for _ in range(nsp)]
    spatial = [draw(st.integers(max(1, (k - 1) * d + 1 - 2 * p), (k - 1) * d + 9))
               for k, d, p in zip(kernel, dilations, pads)]
    return (draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 3)),
            draw(st.integers(1, 4)), spatial, kernel, strides, dilations, pads,
            draw(st.sampled_from([np.float32, np.float16, np.float64, np.int32])),
            draw(st.integers(0, 2**16)))


@settings(max_examples=60, deadline=None)
@given(phase_cases())
def test_phase_columns_are_the_window_views_columns(case):
    n, g, ci, co, spatial, kernel, strides, dilations, pads, dtype, seed = case
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((n, g * ci) + tuple(spatial)) * 8).astype(dtype)
    out = [(s + 2 * p - (k - 1) * d - 1) // st + 1
           for s, p, k, d, st in zip(spatial, pads, kernel, dilations, strides)]
    assert conv._phase_columns_apply(kernel, strides)
    ends = windows.reach(out, kernel, strides, dilations)
    xp = windows.pad(x, pads, ends)
    ct = np.dtype(np.float32) if dtype == np.float16 else np.dtype(dtype)
    view = windows.window_view(xp, out, kernel, strides, dilations)
    view = view.reshape((n, g, ci) + tuple(out) + tuple(kernel))
    nsp = len(kernel)
    want = np.ascontiguousarray(view.transpose((0, 1, 2) + tuple(range(3 + nsp, 3 + 2 * nsp))
                                               + tuple(range(3, 3 + nsp))), ct)
    got = conv._phase_columns(xp, g, ci, out, kernel, strides, dilations, ct)
    assert got.dtype == ct and got.flags.c_contiguous
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.fixture
def phase_calls(monkeypatch):
    calls = []
    real = conv._phase_columns

    def spy(*args):
        calls.append(args[0].shape)
        return real(*args)

    monkeypatch.setattr(conv, "_phase_columns", spy)
    return calls


@pytest.mark.parametrize("kernel, strides, taken", [((7, 7), (2, 2), True),
                                                    ((3, 3), (2, 2), False),
                                                    ((5, 5), (2, 2), False),
                                                    ((7, 7), (1, 1), False)])
def test_the_stem_takes_the_phases_and_matches_the_direct_loop(phase_calls, kernel, strides,
                                                               taken):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 3, 40, 36)).astype(np.float32)
    w = rng.standard_normal((1, 8, 3) + kernel).astype(np.float32)
    pads = (kernel[0] // 2, kernel[1] // 2)
    want, mag = reference(x, w, strides, (1, 1), pads, pads)
    y = conv.forward(x, w, strides, (1, 1), pads, want.shape[2:])
    assert_close(y, want.astype(np.float32), mag, f"{kernel}/{strides}")
    assert bool(phase_calls) == taken


def test_the_memory_rule_counts_the_phases():
    """forward_scratch holds the padded data, its phase copy and the columns (the memory
    budget sees every temporary the path makes)."""
    shape, w_shape = (1, 3, 40, 36), (1, 8, 3, 7, 7)
    strides, dilations, pads = (2, 2), (1, 1), (3, 3)
    out = (20, 18)
    ends = windows.reach(out, w_shape[3:], strides, dilations)  # (45, 41)
    padded = 3 * ends[0] * ends[1] * 4
    phases = 3 * ends[0] * 2 * 21 * 4  # 41 elements split in 2 phases of 21
    columns = 3 * 49 * out[0] * out[1] * 4
    got = conv.forward_scratch(shape, np.float32, w_shape, strides, dilations, pads, out)
    assert got == padded + phases + columns
