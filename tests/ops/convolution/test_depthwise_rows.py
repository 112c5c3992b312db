"""The stride-1 depthwise path of irexec/kernels/conv.py (``_depthwise_rows``: every tap one
stretch of a flat zero-padded channel, output rows as long as the input's), held to the
float64 direct loop of reference.py, including NaN and infinities next to the row ends (where
the path reads the neighbouring row's data and must zero it), and proven to be the path taken
for the benchmark's layer."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec.builder import ModelBuilder
from irexec.kernels import conv
from tests.ops.compute_support import assert_close
from tests.ops.convolution.reference import conv as reference


@pytest.fixture
def rows_calls(monkeypatch):
    """How many times the kernel took the flat-row path."""
    calls = []
    real = conv._depthwise_rows

    def spy(*args):
        calls.append(args[0].shape)
        return real(*args)

    monkeypatch.setattr(conv, "_depthwise_rows", spy)
    return calls


def _check(y, want, mag, what):
    """Equal non-finite values (NaN where NaN), the finite ones within the tolerance."""
    want32 = want.astype(y.dtype)
    nan = np.isnan(want32)
    assert np.array_equal(np.isnan(y), nan), what
    inf = np.isinf(want32)
    assert np.array_equal(y[inf], want32[inf]), what
    fin = ~(nan | inf)
    assert_close(y[fin], want32[fin], mag[fin], what)


@st.composite
def row_cases(draw):
    """A depthwise convolution the flat-row path takes: stride 1, pads on the last axis
    adding up to the kernel's reach - 1 (any split), any pads on the row axis."""
    nsp = draw(st.sampled_from([1, 2, 2, 2]))
    kernel = [draw(st.integers(1, 4)) for _ in range(nsp)]
    dilations = [draw(st.integers(1, 2)) for _ in range(nsp)]
    reach = [(k - 1) * d for k, d in zip(kernel, dilations)]
    spatial = [draw(st.integers(1, 7)) for _ in range(nsp)]
    left = draw(st.integers(0, reach[-1]))
    pb, pe = [left], [reach[-1] - left]
    if nsp == 2:
        top = draw(st.integers(0, 3))
        low = max(0, reach[0] + 1 - spatial[0] - top)  # at least one output row
        pb, pe = [top] + pb, [draw(st.integers(low, low + 3))] + pe
    n = draw(st.integers(1, 2))
    groups = draw(st.integers(2, 5))
    co = draw(st.sampled_from([1, 1, 2]))
    special = draw(st.lists(st.sampled_from([np.nan, np.inf, -np.inf]), max_size=4))
    return n, groups, co, spatial, kernel, dilations, pb, pe, special, draw(st.integers(0, 2**16))


@settings(max_examples=150, deadline=None)
@given(row_cases(), st.sampled_from([np.float32, np.float64]), st.sampled_from([1 << 20, 64]))
def test_rows_path_equals_the_direct_loop(case, dtype, cols_bytes):
    n, groups, co, spatial, kernel, dilations, pb, pe, special, seed = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, groups, *spatial)).astype(dtype)
    flat = x.reshape(-1)
    for value in special:  # often at a row's first or last element: what the wrap reads
        at = rng.integers(flat.size)
        if rng.integers(2):
            at = at // spatial[-1] * spatial[-1] + (spatial[-1] - 1) * int(rng.integers(2))
        flat[at] = value
    w = rng.standard_normal((groups, co, 1, *kernel)).astype(dtype)
    strides = (1,) * len(spatial)
    with np.errstate(invalid="ignore"):
        want, mag = reference(x, w, strides, dilations, pb, pe)
    assert conv._rows_apply(x.shape[2:], kernel, want.shape[2:], strides, dilations, pb)
    saved = conv.COLS_BYTES
    conv.COLS_BYTES = cols_bytes  # every channel in one block, or one channel a block
    try:
        with np.errstate(invalid="ignore", over="ignore"):
            y = conv.forward(x, w, strides, dilations, pb, want.shape[2:])
    finally:
        conv.COLS_BYTES = saved
    assert y.dtype == dtype
    _check(y, want, mag, f"{case}")


@pytest.mark.parametrize("dtype", [np.int32, np.float16])
def test_rows_path_integers_exactly_and_f16_widened(dtype, rows_calls):
    rng = np.random.default_rng(5)
    x = rng.integers(-9, 10, (2, 3, 5, 6)).astype(dtype)
    w = rng.integers(-3, 4, (3, 2, 1, 3, 3)).astype(dtype)
    want, _ = reference(x, w, (1, 1), (1, 1), (0, 1), (2, 1))
    y = conv.forward(x, w, (1, 1), (1, 1), (0, 1), want.shape[2:])
    assert rows_calls
    if dtype == np.int32:
        assert y.dtype == np.int32 and np.array_equal(y, want.astype(np.int32))
    else:  # small integers: every sum exact in the f32 the kernel computes in
        assert y.dtype == np.float32 and np.array_equal(y, want.astype(np.float32))


@pytest.mark.parametrize("strides, dilations, pads, out", [
    ((2, 2), (1, 1), ((1, 1), (1, 1)), (4, 4)),  # strided
    ((1, 1), (1, 1), ((1, 1), (1, 0)), (8, 7)),  # rows a column shorter than the input's
    ((1, 1), (1, 1), ((0, 0), (0, 0)), (6, 6)),  # valid padding
])
def test_other_depthwise_layers_take_the_phase_path(strides, dilations, pads, out, rows_calls):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 4, 8, 8)).astype(np.float32)
    w = rng.standard_normal((4, 1, 1, 3, 3)).astype(np.float32)
    want, mag = reference(x, w, strides, dilations, *pads)
    assert want.shape[2:] == out
    y = conv.forward(x, w, strides, dilations, pads[0], out)
    assert not rows_calls
    assert_close(y, want.astype(np.float32), mag, f"{strides} {pads}")


def _depthwise_model(shape, precision=None):
    c = shape[1]
    w = np.random.default_rng(1).standard_normal((c, 1, 1, 3, 3)).astype(np.float32)
    m = ModelBuilder("dw")
    y = m.op("GroupConvolution", m.parameter("x", "f32", list(shape)), m.constant(w), name="y",
             strides=(1, 1), pads_begin=(1, 1), pads_end=(1, 1), dilations=(1, 1))
    m.result(y, "out")
    config = None if precision is None else {"precision": precision}
    return irexec.compile_model(m.build(), config=config), w


def test_the_benchmark_layer_takes_the_rows_path_in_a_run(rows_calls):
    """the compute bench's (tools/bench/compute.py) depthwise 3x3 on [1,64,56,56]; run twice, the second call's
    temporaries are the scratch the first call left its data in."""
    compiled, w = _depthwise_model((1, 64, 56, 56))
    x = np.random.default_rng(0).standard_normal((1, 64, 56, 56)).astype(np.float32)
    first = compiled({"x": x})["y"]
    second = compiled({"x": x * 2})["y"]
    assert rows_calls == [(1, 64, 56, 56)] * 2
    want, mag = reference(x, w, (1, 1), (1, 1), (1, 1), (1, 1))
    assert_close(first, want.astype(np.float32), mag, "first call")
    assert_close(second, (2 * want).astype(np.float32), 2 * mag, "second call")


def test_precise_mode_computes_the_rows_path_in_float64(rows_calls):
    compiled, w = _depthwise_model((1, 5, 9, 11), precision="f64")
    x = np.random.default_rng(4).standard_normal((1, 5, 9, 11)).astype(np.float32)
    y = compiled({"x": x})["y"]
    assert rows_calls and y.dtype == np.float32
    want, _ = reference(x, w, (1, 1), (1, 1), (1, 1), (1, 1))
    # float64 sums of f32 products rounded once: within an f32 rounding of the exact value
    np.testing.assert_allclose(y, want, rtol=2**-23, atol=1e-30)


def test_a_wide_depthwise_kernel_by_columns_equals_the_depthwise_path(monkeypatch):
    """Depthwise kernels of more than _DEPTHWISE_TAPS taps whose row of columns fits a tile
    take the column matrix, a block of channels at a time; on random layers (with a tile
    small enough for blocks of one or two channels and bands of rows) both paths agree."""
    from irexec.kernels import conv

    rng = np.random.default_rng(11)
    for _ in range(30):
        g = int(rng.integers(2, 4))
        kernel = [int(rng.integers(1, 4)), int(rng.integers(1, 6))]
        strides = [int(rng.integers(1, 3)) for _ in range(2)]
        dilations = [int(rng.integers(1, 3)) for _ in range(2)]
        pads = [int(rng.integers(0, 2)) for _ in range(2)]
        spatial = [int(rng.integers(5, 12)) for _ in range(2)]
        out = [(n + 2 * p - (k - 1) * d - 1) // s + 1
               for n, p, k, d, s in zip(spatial, pads, kernel, dilations, strides)]
        if min(out) < 1:
            continue
        x = rng.standard_normal([1, g] + spatial).astype(np.float32)
        w = rng.standard_normal([g, 2, 1] + kernel).astype(np.float32)
        got = []
        for taps in (10 ** 9, 0):
            monkeypatch.setattr(conv, "_DEPTHWISE_TAPS", taps)
            with monkeypatch.context() as small:  # a tile of a channel or two: blocks of them
                if taps == 0:
                    small.setattr(conv.windows, "tile_bytes", lambda: 800)
                got.append(conv.forward(x, w, strides, dilations, pads, out).copy())
        np.testing.assert_allclose(got[0], got[1], rtol=1e-5, atol=1e-5)
