"""NonMaxSuppression-1/3/4/5/9: spec examples, a plain-Python reference, OpenVINO conformance,
empty inputs, shape inference (intervals) and bad inputs."""

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


def build(version, boxes_shape, scores_shape, *, max_out=None, iou=None, score=None,
          sigma=None, dtype="f32", param_max=False, **attrs):
    """A model with Parameters boxes and scores (and max_out when ``param_max``), the others
    constants; None leaves an optional input out (and every one after it)."""
    b = ModelBuilder()
    x = b.parameter("boxes", dtype, boxes_shape)
    s = b.parameter("scores", dtype, scores_shape)
    args = [x, s]
    extra = [max_out, iou, score] + ([sigma] if version >= 5 else [])
    for i, v in enumerate(extra):
        if v is None:
            break
        if i == 0 and param_max:
            args.append(b.parameter("max_out", "i64", []))
        else:
            args.append(b.constant(np.int64(v) if i == 0 else np.float32(v)))
    out = b.op("NonMaxSuppression", *args, version=f"opset{version}", name="nms", **attrs)
    outs = out if isinstance(out, tuple) else (out,)
    for i, o in enumerate(outs):
        b.result(o, f"out{i}")
    return b.build()


def run(model, boxes, scores, **feed):
    out = irexec.compile_model(model)({"boxes": boxes, "scores": scores, **feed})
    return list(out.values())


def random_case(rng, B, C, N, quantized=False, encoding="corner"):
    c = rng.uniform(0, 4, (B, N, 2))
    wh = rng.uniform(0.3, 2, (B, N, 2))
    if encoding == "center":
        boxes = np.concatenate([c, wh], -1)
    else:
        boxes = np.concatenate([c, c + wh], -1)
    scores = rng.integers(0, 6, (B, C, N)) / 6 if quantized else rng.uniform(0, 1, (B, C, N))
    return boxes.astype(np.float32), scores.astype(np.float32)


# --- spec examples ---------------------------------------------------------------------------

def test_spec_example_shapes_of_versions_5_and_9():
    """boxes [3,100,4], scores [3,5,100], max 10: selected [0..150, 3] twice and [1]."""
    for version in (5, 9):
        model = build(version, [3, 100, 4], [3, 5, 100], max_out=10, iou=0.5, score=0.0,
                      sigma=0.0)
        assert [o.partial_shape for o in model.outputs] == \
            [PartialShape([Dimension(0, 150), 3])] * 2 + [PartialShape([1])]
        assert [o.element_type.name for o in model.outputs] == ["i64", "f32", "i64"]


def test_spec_example_shapes_of_versions_1_3_and_4():
    """v4: [min(100, 10) * 3 * 5, 3] = [150, 3]; v1/v3: [min(1000, 1000 * 1), 3] = [1000, 3]."""
    model = build(4, [3, 100, 4], [3, 5, 100], max_out=10, iou=0.5, score=0.0)
    assert model.outputs[0].partial_shape == PartialShape([150, 3])
    for version in (1, 3):
        model = build(version, [1, 1000, 4], [1, 1, 1000], max_out=1000, iou=0.5, score=0.0)
        assert model.outputs[0].partial_shape == PartialShape([1000, 3])
        assert model.outputs[0].element_type.name == "i64"


def test_worked_example_hard_and_soft():
    """Box 1 overlaps box 0 by IoU 0.5 exactly, box 3 by 0.75, box 2 by nothing."""
    boxes = np.array([[[0, 0, 1, 2], [0, 0, 1, 1], [5, 5, 6, 6], [0, 0, 1, 1.5]]], np.float32)
    scores = np.array([[[0.9, 0.8, 0.7, 0.6]]], np.float32)
    hard = build(9, [1, 4, 4], [1, 1, 4], max_out=10, iou=0.6, score=0.0, sigma=0.0,
                 sort_result_descending=False)
    idx, sc, valid = run(hard, boxes, scores)
    assert idx[:, 2].tolist() == [0, 1, 2] and valid.tolist() == [3]  # 0.75 > 0.6 drops box 3
    assert sc[:, 2].tolist() == [np.float32(0.9), np.float32(0.8), np.float32(0.7)]
    soft = build(9, [1, 4, 4], [1, 1, 4], max_out=10, iou=0.0, score=0.0, sigma=0.5,
                 sort_result_descending=False)
    idx, sc, valid = run(soft, boxes, scores)
    # decayed by exp(-iou^2): box 1 by 0.5 (0.8 e^-0.25), box 3 by 0.75 and by box 1's 2/3
    want = [0.9, 0.7, 0.8 * np.exp(-0.25), 0.6 * np.exp(-0.75 ** 2) * np.exp(-(2 / 3) ** 2)]
    assert idx[:, 2].tolist() == [0, 2, 1, 3]
    np.testing.assert_allclose(sc[:, 2], want, rtol=1e-6)


# --- against the plain-Python reference -----------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 31), B=st.integers(1, 3), C=st.integers(1, 3),
       N=st.integers(0, 30), max_out=st.integers(0, 12), iou=st.floats(0.05, 0.95),
       score=st.sampled_from([0.0, 0.3, -1.0]), soft=st.booleans(),
       encoding=st.sampled_from(["corner", "center"]), sort=st.booleans(),
       quantized=st.booleans())
def test_matches_the_reference(seed, B, C, N, max_out, iou, score, soft, encoding, sort,
                               quantized):
    rng = np.random.default_rng(seed)
    boxes, scores = random_case(rng, B, C, N, quantized and not soft, encoding)
    if encoding == "corner" and N:
        boxes[:, ::2] = boxes[:, ::2][..., [2, 3, 0, 1]]  # the other diagonal for some
    sigma = 0.4 if soft else 0.0
    model = build(9, [B, N, 4], [B, C, N], max_out=max_out, iou=iou, score=score, sigma=sigma,
                  box_encoding=encoding, sort_result_descending=sort, output_type="i32")
    idx, sc, valid = run(model, boxes, scores)
    want = ref.nms(boxes, scores, max_out, iou, score, sigma, encoding, sort)
    assert idx.dtype == np.int32 and valid.tolist() == [len(want)]
    assert idx.tolist() == [[b, c, i] for b, c, i, _ in want]
    np.testing.assert_allclose(sc[:, 2], [s for *_, s in want], rtol=1e-6 if soft else 0)
    np.testing.assert_array_equal(sc[:, :2], idx[:, :2].astype(np.float32))


@pytest.mark.parametrize("version", [1, 3, 4])
def test_old_versions_pad_with_minus_one(version):
    rng = np.random.default_rng(3)
    boxes, scores = random_case(rng, 2, 3, 9)
    model = build(version, [2, 9, 4], [2, 3, 9], max_out=4, iou=0.4, score=0.2,
                  **({"output_type": "i32"} if version > 1 else {}))
    (out,) = run(model, boxes, scores)
    want = ref.nms(boxes, scores, 4, 0.4, 0.2)
    rows = min(9, 4 * 3) if version < 4 else min(9, 4) * 2 * 3
    assert out.shape == (rows, 3) == model.outputs[0].partial_shape.to_shape()
    assert out.dtype == (np.int64 if version == 1 else np.int32)
    kept = min(rows, len(want))
    assert out[:kept].tolist() == [[b, c, i] for b, c, i, _ in want[:kept]]
    assert (out[kept:] == -1).all()


def test_sort_result_descending_breaks_ties_by_batch_class_box():
    boxes = np.array([[[0, 0, 1, 1], [2, 2, 3, 3]]] * 2, np.float32)
    scores = np.full((2, 2, 2), 0.5, np.float32)
    scores[1, 0, 1] = 0.75
    model = build(9, [2, 2, 4], [2, 2, 2], max_out=5, iou=0.5, score=0.0, sigma=0.0)
    idx, _, _ = run(model, boxes, scores)
    assert idx.tolist() == [[1, 0, 1], [0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1], [1, 0, 0],
                            [1, 1, 0], [1, 1, 1]]


def test_optional_inputs_default_to_zero():
    """Without max_output_boxes_per_class nothing is selected; without thresholds iou 0 and
    score 0 apply (overlapping boxes drop, disjoint ones stay; score 0 is not above 0)."""
    boxes = np.array([[[0, 0, 2, 2], [1, 1, 3, 3], [5, 5, 6, 6], [7, 7, 8, 8]]], np.float32)
    scores = np.array([[[0.9, 0.8, 0.7, 0.0]]], np.float32)
    model = build(9, [1, 4, 4], [1, 1, 4])
    idx, sc, valid = run(model, boxes, scores)
    assert idx.shape == (0, 3) and sc.shape == (0, 3) and valid.tolist() == [0]
    model = build(9, [1, 4, 4], [1, 1, 4], max_out=10)
    idx, _, valid = run(model, boxes, scores)
    assert idx[:, 2].tolist() == [0, 2] and valid.tolist() == [2]


@pytest.mark.parametrize("version", [1, 3, 4, 5, 9])
def test_no_boxes_and_no_selection(version):
    """Zero boxes, zero batches, max 0, and every score under the threshold: nothing selected
    (versions 1-4: all rows -1)."""
    for B, N, max_out, score in [(1, 0, 5, 0.0), (0, 4, 5, 0.0), (1, 4, 0, 0.0),
                                 (1, 4, 5, 2.0)]:
        model = build(version, [B, N, 4], [B, 2, N], max_out=max_out, iou=0.5, score=score,
                      sigma=0.0)
        outs = run(model, np.ones((B, N, 4), np.float32), np.ones((B, 2, N), np.float32))
        if version >= 5:
            assert outs[0].shape == outs[1].shape == (0, 3) and outs[2].tolist() == [0]
        else:
            assert (outs[0] == -1).all()


def test_f16_inputs_give_f32_scores():
    rng = np.random.default_rng(4)
    boxes, scores = random_case(rng, 1, 2, 12)
    model = build(9, [1, 12, 4], [1, 2, 12], max_out=3, iou=0.5, score=0.1, sigma=0.0,
                  dtype="f16")
    idx, sc, _ = run(model, boxes.astype(np.float16), scores.astype(np.float16))
    want = ref.nms(boxes.astype(np.float16), scores.astype(np.float16), 3, 0.5, 0.1)
    assert sc.dtype == np.float32 and idx.tolist() == [[b, c, i] for b, c, i, _ in want]


def test_many_boxes_widen_the_window():
    """Crowded boxes: most candidates are suppressed, so the first window of candidates runs
    out and is widened; the result is still the greedy one."""
    rng = np.random.default_rng(5)
    c = rng.uniform(0, 3, (1, 600, 2))
    boxes = np.concatenate([c, c + rng.uniform(0.5, 2, (1, 600, 2))], -1).astype(np.float32)
    scores = rng.uniform(0, 1, (1, 2, 600)).astype(np.float32)
    model = build(9, [1, 600, 4], [1, 2, 600], max_out=30, iou=0.3, score=0.1, sigma=0.0,
                  sort_result_descending=False)
    idx, _, valid = run(model, boxes, scores)
    want = ref.nms(boxes, scores, 30, 0.3, 0.1, sort_desc=False)
    assert idx.tolist() == [[b, c, i] for b, c, i, _ in want]


# --- inference --------------------------------------------------------------------------------

def test_output_dims_are_intervals():
    # max_output_boxes_per_class from a Parameter: at most num_boxes per class
    model = build(9, [2, 7, 4], [2, 3, 7], max_out=1, iou=0.5, param_max=True)
    assert model.outputs[0].partial_shape == PartialShape([Dimension(0, 42), 3])
    idx, _, valid = run(model, *random_case(np.random.default_rng(0), 2, 3, 7),
                        max_out=np.array(2, np.int64))
    assert idx.shape[0] == valid[0] <= 12
    model = build(9, [-1, 7, 4], [-1, 3, 7], max_out=2, iou=0.5)
    assert model.outputs[0].partial_shape == PartialShape([Dimension(0, None), 3])
    model = build(4, [2, 7, 4], [2, 3, 7], max_out=1, iou=0.5, param_max=True)
    assert model.outputs[0].partial_shape == PartialShape([Dimension(0, 42), 3])
    model = build(3, [2, 7, 4], [2, 3, 7], max_out=1, iou=0.5, param_max=True)
    assert model.outputs[0].partial_shape == PartialShape([Dimension.dynamic(), 3])
    (out,) = run(model, *random_case(np.random.default_rng(0), 2, 3, 7),
                 max_out=np.array(2, np.int64))
    assert out.shape == (6, 3)


# --- bad inputs -------------------------------------------------------------------------------

@pytest.mark.parametrize("boxes_shape, scores_shape, code, words", [
    ([1, 5, 3], [1, 2, 5], "IR307", "last dim must be 4"),
    ([2, 5, 4], [1, 2, 5], "IR307", "batch"),
    ([1, 5, 4], [1, 2, 6], "IR307", "box count"),
    ([5, 4], [1, 2, 5], "IR305", "rank"),
])
def test_shapes_that_disagree(boxes_shape, scores_shape, code, words):
    with pytest.raises(IRError) as e:
        build(9, boxes_shape, scores_shape, max_out=1)
    assert e.value.code == code and words in str(e.value)


def _build_raw(*extra, version="opset9"):
    b = ModelBuilder()
    x, s = b.parameter("boxes", "f32", [1, 5, 4]), b.parameter("scores", "f32", [1, 2, 5])
    out = b.op("NonMaxSuppression", x, s, *(b.constant(v) for v in extra), version=version)
    b.result(out[0] if isinstance(out, tuple) else out, "out")
    return b.build()


def test_threshold_of_two_elements_and_bad_output_type():
    with pytest.raises(IRError) as e:
        _build_raw(np.int64(1), np.array([0.5, 0.5], np.float32))
    assert e.value.code == "IR321"
    with pytest.raises(IRError) as e:
        build(9, [1, 5, 4], [1, 2, 5], max_out=1, output_type="f32")
    assert e.value.code == "IR302"
    with pytest.raises(IRError) as e:  # versions 1-4 take scalars only
        _build_raw(np.array([1], np.int64), version="opset4")
    assert e.value.code == "IR305"
    _build_raw(np.array([1], np.int64), np.array([0.5], np.float16))  # 1-D of one: fine


def test_negative_max_output_boxes_at_read_and_run_time():
    with pytest.raises(IRError) as e:
        build(9, [1, 5, 4], [1, 2, 5], max_out=-1)
    assert e.value.code == "IR308" and "negative" in str(e.value)
    model = build(9, [1, 5, 4], [1, 2, 5], max_out=1, param_max=True)
    with pytest.raises(IRError) as e:
        run(model, np.zeros((1, 5, 4), np.float32), np.zeros((1, 2, 5), np.float32),
            max_out=np.array(-3, np.int64))
    assert e.value.code == "IR308"


# --- OpenVINO conformance ---------------------------------------------------------------------

def _ov_run(ov, tmp_path, outputs, params, feed, name):
    model = ov.Model(outputs, params, name)
    xml = tmp_path / f"{name}.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU", OV_CONFIG)
    request = compiled.create_infer_request()
    request.infer(feed)
    theirs = [request.get_tensor(o).data.copy() for o in compiled.outputs]
    ours_model = irexec.read_model(xml)
    names = [p.get_friendly_name() for p in model.get_parameters()]
    ours = list(irexec.compile_model(ours_model)(dict(zip(names, feed))).values())
    return ours, theirs, ours_model


@pytest.mark.parametrize("version", [5, 9])
def test_openvino_conformance(tmp_path, version):
    """Many layers in one model: encodings, sort orders, output types, soft and hard, f16 and
    f32, tied scores, thresholds of rank 0 and 1. Indices exactly; scores exactly for hard NMS,
    within 1e-6 for soft (OpenVINO multiplies the decays in another order)."""
    ov = openvino()
    ops = __import__(f"openvino.opset{version}", fromlist=["x"])
    rng = np.random.default_rng(11)
    cases, feed, params = [], [], []
    for i in range(16):
        B, C, N = 1 + i % 3, 1 + i % 4, 8 + 3 * i
        enc = ("corner", "center")[i % 2]
        boxes, scores = random_case(rng, B, C, N, quantized=i % 4 == 1, encoding=enc)
        dtype = np.float16 if i % 5 == 4 else np.float32
        pb, ps = ops.parameter([B, N, 4], dtype), ops.parameter([B, C, N], dtype)
        params += [pb, ps]
        feed += [boxes.astype(dtype), scores.astype(dtype)]
        sigma = 0.5 if i % 3 == 2 else 0.0
        one = (lambda v, t: np.array([v], t)) if i % 2 else (lambda v, t: np.array(v, t))
        node = ops.non_max_suppression(
            pb, ps, ops.constant(one(1 + i % 6, np.int64 if i % 2 else np.int32)),
            ops.constant(one(0.2 + 0.05 * i, np.float32)),
            ops.constant(one((0.0, 0.25, -1.0)[i % 3], np.float32)),
            ops.constant(one(sigma, np.float32)), box_encoding=enc,
            sort_result_descending=bool(i % 2), output_type=("i64", "i32")[i // 2 % 2])
        cases.append(sigma)
        params_out = node.outputs()
        if i == 0:
            outputs = list(params_out)
        else:
            outputs += list(params_out)
    ours, theirs, _ = _ov_run(ov, tmp_path, outputs, params, feed, f"nms{version}")
    for i, sigma in enumerate(cases):
        oi, os_, ov_ = ours[3 * i:3 * i + 3]
        ti, ts, tv = theirs[3 * i:3 * i + 3]
        assert oi.dtype == ti.dtype and oi.tolist() == ti.tolist(), i
        assert ov_.tolist() == tv.tolist() and ov_.dtype == tv.dtype
        assert os_.dtype == ts.dtype == np.float32
        np.testing.assert_allclose(os_, ts, rtol=1e-6 if sigma else 0, atol=0)


def test_openvino_empty_inputs(tmp_path):
    """No boxes, and max_output_boxes_per_class 0: OpenVINO gives [0, 3] too (its valid_outputs
    is not written then: see docs/compatibility.md; irexec gives 0)."""
    ov = openvino()
    import openvino.opset9 as ops
    outputs, params, feed = [], [], []
    for N, k in [(0, 5), (6, 0)]:
        pb, ps = ops.parameter([1, N, 4], np.float32), ops.parameter([1, 2, N], np.float32)
        params += [pb, ps]
        feed += [np.ones((1, N, 4), np.float32), np.ones((1, 2, N), np.float32)]
        outputs += list(ops.non_max_suppression(pb, ps, ops.constant(np.int64(k)),
                                                ops.constant(np.float32(0.5))).outputs())
    ours, theirs, _ = _ov_run(ov, tmp_path, outputs, params, feed, "nms_empty")
    for i in (0, 3):
        assert ours[i].shape == theirs[i].shape == (0, 3)
        assert ours[i + 1].shape == theirs[i + 1].shape == (0, 3)
        assert ours[i + 2].tolist() == [0]


@pytest.mark.parametrize("version", [1, 3, 4])
def test_openvino_conformance_of_the_padded_versions(tmp_path, version):
    """OpenVINO's CPU plugin returns only the selected rows of versions 1-4 (it makes their
    output dynamic); irexec keeps the specification's static shape: the same rows, then -1s."""
    ov = openvino()
    ops = __import__(f"openvino.opset{version}", fromlist=["x"])
    rng = np.random.default_rng(12)
    boxes, scores = random_case(rng, 2, 3, 10, quantized=True)
    pb, ps = ops.parameter([2, 10, 4], np.float32), ops.parameter([2, 3, 10], np.float32)
    outputs = []
    for sort in (True, False):
        outputs += ops.non_max_suppression(pb, ps, ops.constant(np.int64(3)),
                                           ops.constant(np.float32(0.45)),
                                           ops.constant(np.float32(0.2)),
                                           sort_result_descending=sort).outputs()
    ours, theirs, model = _ov_run(ov, tmp_path, outputs, [pb, ps], [boxes, scores],
                                  f"nms{version}")
    for mine, other in zip(ours, theirs):
        assert mine.shape[0] == model.outputs[0].partial_shape[0].min
        kept = min(mine.shape[0], other.shape[0])
        assert mine[:kept].tolist() == other[:kept].tolist()
        assert (mine[kept:] == -1).all()


def test_openvino_drops_a_box_at_equal_iou(tmp_path):
    """The CPU plugin's side of docs/compatibility.md: IoU equal to the threshold drops the box
    there (irexec keeps it, as the specification says)."""
    ov = openvino()
    import openvino.opset9 as ops
    boxes = np.array([[[0, 0, 1, 2], [0, 0, 1, 1], [5, 5, 6, 6]]], np.float32)
    scores = np.array([[[0.9, 0.8, 0.7]]], np.float32)
    pb, ps = ops.parameter([1, 3, 4], np.float32), ops.parameter([1, 1, 3], np.float32)
    outputs = []
    for thr in (0.5, 0.0):
        outputs += ops.non_max_suppression(pb, ps, ops.constant(np.int64(5)),
                                           ops.constant(np.float32(thr)),
                                           sort_result_descending=False).outputs()
    ours, theirs, _ = _ov_run(ov, tmp_path, outputs, [pb, ps], [boxes, scores], "nms_equal")
    assert theirs[0][:, 2].tolist() == [0, 2] and ours[0][:, 2].tolist() == [0, 1, 2]
    assert theirs[3][:, 2].tolist() == [0] and ours[3][:, 2].tolist() == [0, 2]
