"""NonMaxSuppression-1, -3, -4, -5 and -9: greedy non-maximum suppression of boxes, per class
of each batch element.

Semantics (spec, settled by OpenVINO's kernels where the text is loose):

* candidates are the boxes whose score is strictly above ``score_threshold``; they are taken
  best score first, equal scores by the smaller box index;
* hard NMS drops a candidate whose IoU with a selected box is above ``iou_threshold`` (the
  spec's ``func``; OpenVINO's CPU plugin drops it already at equality, see
  docs/compatibility.md);
* soft NMS (``soft_nms_sigma`` > 0, versions 5 and 9) multiplies the remaining scores by
  exp(-0.5 * iou^2 / sigma) after each selection and ignores ``iou_threshold`` (OpenVINO's rule
  for both versions);
* at most ``min(max_output_boxes_per_class, num_boxes)`` boxes per class;
* the output is batch by batch, class by class, each class in selection order; with
  ``sort_result_descending`` it is sorted by score (descending), then batch, class and box index.

Versions 1, 3 and 4 give a static ``selected_indices`` padded with -1 rows (their spec's shape:
``[min(num_boxes, max * num_classes), 3]`` for 1 and 3, ``[min(num_boxes, max) * num_batches *
num_classes, 3]`` for 4). Versions 5 and 9 give ``[valid, 3]`` (its dim an interval up to that
bound), the scores and ``valid_outputs``.
"""

from __future__ import annotations

import numpy as np

from irexec.ir.element_type import from_name
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.activation.params import check_one_element
from irexec.ops.domains import SmallInts
from irexec.ops.rules import check_index_type
from irexec.ops.sort import nms_common
from irexec.ops.spec import (INTEGER, REAL, SCALAR, SCALAR_OR_VECTOR, Attr, Input, Op, OpSpec,
                             Output, Rank, TensorType, TypeVar, register)
from irexec.ops.sort.nms_common import check_boxes_scores

T = TypeVar("T", REAL)
RANK3 = Rank(exact=3)

_ENCODING = Attr("box_encoding", "enum", default="corner", values=("corner", "center"),
                 doc="corner: [y1, x1, y2, x2], either diagonal; center: [x_center, y_center, "
                     "width, height]")
_SORT = Attr("sort_result_descending", "bool", default=True,
             doc="sort the selected boxes by score across batches and classes (else batch by "
                 "batch, class by class, in selection order)")
_OUT_TYPE = Attr("output_type", "element_type", default=from_name("i64"),
                 doc="element type of the index outputs: i32 or i64")


def _inputs(version: int):
    one = SCALAR if version < 5 else SCALAR_OR_VECTOR
    thr = REAL if version < 5 else TypeVar("T_THRESHOLDS", REAL)
    ins = (Input("boxes", T, RANK3, doc="[num_batches, num_boxes, 4]"),
           Input("scores", T, RANK3, doc="[num_batches, num_classes, num_boxes]"),
           Input("max_output_boxes_per_class", INTEGER, one, SmallInts(0, 0, 10), optional=True,
                 doc="at most this many boxes per class (default 0: none); not negative"),
           Input("iou_threshold", thr, one, optional=True,
                 doc="drop a box whose IoU with a selected one is above this (default 0)"),
           Input("score_threshold", thr, one, optional=True,
                 doc="consider only boxes scoring above this (default 0)"))
    if version >= 5:
        ins += (Input("soft_nms_sigma", thr, one, optional=True,
                      doc="> 0: soft NMS with this sigma (default 0: hard NMS)"),)
    return ins


def _max_boxes(ctx):
    """(lower, upper) bounds of max_output_boxes_per_class (0, 0 when absent); upper None when
    unknown. IR308 when it is known to be negative."""
    if ctx.num_inputs < 3:
        return 0, 0
    value = ctx.input_value(2)
    if value is not None:
        v = int(np.asarray(value).reshape(-1)[0])
        if v < 0:
            ctx.error("IR308", f"max_output_boxes_per_class is {v}; it must not be negative")
        return v, v
    got = ctx.input_bounds(2)
    if got is not None:
        lo, hi = (float(x.reshape(-1)[0]) for x in got)
        return max(int(lo), 0) if np.isfinite(lo) else 0, int(hi) if np.isfinite(hi) else None
    return 0, None


def _mul(a, b):
    return None if a is None or b is None else a * b


def _min(a, b):
    return b if a is None else a if b is None else min(a, b)


def _infer(version, rotated=False):
    def infer(ctx):
        out_type = ctx.attrs["output_type"] if version >= 3 else from_name("i64")
        if version >= 3:
            check_index_type(ctx, "output_type")
        if version >= 5:
            check_one_element(ctx, range(2, ctx.num_inputs))
        boxes, scores = ctx.input_shape(0), ctx.input_shape(1)
        check_boxes_scores(ctx, boxes, scores, box_size=5 if rotated else 4)
        lo_max, hi_max = _max_boxes(ctx)
        dims = [None, None, None]  # (min, max) of batches, boxes, classes
        if boxes.rank_is_static:
            dims[0], dims[1] = boxes[0], boxes[1]
        if scores.rank_is_static:
            dims[0] = scores[0] if dims[0] is None else dims[0].merge(scores[0])
            dims[2] = scores[1]
            dims[1] = scores[2] if dims[1] is None else dims[1].merge(scores[2])
        known = all(d is not None for d in dims)
        if version in (1, 3):
            # [min(num_boxes, max * num_classes), 3], static when all three are known
            if known and dims[1].is_static and dims[2].is_static and lo_max == hi_max:
                rows = Dimension.static(min(dims[1].min, lo_max * dims[2].min))
            else:
                rows = Dimension.dynamic()
            return [TensorType(out_type, PartialShape([rows, 3]))]
        if known:
            lo = _min(dims[1].min, lo_max) * dims[0].min * dims[2].min
            hi = _mul(_mul(_min(dims[1].max, hi_max), dims[0].max), dims[2].max)
        else:
            lo, hi = 0, None
        if version == 4:
            rows = Dimension(lo, hi)
            return [TensorType(out_type, PartialShape([rows, 3]))]
        rows = Dimension(0, hi)
        shape = PartialShape([rows, 3])
        return [TensorType(out_type, shape), TensorType(from_name("f32"), shape),
                TensorType(out_type, PartialShape([1]))]
    return infer


def _scalar(value, default, dtype):
    return dtype(default) if value is None else dtype(np.asarray(value).reshape(-1)[0])


def _kernel(version, rotated=False):
    def kernel(boxes, scores, max_boxes=None, iou_threshold=None, score_threshold=None,
               soft_nms_sigma=None, *, box_encoding="corner", sort_result_descending=True,
               output_type=None, clockwise=True):
        out_dtype = np.int64 if output_type is None else output_type.dtype
        B, C, N = scores.shape
        k = int(_scalar(max_boxes, 0, np.int64))
        if rotated:
            b = np.asarray(boxes, np.float32)
            data = tuple(b[..., i] for i in range(4)) + (b[..., 4] if clockwise else -b[..., 4],)
            geometry = nms_common.ROTATED
        else:
            data, geometry = nms_common.corners(boxes, box_encoding), None
        batch, cls, box, score = nms_common.select(
            data, scores, k, _scalar(iou_threshold, 0, np.float32),
            _scalar(score_threshold, 0, np.float32), _scalar(soft_nms_sigma, 0, np.float32),
            geometry)
        if sort_result_descending:
            order = np.argsort(-score, kind="stable")
            batch, cls, box, score = batch[order], cls[order], box[order], score[order]
        indices = np.stack([batch, cls, box], axis=1).astype(out_dtype)
        if version >= 5:
            scores_out = np.stack([batch.astype(np.float32), cls.astype(np.float32), score],
                                  axis=1)
            return indices, scores_out, np.array([len(box)], out_dtype)
        rows = min(N, k * C) if version < 4 else min(N, k) * B * C
        out = np.full((rows, 3), -1, out_dtype)
        out[:min(rows, len(box))] = indices[:rows]
        return out
    return kernel


def _spec(version: int, until: int) -> OpSpec:
    attrs = (_ENCODING, _SORT) + ((_OUT_TYPE,) if version >= 3 else ())
    if version >= 5:
        outputs = (Output("selected_indices", "[valid, 3]: (batch, class, box) of each selected "
                                              "box", type="@output_type"),
                   Output("selected_scores", "[valid, 3]: (batch, class, score) as f32",
                          type="f32"),
                   Output("valid_outputs", "[1]: the number of selected boxes",
                          type="@output_type"))
    else:
        bound = ("min(num_boxes, max_output_boxes_per_class * num_classes)" if version < 4
                 else "min(num_boxes, max_output_boxes_per_class) * num_batches * num_classes")
        outputs = (Output("selected_indices", f"[{bound}, 3]: (batch, class, box) of each "
                                              f"selected box, then rows of -1",
                          type="@output_type" if version >= 3 else "i64"),)
    return OpSpec(
        type="NonMaxSuppression", since=version, until=until, attrs=attrs,
        inputs=_inputs(version), outputs=outputs,
        doc="Greedy non-maximum suppression per class of each batch element: the boxes "
            "scoring above score_threshold, best first, each dropping the later ones that "
            "overlap it by more than iou_threshold (or, soft, lowering their scores).",
    )


def _op(version: int, until: int):
    class NonMaxSuppression(Op):
        spec = _spec(version, until)
        infer = staticmethod(_infer(version))
        kernel = staticmethod(_kernel(version))
    NonMaxSuppression.__name__ = NonMaxSuppression.__qualname__ = f"NonMaxSuppression{version}"
    return register(NonMaxSuppression)


NonMaxSuppression1 = _op(1, 2)
NonMaxSuppression3 = _op(3, 3)
NonMaxSuppression4 = _op(4, 4)
NonMaxSuppression5 = _op(5, 8)
NonMaxSuppression9 = _op(9, 16)


@register
class NMSRotated(Op):
    spec = OpSpec(
        type="NMSRotated", since=13, until=16,
        attrs=(_SORT, _OUT_TYPE,
               Attr("clockwise", "bool", default=True,
                    doc="a positive angle turns clockwise (false: counterclockwise)")),
        inputs=(Input("boxes", T, RANK3, doc="[num_batches, num_boxes, 5]: x_center, "
                                             "y_center, width, height, angle in radians"),
                Input("scores", T, RANK3, doc="[num_batches, num_classes, num_boxes]"),
                Input("max_output_boxes_per_class", INTEGER, SCALAR_OR_VECTOR,
                      SmallInts(0, 0, 10), doc="at most this many boxes per class; not negative"),
                Input("iou_threshold", TypeVar("T_THRESHOLDS", REAL), SCALAR_OR_VECTOR,
                      doc="drop a box whose rotated IoU with a selected one is above this"),
                Input("score_threshold", TypeVar("T_THRESHOLDS", REAL), SCALAR_OR_VECTOR,
                      doc="consider only boxes scoring above this")),
        outputs=_spec(9, 16).outputs,
        doc="Greedy non-maximum suppression of rotated boxes per class of each batch element: "
            "NonMaxSuppression-9's selection and order with the IoU of rotated rectangles.",
    )
    infer = staticmethod(_infer(9, rotated=True))
    kernel = staticmethod(_kernel(9, rotated=True))
