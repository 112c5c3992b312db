"""The Interpolate kernel's fast paths against its general one.

The kernel applies each axis's [out, taps] positions and weights in the fastest way it finds:
zero weights dropped, repeating rows (a period: output o + p reads the inputs of o shifted by s)
as strided slices, equal weights added before one multiply, the last axis through a transposed
copy, the axes reordered and the leading rows cut into blocks. The general path here applies the
same weights (``axis_weights``, ``nearest_indices``: the formulas test_interpolate.py checks
against the specification) in the plainest way: every tap of every axis gathered with np.take
and summed in float64, axis after axis in the order given. Both must agree to rounding."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.kernels import interpolate as kernel

MODES = ["nearest", "linear", "linear_onnx", "cubic", "bilinear_pillow", "bicubic_pillow",
         "area"]
COORDINATE_MODES = ["half_pixel", "pytorch_half_pixel", "asymmetric", "tf_half_pixel_for_nn",
                    "align_corners"]
NEAREST_MODES = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple"]
RATIOS = [Fraction(2), Fraction(3), Fraction(4), Fraction(1, 2), Fraction(1, 3),
          Fraction(1, 4), Fraction(3, 2), Fraction(2, 3), Fraction(5, 4)]


def general(x, out_shape, axes, scales, at):
    """Every tap of every axis gathered, in float64, axis after axis in the order given."""
    mode = at["mode"]
    if mode == "nearest":
        y = x
        full = dict(zip(axes, scales))
        for axis in range(x.ndim):
            s = full.get(axis, 1.0)
            coords = kernel.original_coordinates(out_shape[axis], x.shape[axis], s,
                                                 at["coordinate_transformation_mode"])
            y = np.take(y, kernel.nearest_indices(coords, at["nearest_mode"], s < 1,
                                                  x.shape[axis]), axis=axis)
        return y
    floats = x.dtype.kind == "f"
    y = x.astype(np.float64)
    antialias = at["antialias"] and any(s < 1 for s in scales)
    pillow = "pillow" in mode
    for axis, s in zip(axes, scales):
        if pillow and out_shape[axis] == x.shape[axis]:
            continue
        pos, w = kernel.axis_weights(mode, out_shape[axis], x.shape[axis], s, at,
                                     s if antialias else 1.0)
        shape = [1] * x.ndim
        shape[axis] = -1
        y = sum(np.take(y, pos[:, t], axis=axis) * w[:, t].reshape(shape)
                for t in range(pos.shape[1]))
        if pillow and not floats:
            y = kernel.round_clip(y, x.dtype).astype(np.float64)
    return y.astype(x.dtype) if floats else kernel.round_clip(y, x.dtype)


def check(x, out_shape, axes, scales, at):
    got = kernel.interpolate(x, out_shape, axes, scales, at)
    want = general(x, out_shape, axes, scales, at)
    assert got.shape == want.shape and got.dtype == x.dtype
    if at["mode"] == "nearest":
        np.testing.assert_array_equal(got, want)
        return
    big = max(1.0, float(np.abs(x.astype(np.float64)).max(initial=0)))
    # f32: a few roundings of values up to ~1.3 * |x| (cubic's weights sum to 1 in absolute
    # value at most ~1.3); f64: the weights of one period may drift by MAX_WEIGHT_DRIFT
    atol = {4: 1e-5, 8: 1e-10}[x.dtype.itemsize] if x.dtype.kind == "f" else 1
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=0,
                               atol=atol * big, err_msg=str((x.shape, out_shape, axes, at)))


def attrs(mode, ctm="half_pixel", nm="round_prefer_floor", antialias=False, cube=-0.75):
    return {"mode": mode, "coordinate_transformation_mode": ctm, "nearest_mode": nm,
            "antialias": antialias, "cube_coeff": cube}


@st.composite
def cases(draw):
    rank = draw(st.integers(1, 4))
    n_axes = draw(st.integers(1, min(rank, 2)))
    axes = sorted(draw(st.permutations(range(rank)))[:n_axes])
    if draw(st.booleans()):
        axes = axes[::-1]
    shape = [draw(st.integers(1, 3)) for _ in range(rank)]
    out_shape = list(shape)
    scales = []
    for a in axes:
        shape[a] = draw(st.integers(1, 40))
        ratio = draw(st.sampled_from(RATIOS + [None]))
        if ratio is None or (shape[a] * ratio).denominator != 1:
            out_shape[a] = draw(st.integers(1, 60))
            scales.append(out_shape[a] / shape[a])
        else:
            out_shape[a] = int(shape[a] * ratio)
            # sizes mode (out / in) or scales mode (the float32 scale, as OpenVINO reads it)
            scales.append(draw(st.sampled_from([out_shape[a] / shape[a],
                                                float(np.float32(float(ratio)))])))
    mode = draw(st.sampled_from(MODES))
    at = attrs(mode, draw(st.sampled_from(COORDINATE_MODES)), draw(st.sampled_from(NEAREST_MODES)),
               draw(st.booleans()), draw(st.sampled_from([-0.75, -0.5])))
    dtype = draw(st.sampled_from(["float32", "float64"] + (["uint8", "int32"] if mode != "nearest"
                                                         else ["int8", "bool"])))
    block = draw(st.sampled_from([1, 200, 5000, kernel.BLOCK_BYTES]))
    return shape, out_shape, axes, scales, at, np.dtype(dtype), block, draw(st.integers(0, 99))


@settings(max_examples=300, deadline=None)
@given(cases())
def test_fast_paths_equal_the_general_path(case):
    shape, out_shape, axes, scales, at, dtype, block, seed = case
    rng = np.random.default_rng(seed)
    if dtype.kind == "f":
        x = rng.standard_normal(shape).astype(dtype)
    elif dtype.kind == "b":
        x = rng.integers(0, 2, shape).astype(bool)
    else:
        x = rng.integers(0, 100, shape).astype(dtype)
    saved = kernel.BLOCK_BYTES
    kernel.BLOCK_BYTES = block
    try:
        check(x, out_shape, axes, scales, at)
    finally:
        kernel.BLOCK_BYTES = saved


# --- the fast paths are taken where they should be ---------------------------------------------

@pytest.mark.parametrize("mode, out_len, in_len, ctm, antialias, expected", [
    ("linear", 224, 112, "half_pixel", False, (2, 1)),
    ("linear_onnx", 224, 112, "half_pixel", False, (2, 1)),
    ("linear_onnx", 224, 112, "asymmetric", False, (2, 1)),
    ("cubic", 224, 112, "half_pixel", False, (2, 1)),
    ("nearest", 224, 112, "asymmetric", False, (2, 1)),
    ("linear", 56, 112, "half_pixel", True, (1, 2)),
    ("linear_onnx", 75, 50, "pytorch_half_pixel", False, (3, 2)),
    ("linear_onnx", 223, 112, "align_corners", False, (2, 1)),  # (out - 1) / (in - 1) = 2
    ("cubic", 150, 112, "half_pixel", False, None),  # 75 / 56: no short period
])
def test_periods_are_found(mode, out_len, in_len, ctm, antialias, expected):
    scale = out_len / in_len
    plan = kernel.plan_axis(mode, out_len, in_len, scale, attrs(mode, ctm),
                            scale if antialias else 1.0)
    if expected is None:
        assert plan.period is None
        return
    p, s, lo, hi = plan.period
    assert (p, s) == expected
    assert lo <= 3 and hi >= out_len - 3  # all but a few rows at each end


def test_zero_weights_are_dropped():
    # linear's triangle spans five taps of which two weigh anything when upsampling by 2
    plan = kernel.plan_axis("linear", 224, 112, 2.0, attrs("linear"), 1.0)
    assert plan.positions.shape == (224, 2)


@pytest.mark.parametrize("mode, size, antialias", [
    ("nearest", 224, False), ("linear", 224, False), ("linear_onnx", 224, False),
    ("cubic", 224, False), ("linear", 56, True), ("bilinear_pillow", 75, False)])
@pytest.mark.parametrize("ctm", ["half_pixel", "align_corners"])
def test_benchmark_shapes_equal_the_general_path(mode, size, antialias, ctm):
    x = np.random.default_rng(3).standard_normal((1, 6, 112, 112)).astype(np.float32)
    check(x, [1, 6, size, size], [2, 3], [size / 112] * 2,
          attrs(mode, ctm, antialias=antialias))


def test_an_unchanged_axis_is_skipped_but_others_are_not():
    # scales [1, 1, 2, 2] on all four axes, as converted ONNX Resize layers often have them
    x = np.random.default_rng(4).standard_normal((2, 3, 9, 10)).astype(np.float32)
    at = attrs("linear_onnx")
    check(x, [2, 3, 18, 20], [0, 1, 2, 3], [1.0, 1.0, 2.0, 2.0], at)
    assert kernel.plan_axis("linear_onnx", 3, 3, 1.0, at, 1.0).is_identity()


@pytest.mark.parametrize("mode", ["linear", "linear_onnx", "cubic"])
def test_a_scale_near_a_ratio_is_not_taken_for_it(mode):
    # scales mode with a float32 scale just below 2: the output has twice the rows, but the
    # coordinates drift from those of 2 by ~3e-8 per row, so no period repeats them exactly
    scale = float(np.float32(1.9999999))
    x = np.random.default_rng(5).standard_normal((2, 112, 5)).astype(np.float64)
    check(x, [2, 224, 5], [1], [scale], attrs(mode))
    assert kernel.plan_axis(mode, 224, 112, scale, attrs(mode), 1.0).period is None


def test_the_last_axis_is_a_matrix_product_where_it_splits_into_chunks():
    f32 = np.dtype(np.float32)
    for mode, out_len, antialias in (("linear", 224, False), ("linear_onnx", 224, False),
                                     ("cubic", 224, False), ("linear", 56, True)):
        scale = out_len / 112
        plan = kernel.plan_axis(mode, out_len, 112, scale, attrs(mode),
                                scale if antialias else 1.0)
        size_in, size_out, count, matrix, _, _ = plan.chunks(f32)
        assert count * size_in == 112 and count * size_out == out_len
        assert matrix.dtype == f32
    # nearest copies (exact for every type): no matrix product
    assert kernel.plan_axis("nearest", 224, 112, 2.0, attrs("nearest"), 1.0).chunks(f32) is None


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
@pytest.mark.filterwarnings("error")
def test_a_non_finite_input_spreads_only_to_the_outputs_that_read_it(bad):
    x = np.random.default_rng(6).standard_normal((2, 4, 112)).astype(np.float32)
    x[1, 2, 50] = bad
    x[1, 3, 7] = -bad  # an infinity of each sign: their sum is NaN
    for mode, size in (("linear_onnx", 224), ("cubic", 224), ("linear", 56)):
        at = attrs(mode, antialias=size < 112)
        y = kernel.interpolate(x, [2, 4, size], [2], [size / 112], at)
        plan = kernel.plan_axis(mode, size, 112, size / 112, at, size / 112 if size < 112 else 1)
        for row, at_ in ((2, 50), (3, 7)):
            reads = np.any((plan.positions == at_) & (plan.weights != 0), axis=1)
            assert np.isfinite(y[1, row, ~reads]).all(), mode
            assert not np.isfinite(y[1, row, reads]).any(), mode
        assert np.isfinite(y[1, :2]).all() and np.isfinite(y[0]).all()


def test_values_too_large_to_square_take_the_other_paths_correctly():
    # the finiteness check squares the data: 3e30 overflows there but is an ordinary f32
    x = np.zeros((2, 3, 112), np.float32)
    x[1, 2, 50] = 3e30
    for mode, size in (("linear_onnx", 224), ("cubic", 224), ("linear", 56)):
        at = attrs(mode, antialias=size < 112)
        got = kernel.interpolate(x, [2, 3, size], [2], [size / 112], at)
        want = general(x, [2, 3, size], [2], [size / 112], at)
        assert np.isfinite(got).all()
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)


@pytest.mark.parametrize("bad", [np.inf, np.nan])
@pytest.mark.parametrize("mode,coordinates,size,n", [
    ("linear_onnx", "half_pixel", 51, 17), ("linear_onnx", "align_corners", 31, 17),
    ("linear_onnx", "asymmetric", 32, 17), ("cubic", "asymmetric", 34, 17),
    ("cubic", "half_pixel", 51, 17), ("cubic", "asymmetric", 8, 16),
    ("cubic", "half_pixel", 6, 18)])
@pytest.mark.filterwarnings("error")
def test_a_non_finite_input_reaches_the_outputs_that_read_it_with_a_zero_weight(
        mode, coordinates, size, n, bad):
    """At these scales some outputs fall exactly on an input, and read its neighbours with
    weight 0: 0 * inf and 0 * NaN are NaN there, as OpenVINO's CPU plugin gives (and the
    general path, which multiplies every tap; cubic's four taps even where a whole column
    weighs 0, as when downscaling by 2 or 3). The fast paths drop zero weights, so such an
    input takes every tap; the NaN and infinities are where the general path has them."""
    x = np.random.default_rng(7).standard_normal((2, 3, n)).astype(np.float32)
    x[1, 2, 5] = bad
    at = dict(attrs(mode), coordinate_transformation_mode=coordinates)
    got = kernel.interpolate(x, [2, 3, size], [2], [size / n], at)
    with np.errstate(invalid="ignore"):
        want = general(x, [2, 3, size], [2], [size / n], at)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    assert kernel.plan_axis(mode, size, n, size / n, at, 1.0).drops
    np.testing.assert_allclose(got[np.isfinite(want)], want[np.isfinite(want)], rtol=1e-5,
                               atol=1e-6)
    clean = kernel.interpolate(np.nan_to_num(x), [2, 3, size], [2], [size / n], at)
    assert np.isfinite(clean).all()  # the finite data takes the fast paths, as before
