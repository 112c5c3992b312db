"""Reverse written over its dying input (the in-place variant of its kernel, the run loop's reference-count
proof): results are unchanged, and no array anyone else can see is ever written."""

from __future__ import annotations

import weakref

import numpy as np
import pytest

import irexec
import irexec.ops.movement.reverse as reverse_op
from irexec.kernels import buffers
from irexec.builder import ModelBuilder

SHAPE = [8, 64, 64]  # 128 KiB of f32: above the 64 KiB below which nothing is written over
AXES = [[0], [2], [1], [0, 1, 2], [1, 2]]


def chain(axes=AXES, shape=SHAPE, branch=False):
    """Reverse layers in a row; with ``branch``, the first one's output also feeds a Result."""
    b = ModelBuilder("chain")
    x = first = b.parameter("data", "f32", shape)
    for i, a in enumerate(axes):
        x = b.op("Reverse", x, b.constant(np.array(a, np.int64)), mode="index")
        if i == 0:
            first = x
    b.result(x, name="out")
    if branch:
        b.result(first, name="first")
    return irexec.compile_model(b.build())


def expected(x, axes=AXES):
    for a in axes:
        x = np.flip(x, a)
    return x


@pytest.fixture
def writes_over(monkeypatch):
    """The ids of the arrays Reverse wrote over (ids: a reference would block the next one)."""
    seen = []
    original = reverse_op.flip_in_place

    def spy(data, axes):
        seen.append(id(data))
        return original(data, axes)

    monkeypatch.setattr(reverse_op, "flip_in_place", spy)
    return seen


def run(compiled, x, **kwargs) -> list[np.ndarray]:
    """The outputs, in the order of the Results."""
    return list(compiled({"data": x}, **kwargs).values())


def data(seed=0, shape=SHAPE):
    return np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)


def test_chain_writes_over_each_intermediate_and_gets_the_same_result(writes_over):
    x = data()
    before = x.copy()
    (out,) = run(chain(), x)
    np.testing.assert_array_equal(out, expected(before))
    np.testing.assert_array_equal(x, before)  # the caller's input is never written
    assert len(writes_over) == len(AXES) - 1  # every layer but the first, which reads x
    assert set(writes_over) == {id(out)}  # one buffer all along: the output


def test_plan_says_which_steps_may_write_over_their_input():
    text = str(chain(branch=True).plan)
    lines = [line for line in text.splitlines() if "Reverse(" in line]
    # The first step's input dies there too: the plan allows it, and at run time the count
    # shows the caller's references (test above). The second reads an output: never.
    assert "may write over %0" in lines[0]
    assert "may write over" not in lines[1]
    assert all("may write over" in line for line in lines[2:])


def test_an_intermediate_that_is_also_an_output_is_never_written_over(writes_over):
    x = data(1)
    out, first = run(chain(branch=True), x)
    np.testing.assert_array_equal(first, np.flip(x, AXES[0]))
    np.testing.assert_array_equal(out, expected(x))
    assert id(first) not in writes_over


def test_an_array_a_trace_callback_keeps_is_never_written_over(writes_over):
    x = data(2)
    kept = {}

    def trace(layer, port, array):
        kept[layer] = (array, array.copy())

    (out,) = run(chain(), x, trace=trace)
    np.testing.assert_array_equal(out, expected(x))
    for layer, (array, copy) in kept.items():
        np.testing.assert_array_equal(array, copy, err_msg=layer)
    assert not writes_over  # every intermediate was held by the callback


def test_an_array_a_trace_callback_holds_weakly_is_never_written_over(writes_over):
    x = data(5)
    kept = {}

    def trace(layer, port, array):
        kept[layer] = (weakref.ref(array), array.copy())

    (out,) = run(chain(), x, trace=trace)
    np.testing.assert_array_equal(out, expected(x))
    for layer, (ref, copy) in kept.items():
        if ref() is not None:
            np.testing.assert_array_equal(ref(), copy, err_msg=layer)
    assert not writes_over


@pytest.mark.parametrize("counts_prove", [True, False])
def test_where_counts_prove_nothing_no_memory_is_reused(counts_prove, writes_over,
                                                        monkeypatch):
    monkeypatch.setattr(buffers, "COUNTS_PROVE", counts_prove)
    pool = buffers.Pool()
    pool.give(np.empty(1 << 20, np.uint8), 0)  # nothing else refers to it
    assert pool.count == (1 if counts_prove else 0)
    x = data(6)
    (out,) = run(chain(), x)
    np.testing.assert_array_equal(out, expected(x))
    assert bool(writes_over) == counts_prove


def test_a_view_held_elsewhere_blocks_writing_over(writes_over, monkeypatch):
    # A kernel that keeps a view of its output (as a careless custom kernel might): the
    # output's count shows the view, so the next layer must not write over it.
    views = []
    original = reverse_op.flip

    def keep_view(data, axes):
        out = original(data, axes)
        views.append((out[0], out[0].copy()))
        return out

    monkeypatch.setattr(reverse_op, "flip", keep_view)
    x = data(3)
    (out,) = run(chain(), x)
    np.testing.assert_array_equal(out, expected(x))
    for view, copy in views:
        np.testing.assert_array_equal(view, copy)
    assert not writes_over


def test_small_tensors_take_the_plain_kernel(writes_over):
    x = data(4, shape=[4, 8])
    (out,) = run(chain(shape=[4, 8], axes=[[0], [1], [0]]), x)
    np.testing.assert_array_equal(out, expected(x, [[0], [1], [0]]))
    assert not writes_over


def test_returned_outputs_stay_as_they_were_over_many_calls():
    compiled = chain()
    kept = [(run(compiled, data(i))[0], i) for i in range(5)]
    for out, i in kept:
        np.testing.assert_array_equal(out, expected(data(i)))
