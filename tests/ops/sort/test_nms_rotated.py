"""NMSRotated-13: a reference with its own polygon clipping, OpenVINO conformance, empty inputs,
shape inference and bad inputs."""

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


def build(boxes_shape, scores_shape, max_out=5, iou=0.5, score=0.0, **attrs):
    b = ModelBuilder()
    outs = b.op("NMSRotated", b.parameter("boxes", "f32", boxes_shape),
                b.parameter("scores", "f32", scores_shape), b.constant(np.int64(max_out)),
                b.constant(np.float32(iou)), b.constant(np.float32(score)), version="opset13",
                name="rot", **attrs)
    for i, o in enumerate(outs):
        b.result(o, f"out{i}")
    return b.build()


def run(model, boxes, scores):
    return list(irexec.compile_model(model)({"boxes": boxes, "scores": scores}).values())


def random_rotated(rng, B, N):
    xy = rng.uniform(0, 5, (B, N, 2))
    wh = rng.uniform(0.3, 3, (B, N, 2))
    angle = rng.uniform(-np.pi, np.pi, (B, N, 1))
    return np.concatenate([xy, wh, angle], -1).astype(np.float32)


def test_rotation_decides_the_overlap():
    """Two 4x1 boxes with one center: crossed (90 degrees apart) they overlap by 1/7, aligned
    by 1. At threshold 0.5 the crossed one stays."""
    boxes = np.array([[[0, 0, 4, 1, 0], [0, 0, 4, 1, np.pi / 2], [0, 0, 4, 1, 0.0]]],
                     np.float32)
    scores = np.array([[[0.9, 0.8, 0.7]]], np.float32)
    idx, sc, valid = run(build([1, 3, 5], [1, 1, 3], sort_result_descending=False), boxes,
                         scores)
    assert idx[:, 2].tolist() == [0, 1] and valid.tolist() == [2]
    assert abs(ref.rotated_iou(boxes[0, 0], boxes[0, 1]) - 1 / 7) < 1e-6
    idx, _, _ = run(build([1, 3, 5], [1, 1, 3], iou=0.1), boxes, scores)
    assert idx[:, 2].tolist() == [0]  # 1/7 > 0.1


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2 ** 31), B=st.integers(1, 2), C=st.integers(1, 3),
       N=st.integers(0, 15), max_out=st.integers(0, 8), iou=st.floats(0.05, 0.9),
       score=st.sampled_from([0.0, 0.4]), clockwise=st.booleans(), sort=st.booleans())
def test_matches_the_reference(seed, B, C, N, max_out, iou, score, clockwise, sort):
    rng = np.random.default_rng(seed)
    boxes = random_rotated(rng, B, N)
    scores = rng.uniform(0, 1, (B, C, N)).astype(np.float32)
    model = build([B, N, 5], [B, C, N], max_out, iou, score, clockwise=clockwise,
                  sort_result_descending=sort, output_type="i32")
    idx, sc, valid = run(model, boxes, scores)
    want = ref.nms_rotated(boxes, scores, max_out, iou, score, clockwise, sort)
    assert idx.dtype == np.int32 and valid.tolist() == [len(want)]
    assert idx.tolist() == [[b, c, i] for b, c, i, _ in want]
    assert sc[:, 2].tolist() == [float(s) for *_, s in want]


def test_shapes_empty_and_bad_inputs():
    model = build([3, 100, 5], [3, 5, 100], max_out=10)
    assert [o.partial_shape for o in model.outputs] == \
        [PartialShape([Dimension(0, 150), 3])] * 2 + [PartialShape([1])]
    idx, sc, valid = run(build([1, 0, 5], [1, 2, 0]), np.zeros((1, 0, 5), np.float32),
                         np.zeros((1, 2, 0), np.float32))
    assert idx.shape == sc.shape == (0, 3) and valid.tolist() == [0]
    with pytest.raises(IRError) as e:
        build([1, 4, 4], [1, 2, 4])
    assert e.value.code == "IR307" and "must be 5" in str(e.value)
    with pytest.raises(IRError) as e:
        build([1, 4, 5], [1, 2, 4], max_out=-2)
    assert e.value.code == "IR308"


def test_openvino_conformance(tmp_path):
    """Twelve layers in one model: both angle directions, sort orders, output types, boxes at
    right angles (parallel edges) and at any angle."""
    ov = openvino()
    import openvino.opset13 as o13
    rng = np.random.default_rng(41)
    outputs, params, feed = [], [], []
    for i in range(12):
        B, C, N = 1 + i % 2, 1 + i % 3, 6 + 3 * i
        boxes = random_rotated(rng, B, N)
        if i % 4 == 3:
            boxes[..., 4] = np.round(boxes[..., 4] / (np.pi / 2)) * (np.pi / 2)
        pb, ps = o13.parameter([B, N, 5], np.float32), o13.parameter([B, C, N], np.float32)
        params += [pb, ps]
        feed += [boxes, rng.uniform(0, 1, (B, C, N)).astype(np.float32)]
        outputs += o13.nms_rotated(
            pb, ps, o13.constant(np.int64(1 + i % 7)), o13.constant(np.float32(0.1 + 0.06 * i)),
            o13.constant(np.float32((0.0, 0.3)[i % 2])), sort_result_descending=bool(i % 2),
            output_type=("i64", "i32")[i // 2 % 2], clockwise=bool(i // 4 % 2)).outputs()
    model = ov.Model(outputs, params, "rotated")
    xml = tmp_path / "rotated.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    core = ov.Core()
    request = core.compile_model(core.read_model(str(xml)), "CPU", OV_CONFIG).create_infer_request()
    request.infer(feed)
    names = [p.get_friendly_name() for p in model.get_parameters()]
    ours = list(irexec.compile_model(irexec.read_model(xml))(dict(zip(names, feed))).values())
    for i, a in enumerate(ours):
        b = request.get_output_tensor(i).data
        assert a.dtype == b.dtype and a.tolist() == b.tolist(), i
