"""DetectionOutput-1/8: the spec's example shape, a loop-by-loop reference (Caffe and MXNet
styles, both codings, shared and per-class locations, top_k/keep_top_k), OpenVINO conformance
(variances in or out of the target, pixel priors, clipping, per-image priors, the 5-input ARM
form, no detection at all) and the diagnostics."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec.builder import ModelBuilder
from irexec.errors import IRError
from irexec.ir.shape import PartialShape
from tests.ops.shapeops_oracle import check, openvino

f32 = np.float32
CORNER, CENTER = "caffe.PriorBoxParameter.CORNER", "caffe.PriorBoxParameter.CENTER_SIZE"
DEFAULTS = dict(background_label_id=0, top_k=-1, variance_encoded_in_target=False,
                code_type=CORNER, share_location=True, confidence_threshold=0.0,
                clip_after_nms=False, clip_before_nms=False, decrease_label_id=False,
                normalized=False, input_height=1, input_width=1, objectness_score=0.0)


def make_inputs(rng, n, priors, classes, a, prior_batch=1, arm=False):
    """Inputs in the layouts DetectionOutput reads: distinct confidences, priors inside the
    image (with their variances unless encoded in the target)."""
    loc_classes = 1 if a["share_location"] else classes
    c = rng.random((prior_batch, priors, 2), dtype=f32) * 0.8 + 0.1
    s = rng.random((prior_batch, priors, 2), dtype=f32) * 0.2 + 0.05
    boxes = np.concatenate([c - s, c + s], -1)
    if not a["normalized"]:
        boxes = boxes * np.array([a["input_width"], a["input_height"]] * 2, f32)
        boxes = np.concatenate([np.zeros((prior_batch, priors, 1), f32), boxes], -1)
    size = boxes.shape[-1]
    var = np.tile(np.array([0.1, 0.1, 0.2, 0.2], f32), (prior_batch, priors))
    var = np.concatenate([var, np.zeros((prior_batch, priors * (size - 4)), f32)], 1)
    flat = boxes.reshape(prior_batch, -1)
    pri = flat[:, None] if a["variance_encoded_in_target"] else np.stack([flat, var], 1)
    feed = {"loc": (rng.standard_normal((n, priors * loc_classes * 4)) * 0.5).astype(f32),
            "conf": (rng.permutation(n * priors * classes) / (n * priors * classes)).astype(
                f32).reshape(n, -1),
            "pri": pri.astype(f32)}
    if arm:
        feed["ac"] = rng.random((n, priors * 2), dtype=f32)
        feed["al"] = (rng.standard_normal((n, priors * 4)) * 0.5).astype(f32)
    return feed


def reference(loc, conf, pri, a, classes, ac=None, al=None):
    """OpenVINO's reference algorithm (detection_output.hpp) with plain loops and f32 scalars."""
    n = loc.shape[0]
    psize = 4 if a["normalized"] else 5
    num = pri.shape[2] // psize
    lc = 1 if a["share_location"] else classes
    scale = [f32(1)] * 4 if a["normalized"] else [f32(a["input_width"]),
                                                  f32(a["input_height"])] * 2

    def dec(prior, var, l):
        p = [prior[i] / scale[i] for i in range(4)]
        if a["code_type"] == CORNER:
            box = [p[i] + var[i] * l[i] for i in range(4)]
        else:
            pw, ph = p[2] - p[0], p[3] - p[1]
            cx, cy = (p[0] + p[2]) / f32(2), (p[1] + p[3]) / f32(2)
            dcx, dcy = var[0] * l[0] * pw + cx, var[1] * l[1] * ph + cy
            dw, dh = np.exp(var[2] * l[2]) * pw, np.exp(var[3] * l[3]) * ph
            box = [dcx - dw / f32(2), dcy - dh / f32(2), dcx + dw / f32(2), dcy + dh / f32(2)]
        if a["clip_before_nms"]:
            box = [max(f32(0), min(f32(1), v)) for v in box]
        return box

    def iou(b1, b2):
        if b2[0] > b1[2] or b2[2] < b1[0] or b2[1] > b1[3] or b2[3] < b1[1]:
            return f32(0)
        w = min(b1[2], b2[2]) - max(b1[0], b2[0])
        h = min(b1[3], b2[3]) - max(b1[1], b2[1])
        if not (w > 0 and h > 0):
            return f32(0)

        def size(b):
            return f32(0) if b[2] < b[0] or b[3] < b[1] else (b[2] - b[0]) * (b[3] - b[1])
        return w * h / (size(b1) + size(b2) - w * h)

    def nms(boxes, order):
        kept = []
        for i in order:
            if all(iou(boxes[i], boxes[k]) <= f32(a["nms_threshold"]) for k in kept):
                kept.append(i)
        return kept

    rows = []
    for i in range(n):
        pr = pri[0 if pri.shape[0] == 1 else i].reshape(-1)
        priors = [pr[j * psize + psize - 4: j * psize + psize] for j in range(num)]
        variances = [[f32(1)] * 4 if a["variance_encoded_in_target"]
                     else pr[num * psize + j * 4: num * psize + j * 4 + 4] for j in range(num)]
        scores = conf[i].reshape(num, classes).copy()
        if ac is not None:
            for j in range(num):
                if ac[i, j * 2 + 1] < f32(a["objectness_score"]):
                    scores[j] = [1 if c == a["background_label_id"] else 0
                                 for c in range(classes)]
            # the refined priors are decoded again, divided by the input size a second time
            # when not normalized (as OpenVINO's kernels do)
            priors = [dec(priors[j], variances[j], al[i, j * 4: j * 4 + 4]) for j in range(num)]
        boxes = {c: [dec(priors[j], variances[j], loc[i, (j * lc + c) * 4: (j * lc + c) * 4 + 4])
                     for j in range(num)] for c in range(lc)}
        found = {}
        if not a["decrease_label_id"]:
            for c in range(classes):
                if c == a["background_label_id"]:
                    continue
                order = sorted((j for j in range(num) if scores[j, c] > f32(
                    a["confidence_threshold"])), key=lambda j: (-scores[j, c], j))
                if a["top_k"] > -1:
                    order = order[:a["top_k"]]
                found[c] = nms(boxes[0 if a["share_location"] else c], order)
        else:
            pairs = []
            for j in range(num):
                best, cls = -1, 0
                for c in range(1, classes):
                    if c != a["background_label_id"] and scores[j, c] > best:
                        best, cls = scores[j, c], c
                if cls > 0 and best >= f32(a["confidence_threshold"]):
                    pairs.append((best, cls, j))
            pairs.sort(key=lambda p: (-p[0], p[2]))
            if a["top_k"] > -1:
                pairs = pairs[:a["top_k"]]
            for cls in sorted({p[1] for p in pairs}):
                found[cls] = nms(boxes[0 if a["share_location"] else cls],
                                 [p[2] for p in pairs if p[1] == cls])
        total = sum(len(v) for v in found.values())
        keep = a["keep_top_k"][0]
        if keep > -1 and total > keep:
            pairs = sorted(((scores[j, c], c, j) for c in sorted(found) for j in found[c]),
                           key=lambda p: (-p[0], p[2]))[:keep]
            found = {c: [p[2] for p in pairs if p[1] == c] for c in sorted({p[1] for p in pairs})}
        for c in sorted(found):
            for j in found[c]:
                box = boxes[0 if a["share_location"] else c][j]
                if a["clip_after_nms"]:
                    box = [max(f32(0), min(f32(1), v)) for v in box]
                label = c - 1 if a["decrease_label_id"] else c
                rows.append([i, label, scores[j, c]] + list(box))
    keep = a["keep_top_k"][0]
    total = n * (keep if keep > 0 else a["top_k"] * classes if a["top_k"] > 0
                 else num * classes)
    out = np.zeros((total, 7), f32)
    out[:len(rows)] = np.array(rows, f32).reshape(-1, 7)
    if len(rows) < total:
        out[len(rows), 0] = -1
    return out.reshape(1, 1, total, 7)


def run(feed, a, classes, version="opset8"):
    b = ModelBuilder()
    names = ["loc", "conf", "pri", "ac", "al"]
    ports = [b.parameter(k, "f32", list(feed[k].shape)) for k in names if k in feed]
    attrs = dict(a, num_classes=classes) if version == "opset1" else dict(a)
    b.result(b.op("DetectionOutput", *ports, version=version, name="det", **attrs), "out")
    model = b.build()
    return irexec.compile_model(model)(feed)["det"], model


def test_spec_example_shape():
    """The spec's example: 5376/4 priors, 2688/1344 = 2 classes, keep_top_k 200 -> [1,1,200,7]."""
    b = ModelBuilder()
    ports = [b.parameter(n, "f32", s) for n, s in (("loc", [1, 5376]), ("conf", [1, 2688]),
                                                   ("pri", [1, 2, 5376]))]
    out = b.op("DetectionOutput", *ports, version="opset8", background_label_id=1,
               code_type=CENTER, confidence_threshold=0.02, input_height=1, input_width=1,
               keep_top_k=[200], nms_threshold=0.45, normalized=True, share_location=True,
               top_k=200, variance_encoded_in_target=False, clip_after_nms=False,
               clip_before_nms=False, objectness_score=0.0, decrease_label_id=False)
    b.result(out)
    assert b.build().outputs[0].partial_shape == PartialShape([1, 1, 200, 7])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 2), priors=st.integers(1, 6),
       classes=st.integers(1, 4), center=st.booleans(), share=st.booleans(),
       normalized=st.booleans(), venc=st.booleans(), mxnet=st.booleans(),
       top_k=st.sampled_from([-1, 2, 5]), keep=st.sampled_from([-1, 0, 3, 8]),
       bg=st.sampled_from([-1, 0, 1]), clip=st.booleans(), threshold=st.sampled_from([0.0, 0.4]),
       version=st.sampled_from(["opset1", "opset8"]), arm=st.booleans())
def test_matches_a_loop_reference(seed, n, priors, classes, center, share, normalized, venc,
                                  mxnet, top_k, keep, bg, clip, threshold, version, arm):
    a = dict(DEFAULTS, code_type=CENTER if center else CORNER, share_location=share,
             normalized=normalized, variance_encoded_in_target=venc, decrease_label_id=mxnet,
             top_k=top_k, keep_top_k=[keep], background_label_id=bg, clip_before_nms=clip,
             clip_after_nms=not clip, confidence_threshold=threshold, nms_threshold=0.3,
             input_width=300, input_height=200, objectness_score=0.3)
    rng = np.random.default_rng(seed)
    feed = make_inputs(rng, n, priors, classes, a, prior_batch=1 + (seed % 2) * (n - 1),
                       arm=arm and share)
    ours, _ = run(feed, a, classes, version)
    expected = reference(feed["loc"], feed["conf"], feed["pri"], a, classes, feed.get("ac"),
                         feed.get("al"))
    np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-6)


def test_no_detection_marks_the_first_row():
    a = dict(DEFAULTS, keep_top_k=[4], nms_threshold=0.5, normalized=True,
             confidence_threshold=2.0)
    feed = make_inputs(np.random.default_rng(1), 2, 5, 3, a)
    out, _ = run(feed, a, 3)
    assert out.shape == (1, 1, 8, 7) and out[0, 0, 0, 0] == -1
    out[0, 0, 0, 0] = 0
    assert not out.any()


def _case(ops, rng, n, p, c, arm=False, prior_batch=1, **attrs):
    """One DetectionOutput node of OpenVINO's opset API and its inputs."""
    a = dict(dict(DEFAULTS, keep_top_k=[6], nms_threshold=0.45), **attrs)
    feed = make_inputs(rng, n, p, c, a, prior_batch=prior_batch, arm=arm)
    params = [ops.parameter(list(feed[k].shape), f32) for k in ("loc", "conf", "pri", "ac", "al")
              if k in feed]
    ov_attrs = {k: v for k, v in a.items()}
    if ops.__name__.endswith("opset1"):
        ov_attrs["num_classes"] = c
    node = ops.detection_output(*params[:3], ov_attrs, *params[3:])
    return node, params, [feed[k] for k in ("loc", "conf", "pri", "ac", "al") if k in feed]


CASES = [
    dict(normalized=True),
    dict(normalized=True, code_type=CENTER),
    dict(normalized=False, input_width=300, input_height=200, code_type=CENTER),
    dict(normalized=True, share_location=False, background_label_id=1),
    dict(normalized=True, variance_encoded_in_target=True, code_type=CENTER),
    dict(normalized=True, keep_top_k=[-1], top_k=3),
    dict(normalized=True, keep_top_k=[-1], top_k=-1, confidence_threshold=0.5),
    dict(normalized=True, clip_before_nms=True, clip_after_nms=True, code_type=CENTER),
    dict(normalized=True, decrease_label_id=True, keep_top_k=[-1]),
    dict(normalized=True, decrease_label_id=True, keep_top_k=[3], top_k=5),
    dict(normalized=True, prior_batch=2),
    dict(normalized=True, arm=True, objectness_score=0.4, code_type=CENTER),
    dict(normalized=False, arm=True, objectness_score=0.4, input_width=300, input_height=200,
         prior_batch=2),
    dict(normalized=True, confidence_threshold=2.0),
    dict(normalized=True, background_label_id=-1, keep_top_k=[10]),
]


@pytest.mark.parametrize("version", ["opset1", "opset8"])
def test_openvino_conformance(tmp_path, version):
    openvino()
    ops = __import__(f"openvino.{version}", fromlist=["x"])
    rng = np.random.default_rng(11)
    outs, params, feed = [], [], []
    for attrs in CASES:
        node, ps, values = _case(ops, rng, 2, 8, 4, **attrs)
        outs.append(node)
        params += ps
        feed += values
    check(tmp_path, outs, params, [feed], exact=False, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("change, code, words", [
    (dict(code_type="caffe.PriorBoxParameter.CORNER_SIZE"), "IR302", "code_type"),
    (dict(keep_top_k=[]), "IR302", "keep_top_k"),
    (dict(variance_encoded_in_target=True), "IR307", "second dim"),
    (dict(normalized=False), "IR307", "prior size"),
])
def test_bad_attributes(change, code, words):
    a = dict(DEFAULTS, keep_top_k=[4], nms_threshold=0.5, normalized=True)
    a.update(change)
    b = ModelBuilder()
    ports = [b.parameter(n, "f32", s) for n, s in (("loc", [1, 24]), ("conf", [1, 18]),
                                                   ("pri", [1, 2, 24]))]
    b.result(b.op("DetectionOutput", *ports, version="opset8", **a))
    with pytest.raises(IRError) as e:
        b.build()
    assert e.value.code == code and words in str(e.value)


@pytest.mark.parametrize("shapes, version, code", [
    (([1, 24], [1, 20], [1, 2, 24]), "opset1", "IR307"),  # 6 priors x 3 classes = 18
    (([1, 20], [1, 18], [1, 2, 24]), "opset8", "IR307"),  # 6 priors need 24 locations
    (([1, 24], [2, 18], [1, 2, 24]), "opset8", "IR307"),  # batches differ
    (([1, 24], [1, 18], [1, 2, 24], [1, 12]), "opset8", "IR303"),  # 4 inputs
    (([1, 24], [1, 18], [2, 24]), "opset8", "IR305"),
])
def test_bad_shapes(shapes, version, code):
    b = ModelBuilder()
    ports = [b.parameter(f"p{i}", "f32", s) for i, s in enumerate(shapes)]
    attrs = dict(DEFAULTS, keep_top_k=[4], nms_threshold=0.5, normalized=True)
    if version == "opset1":
        attrs["num_classes"] = 3
    b.result(b.op("DetectionOutput", *ports, version=version, **attrs))
    with pytest.raises(IRError) as e:
        b.build()
    assert e.value.code == code
