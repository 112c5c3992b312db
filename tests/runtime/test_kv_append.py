"""A KV cache appended in place (irexec/kernels/growing.py, found by runtime/fusion.py
``kv_appends``): the same logits and variables, bit for bit, as the plan run layer by layer
(``fusion: off``: the Gather, the Concat and the Assign copy the cache), with beams kept and
reordered; the cache stays in one block across decode steps; a value the caller holds keeps its
contents; a cache appended twice from the same value (two branches) gives each its own."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec.kernels import growing
from tests.runtime.test_call_code import V, decoder


def _generation(compiled, batch, prompt, steps, reorder, seed=3):
    rng = np.random.default_rng(seed)
    request = compiled.create_infer_request()
    ids = rng.integers(2, V, (batch, prompt))
    out, states = [], []
    for step in range(steps + 1):
        beams = np.arange(batch, dtype=np.int32)
        if reorder and step % 3 == 2:
            beams = beams[::-1].copy()
        out.append(request.infer({"input_ids": ids, "beam_idx": beams})[0].copy())
        states.append(np.array(request.query_state()[0].state.data))
        ids = rng.integers(2, V, (batch, 1))
    return out, states, request


@pytest.mark.parametrize("batch,reorder", [(1, False), (2, False), (2, True), (3, True)])
def test_appended_cache_gives_the_layer_by_layer_answer_bit_for_bit(batch, reorder,
                                                                    small_caches_grow):
    fast = irexec.compile_model(decoder())
    plain = irexec.compile_model(decoder(), config={"fusion": "off"})
    assert any(getattr(s.kernel, "func", None) is growing.append for s in fast.plan.steps)
    assert not any(getattr(s.kernel, "func", None) is growing.append for s in plain.plan.steps)
    for prompt in (4, 9, 1):
        got, got_states, _ = _generation(fast, batch, prompt, 40, reorder)
        want, want_states, _ = _generation(plain, batch, prompt, 40, reorder)
        for g, w in zip(got + got_states, want + want_states):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)


@pytest.fixture
def small_caches_grow(monkeypatch):
    """The toy decoder's cache is a few hundred bytes: appended in place all the same."""
    monkeypatch.setattr(growing, "MIN_BYTES", 0)


def test_decode_steps_append_into_one_block_and_leave_held_values_alone(small_caches_grow):
    compiled = irexec.compile_model(decoder())
    request = compiled.create_infer_request()
    beams = np.zeros(1, np.int32)
    request.infer({"input_ids": np.array([[2, 3, 4]]), "beam_idx": beams})
    held = request.query_state()[0].state.data
    copy = np.array(held)
    block = held.base
    assert block is not None
    for token in range(5, 9):
        request.infer({"input_ids": np.array([[token]]), "beam_idx": beams})
        state = request.query_state()[0].state.data
        assert state.base is block  # no copy of the cache
        np.testing.assert_array_equal(held, copy)  # the earlier value as it was
        np.testing.assert_array_equal(state[:, :held.shape[1]], copy)


def test_a_state_set_by_the_caller_is_copied_then_appended(small_caches_grow):
    compiled = irexec.compile_model(decoder())
    plain = irexec.compile_model(decoder(), config={"fusion": "off"})
    feeds = [{"input_ids": np.array([[2, 3]]), "beam_idx": np.zeros(1, np.int32)},
             {"input_ids": np.array([[5]]), "beam_idx": np.zeros(1, np.int32)}]
    a, b = compiled.create_infer_request(), plain.create_infer_request()
    for r in (a, b):
        r.infer(feeds[0])
    value = a.query_state()[0].state.data
    other = compiled.create_infer_request()
    other.query_state()[0].state = value  # the same contents, in the other request
    want = [b.infer(feeds[1])[0].copy() for _ in range(3)]
    for w in want:  # the copy grows apart from the request it came from
        np.testing.assert_array_equal(other.infer(feeds[1])[0], w)
    np.testing.assert_array_equal(a.infer(feeds[1])[0], want[0])
    np.testing.assert_array_equal(value, a.query_state()[0].state.data[:, :2])


def test_append_is_concatenate_and_branches_get_their_own(small_caches_grow):
    rng = np.random.default_rng(0)
    past = rng.normal(size=(2, 3, 5, 4)).astype(np.float32)
    first = growing.append(past, rng.normal(size=(2, 3, 1, 4)).astype(np.float32), axis=-2)
    np.testing.assert_array_equal(first[:, :, :5], past)
    grown = [first]
    for _ in range(30):  # past the block's room: a new block, the same values
        new = rng.normal(size=(2, 3, 1, 4)).astype(np.float32)
        nxt = growing.append(grown[-1], new, axis=2)
        np.testing.assert_array_equal(nxt, np.concatenate((grown[-1], new), axis=2))
        grown.append(nxt)
    # two appends to the same value: the second may not write where the first did
    a_new, b_new = np.full((2, 3, 1, 4), 7, np.float32), np.full((2, 3, 2, 4), 9, np.float32)
    base = grown[-1]
    a = growing.append(base, a_new, axis=2)
    b = growing.append(base, b_new, axis=2)
    np.testing.assert_array_equal(a, np.concatenate((base, a_new), axis=2))
    np.testing.assert_array_equal(b, np.concatenate((base, b_new), axis=2))
    assert not np.shares_memory(a[:, :, -1:], b)
    # other types and shapes: numpy's concatenate (its errors too)
    ints = growing.append(np.arange(6).reshape(2, 3), np.arange(2).reshape(2, 1), axis=1)
    np.testing.assert_array_equal(ints, [[0, 1, 2, 0], [3, 4, 5, 1]])
    with pytest.raises(ValueError):
        growing.append(np.zeros((2, 3)), np.zeros((3, 1)), axis=1)
    # a block's next positions of other dims (numpy would broadcast them): numpy's error
    start = growing.append(np.zeros((2, 3)), np.zeros((2, 1)), axis=1)
    assert start.base is not None
    with pytest.raises(ValueError):
        growing.append(start, np.zeros((1, 1)), axis=1)
    np.testing.assert_array_equal(growing.append(start, np.ones((2, 2)), axis=-1),
                                  [[0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 1, 1]])


def test_a_small_cache_is_concatenated_as_the_layer_does():
    past, new = np.zeros((1, 2, 8, 4), np.float32), np.ones((1, 2, 1, 4), np.float32)
    out = growing.append(past, new, axis=2)
    assert out.base is None and out.flags.c_contiguous
    np.testing.assert_array_equal(out, np.concatenate((past, new), axis=2))


def test_rows_keep_the_data_for_beams_in_order_and_gather_otherwise():
    data = np.arange(24, dtype=np.float32).reshape(3, 8)
    taken = []

    def gather(d, i, axis):
        taken.append(i)
        return np.take(d, i, axis=0)

    assert growing.rows(data, np.arange(3, dtype=np.int32), np.array(0), gather=gather) is data
    assert not taken
    out = growing.rows(data, np.array([2, 0, 1], np.int32), np.array(0), gather=gather)
    np.testing.assert_array_equal(out, data[[2, 0, 1]])
    out = growing.rows(data, np.array([0, 0], np.int64), np.array(0), gather=gather)
    np.testing.assert_array_equal(out, data[[0, 0]])
    assert len(taken) == 2
