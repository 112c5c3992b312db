"""The fast path of Loop and TensorIterator (irexec/runtime/loop_code.py): a body of small values
runs its iterations as one generated function. Every model here runs through both paths -- the
fast one, and the run loop one call per iteration (the fast path switched off) -- and must give
the same arrays, or the same error at the same layer."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec import budget
from irexec.runtime import compiled_model

DATA = Path(__file__).resolve().parents[2] / "data" / "subgraphs"


def _compiled(name: str):
    return irexec.compile_model(irexec.read_model(DATA / f"{name}.xml"))


def _runners(compiled) -> list:
    """The body runners of the model's layers (those of nested bodies once they have run)."""
    found = []
    for _, runners in compiled.plan.bodies:
        for runner in runners.values():
            found.append(runner)
            if runner._compiled is not None:
                found += _runners(runner._compiled)
    return found


def _fast_runs(compiled) -> int:
    codes = [r._loop_code for r in _runners(compiled)]
    return sum(c.runs for c in codes if c)


def _outcome(compiled, feed, **kwargs):
    """The outputs (name, dtype, array), or the error's codes, messages and layers."""
    try:
        out = compiled(feed, **kwargs)
    except irexec.IRError as e:
        return [(d.code, d.message, d.location.layer_name) for d in e.diagnostics]
    return [(k, v.dtype, v) for k, v in out.items()]


def _assert_same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x[:-1] == y[:-1]
        if isinstance(x[-1], np.ndarray):
            assert x[-1].shape == y[-1].shape
            np.testing.assert_array_equal(x[-1], y[-1])  # NaN equals NaN here
        else:
            assert x[-1] == y[-1]


def _both_paths(name: str, feed: dict, fast_expected: bool = True, memory=None):
    """Run ``name`` on ``feed`` through the fast path and through the run loop (with a memory
    budget of ``memory`` bytes while running, if given); assert the same outcome and that the
    fast path was (or was not) taken; return the outcome."""
    fast = _compiled(name)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(compiled_model, "small_body", lambda plan, model: False)
        slow = _compiled(name)
        with budget.limit(memory) if memory else contextlib.nullcontext():
            want = _outcome(slow, feed)
    with budget.limit(memory) if memory else contextlib.nullcontext():
        got = _outcome(fast, feed)
    assert _fast_runs(slow) == 0
    assert (_fast_runs(fast) > 0) == fast_expected
    _assert_same(got, want)
    return got


floats = st.floats(-4, 4, width=32, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(trip=st.integers(-1, 8), go=st.booleans(), n=st.integers(1, 4),
       limit=st.floats(-20, 40, width=32), d=st.integers(0, 3), seed=st.integers(0, 2**16))
def test_every_kind_of_port_gives_the_same_through_both_paths(trip, go, n, limit, d, seed):
    rng = np.random.default_rng(seed)
    feed = {"trip": np.array(trip, np.int64), "go": np.array(go),
            "x": rng.uniform(-4, 4, (n, 3)).astype(np.float32),
            "seq": rng.uniform(-4, 4, (6, 3)).astype(np.float32),
            "limit": np.array(limit, np.float32), "d": np.array(d, np.int64)}
    _both_paths("loop_every_port", feed)


def test_every_kind_of_port_against_a_plain_numpy_loop():
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    seq = rng.uniform(-1, 1, (6, 3)).astype(np.float32)
    limit, d = np.float32(4), 2
    y, sums, its = x, [], []
    for i in range(6):
        y = y * np.float32(0.5) + seq[i:i + 1] + np.float32(i // d)
        sums.append(y.sum(dtype=np.float32))
        its.append(np.float32(i))
        if not sums[-1] < limit:
            break
    out = _both_paths("loop_every_port", {
        "trip": np.array(-1), "go": np.array(True), "x": x, "seq": seq,
        "limit": np.array(limit), "d": np.array(d)})
    np.testing.assert_allclose(out[0][2], y, rtol=1e-6)
    np.testing.assert_allclose(out[1][2], np.array(sums), rtol=1e-5)
    np.testing.assert_array_equal(out[2][2], np.array(its))


def test_a_kernel_error_inside_the_body_names_the_body_layer():
    feed = {"trip": np.array(3), "go": np.array(True), "x": np.zeros((1, 3), np.float32),
            "seq": np.zeros((6, 3), np.float32), "limit": np.array(9, np.float32),
            "d": np.array(0)}
    ((code, message, layer),) = _both_paths("loop_every_port", feed)
    assert code == "IR316" and "division by zero" in message
    assert layer.startswith("Loop_") and layer.endswith("/body/Divide_12")


@settings(max_examples=30, deadline=None)
@given(x=floats, limit=st.floats(-100, 1e6, width=32))
def test_a_body_condition_stops_both_paths_alike(x, limit):
    _both_paths("loop_early_exit", {"x": np.array([x], np.float32),
                                    "limit": np.array(limit, np.float32)})


@settings(max_examples=20, deadline=None)
@given(x=floats)
def test_nested_loops_each_take_the_fast_path(x):
    _both_paths("nested_loops", {"x": np.array([x], np.float32)})
    compiled = _compiled("nested_loops")
    compiled({"x": np.array([x], np.float32)})
    # the outer body once, the inner body once per outer iteration (2)
    assert [r._loop_code.runs for r in _runners(compiled)] == [1, 2]


def test_a_tensor_iterator_walking_backwards_takes_the_fast_path():
    X = np.random.default_rng(0).standard_normal((2, 4, 3)).astype(np.float32)
    _both_paths("tensor_iterator_reverse", {"X": X})


@pytest.mark.parametrize("trip", [0, 1, 4])
def test_a_back_edge_that_grows_takes_the_run_loop(trip):
    x = np.arange(3, dtype=np.float32).reshape(1, 3)
    feed = {"x": x, "acc0": x, "trip": np.array(trip)}
    _both_paths("loop_concat", feed, fast_expected=False)
    compiled = _compiled("loop_concat")
    compiled(feed)
    (runner,) = _runners(compiled)
    assert runner._loop_code is False  # its shape has no bound: not a small body


def test_the_fast_path_is_taken_for_a_simple_body_and_not_when_tracing_bodies():
    compiled = _compiled("loop_early_exit")
    feed = {"x": np.array([1.0], np.float32), "limit": np.array(100, np.float32)}
    plain = compiled(feed)
    (runner,) = _runners(compiled)
    code = runner.loop_code()
    assert code is not None and code.runs == 1
    assert "Multiply_88" in str(code)  # the generated source names the body's layers
    assert "numpy's multiply" in str(code)  # f32 Multiply's spec declares its ufunc
    seen = []
    traced = compiled(feed, trace=lambda layer, port, a: seen.append(layer.name),
                      trace_bodies=True)
    assert code.runs == 1  # the traced run took the run loop
    assert "Loop_94/body/0/Multiply_88" in seen
    for name in plain:
        np.testing.assert_array_equal(plain[name], traced[name])
    compiled(feed, trace=lambda layer, port, a: None)  # outer layers only: fast again
    assert code.runs == 2


def test_profiles_count_the_loop_layer_with_the_fast_path():
    compiled = _compiled("loop_early_exit")
    profile: dict = {}
    compiled({"x": np.array([1.0], np.float32), "limit": np.array(100, np.float32)},
             profile=profile)
    assert _fast_runs(compiled) == 1
    loop_id = next(n.id for n in compiled.model.nodes if n.type == "Loop")
    assert profile[str(loop_id)] > 0


def test_the_iteration_budget_stops_both_paths_alike(monkeypatch):
    monkeypatch.setenv(budget.ITERATIONS_ENV, "3")
    feed = {"trip": np.array(6), "go": np.array(True), "x": np.zeros((1, 3), np.float32),
            "seq": np.zeros((6, 3), np.float32), "limit": np.array(100, np.float32),
            "d": np.array(1)}
    ((code, message, layer),) = _both_paths("loop_every_port", feed)
    assert code == budget.ITERATIONS_CODE and "more than 3 body iterations" in message
    assert re.fullmatch(r"Loop_\d+", layer)


def test_the_memory_budget_for_concatenated_parts_stops_both_paths_alike():
    feed = {"trip": np.array(6), "go": np.array(True), "x": np.zeros((1, 3), np.float32),
            "seq": np.zeros((6, 3), np.float32), "limit": np.array(100, np.float32),
            "d": np.array(1)}
    # each iteration gathers 8 bytes: the third passes 20
    ((code, message, _),) = _both_paths("loop_every_port", feed, memory=20)
    assert code == budget.SIZE_CODE and "after 3 iterations" in message


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16))
def test_a_recurrent_cell_with_large_folded_weights_takes_the_fast_path(seed):
    rng = np.random.default_rng(seed)
    seq = rng.standard_normal((5, 1, 128)).astype(np.float32)
    h0 = rng.standard_normal((1, 128)).astype(np.float32)
    every, last = _both_paths("tensor_iterator_cell", {"seq": seq, "h0": h0})
    w, r = np.full((128, 128), 0.01, np.float32), np.full((128, 128), -0.02, np.float32)
    h, hs = h0, []
    for t in range(5):
        h = np.tanh(seq[t] @ w + h @ r)
        hs.append(h)
    np.testing.assert_allclose(every[2], np.concatenate(hs), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(last[2], every[2][-1:])


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_a_sliced_input_is_cut_into_the_parts_of_its_range_in_stride_order(data):
    """Both paths cut sliced inputs with ``subgraph.slicer``: the parts, in iteration order,
    are the range from start to end (both included) cut into part_size blocks, first to last
    for a positive stride, last to first for a negative one."""
    from irexec.ir.model import PortMapping
    from irexec.ops.infrastructure import subgraph

    dim = data.draw(st.integers(1, 12))
    size = data.draw(st.integers(1, dim))
    count = data.draw(st.integers(1, dim // size))
    low = data.draw(st.integers(0, dim - count * size))
    high = low + count * size - 1
    stride = data.draw(st.sampled_from([1, -1]))
    start, end = (low, high) if stride > 0 else (high, low)
    # negative positions count from the end
    start = data.draw(st.sampled_from([start, start - dim]))
    end = data.draw(st.sampled_from([end, end - dim]))
    value = np.arange(2 * dim * 3).reshape(2, dim, 3)
    m = PortMapping(external=0, internal=0, axis=data.draw(st.sampled_from([1, -2])),
                    start=start, end=end, stride=stride, part_size=size)
    n = subgraph.iterations(m, dim)
    assert n == count
    cut = subgraph.slicer(value, m)
    parts = [cut(i) for i in range(n)]
    assert all(p.shape == (2, size, 3) for p in parts)
    blocks = [value[:, low + k * size:low + (k + 1) * size] for k in range(count)]
    want = blocks if stride > 0 else blocks[::-1]
    for got, expected in zip(parts, want):
        np.testing.assert_array_equal(got, expected)
