"""Output-buffer reuse (irexec/kernels/buffers.py): memory is reused only when nothing can
reach it, so an array irexec returned is never written again, and no output aliases an input."""

import numpy as np

import irexec
from irexec.builder import ModelBuilder
from irexec.kernels import buffers

SHAPE = [16, 64, 64]  # 256 KiB of f32: above buffers.MIN_BYTES


def chain():
    b = ModelBuilder("chain")
    x = b.parameter("data", "f32", SHAPE)
    x = b.op("Reverse", x, b.constant(np.array([2], np.int64)), mode="index")
    x = b.op("ReverseSequence", x, b.constant(np.arange(1, 17, dtype=np.int32)), batch_axis=0,
             seq_axis=1)
    x = b.op("Reverse", x, b.constant(np.array([0, 1], np.int64)), mode="index")
    b.result(x, name="out")
    return irexec.compile_model(b.build())


def expected(x):
    y = np.flip(x, 2).copy()
    for i in range(16):
        y[i, :i + 1] = y[i, i::-1].copy()
    return np.flip(y, (0, 1))


def run(compiled, x):
    return next(iter(compiled({"data": x}).values()))


def inputs(seed):
    return np.random.default_rng(seed).standard_normal(SHAPE, dtype=np.float32)


def test_returned_outputs_are_never_written_again():
    compiled = chain()
    kept = [run(compiled, inputs(i)) for i in range(4)]
    for i, out in enumerate(kept):
        np.testing.assert_array_equal(out, expected(inputs(i)))


def test_memory_of_a_dropped_output_is_reused():
    compiled = chain()
    first = run(compiled, inputs(0))
    address = first.ctypes.data
    del first
    second = run(compiled, inputs(1))
    np.testing.assert_array_equal(second, expected(inputs(1)))
    assert address in {second.ctypes.data} | {a.ctypes.data for arrays in
                                              compiled._pool.spare.values() for a in arrays}


def test_a_view_of_an_output_keeps_it_safe():
    compiled = chain()
    out = run(compiled, inputs(0))
    view = out[3]
    want = view.copy()
    del out
    for i in range(1, 4):
        run(compiled, inputs(i))
    np.testing.assert_array_equal(view, want)


def test_no_output_aliases_an_input_and_inputs_stay_unchanged():
    compiled = chain()
    x = inputs(0)
    before = x.copy()
    for _ in range(3):
        out = run(compiled, x)
        assert not np.shares_memory(out, x)
        np.testing.assert_array_equal(x, before)
        del out


def test_release_memory_drops_the_spares():
    compiled = chain()
    run(compiled, inputs(0))
    compiled.release_memory()
    assert compiled._pool is None
    np.testing.assert_array_equal(run(compiled, inputs(1)), expected(inputs(1)))


def test_pool_refuses_arrays_others_can_reach():
    pool = buffers.Pool()
    held = np.empty(buffers.MIN_BYTES, np.uint8)
    pool.give(held, 0)  # `held` is a reference the caller did not declare
    assert pool.count == 0
    view_base = np.empty(buffers.MIN_BYTES, np.uint8)
    _view = view_base[1:]
    slot = [view_base]
    del view_base
    pool.give(slot[0], 1)
    assert pool.count == 0
    del _view
    pool.give(slot[0], 1)
    assert pool.count == 1
    assert pool.take((1,), np.dtype(np.uint8)) is None
    assert pool.take((buffers.MIN_BYTES,), np.dtype(np.uint8)) is not None


def test_an_array_placed_apart_is_aligned_new_and_apart():
    """buffers.empty_apart: 64-byte aligned, a page offset at least 256 bytes from the input's
    (4K aliasing), for inputs at every page offset; small arrays are plain np.empty."""
    block = np.empty(buffers.APART_MIN_BYTES + 8192, np.uint8)
    for shift in (0, 16, 64, 1000, 2048, 4032, 4095):
        other = block[shift:shift + buffers.APART_MIN_BYTES]
        out = buffers.empty_apart(other.shape, other.dtype, other)
        assert out.shape == other.shape and out.dtype == other.dtype
        assert out.flags.c_contiguous and out.flags.writeable
        assert out.ctypes.data % 64 == 0
        assert 256 <= (out.ctypes.data - other.ctypes.data) % 4096 <= 4096 - 256
        assert not np.shares_memory(out, other)
    small = buffers.empty_apart((8,), np.float32, np.empty(8, np.float32))
    assert small.base is None


def test_the_pool_takes_back_a_placed_array_only_when_nothing_else_reaches_it():
    x = np.empty(buffers.APART_MIN_BYTES, np.uint8)
    pool = buffers.Pool()
    slot = [buffers.empty_apart(x.shape, x.dtype, x)]
    view = slot[0][10:]  # refers to the block, not to the placed array
    pool.give(slot[0], 1)
    assert pool.count == 0
    block = slot[0].base
    del view
    pool.give(slot[0], 1)
    assert pool.count == 0  # `block` still reaches the memory
    del block
    pool.give(slot[0], 1)
    assert pool.count == 1
    placed = slot.pop()
    del placed
    # A spare at the same page offset as the input is not taken for it; one apart is.
    with buffers.using(pool):
        same = buffers.empty_apart(x.shape, x.dtype, pool.spare[(x.shape, x.dtype)][0])
        assert pool.count == 1
        again = buffers.empty_apart(x.shape, x.dtype, x)
        assert pool.count == 0
    assert (same.ctypes.data - again.ctypes.data) % 4096 >= 256
    assert not np.shares_memory(same, again)


def test_a_strided_reverse_sequence_chain_reuses_placed_outputs_safely():
    """ReverseSequence with batch_axis 1, seq_axis 0 (the row gather, outputs placed apart),
    three layers deep: results stay right over calls, kept outputs are never written again,
    and outputs never alias the input."""
    shape = [32, 16, 512]  # 1 MiB of f32: outputs placed apart
    lengths = np.random.default_rng(7).integers(0, 33, (3, 16)).astype(np.int32)
    b = ModelBuilder("chain_b1s0")
    x = b.parameter("data", "f32", shape)
    for k in range(3):
        x = b.op("ReverseSequence", x, b.constant(lengths[k]), batch_axis=1, seq_axis=0)
    b.result(x, name="out")
    compiled = irexec.compile_model(b.build())

    def want(data):
        y = data
        for k in range(3):
            y = y.copy()
            for j, n in enumerate(lengths[k]):
                y[:n, j] = y[:n, j][::-1].copy()
        return y

    data = [np.random.default_rng(i).standard_normal(shape, dtype=np.float32) for i in range(5)]
    kept = []
    for i, d in enumerate(data):
        out = run(compiled, d)
        assert not np.shares_memory(out, d)
        if i % 2:
            kept.append((i, out))
        np.testing.assert_array_equal(out, want(d))
        del out
    for i, out in kept:
        np.testing.assert_array_equal(out, want(data[i]))
