"""Calls like one before run the plan's steps as closures with their decisions settled
(irexec/runtime/call_code.py): the same arrays, bit for bit, as the run loop with every check
made (the full plan's answer), over decode steps whose KV cache grows by one position per call
and whose shape arithmetic (lengths, a position range, a broadcast target) changes with it; a call
of another signature is checked again; a sized step whose target shape changes still refuses an
output past the memory budget, before computing it."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec import budget
from irexec.builder import ModelBuilder
from irexec.errors import IRError
from irexec.runtime.call_code import CallCode

V, H = 19, 6
RNG = np.random.default_rng(11)
EMBED = RNG.normal(size=(V, H)).astype(np.float32)
OUT = RNG.normal(size=(H, V)).astype(np.float32)


def _i64(*values):
    return np.array(values, np.int64)  # a vector, or rows of one


def decoder():
    """A stateful decoder in optimum-intel's form, small: the cache of [batch, length, H] in a
    variable (reordered by beam_idx), and shape arithmetic on its growing length -- a Range of
    positions, a broadcast target and a reshape target computed from ShapeOf -- that changes on
    every decode step."""
    b = ModelBuilder("toy_decoder")
    ids = b.parameter("input_ids", "i64", [-1, -1])
    beams = b.parameter("beam_idx", "i32", [-1])
    zero = b.constant(np.array(0, np.int64))
    h = b.op("Gather", b.constant(EMBED), ids, zero, version="opset8", batch_dims=0)
    batch = b.op("Gather", b.op("ShapeOf", ids, version="opset3"), _i64_const(b, 0), zero,
                 version="opset8", batch_dims=0)
    init = b.op("Broadcast", b.constant(np.array(0, np.float32)),
                b.op("Concat", batch, b.constant(_i64(0, H)), axis=0), version="opset3")
    past = b.op("ReadValue", init, version="opset6", variable_id="kv", variable_type="f32",
                variable_shape=irexec.PartialShape([-1, -1, H]))
    past = b.op("Gather", past, beams, zero, version="opset8", batch_dims=0)
    cache = b.op("Concat", past, h, axis=1, name="cache")
    b.op("Assign", cache, version="opset6", variable_id="kv")
    # the length, and positions 0 .. length-1 as f32 weights, broadcast to [batch, length, H]
    length = b.op("Gather", b.op("ShapeOf", cache, version="opset3"), _i64_const(b, 1), zero,
                  version="opset8", batch_dims=0, name="length")
    steps = b.op("Range", b.constant(np.array(0, np.int64)), b.op("Squeeze", length, zero),
                 b.constant(np.array(1, np.int64)), version="opset4", output_type="f32")
    scale = b.op("Unsqueeze", b.op("Multiply", steps, b.constant(np.array(0.1, np.float32))),
                 b.constant(_i64(0, 2)))
    target = b.op("Concat", batch, length, b.constant(_i64(H)), axis=0, name="target")
    weights = b.op("Broadcast", scale, target, version="opset3", name="weights")
    mixed = b.op("Multiply", cache, b.op("Sigmoid", weights))
    flat = b.op("Reshape", mixed, b.op("Concat", batch, b.constant(_i64(-1)), axis=0),
                special_zero=False, name="flat")
    pooled = b.op("ReduceMean", b.op("Reshape", flat, target, special_zero=False),
                  b.constant(_i64(1)), keep_dims=False)
    last = b.op("Add", b.op("Squeeze", b.op("Gather", h, b.constant(_i64(-1)),
                                                b.constant(np.array(1, np.int64)),
                                                version="opset8", batch_dims=0),
                            b.constant(_i64(1))), pooled)
    b.result(b.op("MatMul", b.op("Tanh", last), b.constant(OUT), name="logits"), "logits")
    return b.build()


def _i64_const(b, value):
    return b.constant(_i64(value))


def _generation(compiled, request, batch: int, prompt: int, steps: int, every_check: bool):
    """The logits of a prefill and ``steps`` decode steps; ``every_check``: each call made as
    a first one (no signature remembered: every layer's check, the run loop)."""
    request.reset_state()
    # token ids from 2 up: a small integer input's values of 0 and 1 are part of a signature
    ids = RNG.integers(2, V, (batch, prompt))
    beams = np.arange(batch, dtype=np.int32)[::-1].copy()
    out = []
    for step in range(steps + 1):
        if every_check:
            compiled.plan.seen_calls.clear()
        out.append(request.infer({"input_ids": ids, "beam_idx": beams})[0].copy())
        ids = RNG.integers(2, V, (batch, 1))
    return out


def _pair():
    fast = irexec.compile_model(decoder())
    full = irexec.compile_model(decoder())
    return fast, full


@pytest.mark.parametrize("batch", [1, 2])
def test_decode_steps_give_the_full_plans_arrays_bit_for_bit(batch):
    fast, full = _pair()
    seed = RNG.bit_generator.state
    for prompt in (5, 3, 9):  # prompts and lengths the first generation never saw
        RNG.bit_generator.state = seed
        got = _generation(fast, fast.create_infer_request(), batch, prompt, 30, False)
        RNG.bit_generator.state = seed
        want = _generation(full, full.create_infer_request(), batch, prompt, 30, True)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)
    assert isinstance(fast.plan.call_code, CallCode)  # the closures ran
    assert full.plan.call_code is None  # every call of the other ran the loop, checked


def test_the_closures_are_the_plans_steps():
    compiled = irexec.compile_model(decoder())
    source = str(CallCode(compiled.plan, compiled.model))
    for step in compiled.plan.steps:
        assert repr(step.layer) in source


def test_a_call_of_a_new_signature_is_checked_again():
    compiled = irexec.compile_model(decoder())
    checks = {"n": 0}
    for step in compiled.plan.steps:
        if step.check is not None:
            def counted(args, original=step.check):
                checks["n"] += 1
                return original(args)
            object.__setattr__(step, "check", counted)
    request = compiled.create_infer_request()
    _generation(compiled, request, 1, 4, 6, False)
    before = checks["n"]
    _generation(compiled, request, 1, 7, 6, False)  # lengths new, the signatures seen
    assert checks["n"] == before
    # a batch of 3 beams: another signature (a dim of 1 became 3), checked again and right
    got = _generation(compiled, request, 3, 4, 2, False)
    assert checks["n"] > before
    full = irexec.compile_model(decoder())
    feed = {"input_ids": _i64([2, 3], [4, 5], [6, 7]), "beam_idx": np.arange(3, dtype=np.int32)}
    request.reset_state()
    np.testing.assert_array_equal(request.infer(feed)[0], full(feed)[0])
    assert len(got) == 3


def _broadcaster():
    b = ModelBuilder("grow")
    data = b.parameter("data", "f32", [-1])
    target = b.parameter("target", "i64", [2])
    b.result(b.op("Broadcast", b.op("Relu", data), target, version="opset3", name="wide"),
             "out")
    return b.build()


def test_a_target_shape_past_the_budget_is_refused_in_a_known_signature():
    compiled = irexec.compile_model(_broadcaster())
    data = np.array([1.5, -2.0, 3.0], np.float32)
    for rows in (2, 3, 4):  # one signature: sizes from 2 up alike
        out = compiled({"data": data, "target": _i64(rows, 3)})[0]
        np.testing.assert_array_equal(out, np.broadcast_to(np.maximum(data, 0), (rows, 3)))
    assert compiled.plan.call_code is not None
    with budget.limit(1 << 16):
        with pytest.raises(IRError) as e:  # 4 MB of output: refused, not computed
            compiled({"data": data, "target": _i64(1 << 18, 3)})
    assert e.value.diagnostics[0].code == "IR109"
    assert e.value.diagnostics[0].location.layer_name == "wide"
    with pytest.raises(IRError) as e:  # a target the rules refuse: the rule's own error
        compiled({"data": data, "target": _i64(5, 4)})
    assert e.value.diagnostics[0].location.layer_name == "wide"


def test_a_variable_keeps_a_dying_value_without_a_copy_and_stays_right():
    # acc <- acc + x on a 128 KB state: the Add's result dies at the Assign, which keeps it
    b = ModelBuilder("accumulate")
    x = b.parameter("x", "f32", [-1, 1024])
    zeros = b.op("Broadcast", b.constant(np.array(0, np.float32)),
                 b.op("ShapeOf", x, version="opset3"), version="opset3")
    acc = b.op("ReadValue", zeros, version="opset6", variable_id="acc", variable_type="f32",
               variable_shape=irexec.PartialShape([-1, 1024]))
    total = b.op("Add", acc, x, name="total")
    b.op("Assign", total, version="opset6", variable_id="acc")
    b.result(b.op("Multiply", acc, b.constant(np.array(2, np.float32))), "twice_before")
    compiled = irexec.compile_model(b.build())
    request = compiled.create_infer_request()
    step = np.arange(32 * 1024, dtype=np.float32).reshape(32, 1024)
    for k in range(4):
        out = request.infer({"x": step})[0]
        np.testing.assert_array_equal(out, 2 * k * step)
        out[...] = -1  # the caller's array: writing it changes no state
        state = request.query_state()[0].state.data
        np.testing.assert_array_equal(state, (k + 1) * step)


def test_two_threads_decoding_at_once_get_each_their_own_answer():
    import threading

    compiled = irexec.compile_model(decoder())
    feeds = []
    for batch, prompt in ((1, 5), (2, 3)):
        ids = RNG.integers(2, V, (batch, prompt))
        steps = [RNG.integers(2, V, (batch, 1)) for _ in range(25)]
        feeds.append((ids, steps, np.arange(batch, dtype=np.int32)))

    def generate(request, feed, out):
        ids, steps, beams = feed
        request.reset_state()
        for x in [ids, *steps]:
            out.append(request.infer({"input_ids": x, "beam_idx": beams})[0].copy())

    alone = []
    for feed in feeds:
        alone.append([])
        generate(compiled.create_infer_request(), feed, alone[-1])
    together = [[], []]
    threads = [threading.Thread(target=generate, args=(compiled.create_infer_request(), f, o))
               for f, o in zip(feeds, together)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for got, want in zip(together, alone):
        assert len(got) == len(want) == 26
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


def test_reshapes_by_constants_reuse_their_dims_per_shape_of_data():
    # Reshape, Unsqueeze and Squeeze with constant targets and axes: a call like one before
    # reshapes to the dims the kernel found for that shape of data; a new shape (or the
    # same signature's other sizes) finds its own; the values and views are the kernels'
    b = ModelBuilder("reshapes")
    x = b.parameter("x", "f32", [-1, 6])
    r = b.op("Reshape", x, b.constant(_i64(-1, 2, 3)), special_zero=False)
    u = b.op("Unsqueeze", r, b.constant(_i64(1)))
    s = b.op("Squeeze", u, b.constant(_i64(1)))
    flat = b.op("Reshape", s, b.constant(_i64(0, 6)), special_zero=True)
    b.result(b.op("Multiply", flat, b.constant(np.array(2, np.float32))), "y")
    compiled = irexec.compile_model(b.build(), "CPU", {"fusion": "off"})  # (else one step)
    for rows in (4, 4, 4, 7, 7, 4, 3, 3):
        data = RNG.normal(size=(rows, 6)).astype(np.float32)
        got = compiled({"x": data})[0]
        np.testing.assert_array_equal(got, data * np.float32(2))
    code = compiled.plan.call_code
    assert isinstance(code, CallCode)
    lines = str(code).splitlines()
    reshaping = [line for line in lines if "numpy's reshape" in line]
    assert len(reshaping) == 4, lines


def test_shape_arithmetic_of_two_outputs_that_misses_every_call_stays_right():
    # a Split of values that follow a length new on every call: after a memo's worth of
    # misses the step computes without looking up (runtime/call_code.py), as a one-output
    # step does; each call's outputs still the full plan's
    b = ModelBuilder("split_lengths")
    x = b.parameter("x", "f32", [1, -1])
    shape = b.op("ShapeOf", x, version="opset3")
    both = b.op("Concat", shape, b.op("Add", shape, b.constant(_i64(3))), axis=0)
    first, second = b.op("Split", both, b.constant(np.array(0, np.int64)), num_splits=2,
                         outputs=2)
    total = b.op("Add", b.op("Convert", first, destination_type="f32"),
                 b.op("Convert", second, destination_type="f32"))
    b.result(b.op("Multiply", b.op("ReduceSum", x, b.constant(_i64(1)), keep_dims=False),
                  total), "out")
    compiled = irexec.compile_model(b.build())
    for length in range(1, 90):
        data = np.full((1, length), 0.5, np.float32)
        np.testing.assert_array_equal(compiled({"x": data})[0], _split_reference(length))
    assert compiled.plan.call_code is not None


def _split_reference(length: int) -> np.ndarray:
    shape = np.array([1, length], np.int64)
    both = np.concatenate([shape, shape + 3])
    first, second = both[:2], both[2:]
    total = first.astype(np.float32) + second.astype(np.float32)
    return np.float32(0.5 * length) * total
