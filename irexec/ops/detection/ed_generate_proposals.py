"""ExperimentalDetectronGenerateProposalsSingleImage-6: Detectron's region proposals for one
image.

Anchors ``[H*W*A, 4]`` (cell after cell, A anchors each) are moved by the deltas ``[4*A, H, W]``
(size deltas capped at log(1000/16), Caffe's +1 in widths), clipped to the image, and a box
narrower or lower than ``min_size`` gets score 0; the ``pre_nms_count`` best (OpenVINO's order
for equal scores, see proposal_common) go through greedy NMS (areas without the +1), and the
first ``post_nms_count`` kept fill the outputs, zeros after them. Computed in f32.
"""

import numpy as np

from irexec.errors import OpError
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


def _infer(ctx):
    attrs = ctx.attrs
    try:
        for name in ("post_nms_count", "pre_nms_count"):
            if attrs[name] <= 0:
                raise OpError(f"{name} is {attrs[name]}; it must be positive", code="IR302")
        info, anchors, deltas, scores = (ctx.input_shape(i) for i in range(4))
        if info.rank_is_static and info[0].is_static and info[0].min != 3:
            raise OpError(f"im_info has {info[0].min} values; it takes 3 (height, width, scale)",
                          code="IR307")
        if anchors.rank_is_static and anchors[1].is_static and anchors[1].min != 4:
            raise OpError(f"anchors' last dim is {anchors[1]}; it must be 4", code="IR307")
        if deltas.rank_is_static and scores.rank_is_static:
            for axis in (1, 2):
                merge_dim(deltas[axis], scores[axis], f"dim {axis} of deltas and scores")
            a, d = static_or_none(scores[0]), static_or_none(deltas[0])
            if a is not None and d is not None and d != 4 * a:
                raise OpError(f"deltas has {d} channels; {a} anchors need {4 * a}", code="IR307")
            dims = [static_or_none(x) for x in (scores[0], scores[1], scores[2])]
            if anchors.rank_is_static and None not in dims and anchors[0].is_static \
                    and anchors[0].min != dims[0] * dims[1] * dims[2]:
                raise OpError(f"anchors has {anchors[0].min} rows; A*H*W = "
                              f"{dims[0] * dims[1] * dims[2]} are needed", code="IR307")
    except OpError as e:
        ctx.error(e.code, str(e))
    post = Dimension.static(attrs["post_nms_count"])
    et = ctx.type_var("T")
    return [TensorType(et, PartialShape([post, Dimension.static(4)])),
            TensorType(et, PartialShape([post]))]


@register
class ExperimentalDetectronGenerateProposalsSingleImage(Op):
    spec = OpSpec(
        type="ExperimentalDetectronGenerateProposalsSingleImage",
        since=6,
        until=16,
        attrs=(
            Attr("min_size", "float", doc="boxes narrower or lower than this get score 0"),
            Attr("nms_threshold", "float", doc="IoU above which a box is suppressed"),
            Attr("post_nms_count", "int", doc="the output rows: how many boxes NMS keeps, > 0"),
            Attr("pre_nms_count", "int", doc="how many best-scored boxes enter NMS, > 0"),
        ),
        inputs=(
            Input("im_info", T, Rank(exact=1), doc="[3]: image height, width, scale"),
            Input("anchors", T, Rank(exact=2), doc="[H*W*A, 4]: x0, y0, x1, y1"),
            Input("deltas", T, Rank(exact=3), doc="[4*A, H, W]"),
            Input("scores", T, Rank(exact=3), doc="[A, H, W]"),
        ),
        outputs=(
            Output("rois", "[post_nms_count, 4]: the kept boxes, then rows of 0", type=T),
            Output("roi_scores", "[post_nms_count]: their scores, then 0", type=T),
        ),
        doc="Detectron's proposals for one image: anchors moved by deltas, clipped, scored 0 "
            "under min_size, the best pre_nms_count thinned by NMS to post_nms_count.",
    )
    infer = staticmethod(_infer)

    @staticmethod
    def kernel(im_info, anchors, deltas, scores, *, min_size, nms_threshold, post_nms_count,
               pre_nms_count):
        dtype = deltas.dtype
        info = im_info.astype(F32).reshape(-1)
        anchors, deltas, scores = (x.astype(F32) for x in (anchors, deltas, scores))
        boxes, score, bw, bh = refine_anchors(anchors, deltas, scores, info[0], info[1], F32(1))
        score = ((F32(min_size) <= bw) & (F32(min_size) <= bh)).astype(F32) * score
        order = partial_sort_order(score, pre_nms_count)
        top = boxes[order]
        kept = order[greedy_nms(len(order), nms_overlaps(top, nms_threshold, F32(0)),
                                post_nms_count)]
        rois = np.zeros((post_nms_count, 4), F32)
        out_scores = np.zeros(post_nms_count, F32)
        rois[:len(kept)] = boxes[kept]
        out_scores[:len(kept)] = score[kept]
        return rois.astype(dtype), out_scores.astype(dtype)
