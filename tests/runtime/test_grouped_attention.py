"""Grouped-query attention (runtime/fusion.py ``grouped_attention``): the key's and the value's
Unsqueeze -> Broadcast -> Reshape before a ScaledDotProductAttention run as one step that
attends over the G heads without making the R copies. Held bit for bit to the plan run layer
by layer (``fusion: off``) over random shapes, masks (none, [B,1,L,S], per head, boolean,
2-d), causal, an explicit scale, prefill and decode calls (the target shapes computed from the
call's shapes, as converters write them), f32 and f16; a target that is not of the grouped
form still gives the layers' answer; a budget the copies would pass is refused as the layers
refuse it."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec import budget
from irexec.builder import ModelBuilder
from irexec.errors import IRError
from irexec.runtime import fusion


def _i64(*values):
    return np.array(values, np.int64)


def _grouped(b, x, groups, repeat, dims, computed, special_zero):
    """x [B, G, S, E] -> [B, G*R, S, E] as optimum-intel writes it: the targets from ShapeOf
    (``computed``) or constants."""
    u = b.op("Unsqueeze", x, b.constant(_i64(2)))
    if computed:
        shape = b.op("ShapeOf", x, version="opset3")
        zero = b.constant(np.array(0, np.int64))
        head = b.op("Gather", shape, b.constant(_i64(0, 1)), zero, version="opset8",
                    batch_dims=0)
        tail = b.op("Gather", shape, b.constant(_i64(2, 3)), zero, version="opset8",
                    batch_dims=0)
        target = b.op("Concat", head, b.constant(_i64(repeat)), tail, axis=0)
        if special_zero:
            pattern = b.constant(_i64(0, groups * repeat, -1, dims))
        else:
            first = b.op("Gather", shape, b.constant(_i64(0)), zero, version="opset8",
                         batch_dims=0)
            pattern = b.op("Concat", first, b.constant(_i64(groups * repeat, -1, dims)), axis=0)
    else:
        target = b.parameter("target_" + x.node.name, "i64", [5])
        pattern = b.constant(_i64(0, groups * repeat, -1, dims))  # special_zero
    w = b.op("Broadcast", u, target, version="opset3")
    return b.op("Reshape", w, pattern, special_zero=special_zero)


def _model(et, groups, repeat, dims, mask, causal, scale, computed=True, special_zero=False):
    b = ModelBuilder("gqa")
    q = b.parameter("q", et, [-1, groups * repeat, -1, dims])
    k = b.parameter("k", et, [-1, groups, -1, dims])
    v = b.parameter("v", et, [-1, groups, -1, dims])
    args = [q, _grouped(b, k, groups, repeat, dims, computed, special_zero),
            _grouped(b, v, groups, repeat, dims, computed, special_zero)]
    if mask is not None or scale:
        m_et = "boolean" if mask == "bool" else et
        rank = 2 if mask == "2d" else 4
        args.append(b.parameter("mask", m_et, [-1] * rank) if mask is not None
                    else b.constant(np.zeros((), np.float32 if et == "f32" else np.float16)))
    if scale:
        args.append(b.constant(np.array(0.3, np.float32 if et == "f32" else np.float16)))
    b.result(b.op("ScaledDotProductAttention", *args, causal=causal, version="opset13"), "out")
    return b.build()


def _feed(rng, et, batch, groups, repeat, dims, lq, s, mask, computed, model):
    dtype = np.float32 if et == "f32" else np.float16
    feed = {"q": rng.normal(size=(batch, groups * repeat, lq, dims)).astype(dtype),
            "k": rng.normal(size=(batch, groups, s, dims)).astype(dtype),
            "v": rng.normal(size=(batch, groups, s, dims)).astype(dtype)}
    if mask == "bool":
        feed["mask"] = rng.random((batch, 1, lq, s)) > 0.3
    elif mask == "heads":
        feed["mask"] = rng.normal(size=(batch, groups * repeat, lq, s)).astype(dtype)
    elif mask == "2d":
        feed["mask"] = rng.normal(size=(lq, s)).astype(dtype)
    elif mask is not None:
        feed["mask"] = rng.normal(size=(batch, 1, lq, s)).astype(dtype)
    if not computed:
        for p in model.inputs:
            if p.any_name.startswith("target_"):
                feed[p.any_name] = _i64(batch, groups, repeat, s, dims)
    return feed


CASES = [("f32", None, False, False), ("f32", "add", False, False), ("f32", "bool", False, True),
         ("f32", "heads", False, False), ("f32", "2d", False, True), ("f32", None, True, False),
         ("f32", None, True, True), ("f16", "add", False, False)]


@pytest.fixture
def grouped_calls(monkeypatch):
    """The results of the grouped path (None where a call's shapes sent it to the layers)."""
    calls = []
    grouped = fusion.GroupedAttentionKernel._grouped

    def counted(self, inputs):
        calls.append(grouped(self, inputs))
        return calls[-1]
    monkeypatch.setattr(fusion.GroupedAttentionKernel, "_grouped", counted)
    return calls


@pytest.mark.parametrize("et,mask,causal,scale", CASES)
def test_grouped_attention_is_one_step_and_computes_what_its_layers_compute(
        et, mask, causal, scale, grouped_calls):
    rng = np.random.default_rng(len(str((et, mask, causal, scale))))
    for groups, repeat, dims, computed, special_zero in ((2, 2, 16, True, False),
                                                          (3, 4, 8, True, True),
                                                          (1, 3, 32, False, True),
                                                          (4, 1, 8, False, True)):
        model = _model(et, groups, repeat, dims, mask, causal, scale, computed, special_zero)
        fast = irexec.compile_model(model)
        plain = irexec.compile_model(model, config={"fusion": "off"})
        assert "GroupedAttention" in fusion.fused_names(fast.plan).values()
        batch = int(rng.integers(1, 3))
        # a prefill, then decode steps over a growing length (a call like one before)
        for lq, s in ((7, 7), (1, 8), (1, 9), (1, 10), (3, 13)):
            feed = _feed(rng, et, batch, groups, repeat, dims, lq, s, mask, computed, model)
            got, want = fast(feed)[0], plain(feed)[0]
            assert got.dtype == want.dtype and got.shape == want.shape
            assert got.tobytes() == want.tobytes()
    assert sum(c is not None for c in grouped_calls) >= 4 * 3  # each model's later calls


def test_a_target_of_another_form_runs_the_layers(grouped_calls):
    model = _model("f32", 2, 2, 8, "add", False, False, computed=False, special_zero=True)
    fast = irexec.compile_model(model)
    plain = irexec.compile_model(model, config={"fusion": "off"})
    rng = np.random.default_rng(5)
    feed = _feed(rng, "f32", 1, 2, 2, 8, 1, 6, "add", False, model)
    for _ in range(3):
        np.testing.assert_array_equal(fast(feed)[0], plain(feed)[0])
    # the key's and value's batch of one broadcast to two as well: not the grouped form
    for p in model.inputs:
        if p.any_name.startswith("target_"):
            feed[p.any_name] = _i64(2, 2, 2, 6, 8)
    feed["q"] = rng.normal(size=(2, 4, 1, 8)).astype(np.float32)
    feed["mask"] = rng.normal(size=(2, 1, 1, 6)).astype(np.float32)
    grouped_calls.clear()
    for _ in range(3):
        np.testing.assert_array_equal(fast(feed)[0], plain(feed)[0])
    assert grouped_calls and all(c is None for c in grouped_calls)


def test_the_copies_past_the_budget_are_refused_as_the_layers_refuse_them():
    model = _model("f32", 2, 8, 64, None, False, False)
    fast = irexec.compile_model(model)
    rng = np.random.default_rng(9)
    feed = _feed(rng, "f32", 1, 2, 8, 64, 1, 200, None, True, model)
    fast(feed)
    fast(feed)  # a call like one before: the grouped path
    # the key alone is 100 KB, its 8 copies 800 KB
    with budget.limit(400_000):
        with pytest.raises(IRError) as e:
            fast(feed)
    assert e.value.diagnostics[0].code == "IR109"
