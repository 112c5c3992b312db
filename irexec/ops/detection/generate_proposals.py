"""GenerateProposals-9: region proposals for a batch of images, from anchors given as a tensor.

Per image: each anchor ``[H, W, A, 4]`` is moved by its deltas (``[N, 4*A, H, W]``; the size
deltas capped at log(1000/16)), clipped to the image, and scored (``[N, A, H, W]``); the
``pre_nms_count`` best (OpenVINO's order for equal scores, see proposal_common) go through greedy
NMS, where a box narrower or lower than ``min_size`` times the image's scale never counts, and at
most ``post_nms_count`` survive. The images' boxes are concatenated; ``rois_num`` says how many
each gave. ``normalized=false`` counts coordinates with Caffe's +1. Computed in f32.
"""

import numpy as np

from irexec.errors import OpError
from irexec.ir.element_type import from_name
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.detection.proposal_common import (
    F32,
    greedy_nms,
    merge_dim,
    nms_overlaps,
    partial_sort_order,
    refine_anchors,
    static_or_none,
)
from irexec.ops.rules import check_index_type
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


def propose(boxes, score, alive, pre, post, thresh, offset):
    """The best ``pre`` boxes by score, thinned by NMS to at most ``post``: their rows."""
    order = partial_sort_order(score, pre)
    top = boxes[order]
    kept = greedy_nms(len(order), nms_overlaps(top, thresh, F32(offset)), post,
                      dead=~alive[order])
    return order[kept]


def _infer(ctx):
    check_index_type(ctx, "roi_num_type")
    attrs = ctx.attrs
    try:
        if attrs["post_nms_count"] <= 0:
            raise OpError(f"post_nms_count is {attrs['post_nms_count']}; it must be positive",
                          code="IR302")
        if attrs["pre_nms_count"] <= 0:
            raise OpError(f"pre_nms_count is {attrs['pre_nms_count']}; it must be positive",
                          code="IR302")
        if attrs["nms_eta"] != 1.0:
            raise OpError(f"nms_eta is {attrs['nms_eta']}; only 1.0 (plain NMS) is defined",
                          code="IR302")
        info, anchors, deltas, scores = (ctx.input_shape(i) for i in range(4))
        batch = Dimension.dynamic()
        if info.rank_is_static:
            batch = info[0]
            if info[1].is_static and info[1].min not in (3, 4):
                raise OpError(f"im_info has {info[1].min} values per image; it takes 3 or 4",
                              code="IR307")
        for name, shape in (("deltas", deltas), ("scores", scores)):
            if shape.rank_is_static:
                batch = merge_dim(batch, shape[0], f"the batch of im_info and {name}")
        if deltas.rank_is_static and scores.rank_is_static:
            for axis in (2, 3):
                merge_dim(deltas[axis], scores[axis], f"dim {axis} of deltas and scores")
            a, d = static_or_none(scores[1]), static_or_none(deltas[1])
            if a is not None and d is not None and d != 4 * a:
                raise OpError(f"deltas has {d} channels; {a} anchors need {4 * a}", code="IR307")
        if anchors.rank_is_static:
            if anchors[3].is_static and anchors[3].min != 4:
                raise OpError(f"anchors' last dim is {anchors[3]}; it must be 4", code="IR307")
            if scores.rank_is_static:
                for axis, what in ((0, 2), (1, 3), (2, 1)):
                    merge_dim(anchors[axis], scores[what],
                              f"dim {axis} of anchors and dim {what} of scores")
    except OpError as e:
        ctx.error(e.code, str(e))
    most = None if batch.max is None else batch.max * attrs["post_nms_count"]
    rows = Dimension(0, most)
    et = ctx.type_var("T")
    return [TensorType(et, PartialShape([rows, Dimension.static(4)])),
            TensorType(et, PartialShape([rows])),
            TensorType(attrs["roi_num_type"], PartialShape([batch]))]


@register
class GenerateProposals(Op):
    spec = OpSpec(
        type="GenerateProposals",
        since=9,
        until=16,
        attrs=(
            Attr("min_size", "float", doc="boxes narrower or lower than this (times the image's "
                                          "scale) are dropped before NMS"),
            Attr("nms_threshold", "float", doc="IoU above which a box is suppressed"),
            Attr("pre_nms_count", "int", doc="how many best-scored boxes enter NMS, > 0"),
            Attr("post_nms_count", "int", doc="how many boxes NMS keeps per image, > 0"),
            Attr("normalized", "bool", default=True,
                 doc="true: coordinates are normalized (no +1 in widths and areas)"),
            Attr("nms_eta", "float", default=1.0, doc="must be 1.0 (adaptive NMS is not defined)"),
            Attr("roi_num_type", "element_type", default=from_name("i64"),
                 doc="element type of rois_num: i32 or i64"),
        ),
        inputs=(
            Input("im_info", T, Rank(exact=2), doc="[N, 3 or 4]: height, width, scale (or "
                                                    "scale_h, scale_w) of each image"),
            Input("anchors", T, Rank(exact=4), doc="[H, W, A, 4]: x0, y0, x1, y1 per anchor"),
            Input("deltas", T, Rank(exact=4), doc="[N, 4*A, H, W]"),
            Input("scores", T, Rank(exact=4), doc="[N, A, H, W]"),
        ),
        outputs=(
            Output("rois", "[R, 4]: the kept boxes of every image, image after image", type=T),
            Output("roi_scores", "[R]: their scores", type=T),
            Output("rois_num", "[N]: how many rows each image gave", type="@roi_num_type"),
        ),
        doc="Region proposals for a batch of images: anchors moved by deltas, clipped, filtered "
            "by size, the best pre_nms_count thinned by NMS to post_nms_count per image.",
    )
    infer = staticmethod(_infer)

    @staticmethod
    def kernel(im_info, anchors, deltas, scores, *, min_size, nms_threshold, pre_nms_count,
               post_nms_count, normalized, nms_eta, roi_num_type):
        dtype = deltas.dtype
        info = im_info.astype(F32)
        anchors, deltas, scores = (x.astype(F32) for x in (anchors, deltas, scores))
        offset = F32(0.0 if normalized else 1.0)
        all_rois, all_scores, counts = [np.zeros((0, 4), F32)], [np.zeros(0, F32)], []
        for n in range(info.shape[0]):
            img_h, img_w = info[n, 0], info[n, 1]
            scale_h = info[n, 2] if info.shape[1] >= 3 else F32(1)
            scale_w = info[n, 3] if info.shape[1] >= 4 else scale_h
            boxes, score, bw, bh = refine_anchors(anchors, deltas[n], scores[n], img_h, img_w,
                                                  offset)
            alive = (F32(min_size) * scale_w <= bw) & (F32(min_size) * scale_h <= bh)
            rows = propose(boxes, score, alive, pre_nms_count, post_nms_count, nms_threshold,
                           offset)
            all_rois.append(boxes[rows])
            all_scores.append(score[rows])
            counts.append(len(rows))
        return (np.concatenate(all_rois).reshape(-1, 4).astype(dtype),
                np.concatenate(all_scores).reshape(-1).astype(dtype),
                np.array(counts, roi_num_type.dtype))
