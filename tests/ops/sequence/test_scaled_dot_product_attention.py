"""ScaledDotProductAttention-13: the specification's shape examples, properties against the
specification's pseudo-code in float64, OpenVINO conformance (masks, causal, scale, batch
broadcasting, f32/f16) and shape errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.ir.shape import PartialShape
from tests.ops.compute_support import (assert_close, build_layer, layer_error,
                                       openvino_and_irexec, run_layer)

F = np.zeros(1, np.float32)


def reference(q, k, v, mask=None, scale=None, causal=False):
    """The specification's pseudo-code, in float64; and the magnitude of the output's terms."""
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    length, source = q.shape[-2], k.shape[-2]
    if scale is None:
        scale = 1.0 / np.sqrt(q.shape[-1])
    bias = np.zeros((length, source))
    if causal:
        bias = np.triu(np.full((length, source), -np.inf), k=1)
    elif mask is not None:
        bias = np.where(mask, 0.0, -np.inf) if mask.dtype == bool else bias + mask
    w = q @ np.swapaxes(k, -1, -2) * float(scale) + bias
    w = np.exp(w - w.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ v, w @ np.abs(v)


@pytest.mark.parametrize("q, k, v, mask, expected", [
    ([1, -1, 80], [1, -1, 80], [1, -1, 80], [1, -1, -1], [1, -1, 80]),
    ([1, 2, 3, -1, 80], [1, 2, 3, -1, 80], [1, 2, 3, -1, 80], [1, 2, 3, -1, -1],
     [1, 2, 3, -1, 80]),
    # (the specification's third example repeats batch dims 2 into 6; OpenVINO refuses it:
    # "Key input shape not compatible", and so does irexec: numpy's broadcasting rules)
    ([1, 6, 5, -1, 80], [1, 6, 5, -1, 80], [4, 6, 1, -1, 80], [6, 5, -1, -1],
     [4, 6, 5, -1, 80]),
])
def test_spec_example_shapes(q, k, v, mask, expected):
    model, _ = build_layer("ScaledDotProductAttention", F, F, F, F, shapes=[q, k, v, mask],
                           version="opset13", causal=False)
    assert model.results[0].inputs[0].source.partial_shape == PartialShape(expected)


def test_one_key_gives_its_value():
    q = np.ones((1, 2, 3), np.float32)
    k = np.ones((1, 1, 3), np.float32)
    v = np.array([[[5.0, 7.0]]], np.float32)
    y = run_layer("ScaledDotProductAttention", q, k, v, version="opset13", causal=False)
    assert y.tolist() == [[[5.0, 7.0], [5.0, 7.0]]]


def test_causal_first_query_sees_only_the_first_key():
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 1, 4, 3)).astype(np.float32), \
        rng.standard_normal((2, 1, 4, 3)).astype(np.float32)
    v = rng.standard_normal((2, 1, 4, 5)).astype(np.float32)
    y = run_layer("ScaledDotProductAttention", q, k, v, version="opset13", causal=True)
    np.testing.assert_allclose(y[..., 0, :], v[..., 0, :], rtol=1e-6)


@st.composite
def cases(draw):
    batch = [draw(st.integers(1, 3)) for _ in range(draw(st.integers(1, 2)))]
    length, source, e, ev = (draw(st.integers(1, 5)) for _ in range(4))
    kind = draw(st.sampled_from(["none", "causal", "bool", "float"]))
    with_scale = draw(st.booleans())
    return batch, length, source, e, ev, kind, with_scale, draw(st.integers(0, 2**16))


@settings(max_examples=50, deadline=None)
@given(cases(), st.sampled_from(["f32", "f16", "f64"]))
def test_property_equals_the_pseudo_code(case, type_name):
    batch, length, source, e, ev, kind, with_scale, seed = case
    dtype = {"f32": np.float32, "f16": np.float16, "f64": np.float64}[type_name]
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((*batch, length, e)).astype(dtype)
    k = rng.standard_normal((*batch, source, e)).astype(dtype)
    v = rng.standard_normal((*batch, source, ev)).astype(dtype)
    inputs = [q, k, v]
    mask = None
    if kind == "bool":
        mask = rng.random((*batch, length, source)) < 0.7
        mask[..., 0] = True  # every query sees a key
    elif kind == "float":
        mask = rng.standard_normal((1, length, source)).astype(dtype)
    if mask is not None or with_scale:
        inputs.append(mask if mask is not None else np.zeros((), dtype))
    scale = dtype(0.3) if with_scale else None
    if with_scale:
        inputs.append(np.array(scale, dtype))
    y = run_layer("ScaledDotProductAttention", *inputs, version="opset13",
                  causal=kind == "causal")
    ref, mag = reference(q, k, v, mask, scale, kind == "causal")
    assert_close(y, ref.astype(dtype), mag * 8, f"{kind} {batch}")


@pytest.mark.parametrize("type_name", ["f32", "f16"])
def test_openvino_conformance(tmp_path, type_name):
    ov = pytest.importorskip("openvino")
    import openvino.opset13 as o13
    dtype = np.float32 if type_name == "f32" else np.float16
    rng = np.random.default_rng(31)
    params, outputs, inputs, mags = [], [], [], []
    for qs, ks, vs, mask_shape in (((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 4), (2, 3, 5, 7)),
                                   ((1, 4, 6), (1, 4, 6), (1, 4, 6), (1, 1, 4)),
                                   ((1, 2, 3, 4), (2, 1, 5, 4), (1, 1, 5, 3), (1, 1, 1, 5))):
        for kind in ("none", "causal", "bool", "float", "scale"):
            q, k, v = (rng.standard_normal(s).astype(dtype) for s in (qs, ks, vs))
            ps = [o13.parameter(list(s), dtype) for s in (qs, ks, vs)]
            feed = [q, k, v]
            mask = None
            extra = []
            if kind == "bool":
                mask = rng.random(mask_shape) < 0.7
                mask[..., 0] = True
            elif kind == "float":
                mask = rng.standard_normal(mask_shape).astype(dtype)
            if mask is not None:
                pm = o13.parameter(list(mask_shape), mask.dtype)
                ps.append(pm)
                feed.append(mask)
                extra = [pm]
            scale = None
            if kind == "scale":
                extra = [o13.constant(np.zeros((), dtype)), o13.constant(np.array(0.4, dtype))]
                scale = 0.4
            node = o13.scaled_dot_product_attention(*ps[:3], *extra, causal=kind == "causal")
            params += ps
            inputs += feed
            outputs.append(node.output(0))
            mags.append(reference(q, k, v, mask, scale, kind == "causal")[1])
    ours, theirs = openvino_and_irexec(ov, tmp_path, params, outputs, inputs)
    for a, b, mag in zip(ours, theirs, mags):
        assert_close(a, b, mag * 8, "ScaledDotProductAttention")


@pytest.mark.parametrize("q, k, v", [
    ([1, 4, 8], [1, 5, 6], [1, 5, 3]),  # E differs
    ([1, 4, 8], [1, 5, 8], [1, 6, 3]),  # S differs
    ([2, 4, 8], [3, 5, 8], [1, 5, 3]),  # batch dims do not broadcast
])
def test_shape_errors_are_ir307(q, k, v):
    e = layer_error("ScaledDotProductAttention", F, F, F, shapes=[q, k, v], version="opset13",
                    causal=False)
    assert [d.code for d in e.diagnostics] == ["IR307"]


def test_rank_two_is_ir305():
    e = layer_error("ScaledDotProductAttention", F, F, F, shapes=[[4, 8], [5, 8], [5, 3]],
                    version="opset13", causal=False)
    assert {d.code for d in e.diagnostics} == {"IR305"}
