"""GenerateProposals-9 and ExperimentalDetectronGenerateProposalsSingleImage-6: a box-by-box
reference, OpenVINO conformance (normalized or not, the size filter, 3 and 4 image values),
images with no box left, the output shapes and the diagnostics."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec.builder import ModelBuilder
from irexec.errors import IRError
from irexec.ir.shape import Dimension, PartialShape
from tests.ops.shapeops_oracle import check, openvino

f32 = np.float32
CAP = f32(math.log(1000.0 / 16.0))


def random_anchors(rng, count):
    c = rng.random((count, 2), dtype=f32) * 60
    s = rng.random((count, 2), dtype=f32) * 20 + 2
    return np.concatenate([c - s, c + s], 1).astype(f32)


def refine(anchor, d, score, img_h, img_w, off):
    """One anchor moved by its deltas and clipped, in f32 as OpenVINO's kernels do it."""
    x0, y0, x1, y1 = anchor
    ww, hh = x1 - x0 + off, y1 - y0 + off
    cx, cy = x0 + f32(0.5) * ww, y0 + f32(0.5) * hh
    pcx, pcy = d[0] * ww + cx, d[1] * hh + cy
    pw, ph = np.exp(min(d[2], CAP)) * ww, np.exp(min(d[3], CAP)) * hh
    box = [pcx - f32(0.5) * pw, pcy - f32(0.5) * ph, pcx + f32(0.5) * pw - off,
           pcy + f32(0.5) * ph - off]
    lim = [img_w - off, img_h - off] * 2
    box = [max(f32(0), min(v, m)) for v, m in zip(box, lim)]
    return box, box[2] - box[0] + off, box[3] - box[1] + off


def nms(props, thresh, off, limit):
    """The kept entries of ``props`` (box, score, alive), in order."""
    dead = [not p[2] for p in props]
    kept = []
    for i, (a, _, _) in enumerate(props):
        if dead[i]:
            continue
        kept.append(props[i])
        if len(kept) == limit:
            break
        for j in range(i + 1, len(props)):
            b = props[j][0]
            w = min(a[2], b[2]) - max(a[0], b[0]) + off
            h = min(a[3], b[3]) - max(a[1], b[1]) + off
            inter = max(f32(0), w) * max(f32(0), h)
            union = (a[2] - a[0] + off) * (a[3] - a[1] + off) + \
                (b[2] - b[0] + off) * (b[3] - b[1] + off) - inter
            if f32(thresh) < inter / union and a[0] <= b[2] and a[1] <= b[3] and \
                    b[0] <= a[2] and b[1] <= a[3]:
                dead[j] = True
    return kept


def reference_gp9(im_info, anchors, deltas, scores, a):
    off = f32(0 if a["normalized"] else 1)
    h, w, count = anchors.shape[:3]
    rois, out_scores, nums = [], [], []
    for n in range(im_info.shape[0]):
        info = im_info[n]
        sh = info[2] if len(info) > 2 else f32(1)
        sw = info[3] if len(info) > 3 else sh
        props = []
        for y in range(h):
            for x in range(w):
                for k in range(count):
                    d = [deltas[n, k * 4 + i, y, x] for i in range(4)]
                    box, bw, bh = refine(anchors[y, x, k], d, 0, info[0], info[1], off)
                    alive = f32(a["min_size"]) * sw <= bw and f32(a["min_size"]) * sh <= bh
                    props.append((box, scores[n, k, y, x], alive))
        props = sorted(props, key=lambda p: -p[1])[:a["pre_nms_count"]]
        kept = nms(props, a["nms_threshold"], off, a["post_nms_count"])
        rois += [p[0] for p in kept]
        out_scores += [p[1] for p in kept]
        nums.append(len(kept))
    return np.array(rois, f32).reshape(-1, 4), np.array(out_scores, f32), nums


def run_gp9(feed, a):
    b = ModelBuilder()
    ports = [b.parameter(k, "f32", list(feed[k].shape)) for k in ("im", "an", "de", "sc")]
    outs = b.op("GenerateProposals", *ports, version="opset9", name="gp", **a)
    for i, o in enumerate(outs):
        b.result(o, f"o{i}")
    model = b.build()
    return list(irexec.compile_model(model)(feed).values()), model


def gp9_feed(rng, n, count, h, w, info):
    return {"im": np.array(info, f32).reshape(n, -1),
            "an": random_anchors(rng, h * w * count).reshape(h, w, count, 4),
            "de": (rng.standard_normal((n, 4 * count, h, w)) * 0.3).astype(f32),
            "sc": (rng.permutation(n * count * h * w) / (n * count * h * w)).astype(f32).reshape(
                n, count, h, w)}


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 2), count=st.integers(1, 3),
       h=st.integers(1, 3), w=st.integers(1, 4), normalized=st.booleans(),
       min_size=st.sampled_from([0.0, 5.0, 30.0]), pre=st.integers(1, 40),
       post=st.integers(1, 15), four=st.booleans(), thresh=st.sampled_from([0.3, 0.7]))
def test_gp9_matches_a_loop_reference(seed, n, count, h, w, normalized, min_size, pre, post,
                                      four, thresh):
    a = dict(min_size=min_size, nms_threshold=thresh, pre_nms_count=pre, post_nms_count=post,
             normalized=normalized, roi_num_type="i32")
    info = [[60, 75, 1.0, 0.5] if four else [60, 75, 1.5]] * n
    feed = gp9_feed(np.random.default_rng(seed), n, count, h, w, info)
    (rois, scores, nums), _ = run_gp9(feed, a)
    er, es, en = reference_gp9(feed["im"], feed["an"], feed["de"], feed["sc"], a)
    np.testing.assert_allclose(rois, er, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(scores, es)
    assert nums.dtype == np.int32 and nums.tolist() == en


def test_gp9_shapes_and_an_image_with_no_box():
    """Every box under min_size in both images: empty rois and scores, rois_num [0, 0]."""
    a = dict(min_size=1000.0, nms_threshold=0.5, pre_nms_count=10, post_nms_count=4)
    feed = gp9_feed(np.random.default_rng(0), 2, 3, 2, 2, [[60, 75, 1]] * 2)
    (rois, scores, nums), model = run_gp9(feed, a)
    assert [o.partial_shape for o in model.outputs] == [
        PartialShape([Dimension(0, 8), 4]), PartialShape([Dimension(0, 8)]), PartialShape([2])]
    assert rois.shape == (0, 4) and scores.shape == (0,) and nums.tolist() == [0, 0]
    assert nums.dtype == np.int64


def test_gp9_openvino_conformance(tmp_path):
    openvino()
    import openvino.opset9 as ops
    rng = np.random.default_rng(2)
    n, count, h, w = 2, 3, 4, 5
    outs, params, feed = [], [], []
    for normalized in (True, False):
        for min_size, info in ((0.0, [[64, 80, 1], [50, 70, 2]]), (6.0, [[64, 80, 1, 2]] * 2)):
            f = gp9_feed(rng, n, count, h, w, info)
            ps = [ops.parameter(list(f[k].shape), f32) for k in ("im", "an", "de", "sc")]
            node = ops.generate_proposals(*ps, min_size, 0.6, 25, 12, normalized=normalized,
                                          roi_num_type="i32")
            outs += list(node.outputs())
            params += ps
            feed += [f[k] for k in ("im", "an", "de", "sc")]
    check(tmp_path, outs, params, [feed], exact=False, rtol=1e-5, atol=1e-4)


def reference_edgpsi(im_info, anchors, deltas, scores, a):
    count, h, w = scores.shape
    props = []
    for y in range(h):
        for x in range(w):
            for k in range(count):
                d = [deltas[k * 4 + i, y, x] for i in range(4)]
                box, bw, bh = refine(anchors[(y * w + x) * count + k], d, 0, im_info[0],
                                     im_info[1], f32(1))
                ok = f32(a["min_size"]) <= bw and f32(a["min_size"]) <= bh
                props.append((box, f32(ok) * scores[k, y, x], True))
    props = sorted(props, key=lambda p: -p[1])[:a["pre_nms_count"]]
    kept = nms(props, a["nms_threshold"], f32(0), a["post_nms_count"])
    rois = np.zeros((a["post_nms_count"], 4), f32)
    out = np.zeros(a["post_nms_count"], f32)
    for i, p in enumerate(kept):
        rois[i], out[i] = p[0], p[1]
    return rois, out


def run_edgpsi(feed, a):
    b = ModelBuilder()
    ports = [b.parameter(k, "f32", list(feed[k].shape)) for k in ("im", "an", "de", "sc")]
    outs = b.op("ExperimentalDetectronGenerateProposalsSingleImage", *ports, version="opset6",
                name="gp", **a)
    for i, o in enumerate(outs):
        b.result(o, f"o{i}")
    return list(irexec.compile_model(b.build())(feed).values())


def edgpsi_feed(rng, count, h, w):
    return {"im": np.array([64, 80, 1], f32), "an": random_anchors(rng, h * w * count),
            "de": (rng.standard_normal((4 * count, h, w)) * 0.3).astype(f32),
            "sc": (rng.permutation(count * h * w) / (count * h * w) + 0.01).astype(f32).reshape(
                count, h, w)}


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), count=st.integers(1, 3), h=st.integers(1, 3),
       w=st.integers(1, 4), pre=st.integers(1, 40), post=st.integers(1, 15),
       thresh=st.sampled_from([0.3, 0.7]))
def test_edgpsi_matches_a_loop_reference(seed, count, h, w, pre, post, thresh):
    # min_size 0 keeps the scores distinct; the filter is checked against OpenVINO below
    a = dict(min_size=0.0, nms_threshold=thresh, pre_nms_count=pre, post_nms_count=post)
    feed = edgpsi_feed(np.random.default_rng(seed), count, h, w)
    rois, scores = run_edgpsi(feed, a)
    er, es = reference_edgpsi(feed["im"], feed["an"], feed["de"], feed["sc"], a)
    np.testing.assert_allclose(rois, er, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(scores, es)


def test_edgpsi_openvino_conformance(tmp_path):
    openvino()
    import openvino.opset1 as o1
    from openvino.utils.node_factory import NodeFactory
    factory = NodeFactory("opset6")
    rng = np.random.default_rng(4)
    outs, params, feed = [], [], []
    for a in (dict(min_size=0.0, nms_threshold=0.7, post_nms_count=10, pre_nms_count=30),
              dict(min_size=8.0, nms_threshold=0.5, post_nms_count=50, pre_nms_count=60),
              dict(min_size=30.0, nms_threshold=0.5, post_nms_count=70, pre_nms_count=70)):
        f = edgpsi_feed(rng, 3, 4, 5)
        ps = [o1.parameter(list(f[k].shape), f32) for k in ("im", "an", "de", "sc")]
        node = factory.create("ExperimentalDetectronGenerateProposalsSingleImage", ps, a)
        outs += list(node.outputs())
        params += ps
        feed += [f[k] for k in ("im", "an", "de", "sc")]
    check(tmp_path, outs, params, [feed], exact=False, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("op, shapes, attrs, code", [
    ("GenerateProposals", ([2, 5], [2, 2, 3, 4], [2, 12, 2, 2], [2, 3, 2, 2]), {}, "IR307"),
    ("GenerateProposals", ([2, 3], [2, 2, 3, 4], [2, 8, 2, 2], [2, 3, 2, 2]), {}, "IR307"),
    ("GenerateProposals", ([2, 3], [2, 2, 3, 4], [1, 12, 2, 2], [2, 3, 2, 2]), {}, "IR307"),
    ("GenerateProposals", ([2, 3], [2, 2, 3, 4], [2, 12, 2, 2], [2, 3, 2, 2]),
     dict(nms_eta=0.5), "IR302"),
    ("GenerateProposals", ([2, 3], [2, 2, 3, 4], [2, 12, 2, 2], [2, 3, 2, 2]),
     dict(post_nms_count=0), "IR302"),
    ("ExperimentalDetectronGenerateProposalsSingleImage", ([4], [12, 4], [12, 2, 2], [3, 2, 2]),
     {}, "IR307"),
    ("ExperimentalDetectronGenerateProposalsSingleImage", ([3], [10, 4], [12, 2, 2], [3, 2, 2]),
     {}, "IR307"),
    ("ExperimentalDetectronGenerateProposalsSingleImage", ([3], [12, 4], [12, 2], [3, 2, 2]),
     {}, "IR305"),
])
def test_bad_inputs(op, shapes, attrs, code):
    base = dict(min_size=0.0, nms_threshold=0.5, pre_nms_count=10, post_nms_count=4)
    b = ModelBuilder()
    ports = [b.parameter(f"p{i}", "f32", s) for i, s in enumerate(shapes)]
    outs = b.op(op, *ports, version="opset9" if op == "GenerateProposals" else "opset6",
                **dict(base, **attrs))
    b.result(outs[0])
    with pytest.raises(IRError) as e:
        b.build()
    assert e.value.code == code
