"""Output-buffer reuse (irexec/kernels/buffers.py): memory is reused only when nothing can
reach it, so an array irexec returned is never written again, and no output aliases an input."""

import numpy as np

import irexec
from irexec.ir.builder import ModelBuilder
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
    assert compiled._pool is None and compiled._returned == []
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
