"""The pooling fast path for windows that halve each axis (kernels/pool_halving.py: 3-wide at
stride 2 with one element of padding before, 2-wide at stride 2 without): it must give what
the general kernel gives -- MaxPool bit for bit (NaN, -inf, the lowest-value clamp, integers),
AvgPool within the accumulation tolerance (integers exactly) -- for every number of spatial
axes, odd sizes, element type and block size, and be taken exactly where it applies."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec.builder import ModelBuilder
from irexec.kernels import pool, pool_halving, windows
from tests.ops.compute_support import assert_close
from tests.ops.pooling.test_pooling import avg_pool_loop, max_pool_loop, pool_attrs

TYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
         "i32": np.int32, "u32": np.uint32, "u8": np.uint8, "i8": np.int8, "i16": np.int16,
         "i64": np.int64}
SPECIAL = [np.nan, -np.inf, np.inf, 0.0, -0.0, float(np.finfo(np.float32).min)]


def _data(shape, type_name, seed, specials=SPECIAL):
    rng = np.random.default_rng(seed)
    dtype = TYPES[type_name]
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, shape, dtype=np.int64, endpoint=True)
        if rng.random() < 0.5:
            x = rng.integers(0, 4, shape) + (info.min if rng.random() < 0.5 else 0)  # ties
        return x.astype(dtype)
    x = np.round(rng.standard_normal(shape) * 4, 1)  # ties between equal values happen
    if specials:
        mask = rng.random(shape) < rng.choice([0.0, 0.1, 0.5, 1.0])
        x[mask] = rng.choice(specials, int(mask.sum()))
        if rng.random() < 0.2:  # whole channels of NaN or -inf: windows with nothing greater
            x[:, 0] = rng.choice([np.nan, -np.inf])
    with np.errstate(over="ignore"):
        return x.astype(dtype)


@st.composite
def halving_cases(draw):
    """Per axis: 3-wide windows with one before (and 0 or 1 after) or 2-wide without, on even
    or odd sizes, floor or ceil rounding -- mostly where the fast path applies, sometimes
    just beside it (ceil rounding's extra window, padding read after the data)."""
    nsp = draw(st.integers(1, 3))
    kernel, pb, pe, spatial = [], [], [], []
    for _ in range(nsp):
        overlap = draw(st.booleans())
        kernel.append(3 if overlap else 2)
        pb.append(1 if overlap else 0)
        pe.append(draw(st.integers(0, 1)))
        spatial.append(draw(st.integers(2, 9)))
    at = pool_attrs(nsp, kernel, 2, pb, pe, rounding_type=draw(st.sampled_from(
        ["floor", "floor", "ceil"])))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 5)), *spatial)
    return shape, at, draw(st.integers(0, 2**16)), draw(st.integers(1, 6))


def _geometry(shape, at):
    nsp = len(at["kernel"])
    pb, pe, out = windows.geometry(shape[2:], at["kernel"], at["strides"], (1,) * nsp,
                                   at["pads_begin"], at["pads_end"], at["auto_pad"],
                                   at["rounding_type"])
    return at["kernel"], at["strides"], (1,) * nsp, pb, pe, out


def _applies(shape, at):
    """Where the fast path must run: every window inside the data and its begin padding."""
    *_, out = _geometry(shape, at)
    return all(2 * o <= n for o, n in zip(out, shape[2:]))


class _Paths:
    """Run a pool kernel by the fast path (counting its calls) or by the general one."""

    def __init__(self, monkeypatch, rows_per_block, shape, itemsize):
        self.calls = 0
        self.monkeypatch = monkeypatch
        original = pool_halving.pool

        def counted(*args, **kwargs):
            self.calls += 1
            return original(*args, **kwargs)
        monkeypatch.setattr(pool_halving, "pool", counted)
        # small blocks: several of them, the last one short
        per_row = math.prod(shape[2:]) * max(itemsize, 4)
        monkeypatch.setattr(pool_halving, "BLOCK_BYTES", rows_per_block * per_row)

    def general(self, fn, *args):
        with self.monkeypatch.context() as m:
            m.setattr(pool_halving, "modes", lambda *a: None)
            return fn(*args)


@settings(max_examples=150, deadline=None)
@given(halving_cases(), st.sampled_from(sorted(TYPES)))
def test_max_pool_fast_path_equals_the_general_kernel(case, type_name):
    shape, at, seed, rows_per_block = case
    x = _data(shape, type_name, seed)
    kernel, strides, dil, pb, _, out = _geometry(shape, at)
    with pytest.MonkeyPatch.context() as mp:
        paths = _Paths(mp, rows_per_block, shape, x.dtype.itemsize)
        got = pool.max_pool(x, kernel, strides, dil, pb, out)
        assert paths.calls == int(_applies(shape, at))
        want = paths.general(pool.max_pool, x, kernel, strides, dil, pb, out)
    assert got.dtype == want.dtype == x.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    if type_name == "f32":
        np.testing.assert_array_equal(got, max_pool_loop(x, at)[0])


@settings(max_examples=150, deadline=None)
@given(halving_cases(), st.sampled_from(sorted(TYPES)), st.integers(0, 4),
       st.sampled_from([np.int32, np.int64]))
def test_max_pool_indices_fast_path_equals_the_general_kernel(case, type_name, axis,
                                                              index_type):
    """MaxPool-8/14 with its indices read: each axis's pass keeps the offset of its first
    maximum (kernels/pool_halving.max_with_offsets); the same values and indices, bit for
    bit, as the general kernel's scores -- ties, NaN, -inf, windows with no winner, every
    ``axis`` the indices count from."""
    shape, at, seed, rows_per_block = case
    x = _data(shape, type_name, seed)
    axis = min(axis, len(shape) - 1)
    kernel, strides, dil, pb, _, out = _geometry(shape, at)
    args = (x, kernel, strides, dil, pb, out, axis, index_type)
    with pytest.MonkeyPatch.context() as mp:
        paths = _Paths(mp, rows_per_block, shape, x.dtype.itemsize)
        calls = []
        original = pool_halving.max_with_offsets
        mp.setattr(pool_halving, "max_with_offsets",
                   lambda *a, **k: calls.append(1) or original(*a, **k))
        got_values, got_index = pool.max_pool_with_indices(*args)
        assert len(calls) == int(_applies(shape, at)) and paths.calls == 0
        want_values, want_index = paths.general(pool.max_pool_with_indices, *args)
    assert got_values.dtype == want_values.dtype == x.dtype
    assert got_index.dtype == want_index.dtype == index_type
    np.testing.assert_array_equal(got_values, want_values)
    np.testing.assert_array_equal(got_index, want_index)
    if type_name == "f32":
        ref_values, ref_index = max_pool_loop(x, at, axis)
        np.testing.assert_array_equal(got_values, ref_values)
        np.testing.assert_array_equal(got_index, ref_index)


@settings(max_examples=150, deadline=None)
@given(halving_cases(), st.sampled_from(sorted(TYPES)), st.booleans())
def test_avg_pool_fast_path_equals_the_general_kernel(case, type_name, exclude):
    shape, at, seed, rows_per_block = case
    x = _data(shape, type_name, seed, SPECIAL[:-1])  # sums of the lowest value overflow
    if type_name == "i64":
        x >>= 20  # sums exact in f64, whatever their order
    kernel, strides, dil, pb, pe, out = _geometry(shape, at)
    args = (x, kernel, strides, dil, pb, pe, out, exclude)
    with pytest.MonkeyPatch.context() as mp:
        paths = _Paths(mp, rows_per_block, shape, x.dtype.itemsize)
        got = pool.avg_pool(*args)
        assert paths.calls == int(_applies(shape, at))
        want = paths.general(pool.avg_pool, *args)
    ref, mag = avg_pool_loop(x, at, exclude)
    if x.dtype.kind in "iu":  # integer sums are exact in f64: the same rounding
        np.testing.assert_array_equal(got, want)
    else:
        assert_close(got, want, mag, f"{at} exclude={exclude}")
        assert_close(got, ref.astype(x.dtype), mag, f"{at} exclude={exclude}")


def _run(op, version, x, attrs):
    """One pooling layer whose first output alone is read (MaxPool-14's indices unread, as
    converters leave them)."""
    b = ModelBuilder()
    y = b.op(op, b.parameter("x", "f32", list(x.shape)), version=version, **attrs)
    b.result(y[0] if isinstance(y, tuple) else y, "y")
    (got,) = irexec.compile_model(b.build())({"x": x}).values()
    return got


@pytest.mark.parametrize("op, version", [("MaxPool", "opset1"), ("MaxPool", "opset14"),
                                         ("AvgPool", "opset14")])
def test_resnet_pool_through_the_layer(monkeypatch, op, version):
    """ResNet's 3x3/2 pool with padding 1 on 112x112 (blocks of several channels, the last one
    short), through the op: the fast path runs and agrees with the general kernel."""
    x = _data((1, 24, 112, 112), "f32", 5)
    x[0, 3, :9, :9] = np.nan  # a corner window of NaN only
    x[0, 4, -9:, -9:] = -np.inf
    if op == "AvgPool":
        x[~np.isfinite(x)] = 1
    attrs = dict(pool_attrs(2, 3, 2, 1, 1), **({"exclude-pad": False} if op == "AvgPool"
                                               else {}))
    paths = _Paths(monkeypatch, 10, x.shape, 4)
    y = _run(op, version, x, attrs)
    assert paths.calls == 1
    with monkeypatch.context() as m:
        m.setattr(pool_halving, "modes", lambda *a: None)
        want = _run(op, version, x, attrs)
    assert paths.calls == 1
    if op == "MaxPool":
        np.testing.assert_array_equal(y, want)
        assert y[0, 3, 0, 0] == np.finfo(np.float32).min
    else:
        assert_close(y, want, 4 * np.abs(x).max())


def test_strided_and_converted_inputs():
    """A view of larger data (not contiguous) and f16 data (computed in f32) are staged a block
    at a time; the result is the same as from a contiguous f32 copy."""
    base = _data((2, 6, 10, 12), "f32", 7)
    view = base[:, ::2, 1:9, ::-1][..., :10]
    assert not view.flags.c_contiguous
    args = ((3, 2), (2, 2), (1, 1), (1, 0))
    out = (4, 5)
    assert pool_halving.modes(view.shape[2:], *args, out) == (pool_halving.OVERLAP,
                                                             pool_halving.PAIRS)
    np.testing.assert_array_equal(pool.max_pool(view, *args, out),
                                  pool.max_pool(np.ascontiguousarray(view), *args, out))
    half = view.astype(np.float16)
    np.testing.assert_array_equal(pool.max_pool(half, *args, out),
                                  pool.max_pool(half.astype(np.float32), *args, out)
                                  .astype(np.float16))


@pytest.mark.parametrize("spatial, kernel, strides, dilations, pads_begin, out", [
    ((8,), (3,), (2,), (1,), (0,), (3,)),          # no padding before a 3-wide window
    ((8,), (3,), (2,), (1,), (2,), (4,)),          # two before
    ((8,), (3,), (1,), (1,), (1,), (8,)),          # stride 1
    ((8,), (3,), (2,), (2,), (1,), (3,)),          # dilated
    ((8,), (3,), (2,), (1,), (1,), (5,)),          # ceil rounding's window past the data
    ((8,), (2,), (2,), (1,), (1,), (5,)),          # a 2-wide window with padding before
    ((8, 8), (3, 3), (2, 3), (1, 1), (1, 1), (4, 3)),  # one axis of another kind
])
def test_other_windows_take_the_general_kernel(spatial, kernel, strides, dilations,
                                               pads_begin, out):
    assert pool_halving.modes(spatial, kernel, strides, dilations, pads_begin, out) is None
