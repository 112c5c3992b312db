"""ExperimentalDetectronDetectionOutput-6: Detectron's final boxes from the second stage's class
scores and box deltas.

Each box with a positive width and height is moved by its class's deltas (divided by
``deltas_weights``; size deltas capped at ``max_delta_log_wh``; Caffe's +1 in widths; corners
kept >= 0), for every class but the background class 0. Per class, the boxes scoring above
``score_threshold`` go by score (equal scores by box index) through greedy NMS (IoU above
``nms_threshold`` suppresses), keeping at most ``post_nms_count``. The kept detections come out
class after class; when there are more than ``max_detections_per_image`` the best of them by
score (then box index) are taken, in that order. Rows after the last are 0. Computed in f32.
"""

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.detection.proposal_common import (
    F32,
    greedy_nms,
    merge_dim,
    partial_sort_ranked,
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


def refine_boxes(rois, deltas, weights, max_delta, classes):
    """Boxes [classes, R, 4], their areas [classes, R] (with +1) and which are valid [R]."""
    offset = F32(1)
    x0, y0, x1, y1 = (rois[:, i] for i in range(4))
    valid = ~((x1 - x0 <= 0) | (y1 - y0 <= 0))
    ww = (x1 - x0 + offset)[None]
    hh = (y1 - y0 + offset)[None]
    cx = x0[None] + F32(0.5) * ww
    cy = y0[None] + F32(0.5) * hh
    d = deltas.reshape(rois.shape[0], classes, 4).transpose(1, 0, 2)  # [classes, R, 4]
    dx, dy = d[..., 0] / weights[0], d[..., 1] / weights[1]
    dw, dh = d[..., 2] / weights[2], d[..., 3] / weights[3]
    pcx = dx * ww + cx
    pcy = dy * hh + cy
    pw = np.exp(np.minimum(dw, max_delta)) * ww
    ph = np.exp(np.minimum(dh, max_delta)) * hh
    zero = F32(0)
    nx0 = np.maximum(zero, pcx - F32(0.5) * pw)
    ny0 = np.maximum(zero, pcy - F32(0.5) * ph)
    nx1 = np.maximum(zero, pcx + F32(0.5) * pw - offset)
    ny1 = np.maximum(zero, pcy + F32(0.5) * ph - offset)
    areas = np.where(valid[None], (nx1 - nx0 + offset) * (ny1 - ny0 + offset), zero)
    boxes = np.where(valid[None, :, None], np.stack([nx0, ny0, nx1, ny1], -1), zero)
    return boxes, areas, valid  # an invalid box is left at 0, as OpenVINO's kernel leaves it


def nms_overlaps(boxes, areas, thresh):
    """JaccardOverlap of OpenVINO's kernel (+1 in the intersection, areas given) above thresh."""
    x0, y0, x1, y1 = (boxes[:, i] for i in range(4))
    thresh = F32(thresh)
    one = F32(1)

    def overlaps(i, rest):
        c0, d0, c1, d1 = x0[rest], y0[rest], x1[rest], y1[rest]
        apart = (c0 > x1[i]) | (c1 < x0[i]) | (d0 > y1[i]) | (d1 < y0[i])
        width = np.minimum(x1[i], c1) - np.maximum(x0[i], c0) + one
        height = np.minimum(y1[i], d1) - np.maximum(y0[i], d0) + one
        inter = width * height
        with np.errstate(invalid="ignore", divide="ignore"):
            iou = inter / (areas[i] + areas[rest] - inter)
        return ~apart & (width > 0) & (height > 0) & (iou > thresh)
    return overlaps


def _infer(ctx):
    attrs = ctx.attrs
    try:
        if attrs["num_classes"] <= 0:
            raise OpError(f"num_classes is {attrs['num_classes']}; it must be positive",
                          code="IR302")
        if attrs["max_detections_per_image"] <= 0:
            raise OpError(f"max_detections_per_image is {attrs['max_detections_per_image']}; "
                          f"it must be positive", code="IR302")
        if len(attrs["deltas_weights"]) != 4:
            raise OpError(f"deltas_weights has {len(attrs['deltas_weights'])} values; it takes "
                          f"4 (x, y, log w, log h)", code="IR302")
        rois, deltas, scores, info = (ctx.input_shape(i) for i in range(4))
        count = Dimension.dynamic()
        classes = attrs["num_classes"]
        if rois.rank_is_static:
            count = rois[0]
            if rois[1].is_static and rois[1].min != 4:
                raise OpError(f"input_rois' last dim is {rois[1]}; it must be 4", code="IR307")
        if deltas.rank_is_static:
            count = merge_dim(count, deltas[0], "the rows of input_rois and input_deltas")
            if deltas[1].is_static and deltas[1].min != 4 * classes:
                raise OpError(f"input_deltas has {deltas[1]} columns; num_classes {classes} "
                              f"needs {4 * classes}", code="IR307")
        if scores.rank_is_static:
            merge_dim(count, scores[0], "the rows of input_rois and input_scores")
            if scores[1].is_static and scores[1].min != classes:
                raise OpError(f"input_scores has {scores[1]} columns; num_classes is {classes}",
                              code="IR307")
        if info.rank_is_static and info[1].is_static and info[1].min != 3:
            raise OpError(f"input_im_info has {info[1]} values per image; it takes 3",
                          code="IR307")
    except OpError as e:
        ctx.error(e.code, str(e))
    det = Dimension.static(attrs["max_detections_per_image"])
    et = ctx.type_var("T")
    return [TensorType(et, PartialShape([det, Dimension.static(4)])),
            TensorType(ctx.output_element_types(2)[1], PartialShape([det])),
            TensorType(et, PartialShape([det]))]


@register
class ExperimentalDetectronDetectionOutput(Op):
    spec = OpSpec(
        type="ExperimentalDetectronDetectionOutput",
        since=6,
        until=16,
        attrs=(
            Attr("score_threshold", "float", doc="boxes must score above this"),
            Attr("nms_threshold", "float", doc="IoU above which a box is suppressed"),
            Attr("max_delta_log_wh", "float", doc="cap of the size deltas"),
            Attr("num_classes", "int", doc="classes, the background class 0 included"),
            Attr("post_nms_count", "int", doc="most detections per class"),
            Attr("max_detections_per_image", "int", doc="most detections (the output rows)"),
            Attr("class_agnostic_box_regression", "bool", default=False,
                 doc="kept for the IR; the deltas are read per class either way, as OpenVINO "
                     "does"),
            Attr("deltas_weights", "float_list", doc="the deltas are divided by these 4"),
        ),
        inputs=(
            Input("input_rois", T, Rank(exact=2), doc="[R, 4]: x0, y0, x1, y1"),
            Input("input_deltas", T, Rank(exact=2), doc="[R, 4 * num_classes]"),
            Input("input_scores", T, Rank(exact=2), doc="[R, num_classes]"),
            Input("input_im_info", T, Rank(exact=2), doc="[1, 3]: image height, width, scale "
                                                         "(not read by the computation)"),
        ),
        outputs=(
            Output("output_boxes", "[max_detections_per_image, 4]", type=T),
            Output("output_classes", "[max_detections_per_image]: the class of each box",
                   type="i32"),
            Output("output_scores", "[max_detections_per_image]", type=T),
        ),
        doc="Per-class NMS over the refined boxes of the second stage; the best "
            "max_detections_per_image detections.",
    )
    infer = staticmethod(_infer)

    @staticmethod
    def kernel(input_rois, input_deltas, input_scores, input_im_info, *, score_threshold,
               nms_threshold, max_delta_log_wh, num_classes, post_nms_count,
               max_detections_per_image, class_agnostic_box_regression, deltas_weights):
        dtype = input_rois.dtype
        rois, deltas, scores = (x.astype(F32) for x in (input_rois, input_deltas, input_scores))
        weights = np.asarray(deltas_weights, F32)
        boxes, areas, valid = refine_boxes(rois, deltas, weights, F32(max_delta_log_wh),
                                           num_classes)
        refined = np.where(valid[:, None], scores, F32(0)).T  # [classes, R]
        found_score, found_class, found_box = [], [], []
        for c in range(1, num_classes):
            candidates = np.flatnonzero(refined[c] > F32(score_threshold))
            order = candidates[np.lexsort((candidates, -refined[c][candidates].astype(
                np.float64)))]
            kept = order[greedy_nms(len(order), nms_overlaps(boxes[c][order], areas[c][order],
                                                             nms_threshold))]
            if post_nms_count >= 0:
                kept = kept[:post_nms_count]
            found_score.append(refined[c][kept])
            found_class.append(np.full(len(kept), c))
            found_box.append(kept)
        score = np.concatenate(found_score) if found_score else np.zeros(0, F32)
        cls = np.concatenate(found_class) if found_class else np.zeros(0, np.int64)
        box = np.concatenate(found_box) if found_box else np.zeros(0, np.int64)
        if len(score) > max_detections_per_image:
            # partial_sort by score (descending), then box index; equal pairs are true ties
            key = np.lexsort((box, -score.astype(np.float64)))
            rank = np.empty(len(key), np.int64)
            same = np.r_[False, (score[key][1:] == score[key][:-1]) & (box[key][1:] ==
                                                                       box[key][:-1])]
            rank[key] = np.cumsum(~same) - 1
            pick = partial_sort_ranked(rank, max_detections_per_image)
            score, cls, box = score[pick], cls[pick], box[pick]
        n = len(score)
        out_boxes = np.zeros((max_detections_per_image, 4), F32)
        out_classes = np.zeros(max_detections_per_image, np.int32)
        out_scores = np.zeros(max_detections_per_image, F32)
        out_boxes[:n] = boxes[cls, box]
        out_classes[:n] = cls
        out_scores[:n] = score
        return out_boxes.astype(dtype), out_classes, out_scores.astype(dtype)
