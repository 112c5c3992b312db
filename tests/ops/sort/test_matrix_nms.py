"""MatrixNms-8: a plain-Python reference, OpenVINO conformance, empty inputs, shape inference,
bad attributes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec.builder import ModelBuilder
from irexec.errors import IRError
from irexec.ir.shape import Dimension, PartialShape
from tests.ops.shapeops_oracle import openvino
from tests.ops.sort import nms_reference as ref

OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}


def build(boxes_shape, scores_shape, dtype="f32", **attrs):
    b = ModelBuilder()
    outs = b.op("MatrixNms", b.parameter("boxes", dtype, boxes_shape),
                b.parameter("scores", dtype, scores_shape), version="opset8", name="mx", **attrs)
    for i, o in enumerate(outs):
        b.result(o, f"out{i}")
    return b.build()


def run(model, boxes, scores):
    return list(irexec.compile_model(model)({"boxes": boxes, "scores": scores}).values())


def random_boxes(rng, B, N):
    c = rng.uniform(0, 4, (B, N, 2))
    return np.concatenate([c, c + rng.uniform(0.2, 2, (B, N, 2))], -1).astype(np.float32)


attrs_strategy = st.fixed_dictionaries(dict(
    sort_result_type=st.sampled_from(["classid", "score", "none"]),
    sort_result_across_batch=st.booleans(), output_type=st.sampled_from(["i32", "i64"]),
    score_threshold=st.sampled_from([0.0, 0.3]), nms_top_k=st.sampled_from([-1, 2, 6]),
    keep_top_k=st.sampled_from([-1, 3, 8]), background_class=st.sampled_from([-1, 0, 1]),
    decay_function=st.sampled_from(["linear", "gaussian"]),
    gaussian_sigma=st.sampled_from([2.0, 0.5]), post_threshold=st.sampled_from([0.0, 0.25]),
    normalized=st.booleans()))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 31), B=st.integers(1, 3), C=st.integers(1, 3),
       N=st.integers(0, 10), attrs=attrs_strategy)
def test_matches_the_reference(seed, B, C, N, attrs):
    rng = np.random.default_rng(seed)
    boxes = random_boxes(rng, B, N)
    scores = rng.uniform(0, 1, (B, C, N)).astype(np.float32)
    sel, idx, num = run(build([B, N, 4], [B, C, N], **attrs), boxes, scores)
    want, counts = ref.matrix_nms(boxes, scores, attrs)
    out_type = np.int32 if attrs["output_type"] == "i32" else np.int64
    assert num.tolist() == counts and num.dtype == idx.dtype == out_type
    assert idx[:, 0].tolist() == [r[0] * N + r[2] for r in want]
    assert sel[:, 0].tolist() == [r[1] for r in want]
    np.testing.assert_allclose(sel[:, 1], [r[3] for r in want], rtol=1e-6)
    np.testing.assert_array_equal(sel[:, 2:], np.array([boxes[r[0], r[2]] for r in want],
                                                       np.float32).reshape(-1, 4))


def test_decay_worked_example():
    """Three boxes of one class: the second overlaps the first by IoU 1/2, the third overlaps
    nothing. Linear: the second decays by (1 - 1/2) / (1 - 0) and the third not at all."""
    boxes = np.array([[[0, 0, 2, 1], [0, 0, 1, 1], [5, 5, 6, 6]]], np.float32)
    scores = np.array([[[0.9, 0.8, 0.7]]], np.float32)
    sel, idx, num = run(build([1, 3, 4], [1, 1, 3]), boxes, scores)
    assert idx[:, 0].tolist() == [0, 2, 1] and num.tolist() == [3]
    np.testing.assert_allclose(sel[:, 1], [0.9, 0.7, 0.4], rtol=1e-6)
    sel, _, _ = run(build([1, 3, 4], [1, 1, 3], decay_function="gaussian", gaussian_sigma=2.0),
                    boxes, scores)
    np.testing.assert_allclose(sel[:, 1], [0.9, 0.7, 0.8 * np.exp(-0.25 * 2)], rtol=1e-6)


def test_spec_shapes_and_empty_inputs():
    model = build([3, 100, 4], [3, 5, 100], nms_top_k=10, keep_top_k=40)
    assert [o.partial_shape for o in model.outputs] == [
        PartialShape([Dimension(0, 120), 6]), PartialShape([Dimension(0, 120), 1]),
        PartialShape([3])]
    sel, idx, num = run(build([2, 0, 4], [2, 3, 0]), np.zeros((2, 0, 4), np.float32),
                        np.zeros((2, 3, 0), np.float32))
    assert sel.shape == (0, 6) and idx.shape == (0, 1) and num.tolist() == [0, 0]
    sel, _, num = run(build([1, 2, 4], [1, 1, 2], background_class=0),
                      np.ones((1, 2, 4), np.float32), np.ones((1, 1, 2), np.float32))
    assert sel.shape == (0, 6) and num.tolist() == [0]


@pytest.mark.parametrize("attrs, code", [
    (dict(nms_top_k=-2), "IR302"), (dict(keep_top_k=-3), "IR302"),
    (dict(background_class=-2), "IR302"), (dict(output_type="f32"), "IR302"),
    (dict(decay_function="cubic"), "IR302"),
])
def test_bad_attributes(attrs, code):
    with pytest.raises(IRError) as e:
        build([1, 4, 4], [1, 2, 4], **attrs)
    assert e.value.code == code


def test_boxes_and_scores_disagree():
    with pytest.raises(IRError) as e:
        build([1, 4, 4], [1, 2, 5])
    assert e.value.code == "IR307"


def test_openvino_conformance(tmp_path):
    """Eighteen layers in one model, every attribute varied. Indices and counts exactly, decayed
    scores within 1e-6 (OpenVINO's exp and division round differently in the last bit)."""
    ov = openvino()
    import openvino.opset8 as o8
    rng = np.random.default_rng(31)
    outputs, params, feed = [], [], []
    for i in range(18):
        B, C, N = 1 + i % 3, 1 + i % 4, 4 + 2 * i
        boxes = random_boxes(rng, B, N)
        pb, ps = o8.parameter([B, N, 4], np.float32), o8.parameter([B, C, N], np.float32)
        params += [pb, ps]
        feed += [boxes, rng.uniform(0, 1, (B, C, N)).astype(np.float32)]
        outputs += o8.matrix_nms(
            pb, ps, sort_result_type=("classid", "score", "none")[i % 3],
            sort_result_across_batch=bool(i // 3 % 2), output_type=("i64", "i32")[i // 2 % 2],
            score_threshold=(0.0, 0.2)[i % 2], nms_top_k=(-1, 3, 7)[i % 3],
            keep_top_k=(-1, 5, 2)[i // 2 % 3], background_class=(-1, 1)[i // 9],
            decay_function=("linear", "gaussian")[i % 2], gaussian_sigma=(2.0, 0.7)[i // 4 % 2],
            post_threshold=(0.0, 0.3)[i // 5 % 2], normalized=bool(i // 3 % 2)).outputs()
    model = ov.Model(outputs, params, "matrix")
    xml = tmp_path / "matrix.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    core = ov.Core()
    request = core.compile_model(core.read_model(str(xml)), "CPU", OV_CONFIG).create_infer_request()
    request.infer(feed)
    theirs = [request.get_output_tensor(i).data.copy() for i in range(len(outputs))]
    names = [p.get_friendly_name() for p in model.get_parameters()]
    ours = list(irexec.compile_model(irexec.read_model(xml))(dict(zip(names, feed))).values())
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a.shape == b.shape and a.dtype == b.dtype, i
        if i % 3 == 0:
            np.testing.assert_array_equal(a[:, [0, 2, 3, 4, 5]], b[:, [0, 2, 3, 4, 5]])
            np.testing.assert_allclose(a[:, 1], b[:, 1], rtol=1e-6)
        else:
            assert a.tolist() == b.tolist(), i
