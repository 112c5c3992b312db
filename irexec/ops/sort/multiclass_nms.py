"""MulticlassNms-8 and -9: NMS per class of each image with an adaptive IoU threshold (nms_eta),
per-class (nms_top_k) and per-image (keep_top_k) limits, a background class, and the boxes
themselves in the output. Version 9 also takes boxes per class ([C, M, 4], scores [C, M]) with
``roisnum`` saying how many of the M belong to each image.

Semantics, settled by OpenVINO's kernels: candidates score at least ``score_threshold``; the
best ``nms_top_k`` of a class (ties: smaller index) go through greedy NMS, which drops a box
whose IoU with a selected one reaches the adaptive threshold; ``normalized=false`` adds 1 to
every width and height. Each image's boxes are then sorted by score (then class, then index),
cut to ``keep_top_k``, and ordered by ``sort_result_type`` within the image, or across images
when ``sort_result_across_batch``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.domains import Domain, _sizes
from irexec.ops.sort import nms_common
from irexec.ops.spec import (REAL, SHAPE_INDEX, Attr, Input, Op, OpSpec, Output, Rank,
                             TensorType, TypeVar, register)
from irexec.ops.sort.nms_common import check_boxes_scores, check_common, order_within_images, output_rows, sort_attrs

T = TypeVar("T", REAL)


ATTRS = sort_attrs() + (
    Attr("iou_threshold", "float", default=0.0, doc="drop boxes overlapping a selected one "
                                                    "by this IoU or more"),
    Attr("score_threshold", "float", default=0.0, doc="candidates score at least this"),
    Attr("nms_top_k", "int", default=-1, doc="at most this many candidates per class (-1: all)"),
    Attr("keep_top_k", "int", default=-1, doc="at most this many boxes per image (-1: all)"),
    Attr("background_class", "int", default=-1, doc="this class is skipped (-1: none)"),
    Attr("nms_eta", "float", default=1.0,
         doc="adaptive NMS: while the threshold is above 0.5, multiply it by this after each "
             "selection (1: fixed threshold)"),
    Attr("normalized", "bool", default=True,
         doc="false: coordinates are pixels, every width and height counts one more"),
)


@dataclass(frozen=True)
class RoisNum(Domain):
    """Box counts per image that add up to the scores' dim 1 (MulticlassNms-9's roisnum)."""

    of: int = 1

    def check(self, values, data_shape, attrs) -> None:
        v = np.asarray(values).astype(np.int64).reshape(-1)
        total = data_shape[1] if len(data_shape) > 1 else None
        if (v < 0).any():
            raise OpError(f"roisnum holds {int(v.min())}; box counts are not negative",
                          code="IR308")
        if total is not None and v.sum() > total:
            raise OpError(f"roisnum adds up to {int(v.sum())} boxes but there are {total}",
                          code="IR308")

    def generate(self, rng, data_shape, attrs, declared, unsigned):
        n = int(np.prod(_sizes(declared)))
        total = data_shape[1] if len(data_shape) > 1 else 0
        cuts = np.sort(rng.integers(0, total + 1, size=max(n - 1, 0)))
        return np.diff(np.concatenate([[0], cuts, [total]])).astype(np.int64)


def _infer(version):
    def infer(ctx):
        check_common(ctx)
        boxes, scores = ctx.input_shape(0), ctx.input_shape(1)
        has_rois = ctx.num_inputs == 3
        out_t, idx_t = ctx.input_type(0).element_type, ctx.attrs["output_type"]
        if has_rois:
            if scores.rank_is_static and len(scores) != 2:
                ctx.error("IR305", f"scores have shape {scores}; with roisnum they are "
                                   f"[num_classes, num_boxes] (rank 2)")
            rois = ctx.input_shape(2)
            if rois.rank_is_static and len(rois) != 1:
                ctx.error("IR305", f"roisnum has shape {rois}; it is 1-D")
            if boxes.rank_is_static and scores.rank_is_static:
                if not boxes[0].compatible(scores[0]):
                    ctx.error("IR307", f"boxes {boxes} and scores {scores} disagree on the "
                                       f"class count (dim 0 of both)")
                if not boxes[1].compatible(scores[1]):
                    ctx.error("IR307", f"boxes {boxes} and scores {scores} disagree on the "
                                       f"box count (dim 1 of both)")
            value = ctx.input_value(2)
            if value is not None and scores.rank_is_static and scores[1].is_static:
                try:
                    RoisNum().check(value, (0, scores[1].min), ctx.attrs)
                except OpError as e:
                    ctx.error(e.code, str(e))
            images = rois[0] if rois.rank_is_static else Dimension.dynamic()
            n = boxes[1] if boxes.rank_is_static else Dimension.dynamic()
            c = boxes[0] if boxes.rank_is_static else Dimension.dynamic()
        else:
            if scores.rank_is_static and len(scores) != 3:
                ctx.error("IR305", f"scores have shape {scores}; without roisnum they are "
                                   f"[num_batches, num_classes, num_boxes] (rank 3)")
            check_boxes_scores(ctx, boxes, scores)
            images = boxes[0] if boxes.rank_is_static else (
                scores[0] if scores.rank_is_static else Dimension.dynamic())
            n = boxes[1] if boxes.rank_is_static else Dimension.dynamic()
            c = scores[1] if scores.rank_is_static else Dimension.dynamic()
        rows = output_rows(ctx, n, c, images)
        return [TensorType(out_t, PartialShape([rows, 6])),
                TensorType(idx_t, PartialShape([rows, 1])),
                TensorType(idx_t, PartialShape([images]))]
    return infer


def multiclass_nms(boxes, scores, roisnum=None, *, sort_result_type, sort_result_across_batch,
                   output_type, iou_threshold, score_threshold, nms_top_k, keep_top_k,
                   background_class, nms_eta, normalized):
    coords32 = np.asarray(boxes, np.float32)
    s32 = np.asarray(scores, np.float32)
    if roisnum is None:
        B, C, N = s32.shape
        classes = np.array([c for c in range(C) if c != background_class], np.intp)
        row_batch = np.repeat(np.arange(B), classes.size)
        row_class = np.tile(classes, B)
        row_scores = s32[row_batch, row_class]  # [P, N]
        row_coords = tuple(coords32[..., i][row_batch] for i in range(4))
        keep = row_scores >= np.float32(score_threshold)
        row_start = np.zeros(row_batch.size, np.intp)
    else:
        C, total = s32.shape
        counts = np.asarray(roisnum).astype(np.int64).reshape(-1)
        B = counts.size
        heads = np.cumsum(counts) - counts
        width = int(counts.max()) if B else 0
        classes = np.array([c for c in range(C) if c != background_class], np.intp)
        row_batch = np.repeat(np.arange(B), classes.size)
        row_class = np.tile(classes, B)
        row_start = heads[row_batch].astype(np.intp)
        j = np.arange(width)
        inside = j[None, :] < counts[row_batch][:, None]
        col = np.where(inside, row_start[:, None] + j[None, :], 0)
        row_scores = s32[row_class[:, None], col]
        row_coords = tuple(coords32[..., i][row_class[:, None], col] for i in range(4))
        keep = inside & (row_scores >= np.float32(score_threshold))
        N = total
    rows, cols, sel_score = nms_common.select_adaptive(
        row_coords, row_scores, keep, nms_top_k, iou_threshold, nms_eta,
        0.0 if normalized else 1.0, score_threshold if nms_eta < 1 else None)
    batch, cls = row_batch[rows], row_class[rows]
    order, counts = order_within_images(batch, cls, cols, sel_score, keep_top_k,
                                        sort_result_type, sort_result_across_batch)
    per_image = np.zeros(B, np.int64)
    per_image[:counts.size] = counts
    batch, cls, col, score = batch[order], cls[order], cols[order], sel_score[order]
    r = rows[order]
    if roisnum is None:
        index = batch * N + col
        chosen = coords32[batch, col]
    else:
        index = (row_start[r] + col) * C + cls
        chosen = coords32[cls, row_start[r] + col]
    out = np.concatenate([cls[:, None].astype(np.float32), score[:, None], chosen], axis=1)
    idx_dtype = output_type.dtype
    return (out.astype(boxes.dtype), index.astype(idx_dtype).reshape(-1, 1),
            per_image.astype(idx_dtype))


def _spec(version, until):
    inputs = (Input("boxes", T, Rank(exact=3), doc="[num_batches, num_boxes, 4] as [xmin, ymin, "
                                                   "xmax, ymax]; with roisnum [num_classes, "
                                                   "num_boxes, 4]"),
              Input("scores", T, Rank(min=2, max=3),
                    doc="[num_batches, num_classes, num_boxes]; with roisnum [num_classes, "
                        "num_boxes]"))
    if version >= 9:
        inputs += (Input("roisnum", SHAPE_INDEX, Rank(exact=1), RoisNum(), optional=True,
                         doc="[num_batches]: how many of the boxes belong to each image, in "
                             "order (they add up to at most num_boxes)"),)
    return OpSpec(
        type="MulticlassNms", since=version, until=until, attrs=ATTRS, inputs=inputs,
        outputs=(Output("selected_outputs", "[selected, 6]: class, score, xmin, ymin, xmax, "
                                            "ymax", type=T),
                 Output("selected_indices", "[selected, 1]: index of each box in the flattened "
                                            "boxes", type="@output_type"),
                 Output("selected_num", "[num_batches]: boxes selected per image",
                        type="@output_type")),
        doc="Multi-class NMS: greedy NMS per class of each image with an adaptive threshold, "
            "per-class and per-image limits and a background class; the selected boxes come "
            "with their class and score.",
    )


@register
class MulticlassNms8(Op):
    spec = _spec(8, 8)
    infer = staticmethod(_infer(8))
    kernel = staticmethod(multiclass_nms)


@register
class MulticlassNms9(Op):
    spec = _spec(9, 16)
    infer = staticmethod(_infer(9))
    kernel = staticmethod(multiclass_nms)
