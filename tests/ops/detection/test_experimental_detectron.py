"""The ExperimentalDetectron ops of opset6 but the proposal generator (test_generate_proposals):
TopKROIs, PriorGridGenerator, ROIFeatureExtractor and DetectionOutput. Loop references,
OpenVINO conformance, the rows OpenVINO's CPU plugin leaves uninitialised (irexec writes 0,
docs/compatibility.md), empty results and the diagnostics."""

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


def run(op, feed, **attrs):
    b = ModelBuilder()
    ports = [b.parameter(k, "f32", list(v.shape)) for k, v in feed.items()]
    outs = b.op(op, *ports, version="opset6", name="op", **attrs)
    for i, o in enumerate(outs if isinstance(outs, tuple) else (outs,)):
        b.result(o, f"o{i}")
    model = b.build()
    return list(irexec.compile_model(model)(feed).values()), model


def factory():
    openvino()
    import openvino.opset1 as o1
    from openvino.utils.node_factory import NodeFactory
    return o1, NodeFactory("opset6")


def boxes(rng, count, scale=60.0):
    c = rng.random((count, 2), dtype=f32) * scale
    s = rng.random((count, 2), dtype=f32) * scale / 3 + 2
    return np.concatenate([c - s, c + s], 1).astype(f32)


# --- TopKROIs -------------------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(0, 12), k=st.integers(0, 15))
def test_topk_rois_takes_the_best_in_order(seed, n, k):
    rng = np.random.default_rng(seed)
    feed = {"r": rng.random((n, 4), dtype=f32), "p": rng.integers(0, 5, n).astype(f32)}
    (out,), model = run("ExperimentalDetectronTopKROIs", feed, max_rois=k)
    assert model.outputs[0].partial_shape == PartialShape([k, 4])
    best = sorted(range(n), key=lambda i: (-feed["p"][i], i))[:k]
    expected = np.zeros((k, 4), f32)
    expected[:len(best)] = feed["r"][best]
    np.testing.assert_array_equal(out, expected)


def test_topk_rois_openvino_conformance(tmp_path):
    o1, f = factory()
    rng = np.random.default_rng(0)
    r, p = o1.parameter([9, 4], f32), o1.parameter([9], f32)
    outs = [f.create("ExperimentalDetectronTopKROIs", [r, p], dict(max_rois=m)).output(0)
            for m in (1, 5, 9)]
    feeds = [[rng.random((9, 4), dtype=f32), rng.permutation(9).astype(f32)],
             [rng.random((9, 4), dtype=f32), np.array([1, 2, 1, 2, 1, 2, 1, 0, 1], f32)]]
    check(tmp_path, outs, [r, p], feeds)


def test_topk_rois_fewer_boxes_than_rows_gives_zero_rows():
    """OpenVINO's CPU plugin leaves these rows uninitialised; irexec writes 0."""
    feed = {"r": np.arange(8, dtype=f32).reshape(2, 4) + 1, "p": np.array([0.5, 0.7], f32)}
    (out,), _ = run("ExperimentalDetectronTopKROIs", feed, max_rois=4)
    assert out.tolist() == [[5, 6, 7, 8], [1, 2, 3, 4], [0] * 4, [0] * 4]


# --- PriorGridGenerator ---------------------------------------------------------------------

def grid_reference(priors, fh, fw, ih, iw, a):
    gh, gw = a["h"] or fh, a["w"] or fw
    sw = f32(a["stride_x"]) if a["stride_x"] else f32(iw) / f32(gw)
    sh = f32(a["stride_y"]) if a["stride_y"] else f32(ih) / f32(gh)
    rows = []
    for y in range(gh):
        for x in range(gw):
            for p in priors:
                dx, dy = sw * (f32(x) + f32(0.5)), sh * (f32(y) + f32(0.5))
                rows.append([p[0] + dx, p[1] + dy, p[2] + dx, p[3] + dy])
    out = np.zeros(fh * fw * len(priors) * 4, f32)
    flat = np.array(rows, f32).reshape(-1)[:out.size]
    out[:flat.size] = flat
    return out.reshape(-1, 4) if a["flatten"] else out.reshape(fh, fw, len(priors), 4)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), p=st.integers(1, 4), fh=st.integers(1, 5),
       fw=st.integers(1, 5), flatten=st.booleans(), h=st.integers(0, 6), w=st.integers(0, 6),
       sx=st.sampled_from([0.0, 4.0]), sy=st.sampled_from([0.0, 8.5]))
def test_prior_grid_matches_a_loop_reference(seed, p, fh, fw, flatten, h, w, sx, sy):
    rng = np.random.default_rng(seed)
    feed = {"pr": rng.random((p, 4), dtype=f32) * 10, "fm": np.zeros((1, 2, fh, fw), f32),
            "im": np.zeros((1, 3, 37, 51), f32)}
    a = dict(flatten=flatten, h=h, w=w, stride_x=sx, stride_y=sy)
    (out,), model = run("ExperimentalDetectronPriorGridGenerator", feed, **a)
    expected = grid_reference(feed["pr"], fh, fw, 37, 51, a)
    assert model.outputs[0].partial_shape == PartialShape(list(expected.shape))
    np.testing.assert_array_equal(out, expected)


def test_prior_grid_openvino_conformance(tmp_path):
    o1, f = factory()
    rng = np.random.default_rng(1)
    pr, fm, im = o1.parameter([3, 4], f32), o1.parameter([1, 16, 4, 5], f32), \
        o1.parameter([1, 3, 64, 80], f32)
    outs = [f.create("ExperimentalDetectronPriorGridGenerator", [pr, fm, im], a).output(0)
            for a in (dict(flatten=True, h=0, w=0, stride_x=0.0, stride_y=0.0),
                      dict(flatten=False, h=0, w=0, stride_x=4.0, stride_y=8.0),
                      dict(flatten=True, h=4, w=5, stride_x=0.0, stride_y=0.0))]
    feed = [rng.random((3, 4), dtype=f32) * 10, rng.random((1, 16, 4, 5), dtype=f32),
            rng.random((1, 3, 64, 80), dtype=f32)]
    check(tmp_path, outs, [pr, fm, im], [feed])


# --- ROIFeatureExtractor ----------------------------------------------------------------------

def roi_align_reference(fmap, box, scale, pooled, ratio, aligned):
    c, height, width = fmap.shape
    off = f32(0.5) if aligned else f32(0)
    sw, sh, ew, eh = (box[i] * scale - off for i in range(4))
    rw, rh = max(ew - sw, f32(1)), max(eh - sh, f32(1))
    bh, bw = rh / f32(pooled), rw / f32(pooled)
    gh = ratio if ratio > 0 else int(np.ceil(rh / f32(pooled)))
    gw = ratio if ratio > 0 else int(np.ceil(rw / f32(pooled)))
    out = np.zeros((c, pooled, pooled), f32)
    for ph in range(pooled):
        for pw in range(pooled):
            acc = np.zeros(c, f32)
            for iy in range(gh):
                for ix in range(gw):
                    y = sh + f32(ph) * bh + (f32(iy) + f32(0.5)) * bh / f32(gh)
                    x = sw + f32(pw) * bw + (f32(ix) + f32(0.5)) * bw / f32(gw)
                    if y < -1 or y > height or x < -1 or x > width:
                        continue
                    y, x = max(y, f32(0)), max(x, f32(0))
                    yl, xl = int(y), int(x)
                    if yl >= height - 1:
                        yl = yh = height - 1
                        y = f32(yl)
                    else:
                        yh = yl + 1
                    if xl >= width - 1:
                        xl = xh = width - 1
                        x = f32(xl)
                    else:
                        xh = xl + 1
                    ly, lx = y - f32(yl), x - f32(xl)
                    hy, hx = f32(1) - ly, f32(1) - lx
                    acc += hy * hx * fmap[:, yl, xl] + hy * lx * fmap[:, yl, xh] + \
                        ly * hx * fmap[:, yh, xl] + ly * lx * fmap[:, yh, xh]
            out[:, ph, pw] = acc / f32(gh * gw)
    return out


def rfe_reference(rois, maps, a):
    out = np.zeros((len(rois), maps[0].shape[1], a["output_size"], a["output_size"]), f32)
    for i, r in enumerate(rois):
        area = (r[2] - r[0]) * (r[3] - r[1])
        if not area > 0:
            continue
        level = int(np.floor(np.log2(np.sqrt(area) / f32(224) + f32(1e-6)) + f32(2)))
        level = max(0, min(len(maps) - 1, level))
        out[i] = roi_align_reference(maps[level][0], r, f32(1) / f32(a["pyramid_scales"][level]),
                                     a["output_size"], a["sampling_ratio"], a["aligned"])
    return out


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(0, 5), levels=st.integers(1, 3),
       size=st.integers(1, 3), ratio=st.integers(0, 2), aligned=st.booleans())
def test_roi_feature_extractor_matches_a_loop_reference(seed, n, levels, size, ratio, aligned):
    rng = np.random.default_rng(seed)
    rois = boxes(rng, n, scale=400.0)
    if n:
        rois[0, 2] = rois[0, 0]  # a box of no area: no level, zero features
    feed = {"r": rois}
    for lvl in range(levels):
        side = 16 >> lvl
        feed[f"f{lvl}"] = rng.standard_normal((1, 3, side, side + 1)).astype(f32)
    a = dict(output_size=size, sampling_ratio=ratio, pyramid_scales=[4 << i for i in
                                                                     range(levels)],
             aligned=aligned)
    (features, back), _ = run("ExperimentalDetectronROIFeatureExtractor", feed, **a)
    expected = rfe_reference(rois, [feed[f"f{i}"] for i in range(levels)], a)
    np.testing.assert_allclose(features, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(back, rois)


def test_roi_feature_extractor_openvino_conformance(tmp_path):
    o1, f = factory()
    rng = np.random.default_rng(2)
    r, f1, f2 = o1.parameter([6, 4], f32), o1.parameter([1, 8, 16, 16], f32), \
        o1.parameter([1, 8, 8, 8], f32)
    outs = []
    for a in (dict(output_size=3, sampling_ratio=2, pyramid_scales=[4, 8], aligned=False),
              dict(output_size=2, sampling_ratio=0, pyramid_scales=[4, 8], aligned=True)):
        outs += list(f.create("ExperimentalDetectronROIFeatureExtractor", [r, f1, f2],
                              a).outputs())
    rois = boxes(rng, 6) * 3
    rois[0] = [10, 10, 10, 20]
    feed = [rois, rng.random((1, 8, 16, 16), dtype=f32), rng.random((1, 8, 8, 8), dtype=f32)]
    check(tmp_path, outs, [r, f1, f2], [feed], exact=False, rtol=1e-5, atol=1e-5)


# --- DetectionOutput ----------------------------------------------------------------------------

def eddo_reference(rois, deltas, scores, a):
    classes = a["num_classes"]
    w = [f32(v) for v in a["deltas_weights"]]
    cap = f32(a["max_delta_log_wh"])
    found = []
    for c in range(1, classes):
        cand = []
        for r in range(len(rois)):
            x0, y0, x1, y1 = rois[r]
            if x1 - x0 <= 0 or y1 - y0 <= 0:
                continue
            ww, hh = x1 - x0 + f32(1), y1 - y0 + f32(1)
            cx, cy = x0 + f32(0.5) * ww, y0 + f32(0.5) * hh
            d = [deltas[r, c * 4 + i] / w[i] for i in range(4)]
            pcx, pcy = d[0] * ww + cx, d[1] * hh + cy
            pw, ph = np.exp(min(d[2], cap)) * ww, np.exp(min(d[3], cap)) * hh
            box = [max(f32(0), v) for v in (pcx - f32(0.5) * pw, pcy - f32(0.5) * ph,
                                            pcx + f32(0.5) * pw - f32(1),
                                            pcy + f32(0.5) * ph - f32(1))]
            area = (box[2] - box[0] + f32(1)) * (box[3] - box[1] + f32(1))
            if scores[r, c] > f32(a["score_threshold"]):
                cand.append((scores[r, c], r, box, area))
        cand.sort(key=lambda t: (-t[0], t[1]))
        kept = []
        for s, r, box, area in cand:
            ok = True
            for _, _, kb, ka in kept:
                if box[0] > kb[2] or box[2] < kb[0] or box[1] > kb[3] or box[3] < kb[1]:
                    continue
                iw = min(box[2], kb[2]) - max(box[0], kb[0]) + f32(1)
                ih = min(box[3], kb[3]) - max(box[1], kb[1]) + f32(1)
                if iw <= 0 or ih <= 0:
                    continue
                if iw * ih / (area + ka - iw * ih) > f32(a["nms_threshold"]):
                    ok = False
                    break
            if ok:
                kept.append((s, r, box, area))
        found += [(s, r, c, box) for s, r, box, _ in kept[:a["post_nms_count"]]]
    m = a["max_detections_per_image"]
    if len(found) > m:
        found = sorted(found, key=lambda t: (-t[0], t[1]))[:m]
    out_b, out_c, out_s = np.zeros((m, 4), f32), np.zeros(m, np.int32), np.zeros(m, f32)
    for i, (s, r, c, box) in enumerate(found):
        out_b[i], out_c[i], out_s[i] = box, c, s
    return out_b, out_c, out_s


def eddo_feed(rng, r, classes):
    return {"rois": boxes(rng, r), "deltas": (rng.standard_normal((r, 4 * classes)) * 0.3).astype(
        f32), "scores": (rng.permutation(r * classes) / (r * classes)).astype(f32).reshape(
            r, classes), "im": np.array([[64, 80, 1]], f32)}


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), r=st.integers(1, 10), classes=st.integers(1, 4),
       thresh=st.sampled_from([0.0, 0.3, 0.95]), nms=st.sampled_from([0.2, 0.6]),
       post=st.integers(1, 5), most=st.integers(1, 12))
def test_eddo_matches_a_loop_reference(seed, r, classes, thresh, nms, post, most):
    a = dict(score_threshold=thresh, nms_threshold=nms, max_delta_log_wh=2.0,
             num_classes=classes, post_nms_count=post, max_detections_per_image=most,
             class_agnostic_box_regression=False, deltas_weights=[10.0, 10.0, 5.0, 5.0])
    feed = eddo_feed(np.random.default_rng(seed), r, classes)
    feed["rois"][0, 2] = feed["rois"][0, 0] - 1  # no width: never detected
    (b, c, s), _ = run("ExperimentalDetectronDetectionOutput", feed, **a)
    eb, ec, es = eddo_reference(feed["rois"], feed["deltas"], feed["scores"], a)
    np.testing.assert_allclose(b, eb, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(c, ec)
    np.testing.assert_array_equal(s, es)
    assert c.dtype == np.int32


def test_eddo_openvino_conformance(tmp_path):
    o1, f = factory()
    rng = np.random.default_rng(3)
    outs, params, feed = [], [], []
    for agnostic, threshold, most in ((False, 0.05, 6), (False, 0.3, 40), (True, 0.3, 40),
                                      (False, 2.0, 5)):
        fd = eddo_feed(rng, 12, 4)
        ps = [o1.parameter(list(v.shape), f32) for v in fd.values()]
        a = dict(score_threshold=threshold, nms_threshold=0.4, max_delta_log_wh=2.0,
                 num_classes=4, post_nms_count=4, max_detections_per_image=most,
                 class_agnostic_box_regression=agnostic, deltas_weights=[10., 10., 5., 5.])
        outs += list(f.create("ExperimentalDetectronDetectionOutput", ps, a).outputs())
        params += ps
        feed += list(fd.values())
    check(tmp_path, outs, params, [feed], exact=False, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("op, shapes, attrs, code", [
    ("ExperimentalDetectronDetectionOutput", ([5, 4], [5, 4], [5, 3], [1, 3]), {}, "IR307"),
    ("ExperimentalDetectronDetectionOutput", ([5, 4], [5, 12], [4, 3], [1, 3]), {}, "IR307"),
    ("ExperimentalDetectronDetectionOutput", ([5, 4], [5, 12], [5, 3], [1, 3]),
     dict(deltas_weights=[1.0]), "IR302"),
    ("ExperimentalDetectronTopKROIs", ([5, 4], [6]), {}, "IR307"),
    ("ExperimentalDetectronTopKROIs", ([5, 3], [5]), {}, "IR307"),
    ("ExperimentalDetectronROIFeatureExtractor", ([5, 4], [1, 8, 4, 4], [1, 6, 2, 2]), {},
     "IR307"),
    ("ExperimentalDetectronROIFeatureExtractor", ([5, 4], [1, 8, 4, 4], [1, 8, 2, 2]),
     dict(pyramid_scales=[4]), "IR302"),
    ("ExperimentalDetectronPriorGridGenerator", ([3, 5], [1, 8, 4, 4], [1, 3, 16, 16]), {},
     "IR307"),
])
def test_bad_inputs(op, shapes, attrs, code):
    base = {
        "ExperimentalDetectronDetectionOutput": dict(
            score_threshold=0.05, nms_threshold=0.5, max_delta_log_wh=4.0, num_classes=3,
            post_nms_count=5, max_detections_per_image=6, deltas_weights=[1., 1., 1., 1.]),
        "ExperimentalDetectronTopKROIs": dict(max_rois=2),
        "ExperimentalDetectronROIFeatureExtractor": dict(output_size=2, sampling_ratio=2,
                                                         pyramid_scales=[4, 8]),
        "ExperimentalDetectronPriorGridGenerator": {},
    }[op]
    b = ModelBuilder()
    ports = [b.parameter(f"p{i}", "f32", s) for i, s in enumerate(shapes)]
    outs = b.op(op, *ports, version="opset6", **dict(base, **attrs))
    b.result(outs[0] if isinstance(outs, tuple) else outs)
    with pytest.raises(IRError) as e:
        b.build()
    assert e.value.code == code
