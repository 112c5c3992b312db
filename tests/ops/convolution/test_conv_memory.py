"""Memory of the convolution kernels (irexec/kernels/conv.py): outputs come from the run's pool
of reused memory, and are written whole; depthwise temporaries stay under COLS_BYTES."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder
from irexec.kernels import buffers, conv, scratch, windows

CASES = {  # x shape, w [G, Co, Ci, *K], strides, pads (begin = end); outputs of at least
    # buffers.MIN_BYTES, which the pool keeps
    "depthwise, stride 1": ((1, 16, 36, 40), (16, 1, 1, 3, 3), (1, 1), 1),
    "depthwise, stride 2": ((2, 16, 72, 64), (16, 1, 1, 3, 3), (2, 2), 1),
    "depthwise, 2 outputs per channel": ((1, 8, 40, 40), (8, 2, 1, 3, 3), (1, 1), 0),
    "1x1": ((2, 5, 48, 49), (1, 4, 5, 1, 1), (1, 1), 0),
    "1x1, stride 2": ((1, 5, 96, 98), (1, 8, 5, 1, 1), (2, 2), 0),
    "im2col": ((2, 3, 48, 96), (1, 4, 3, 3, 3), (1, 2), 1),
    "im2col, grouped": ((1, 4, 48, 48), (2, 4, 2, 3, 3), (1, 1), 1),
}


def _run(name):
    """The kernel's output into a NaN-filled spare of the pool, and the same computed into fresh
    memory (the kernel itself is held to the direct loop in test_convolution.py)."""
    xs, ws, strides, pad = CASES[name]
    rng = np.random.default_rng(0)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    nsp = len(xs) - 2
    pads = (pad,) * nsp
    _, _, out = windows.geometry(xs[2:], ws[3:], strides, (1,) * nsp, pads, pads)
    fresh = conv.forward(x, w, strides, (1,) * nsp, pads, out)
    assert fresh.nbytes >= buffers.MIN_BYTES
    pool = buffers.Pool()
    pool.give(np.full(fresh.shape, np.nan, np.float32), 0)  # what an earlier layer left there
    assert pool.count == 1
    with buffers.using(pool):
        y = conv.forward(x, w, strides, (1,) * nsp, pads, out)
    assert pool.count == 0  # the spare of the output's shape was taken
    return y, fresh


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_output_is_the_pools_spare_written_whole(name):
    y, fresh = _run(name)
    assert y.flags.c_contiguous and y.base is None
    np.testing.assert_array_equal(y, fresh)  # no NaN left from the spare


@pytest.mark.parametrize("name", ["im2col", "depthwise, stride 1", "depthwise, stride 2"])
def test_banded_paths_write_their_whole_output_too(name, monkeypatch):
    monkeypatch.setattr(windows, "tile_bytes", lambda: 256)  # im2col a few rows at a time
    monkeypatch.setattr(conv, "COLS_BYTES", 64)  # depthwise one channel at a time
    y, fresh = _run(name)
    np.testing.assert_array_equal(y, fresh)


@pytest.mark.parametrize("strides", [(1, 1), (2, 2)])
def test_depthwise_temporaries_stay_under_cols_bytes(strides):
    """A 3x3 depthwise convolution over [1, 16, 64, 64]: beside its output, the kernel's
    temporaries (the taps' column block, its product, a padded block of channels) stay under
    twice COLS_BYTES (the column block alone was nine times a 512 KiB padded block)."""
    x = np.random.default_rng(1).standard_normal((1, 16, 64, 64)).astype(np.float32)
    w = np.ones((16, 1, 1, 3, 3), np.float32)
    out = (64 // strides[0],) * 2
    limit = 256 << 10
    saved = conv.COLS_BYTES
    conv.COLS_BYTES = limit
    try:
        tracemalloc.start()
        try:
            y = conv.forward(x, w, strides, (1, 1), (1, 1), out)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    finally:
        conv.COLS_BYTES = saved
    assert peak - y.nbytes < 2 * limit, (peak, y.nbytes)


@pytest.mark.parametrize("spatial, strides, dilations, pads", [
    ((11, 10), (2, 2), (1, 1), ((1, 1), (1, 1))),
    ((11, 10), (3, 2), (2, 1), ((0, 2), (2, 0))),
    ((11, 10), (2, 3), (1, 2), ((3, 0), (0, 1))),
    ((1, 10), (2, 2), (1, 1), ((2, 1), (2, 1))),  # rows: phase 1 lies wholly in the padding
])
def test_strided_depthwise_phases_match_the_direct_loop(spatial, strides, dilations, pads):
    """Strided depthwise convolutions read the stride phases of the padded data (cut straight
    from the data, a few channels at a time): against the direct loop, including phases that
    begin in the padding and blocks after the first (whose padding is not written again)."""
    from tests.ops.compute_support import assert_close
    from tests.ops.convolution.reference import conv as reference

    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5) + spatial).astype(np.float32)
    w = rng.standard_normal((5, 2, 1, 3, 3)).astype(np.float32)
    pb, pe = pads
    want, mag = reference(x, w, strides, dilations, pb, pe)
    saved = conv.COLS_BYTES
    try:
        for cols in (1 << 20, 64):  # every channel in one block; one channel a block
            conv.COLS_BYTES = cols
            y = conv.forward(x, w, strides, dilations, pb, want.shape[2:])
            assert_close(y, want.astype(np.float32), mag, f"{strides} {dilations} {pads}")
    finally:
        conv.COLS_BYTES = saved


@pytest.mark.parametrize("strides", [(1, 1), (2, 2)])
def test_depthwise_scratch_may_hold_anything(strides):
    """Depthwise temporaries are views of a scratch block kept between calls (fresh arrays
    page-fault on every call), not of the run's pool, whose slots are for outputs: the zero
    padding in them is written on every call, so a NaN-filled scratch changes nothing."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 24, 80, 80)).astype(np.float32)
    w = rng.standard_normal((24, 1, 1, 3, 3)).astype(np.float32)
    out = (80 // strides[0],) * 2
    pool = buffers.Pool()
    with buffers.using(pool):
        fresh = conv.forward(x, w, strides, (1, 1), (1, 1), out)
    assert pool.count == 0  # nothing given to the pool
    block = scratch.arena("conv", conv.SCRATCH_BYTES).buffer
    block[: block.nbytes // 4 * 4].view(np.uint32)[...] = 0x7FC00000  # NaN in f32
    y = conv.forward(x, w, strides, (1, 1), (1, 1), out)
    np.testing.assert_array_equal(y, fresh)


def test_scratch_is_reused_and_bounded(monkeypatch):
    """The scratch block is made once and reused by later calls; temporaries larger than
    SCRATCH_BYTES are fresh arrays, not kept; release_memory drops it."""
    a, b = conv._temporaries(((3, 5), np.float32), ((2, 7), np.float64))
    block = scratch.arena("conv", conv.SCRATCH_BYTES).buffer
    assert a.base is b.base is block
    assert not np.shares_memory(a, b)
    again, = conv._temporaries(((3, 5), np.float32))
    assert again.base is block
    monkeypatch.setattr(conv, "SCRATCH_BYTES", block.nbytes)
    big, = conv._temporaries(((block.nbytes,), np.float32))
    assert big.base is None and scratch.arena("conv", block.nbytes).buffer is None
    monkeypatch.undo()
    conv._temporaries(((3, 5), np.float32))
    assert scratch.arena("conv", conv.SCRATCH_BYTES).buffer is not None
    b = ModelBuilder()
    b.result(b.op("Relu", b.parameter("x", "f32", [2]), name="r"), "y")
    irexec.compile_model(b.build()).release_memory()
    assert scratch.arena("conv", conv.SCRATCH_BYTES).buffer is None
