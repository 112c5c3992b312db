"""MulticlassNms-8/9: a plain-Python reference, OpenVINO conformance (shared boxes and roisnum),
empty inputs, shape inference and bad inputs."""

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
DEFAULTS = dict(sort_result_type="none", sort_result_across_batch=False, output_type="i64",
                iou_threshold=0.0, score_threshold=0.0, nms_top_k=-1, keep_top_k=-1,
                background_class=-1, nms_eta=1.0, normalized=True)


def build(boxes_shape, scores_shape, rois_shape=None, version=9, rois=None, **attrs):
    b = ModelBuilder()
    args = [b.parameter("boxes", "f32", boxes_shape), b.parameter("scores", "f32", scores_shape)]
    if rois_shape is not None:
        args.append(b.constant(np.asarray(rois, np.int32)) if rois is not None
                    else b.parameter("roisnum", "i32", rois_shape))
    outs = b.op("MulticlassNms", *args, version=f"opset{version}", name="mc", **attrs)
    for i, o in enumerate(outs):
        b.result(o, f"out{i}")
    return b.build()


def run(model, **feed):
    return list(irexec.compile_model(model)(feed).values())


def boxes_and_scores(rng, lead, n, quantized=False):
    c = rng.uniform(0, 4, lead + (n, 2))
    boxes = np.concatenate([c, c + rng.uniform(0.2, 2, lead + (n, 2))], -1).astype(np.float32)
    return boxes


def check_against_reference(out, want, counts, out_type=np.int64):
    sel, idx, num = out
    assert num.tolist() == counts and num.dtype == out_type and idx.dtype == out_type
    assert sel.shape == (len(want), 6) and idx.shape == (len(want), 1)
    assert idx[:, 0].tolist() == [r[4] for r in want]
    assert sel[:, 0].tolist() == [r[1] for r in want]
    assert sel[:, 1].tolist() == [float(r[3]) for r in want]
    np.testing.assert_array_equal(sel[:, 2:], np.array([r[5] for r in want],
                                                       np.float32).reshape(-1, 4))


attrs_strategy = st.fixed_dictionaries(dict(
    sort_result_type=st.sampled_from(["classid", "score", "none"]),
    sort_result_across_batch=st.booleans(), output_type=st.sampled_from(["i32", "i64"]),
    iou_threshold=st.floats(0.1, 0.9), score_threshold=st.sampled_from([0.0, 0.5]),
    nms_top_k=st.sampled_from([-1, 2, 5]), keep_top_k=st.sampled_from([-1, 3, 8]),
    background_class=st.sampled_from([-1, 0, 2]), nms_eta=st.sampled_from([1.0, 0.6]),
    normalized=st.booleans()))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 31), B=st.integers(1, 3), C=st.integers(1, 3),
       N=st.integers(0, 12), attrs=attrs_strategy, rois=st.booleans())
def test_matches_the_reference(seed, B, C, N, attrs, rois):
    rng = np.random.default_rng(seed)
    out_type = np.int32 if attrs["output_type"] == "i32" else np.int64
    if rois:
        counts = rng.integers(0, 5, B)
        M = int(counts.sum()) + int(rng.integers(0, 2))  # roisnum may cover fewer boxes
        boxes = boxes_and_scores(rng, (C,), M)
        scores = (rng.integers(0, 4, (C, M)) / 4).astype(np.float32)
        model = build([C, M, 4], [C, M], [B], **attrs)
        out = run(model, boxes=boxes, scores=scores, roisnum=counts.astype(np.int32))
        want, per = ref.multiclass(boxes, scores, attrs, counts)
    else:
        boxes = boxes_and_scores(rng, (B,), N)
        scores = (rng.integers(0, 4, (B, C, N)) / 4).astype(np.float32)
        model = build([B, N, 4], [B, C, N], version=8 if seed % 2 else 9, **attrs)
        out = run(model, boxes=boxes, scores=scores)
        want, per = ref.multiclass(boxes, scores, attrs)
    check_against_reference(out, want, per, out_type)


def test_spec_example_shapes():
    """The spec's examples: [3,100,4] boxes, [3,5,100] scores -> [0..1500, 6], [0..1500, 1],
    [3]; with roisnum [10] over [3,100,4]/[3,100]: [0..3000, 6] (100 boxes * 3 classes per
    image, 10 images)."""
    model = build([3, 100, 4], [3, 5, 100], iou_threshold=0.2, score_threshold=0.5,
                  sort_result_type="score", normalized=False, nms_eta=0.0)
    assert [o.partial_shape for o in model.outputs] == [
        PartialShape([Dimension(0, 1500), 6]), PartialShape([Dimension(0, 1500), 1]),
        PartialShape([3])]
    model = build([3, 100, 4], [3, 100], [10])
    assert model.outputs[0].partial_shape == PartialShape([Dimension(0, 3000), 6])
    assert model.outputs[2].partial_shape == PartialShape([10])
    model = build([3, 100, 4], [3, 5, 100], nms_top_k=7, keep_top_k=20)
    assert model.outputs[1].partial_shape == PartialShape([Dimension(0, 60), 1])


def test_nothing_selected():
    """No boxes, every score under the threshold, images of no boxes: [0, 6], [0, 1], zeros."""
    model = build([2, 0, 4], [2, 3, 0])
    sel, idx, num = run(model, boxes=np.zeros((2, 0, 4), np.float32),
                        scores=np.zeros((2, 3, 0), np.float32))
    assert sel.shape == (0, 6) and idx.shape == (0, 1) and num.tolist() == [0, 0]
    model = build([1, 3, 4], [1, 2, 3], score_threshold=0.5)
    sel, idx, num = run(model, boxes=np.ones((1, 3, 4), np.float32),
                        scores=np.full((1, 2, 3), 0.25, np.float32))
    assert sel.shape == (0, 6) and num.tolist() == [0]
    model = build([2, 3, 4], [2, 3], [3])
    sel, idx, num = run(model, boxes=np.ones((2, 3, 4), np.float32),
                        scores=np.ones((2, 3), np.float32), roisnum=np.zeros(3, np.int32))
    assert sel.shape == (0, 6) and num.tolist() == [0, 0, 0]


def test_f16_boxes_give_f16_outputs():
    rng = np.random.default_rng(2)
    boxes = boxes_and_scores(rng, (1,), 6).astype(np.float16)
    scores = rng.uniform(0, 1, (1, 2, 6)).astype(np.float16)
    b = ModelBuilder()
    outs = b.op("MulticlassNms", b.parameter("boxes", "f16", [1, 6, 4]),
                b.parameter("scores", "f16", [1, 2, 6]), version="opset9", iou_threshold=0.5)
    for i, o in enumerate(outs):
        b.result(o, f"out{i}")
    sel, _, _ = run(b.build(), boxes=boxes, scores=scores)
    attrs = dict(DEFAULTS, iou_threshold=0.5)
    want, _ = ref.multiclass(boxes.astype(np.float32), scores.astype(np.float32), attrs)
    assert sel.dtype == np.float16 and sel[:, 1].tolist() == [float(np.float16(r[3]))
                                                              for r in want]


@pytest.mark.parametrize("kwargs, code, words", [
    (dict(boxes_shape=[1, 5, 3], scores_shape=[1, 2, 5]), "IR307", "last dim"),
    (dict(boxes_shape=[2, 5, 4], scores_shape=[1, 2, 5]), "IR307", "batch"),
    (dict(boxes_shape=[1, 5, 4], scores_shape=[1, 2, 6]), "IR307", "box count"),
    (dict(boxes_shape=[3, 5, 4], scores_shape=[2, 5], rois_shape=[2]), "IR307", "class"),
    (dict(boxes_shape=[3, 5, 4], scores_shape=[3, 1, 5], rois_shape=[2]), "IR305", "rank 2"),
    (dict(boxes_shape=[1, 5, 4], scores_shape=[1, 5]), "IR305", "rank 3"),
    (dict(boxes_shape=[1, 5, 4], scores_shape=[1, 2, 5], nms_eta=1.5), "IR302", "nms_eta"),
    (dict(boxes_shape=[1, 5, 4], scores_shape=[1, 2, 5], output_type="f32"), "IR302", "i32"),
    (dict(boxes_shape=[1, 5, 4], scores_shape=[1, 2, 5], keep_top_k=-2), "IR302", "keep_top_k"),
    (dict(boxes_shape=[2, 5, 4], scores_shape=[2, 5], rois_shape=[2], rois=[3, 3]), "IR308",
     "adds up"),
    (dict(boxes_shape=[2, 5, 4], scores_shape=[2, 5], rois_shape=[2], rois=[-1, 3]), "IR308",
     "negative"),
])
def test_bad_inputs(kwargs, code, words):
    with pytest.raises(IRError) as e:
        build(**kwargs)
    assert e.value.code == code and words in str(e.value)


def test_roisnum_checked_per_call():
    model = build([2, 5, 4], [2, 5], [2])
    with pytest.raises(IRError) as e:
        run(model, boxes=np.ones((2, 5, 4), np.float32), scores=np.ones((2, 5), np.float32),
            roisnum=np.array([4, 4], np.int32))
    assert e.value.code == "IR308"


# --- OpenVINO conformance -----------------------------------------------------------------------

def _compare(tmp_path, ov, outputs, params, feed, name, skip_num=()):
    model = ov.Model(outputs, params, name)
    xml = tmp_path / f"{name}.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU", OV_CONFIG)
    request = compiled.create_infer_request()
    request.infer(feed)
    theirs = [request.get_tensor(o).data.copy() for o in compiled.outputs]
    names = [p.get_friendly_name() for p in model.get_parameters()]
    ours = list(irexec.compile_model(irexec.read_model(xml))(dict(zip(names, feed))).values())
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a.shape == b.shape and a.dtype == b.dtype, (i, a.shape, b.shape)
        if i not in skip_num:
            assert np.array_equal(a, b), (i, a.tolist(), b.tolist())


def test_openvino_conformance(tmp_path):
    """Twenty layers in one model over shared boxes (opset8 and opset9 layers), every attribute
    varied; tied scores; corners in either order."""
    ov = openvino()
    import openvino.opset8 as o8
    import openvino.opset9 as o9
    rng = np.random.default_rng(21)
    outputs, params, feed = [], [], []
    for i in range(20):
        B, C, N = 1 + i % 3, 1 + i % 4, 5 + 2 * i
        boxes = boxes_and_scores(rng, (B,), N)
        if i % 5 == 4:
            boxes = boxes[..., [2, 3, 0, 1]].copy()
        scores = (rng.integers(0, 6, (B, C, N)) / 6 if i % 2 else
                  rng.uniform(0, 1, (B, C, N))).astype(np.float32)
        mod = o8 if i % 3 == 0 else o9
        pb, ps = mod.parameter([B, N, 4], np.float32), mod.parameter([B, C, N], np.float32)
        params += [pb, ps]
        feed += [boxes, scores]
        outputs += mod.multiclass_nms(
            pb, ps, sort_result_type=("classid", "score", "none")[i % 3],
            sort_result_across_batch=bool(i // 3 % 2), output_type=("i64", "i32")[i // 2 % 2],
            iou_threshold=0.2 + 0.03 * i, score_threshold=(0.0, 0.3)[i // 4 % 2],
            nms_top_k=(-1, 3, 8)[i % 3], keep_top_k=(-1, 5, 2, 9)[i % 4],
            background_class=(-1, 0, 1)[i // 5 % 3], nms_eta=(1.0, 0.7)[i // 7 % 2],
            normalized=bool(i % 2)).outputs()
    _compare(tmp_path, ov, outputs, params, feed, "multiclass")


def test_openvino_conformance_with_roisnum(tmp_path):
    """Per-class boxes split into images by roisnum (one image of no boxes: OpenVINO leaves
    its count unwritten there, so selected_num is compared in shape only for that layer)."""
    ov = openvino()
    import openvino.opset9 as o9
    rng = np.random.default_rng(22)
    outputs, params, feed, skip = [], [], [], []
    for i in range(8):
        C, counts = 1 + i % 3, rng.integers(1 if i != 5 else 0, 7, 1 + i % 3)
        if i == 5:
            counts[0] = 0
            skip.append(3 * i + 2)
        M = int(counts.sum()) + i % 2
        boxes = boxes_and_scores(rng, (C,), M)
        scores = (rng.integers(0, 5, (C, M)) / 5).astype(np.float32)
        pb, ps = o9.parameter([C, M, 4], np.float32), o9.parameter([C, M], np.float32)
        pr = o9.parameter([counts.size], np.int32)
        params += [pb, ps, pr]
        feed += [boxes, scores, counts.astype(np.int32)]
        outputs += o9.multiclass_nms(
            pb, ps, pr, sort_result_type=("classid", "score", "none")[i % 3],
            sort_result_across_batch=bool(i % 2), iou_threshold=0.3 + 0.05 * i,
            score_threshold=0.2, nms_top_k=(-1, 4)[i % 2], keep_top_k=(-1, 3, 6)[i % 3],
            background_class=(-1, 0)[i // 4], nms_eta=(1.0, 0.8)[i % 2],
            normalized=bool(i // 2 % 2)).outputs()
    _compare(tmp_path, ov, outputs, params, feed, "multiclass_rois", skip_num=tuple(skip))


def test_openvino_f16_and_no_boxes(tmp_path):
    """MulticlassNms and MatrixNms on f16 boxes (f16 outputs) and on images without boxes."""
    ov = openvino()
    import openvino.opset8 as o8
    import openvino.opset9 as o9
    rng = np.random.default_rng(23)
    outputs, params, feed = [], [], []
    for dtype, n in ((np.float16, 9), (np.float32, 0)):
        boxes = boxes_and_scores(rng, (2,), n).astype(dtype)
        scores = rng.uniform(0, 1, (2, 3, n)).astype(dtype)
        pb, ps = o9.parameter([2, n, 4], dtype), o9.parameter([2, 3, n], dtype)
        params += [pb, ps]
        feed += [boxes, scores]
        outputs += o9.multiclass_nms(pb, ps, iou_threshold=0.5, sort_result_type="score",
                                     normalized=False).outputs()
        outputs += o8.matrix_nms(pb, ps, decay_function="linear", post_threshold=0.2).outputs()
    model = ov.Model(outputs, params, "nms_f16")
    xml = tmp_path / "nms_f16.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    core = ov.Core()
    request = core.compile_model(core.read_model(str(xml)), "CPU", OV_CONFIG).create_infer_request()
    request.infer(feed)
    names = [p.get_friendly_name() for p in model.get_parameters()]
    ours = list(irexec.compile_model(irexec.read_model(xml))(dict(zip(names, feed))).values())
    for i, a in enumerate(ours):
        b = request.get_output_tensor(i).data
        assert a.dtype == b.dtype and a.shape == b.shape, i
        if i == 3:  # MatrixNms's decayed scores: f16 rounding of an f32 product
            np.testing.assert_allclose(a.astype(np.float32), b.astype(np.float32), rtol=1e-3)
        elif i in (8, 11):  # the counts of no boxes: OpenVINO may leave them unwritten
            assert a.tolist() == [0, 0]
        else:
            assert a.tolist() == b.tolist(), i
    assert ours[0].dtype == np.float16 and ours[0].shape[0] > 0 and ours[6].shape == (0, 6)
