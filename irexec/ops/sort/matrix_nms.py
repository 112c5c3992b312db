"""MatrixNms-8: Matrix NMS (SOLOv2). Nothing is suppressed outright: each candidate's score is
decayed by its IoU with every better-scoring candidate of its class, in one matrix, and the boxes
whose decayed score stays above ``post_threshold`` are kept.

Semantics, settled by OpenVINO's kernels: candidates score above ``score_threshold``; the best
``nms_top_k`` of a class (ties: smaller index) form the matrix; candidate i's decay is the
minimum over better candidates j of ``(1 - iou_ij) / (1 - max_iou_j)`` (linear, in double
precision) or ``exp((max_iou_j^2 - iou_ij^2) * gaussian_sigma)`` (gaussian), where max_iou_j is
j's largest IoU with a candidate better than j. Each image's boxes are sorted by decayed score
(then class, then index) and cut to ``keep_top_k``; ``sort_result_across_batch`` then sorts all
images by score or class id.
"""

from __future__ import annotations

import numpy as np

from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.sort import nms_common
from irexec.ops.spec import (REAL, Attr, Input, Op, OpSpec, Output, Rank, TensorType, TypeVar,
                             register)
from irexec.ops.sort.nms_common import check_boxes_scores, check_common, order_within_images, output_rows, sort_attrs

T = TypeVar("T", REAL)
F32 = np.float32
_BLOCK = 256  # candidates per block of the IoU matrix


def _iou(a, b, norm):
    """MatrixNms's IoU of [x1, y1, x2, y2] boxes (broadcasting): 0 for boxes that do not touch,
    0 area for inverted boxes, ``norm`` added to sides."""
    a0, a1, a2, a3 = a
    b0, b1, b2, b3 = b
    apart = (b0 > a2) | (b2 < a0) | (b1 > a3) | (b3 < a1)
    inter = (np.minimum(a2, b2) - np.maximum(a0, b0) + norm) * \
        (np.minimum(a3, b3) - np.maximum(a1, b1) + norm)

    def box_area(x0, x1, x2, x3):
        return np.where((x2 < x0) | (x3 < x1), F32(0), (x2 - x0 + norm) * (x3 - x1 + norm))

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = inter / (box_area(a0, a1, a2, a3) + box_area(b0, b1, b2, b3) - inter)
    return np.where(apart, F32(0), out)


def _decay_class(c, scores, gaussian: bool, sigma: float, norm):
    """Decayed scores of one class's sorted candidates (corner arrays ``c`` of length K)."""
    K = scores.size
    iou_max = np.zeros(K, F32)
    starts = range(0, K, _BLOCK)
    for s in starts:  # pass 1: each candidate's largest IoU with a better one
        e = min(K, s + _BLOCK)
        o = _iou(tuple(x[s:e, None] for x in c), tuple(x[None, :e] for x in c), norm)
        below = np.arange(e)[None, :] < np.arange(s, e)[:, None]
        iou_max[s:e] = np.fmax(np.where(below, o, F32(0)).max(axis=1, initial=F32(0)), F32(0))
    decay = np.ones(K, F32)
    for s in starts:  # pass 2: the smallest decay over the better candidates
        e = min(K, s + _BLOCK)
        o = _iou(tuple(x[s:e, None] for x in c), tuple(x[None, :e] for x in c), norm)
        m = iou_max[None, :e]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if gaussian:
                d = np.exp((m * m - o * o) * F32(sigma))
            else:
                d = ((1.0 - o.astype(np.float64)) /
                     (1.0 - m.astype(np.float64) + float(F32(1e-10)))).astype(F32)
        below = np.arange(e)[None, :] < np.arange(s, e)[:, None]
        d = np.where(below & ~np.isnan(d), d, F32(1))
        decay[s:e] = np.minimum(d.min(axis=1, initial=F32(1)), F32(1))
    return decay * scores


def matrix_nms(boxes, scores, *, sort_result_type, sort_result_across_batch, output_type,
               score_threshold, nms_top_k, keep_top_k, background_class, decay_function,
               gaussian_sigma, post_threshold, normalized):
    b32 = np.asarray(boxes, F32)
    s32 = np.asarray(scores, F32)
    B, C, N = s32.shape
    norm = F32(0 if normalized else 1)
    keep = s32 > F32(score_threshold)
    width = N if nms_top_k < 0 else min(N, nms_top_k)
    idx, present = nms_common.best_sorted(nms_common.order_keys(s32, keep), 0, width)
    batch, cls, box, score = [], [], [], []
    for b in range(B):
        for c in range(C):
            if c == background_class:
                continue
            n = int(present[b, c].sum())
            if n == 0:
                continue
            order = idx[b, c, :n]
            corners = tuple(b32[b, order, i] for i in range(4))
            ds = _decay_class(corners, s32[b, c, order], decay_function == "gaussian",
                              gaussian_sigma, norm)
            kept = ds > F32(post_threshold)
            box.append(order[kept])
            score.append(ds[kept])
            batch.append(np.full(int(kept.sum()), b))
            cls.append(np.full(int(kept.sum()), c))
    cat = (lambda parts, t: np.concatenate(parts).astype(t) if parts else np.zeros(0, t))
    batch, cls, box = cat(batch, np.int64), cat(cls, np.int64), cat(box, np.int64)
    score = cat(score, F32)
    # within an image the order is by score whatever sort_result_type says (OpenVINO's)
    order, counts = order_within_images(batch, cls, box, score, keep_top_k,
                                        sort_result_type if sort_result_across_batch else "score",
                                        sort_result_across_batch)
    per_image = np.zeros(B, np.int64)
    per_image[:counts.size] = counts
    batch, cls, box, score = batch[order], cls[order], box[order], score[order]
    out = np.concatenate([cls[:, None].astype(F32), score[:, None], b32[batch, box]], axis=1)
    idx_dtype = output_type.dtype
    return (out.astype(boxes.dtype), (batch * N + box).astype(idx_dtype).reshape(-1, 1),
            per_image.astype(idx_dtype))


def _infer(ctx):
    check_common(ctx)
    boxes, scores = ctx.input_shape(0), ctx.input_shape(1)
    check_boxes_scores(ctx, boxes, scores)
    images = boxes[0] if boxes.rank_is_static else (
        scores[0] if scores.rank_is_static else Dimension.dynamic())
    n = boxes[1] if boxes.rank_is_static else Dimension.dynamic()
    c = scores[1] if scores.rank_is_static else Dimension.dynamic()
    rows = output_rows(ctx, n, c, images)
    out_t, idx_t = ctx.input_type(0).element_type, ctx.attrs["output_type"]
    return [TensorType(out_t, PartialShape([rows, 6])), TensorType(idx_t, PartialShape([rows, 1])),
            TensorType(idx_t, PartialShape([images]))]


@register
class MatrixNms(Op):
    spec = OpSpec(
        type="MatrixNms", since=8, until=16,
        attrs=sort_attrs() + (
            Attr("score_threshold", "float", default=0.0, doc="candidates score above this"),
            Attr("nms_top_k", "int", default=-1, doc="at most this many candidates per class "
                                                     "(-1: all)"),
            Attr("keep_top_k", "int", default=-1, doc="at most this many boxes per image "
                                                      "(-1: all)"),
            Attr("background_class", "int", default=-1, doc="this class is skipped (-1: none)"),
            Attr("decay_function", "enum", default="linear", values=("gaussian", "linear"),
                 doc="how IoU decays a score"),
            Attr("gaussian_sigma", "float", default=2.0, doc="sigma of the gaussian decay"),
            Attr("post_threshold", "float", default=0.0,
                 doc="keep boxes whose decayed score is above this"),
            Attr("normalized", "bool", default=True,
                 doc="false: coordinates are pixels, every width and height counts one more"),
        ),
        inputs=(Input("boxes", T, Rank(exact=3), doc="[num_batches, num_boxes, 4] as [xmin, "
                                                     "ymin, xmax, ymax]"),
                Input("scores", T, Rank(exact=3), doc="[num_batches, num_classes, num_boxes]")),
        outputs=(Output("selected_outputs", "[selected, 6]: class, decayed score, xmin, ymin, "
                                            "xmax, ymax", type=T),
                 Output("selected_indices", "[selected, 1]: batch * num_boxes + box",
                        type="@output_type"),
                 Output("selected_num", "[num_batches]: boxes selected per image",
                        type="@output_type")),
        doc="Matrix NMS: every candidate's score decays by its IoU with the better candidates "
            "of its class (linear or gaussian); boxes whose decayed score stays above "
            "post_threshold are kept.",
    )
    infer = staticmethod(_infer)
    kernel = staticmethod(matrix_nms)
