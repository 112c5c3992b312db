"""Proposal-1 and Proposal-4: region proposals from an RPN's scores and box deltas (Faster R-CNN).

Anchors from ``base_size``, ``ratio`` and ``scale`` are laid on every cell of the feature map,
moved by the deltas, clipped, filtered by ``min_size`` (their score becomes 0), sorted by score
(OpenVINO's order for equal scores, see proposal_common), cut to ``pre_nms_topn``, thinned by
greedy NMS to at most ``post_nms_topn`` per image. Each image fills ``post_nms_topn`` rows of
``[image index, x0, y0, x1, y1]``; the unused rows are 0 and the first of them starts with -1.
Proposal-4 also gives each row's score. ``framework="tensorflow"`` counts coordinates without
the +1 of Caffe, clips the anchors first, swaps x and y of the grid and shifts the anchors by half
``base_size``, as OpenVINO's reference kernel does. Computed in f32 (OpenVINO's CPU plugin does
the same for f16 and bf16 data).
"""

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.detection.proposal_common import (
    F32,
    greedy_nms,
    merge_dim,
    partial_sort_order,
    round_half_away,
    times,
)
from irexec.ops.spec import (
    REAL,
    Attr,
    Input,
    Op,
    OpSpec,
    Output,
    Rank,
    TensorType,
    TypeVar,
    register,
)

T = TypeVar("T", REAL)

ATTRS = (
    Attr("base_size", "uint", doc="size of the base anchor, > 0"),
    Attr("pre_nms_topn", "uint", doc="how many best-scored boxes enter NMS"),
    Attr("post_nms_topn", "uint", doc="how many boxes NMS keeps per image (the output rows)"),
    Attr("nms_thresh", "float", doc="a box whose IoU with a kept box exceeds this is dropped"),
    Attr("feat_stride", "uint", doc="distance in pixels between feature-map cells"),
    Attr("min_size", "uint", doc="boxes narrower or lower than min_size * scale get score 0"),
    Attr("ratio", "float_list", doc="anchor aspect ratios (height / width)"),
    Attr("scale", "float_list", doc="anchor scales; K = len(ratio) * len(scale) anchors"),
    Attr("clip_before_nms", "bool", default=True, doc="clip boxes to the image before NMS"),
    Attr("clip_after_nms", "bool", default=False, doc="clip the kept boxes to the image"),
    Attr("normalize", "bool", default=False, doc="divide the output boxes by the image size"),
    Attr("box_size_scale", "float", default=1.0, doc="the size deltas are divided by this"),
    Attr("box_coordinate_scale", "float", default=1.0,
         doc="the centre deltas are divided by this"),
    Attr("framework", "string", default="", doc='"" (Caffe) or "tensorflow"'),
)

INPUTS = (
    Input("class_probs", T, Rank(exact=4), doc="[N, 2*K, H, W]: background then foreground "
                                               "scores of each anchor"),
    Input("bbox_deltas", T, Rank(exact=4), doc="[N, 4*K, H, W]: dx, dy, d(log w), d(log h) "
                                               "per anchor"),
    Input("image_shape", T, Rank(exact=1), doc="[height, width, scale] or [height, width, "
                                               "scale_h, scale_w]"),
)


def _check_attrs(attrs) -> None:
    if attrs["framework"] not in ("", "tensorflow"):
        raise OpError(f'framework is "{attrs["framework"]}"; it must be "" or "tensorflow"',
                      code="IR302")
    for name in ("base_size", "feat_stride", "post_nms_topn"):
        if attrs[name] <= 0:
            raise OpError(f"{name} is {attrs[name]}; it must be positive", code="IR302")
    for name in ("ratio", "scale"):
        if len(attrs[name]) == 0:
            raise OpError(f"{name} is empty; it needs at least one value", code="IR302")


def _infer(ctx):
    try:
        _check_attrs(ctx.attrs)
        probs, deltas, image = (ctx.input_shape(i) for i in range(3))
        batch = Dimension.dynamic()
        anchors = len(ctx.attrs["ratio"]) * len(ctx.attrs["scale"])
        if probs.rank_is_static:
            batch = probs[0]
            if probs[1].is_static and probs[1].min != 2 * anchors:
                raise OpError(f"class_probs has {probs[1]} channels but len(ratio) * len(scale) "
                              f"= {anchors} anchors need {2 * anchors}", code="IR307")
        if deltas.rank_is_static:
            batch = merge_dim(batch, deltas[0], "the batch of class_probs and bbox_deltas")
            if deltas[1].is_static and deltas[1].min != 4 * anchors:
                raise OpError(f"bbox_deltas has {deltas[1]} channels but {anchors} anchors need "
                              f"{4 * anchors}", code="IR307")
            if probs.rank_is_static:
                for axis in (2, 3):
                    merge_dim(probs[axis], deltas[axis],
                              f"dim {axis} of class_probs and bbox_deltas")
        if image.rank_is_static and image[0].is_static and image[0].min not in (3, 4):
            raise OpError(f"image_shape has {image[0].min} values; it takes 3 ([height, width, "
                          f"scale]) or 4 ([height, width, scale_h, scale_w])", code="IR307")
    except OpError as e:
        ctx.error(e.code, str(e))
    rows = times(batch, ctx.attrs["post_nms_topn"])
    et = ctx.type_var("T")
    outs = [TensorType(et, PartialShape([rows, Dimension.static(5)]))]
    if len(ctx.spec.outputs) == 2:
        outs.append(TensorType(et, PartialShape([rows])))
    return outs


def anchors_of(attrs) -> np.ndarray:
    """[K, 4] anchors x0, y0, x1, y1 (anchor k = ratio index * len(scale) + scale index)."""
    tf = attrs["framework"] == "tensorflow"
    offset = F32(0.0 if tf else 1.0)
    base = attrs["base_size"]
    ratios = np.asarray(attrs["ratio"], F32)[:, None]
    scales = np.asarray(attrs["scale"], F32)[None, :]
    area = F32(base * base)
    center = F32(0.5) * (F32(base) - offset)
    w = np.sqrt(area / ratios)
    if tf:
        h = w * ratios
    else:
        w = round_half_away(w)
        h = round_half_away(w * ratios)
    half_w = F32(0.5) * (w * scales - offset)
    half_h = F32(0.5) * (h * scales - offset)
    out = np.stack([center - half_w, center - half_h, center + half_w, center + half_h], -1)
    if tf:
        out = out - F32(base * 0.5)
    return out.reshape(-1, 4).astype(F32)


def _decode(probs, deltas, image, attrs, anchors):
    """Every proposal of one image, in the kernel's order (h, w, anchor): x0, y0, x1, y1, score."""
    tf = attrs["framework"] == "tensorflow"
    offset = F32(0.0 if tf else 1.0)
    k, (h, w) = anchors.shape[0], probs.shape[1:]
    img_h, img_w = (image[1], image[0]) if tf else (image[0], image[1])
    scale_h = image[2]
    # [height, width, scale_h, scale_w] as the specification and OpenVINO's CPU plugin read it
    # (OpenVINO's reference kernel tests the rank instead of the size, so it never reads scale_w)
    scale_w = image[3] if image.size >= 4 else scale_h
    stride = attrs["feat_stride"]
    gy, gx = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    if tf:
        gx, gy = gy, gx
    gx = (gx * stride).astype(F32)[:, :, None]
    gy = (gy * stride).astype(F32)[:, :, None]
    d = deltas.reshape(k, 4, h, w).transpose(2, 3, 0, 1)  # [h, w, k, 4]
    dx = d[..., 0] / F32(attrs["box_coordinate_scale"])
    dy = d[..., 1] / F32(attrs["box_coordinate_scale"])
    dlw = d[..., 2] / F32(attrs["box_size_scale"])
    dlh = d[..., 3] / F32(attrs["box_size_scale"])
    score = probs[k:].transpose(1, 2, 0)
    x0, y0 = gx + anchors[:, 0], gy + anchors[:, 1]
    x1, y1 = gx + anchors[:, 2], gy + anchors[:, 3]
    zero = F32(0)
    if tf:
        x0, x1 = (np.maximum(zero, np.minimum(v, img_w)) for v in (x0, x1))
        y0, y1 = (np.maximum(zero, np.minimum(v, img_h)) for v in (y0, y1))
    ww = x1 - x0 + offset
    hh = y1 - y0 + offset
    cx = x0 + F32(0.5) * ww
    cy = y0 + F32(0.5) * hh
    pcx = dx * ww + cx
    pcy = dy * hh + cy
    pw = np.exp(dlw) * ww
    ph = np.exp(dlh) * hh
    x0 = pcx - F32(0.5) * pw
    y0 = pcy - F32(0.5) * ph
    x1 = pcx + F32(0.5) * pw
    y1 = pcy + F32(0.5) * ph
    if attrs["clip_before_nms"]:
        x0, x1 = (np.maximum(zero, np.minimum(v, img_w - offset)) for v in (x0, x1))
        y0, y1 = (np.maximum(zero, np.minimum(v, img_h - offset)) for v in (y0, y1))
    bw = x1 - x0 + offset
    bh = y1 - y0 + offset
    min_h = F32(attrs["min_size"] * scale_h)
    min_w = F32(attrs["min_size"] * scale_w)
    score = ((min_w <= bw) & (min_h <= bh)).astype(F32) * score
    return np.stack([x0, y0, x1, y1, score], -1).reshape(-1, 5)


def nms_overlaps(boxes: np.ndarray, thresh: float, offset):
    """Proposal's suppression test: boxes that touch, with IoU (areas counted with ``offset``)
    above ``thresh``."""
    x0, y0, x1, y1 = (boxes[:, i] for i in range(4))
    thresh = F32(thresh)

    def overlaps(i, rest):
        a0, b0, a1, b1 = x0[i], y0[i], x1[i], y1[i]
        c0, d0, c1, d1 = x0[rest], y0[rest], x1[rest], y1[rest]
        touch = (a0 <= c1) & (b0 <= d1) & (c0 <= a1) & (d0 <= b1)
        width = np.maximum(F32(0), np.minimum(a1, c1) - np.maximum(a0, c0) + offset)
        height = np.maximum(F32(0), np.minimum(b1, d1) - np.maximum(b0, d0) + offset)
        area = width * height
        area_a = (a1 - a0 + offset) * (b1 - b0 + offset)
        area_b = (c1 - c0 + offset) * (d1 - d0 + offset)
        with np.errstate(invalid="ignore", divide="ignore"):
            iou = area / (area_a + area_b - area)
        return touch & (thresh < iou)
    return overlaps


def proposal(class_probs, bbox_deltas, image_shape, *, with_probs: bool, **attrs):
    dtype = class_probs.dtype
    probs, deltas = class_probs.astype(F32), bbox_deltas.astype(F32)
    image = image_shape.astype(F32).reshape(-1)
    tf = attrs["framework"] == "tensorflow"
    offset = F32(0.0 if tf else 1.0)
    img_h, img_w = (image[1], image[0]) if tf else (image[0], image[1])
    anchors = anchors_of(attrs)
    post = attrs["post_nms_topn"]
    batch = probs.shape[0]
    rois = np.zeros((batch, post, 5), F32)
    scores = np.zeros((batch, post), F32)
    for b in range(batch):
        boxes = _decode(probs[b], deltas[b], image, attrs, anchors)
        order = partial_sort_order(boxes[:, 4], attrs["pre_nms_topn"])
        top = boxes[order]
        kept = top[greedy_nms(len(top), nms_overlaps(top, attrs["nms_thresh"], offset), post)]
        xy = kept[:, :4]
        if attrs["clip_after_nms"]:
            limit = np.array([img_w, img_h, img_w, img_h], F32)
            xy = np.maximum(F32(0), np.minimum(xy, limit))
        if attrs["normalize"]:
            xy = xy / np.array([img_w, img_h, img_w, img_h], F32)
        n = len(kept)
        rois[b, :n, 0] = b
        rois[b, :n, 1:] = xy
        scores[b, :n] = kept[:, 4]
        if n < post:
            rois[b, n, 0] = -1
    rois = rois.reshape(-1, 5).astype(dtype)
    if with_probs:
        return rois, scores.reshape(-1).astype(dtype)
    return rois


def _openvino_refuses(node) -> str | None:
    """Where OpenVINO's CPU plugin cannot be the oracle (measured with 2026.4.1): it crashes
    with few anchors per cell, a feature map of one row or column, or pre_nms_topn below the
    anchors per cell, and leaves the scores of unused rows uninitialised when the map holds
    fewer boxes than post_nms_topn rows."""
    source = node.inputs[0].source if node.inputs else None
    shape = source.partial_shape if source is not None else None
    if shape is None or not shape.is_static or len(shape) != 4:
        return None
    _, channels, h, w = shape.to_shape()
    anchors = channels // 2
    attrs = node.attrs
    if anchors < 8 or h == 1 or w == 1 or attrs["pre_nms_topn"] < anchors or \
            anchors * h * w < attrs["post_nms_topn"]:
        return ("OpenVINO's CPU plugin crashes on, or leaves rows uninitialised in, Proposal "
                "with so few anchors or boxes (docs/compatibility.md)")
    return None


def _spec(since, until, two_outputs):
    outputs = (Output("rois", "[N * post_nms_topn, 5]: image index, x0, y0, x1, y1 per row; "
                              "unused rows 0, the first of them with image index -1", type=T),)
    if two_outputs:
        outputs += (Output("roi_scores", "[N * post_nms_topn]: each row's score (0 in unused "
                                         "rows)", type=T),)
    return OpSpec(
        type="Proposal", since=since, until=until, attrs=ATTRS, inputs=INPUTS, outputs=outputs,
        doc="Region proposals: anchors moved by the deltas, filtered by size, the best "
            "pre_nms_topn thinned by greedy NMS to post_nms_topn boxes per image.")


@register
class Proposal1(Op):
    spec = _spec(1, 3, False)
    infer = staticmethod(_infer)
    openvino_refuses = staticmethod(_openvino_refuses)

    @staticmethod
    def kernel(class_probs, bbox_deltas, image_shape, **attrs):
        return proposal(class_probs, bbox_deltas, image_shape, with_probs=False, **attrs)


@register
class Proposal4(Op):
    spec = _spec(4, 16, True)
    infer = staticmethod(_infer)
    openvino_refuses = staticmethod(_openvino_refuses)

    @staticmethod
    def kernel(class_probs, bbox_deltas, image_shape, **attrs):
        return proposal(class_probs, bbox_deltas, image_shape, with_probs=True, **attrs)
