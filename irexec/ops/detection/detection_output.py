"""DetectionOutput-1 and DetectionOutput-8: SSD's final detections from box predictions, class
confidences and prior boxes.

Per image: the priors (divided by ``input_width``/``input_height`` unless ``normalized``) are
moved by the location predictions (``code_type`` corner or center_size; times the
priors' variances unless ``variance_encoded_in_target``), optionally clipped to [0, 1]. Caffe
style: for each class but ``background_label_id``, the boxes scoring above
``confidence_threshold`` go by score (equal scores by prior index), the first ``top_k`` through
greedy NMS (IoU above ``nms_threshold`` suppresses). MXNet style (``decrease_label_id``): each
prior keeps only its best class, then the same. When more than ``keep_top_k[0]`` detections
remain, the best by score (then prior index) are kept. Rows ``[image, label, score, xmin, ymin,
xmax, ymax]`` come out image by image, class by class (ascending), best first within a class;
unused rows are 0 and the first of them starts with -1. The 5-input form (ArmConfidence,
ArmLocation) first refines the priors by the ARM locations and treats a prior whose ARM
objectness is under ``objectness_score`` as background. Version 8 reads the class count from the
confidences' shape. Computed in f32.
"""

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.detection.proposal_common import (
    F32,
    greedy_nms,
    merge_dim,
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
# Caffe's third coding, caffe.PriorBoxParameter.CORNER_SIZE, is neither in the specification
# nor accepted by OpenVINO (its validation refuses the layer): IR302 here too.
CODE_TYPES = ("caffe.PriorBoxParameter.CORNER", "caffe.PriorBoxParameter.CENTER_SIZE")

COMMON_ATTRS = (
    Attr("background_label_id", "int", default=0, doc="the background class (-1: none)"),
    Attr("top_k", "int", default=-1, doc="most boxes per class entering NMS (-1: all)"),
    Attr("variance_encoded_in_target", "bool", default=False,
         doc="true: the predictions already hold the variances (priors have no second row)"),
    Attr("keep_top_k", "int_list", doc="most detections per image (first value; -1: all)"),
    Attr("code_type", "string", default=CODE_TYPES[0],
         doc="box coding: caffe.PriorBoxParameter.CORNER or caffe.PriorBoxParameter.CENTER_SIZE"),
    Attr("share_location", "bool", default=True, doc="one box prediction for all classes"),
    Attr("nms_threshold", "float", doc="IoU above which a box is suppressed"),
    Attr("confidence_threshold", "float", default=0.0, doc="boxes must score above this"),
    Attr("clip_after_nms", "bool", default=False, doc="clip output boxes to [0, 1]"),
    Attr("clip_before_nms", "bool", default=False, doc="clip decoded boxes to [0, 1]"),
    Attr("decrease_label_id", "bool", default=False,
         doc="MXNet style: one class per prior, labels shifted down by one"),
    Attr("normalized", "bool", default=False,
         doc="priors are in [0, 1] (else in pixels: divided by input_width/height, and each "
             "prior has 5 values, the first ignored)"),
    Attr("input_height", "uint", default=1, doc="image height for priors in pixels"),
    Attr("input_width", "uint", default=1, doc="image width for priors in pixels"),
    Attr("objectness_score", "float", default=0.0,
         doc="5-input form: priors whose ARM objectness is below this are background"),
)

INPUTS = (
    Input("box_logits", T, Rank(exact=2), doc="[N, num_prior_boxes * num_loc_classes * 4]"),
    Input("class_preds", T, Rank(exact=2), doc="[N, num_prior_boxes * num_classes]"),
    Input("proposals", T, Rank(exact=3), doc="[1 or N, 1 or 2, num_prior_boxes * prior_size]: "
                                             "priors, then their variances"),
    Input("aux_class_preds", T, Rank(exact=2), optional=True,
          doc="[N, num_prior_boxes * 2]: ARM confidences (background, object)"),
    Input("aux_box_preds", T, Rank(exact=2), optional=True,
          doc="[N, num_prior_boxes * 4]: ARM box predictions"),
)


def _dim(d: Dimension) -> int | None:
    return static_or_none(d)


def _infer(ctx):
    attrs = ctx.attrs
    version8 = "num_classes" not in attrs
    try:
        if attrs["code_type"] not in CODE_TYPES:
            raise OpError(f'code_type is "{attrs["code_type"]}"; it must be one of '
                          f'{", ".join(CODE_TYPES)}', code="IR302")
        if len(attrs["keep_top_k"]) == 0:
            raise OpError("keep_top_k is empty; it needs one value", code="IR302")
        if ctx.num_inputs == 4:
            raise OpError("DetectionOutput takes 3 inputs, or 5 with both ARM inputs; it has 4",
                          code="IR303")
        if not attrs["normalized"] and (attrs["input_height"] == 0 or attrs["input_width"] == 0):
            raise OpError("input_height and input_width must be positive when normalized is "
                          "false", code="IR302")
        loc, conf, priors = (ctx.input_shape(i) for i in range(3))
        batch = loc[0] if loc.rank_is_static else Dimension.dynamic()
        if conf.rank_is_static:
            batch = merge_dim(batch, conf[0], "the batch of box_logits and class_preds")
        prior_size = 4 if attrs["normalized"] else 5
        num_priors = None
        if priors.rank_is_static:
            rows = 1 if attrs["variance_encoded_in_target"] else 2
            if priors[1].is_static and priors[1].min != rows:
                raise OpError(f"proposals' second dim is {priors[1]}; it must be {rows} when "
                              f"variance_encoded_in_target is "
                              f"{str(attrs['variance_encoded_in_target']).lower()}",
                              code="IR307")
            last = _dim(priors[2])
            if last is not None:
                if last % prior_size:
                    raise OpError(f"proposals' last dim {last} is not a multiple of the prior "
                                  f"size {prior_size}", code="IR307")
                num_priors = last // prior_size
        classes = None if version8 else attrs["num_classes"]
        if version8 and num_priors and conf.rank_is_static and _dim(conf[1]) is not None:
            if _dim(conf[1]) % num_priors:
                raise OpError(f"class_preds has {conf[1]} columns, not a multiple of the "
                              f"{num_priors} priors", code="IR307")
            classes = _dim(conf[1]) // num_priors
        if num_priors is not None and classes is not None:
            if conf.rank_is_static and _dim(conf[1]) not in (None, num_priors * classes):
                raise OpError(f"class_preds has {conf[1]} columns; {num_priors} priors x "
                              f"{classes} classes need {num_priors * classes}", code="IR307")
            loc_classes = 1 if attrs["share_location"] else classes
            if loc.rank_is_static and _dim(loc[1]) not in (None, num_priors * loc_classes * 4):
                raise OpError(f"box_logits has {loc[1]} columns; {num_priors} priors need "
                              f"{num_priors * loc_classes * 4}", code="IR307")
        if ctx.num_inputs == 5:
            for i, per in ((3, 2), (4, 4)):
                shape = ctx.input_shape(i)
                if shape.rank_is_static:
                    batch = merge_dim(batch, shape[0], f"the batch of input {i} and box_logits")
                    if num_priors is not None and _dim(shape[1]) not in (None, num_priors * per):
                        raise OpError(f"input {i} has {shape[1]} columns; {num_priors} priors "
                                      f"need {num_priors * per}", code="IR307")
    except OpError as e:
        ctx.error(e.code, str(e))
    keep = attrs["keep_top_k"][0]
    if keep > 0:
        per_image = keep
    elif attrs["top_k"] > 0 and classes is not None:
        per_image = attrs["top_k"] * classes
    elif num_priors is not None and classes is not None:
        per_image = num_priors * classes
    else:
        per_image = None
    if per_image is None:
        rows = Dimension.dynamic()
    else:
        rows = Dimension(batch.min * per_image,
                         None if batch.max is None else batch.max * per_image)
    return [TensorType(ctx.type_var("T"), PartialShape([1, 1, rows, Dimension.static(7)]))]


def decode(priors, variances, loc, attrs):
    """Boxes [..., 4] from priors [P, 4] (pixel priors divided by the input size), variances
    [P, 4] (ones when encoded in the target) and predictions [..., P, 4], OpenVINO's f32 steps."""
    p = priors
    if not attrs["normalized"]:
        p = p / np.array([attrs["input_width"], attrs["input_height"]] * 2, F32)
    xmin, ymin, xmax, ymax = (p[..., i] for i in range(4))
    v = variances
    code = attrs["code_type"]
    if code == CODE_TYPES[0]:
        out = [xmin + v[..., 0] * loc[..., 0], ymin + v[..., 1] * loc[..., 1],
               xmax + v[..., 2] * loc[..., 2], ymax + v[..., 3] * loc[..., 3]]
    else:  # center_size
        width = xmax - xmin
        height = ymax - ymin
        cx = (xmin + xmax) / F32(2)
        cy = (ymin + ymax) / F32(2)
        dcx = v[..., 0] * loc[..., 0] * width + cx
        dcy = v[..., 1] * loc[..., 1] * height + cy
        dw = np.exp(v[..., 2] * loc[..., 2]) * width
        dh = np.exp(v[..., 3] * loc[..., 3]) * height
        out = [dcx - dw / F32(2), dcy - dh / F32(2), dcx + dw / F32(2), dcy + dh / F32(2)]
    boxes = np.stack(np.broadcast_arrays(*out), -1).astype(F32)
    if attrs["clip_before_nms"]:
        boxes = np.clip(boxes, F32(0), F32(1))
    return boxes


def jaccard_overlaps(boxes, thresh):
    """DetectionOutput's IoU test (no +1; a box with max < min has area 0) above thresh."""
    x0, y0, x1, y1 = (boxes[:, i] for i in range(4))
    size = np.where((x1 < x0) | (y1 < y0), F32(0), (x1 - x0) * (y1 - y0))
    thresh = F32(thresh)

    def overlaps(i, rest):
        c0, d0, c1, d1 = x0[rest], y0[rest], x1[rest], y1[rest]
        apart = (x0[i] > c1) | (x1[i] < c0) | (y0[i] > d1) | (y1[i] < d0)
        width = np.minimum(x1[i], c1) - np.maximum(x0[i], c0)
        height = np.minimum(y1[i], d1) - np.maximum(y0[i], d0)
        inter = width * height
        with np.errstate(invalid="ignore", divide="ignore"):
            iou = inter / (size[rest] + size[i] - inter)
        return ~apart & (width > 0) & (height > 0) & (iou > thresh)
    return overlaps


def _nms(boxes, order, thresh):
    """Greedy NMS over the boxes ``order`` picks (in that order): the kept entries of order."""
    return order[greedy_nms(len(order), jaccard_overlaps(boxes[order], thresh))]


def _by_score(scores, candidates):
    """Candidates by score descending, equal scores by index (a stable sort)."""
    return candidates[np.lexsort((candidates, -scores[candidates].astype(np.float64)))]


def _image(boxes, conf, attrs, classes):
    """One image's detections: {label: [prior indices, best first]}."""
    bg = attrs["background_label_id"]
    top_k = attrs["top_k"]
    threshold = F32(attrs["confidence_threshold"])
    found: dict[int, np.ndarray] = {}
    if not attrs["decrease_label_id"]:
        for c in range(classes):
            if c == bg:
                continue
            scores = conf[:, c]
            order = _by_score(scores, np.flatnonzero(scores > threshold))
            if top_k > -1:
                order = order[:top_k]
            found[c] = _nms(boxes[0 if attrs["share_location"] else c], order,
                            attrs["nms_threshold"])
    else:  # MXNet: each prior's best class (ties to the lower class), then NMS per class
        usable = np.array([c for c in range(1, classes) if not (bg > -1 and c == bg)], np.int64)
        if usable.size:
            sub = conf[:, usable]
            best = np.argmax(sub, axis=1)
            score = sub[np.arange(len(sub)), best]
            label = usable[best]
            ok = np.flatnonzero((score > F32(-1)) & (score >= threshold))
            order = _by_score(score, ok)
            if top_k > -1:
                order = order[:top_k]
            for c in np.unique(label[order]):
                mine = order[label[order] == c]
                found[int(c)] = _nms(boxes[0 if attrs["share_location"] else c], mine,
                                     attrs["nms_threshold"])
    total = sum(len(v) for v in found.values())
    keep = attrs["keep_top_k"][0]
    if keep > -1 and total > keep:
        labels = np.concatenate([np.full(len(v), c) for c, v in sorted(found.items())])
        priors = np.concatenate([v for _, v in sorted(found.items())])
        scores = conf[priors, labels]
        # std::sort by score, then prior; pairs equal in both keep their order here
        pick = np.lexsort((np.arange(len(priors)), priors, -scores.astype(np.float64)))[:keep]
        found = {int(c): priors[pick][labels[pick] == c] for c in np.unique(labels[pick])}
    return found


def detection_output(loc, conf, priors, arm_conf=None, arm_loc=None, *, num_classes=None,
                     **attrs):
    dtype = loc.dtype
    loc, conf, priors = (x.astype(F32) for x in (loc, conf, priors))
    batch = loc.shape[0]
    prior_size = 4 if attrs["normalized"] else 5
    num_priors = priors.shape[2] // prior_size
    classes = num_classes if num_classes is not None else conf.shape[1] // num_priors
    loc_classes = 1 if attrs["share_location"] else classes
    conf = conf.reshape(batch, num_priors, classes)
    loc = loc.reshape(batch, num_priors, loc_classes, 4).transpose(0, 2, 1, 3)  # [N, L, P, 4]
    if arm_conf is not None:
        arm_conf = arm_conf.astype(F32).reshape(batch, num_priors, 2)
        background = arm_conf[:, :, 1] < F32(attrs["objectness_score"])
        replaced = (np.arange(classes) == attrs["background_label_id"]).astype(F32)
        conf = np.where(background[:, :, None], replaced, conf)
        arm_loc = arm_loc.astype(F32).reshape(batch, num_priors, -1, 4).transpose(0, 2, 1, 3)
    rows = []
    for i in range(batch):
        pr = priors[0 if priors.shape[0] == 1 else i]
        boxes = pr[0].reshape(num_priors, prior_size)[:, prior_size - 4:]
        if attrs["variance_encoded_in_target"]:
            variances = np.ones((num_priors, 4), F32)
        else:
            variances = pr.reshape(-1)[num_priors * prior_size:][:num_priors * 4].reshape(-1, 4)
        if arm_loc is not None:
            boxes = decode(boxes, variances, arm_loc[i], attrs)  # [L or 1, P, 4]
        decoded = decode(boxes, variances, loc[i], attrs)  # [L, P, 4]
        found = _image(decoded, conf[i], attrs, classes)
        for c, chosen in sorted(found.items()):
            if not len(chosen):
                continue
            b = decoded[0 if attrs["share_location"] else c][chosen]
            if attrs["clip_after_nms"]:
                b = np.clip(b, F32(0), F32(1))
            label = c - 1 if attrs["decrease_label_id"] else c
            head = np.array([[i, label]], F32).repeat(len(chosen), 0)
            rows.append(np.concatenate([head, conf[i][chosen, c][:, None], b], 1))
    keep = attrs["keep_top_k"][0]
    if keep > 0:
        total = batch * keep
    elif attrs["top_k"] > 0:
        total = batch * attrs["top_k"] * classes
    else:
        total = batch * num_priors * classes
    out = np.zeros((total, 7), F32)
    found_rows = np.concatenate(rows) if rows else np.zeros((0, 7), F32)
    out[:len(found_rows)] = found_rows
    if len(found_rows) < total:
        out[len(found_rows), 0] = -1
    return out.reshape(1, 1, total, 7).astype(dtype)


@register
class DetectionOutput1(Op):
    spec = OpSpec(
        type="DetectionOutput", since=1, until=7,
        attrs=(Attr("num_classes", "int", doc="classes, the background class included"),)
        + COMMON_ATTRS,
        inputs=INPUTS,
        outputs=(Output("detections", "[1, 1, rows, 7]: image, label, score, xmin, ymin, xmax, "
                                      "ymax per detection; -1 starts the first unused row",
                        type=T),),
        doc="SSD's detections: priors decoded by the box predictions, per-class NMS, the best "
            "keep_top_k per image.",
    )
    infer = staticmethod(_infer)
    kernel = staticmethod(detection_output)


@register
class DetectionOutput8(Op):
    spec = OpSpec(
        type="DetectionOutput", since=8, until=16,
        attrs=COMMON_ATTRS,
        inputs=INPUTS,
        outputs=DetectionOutput1.spec.outputs,
        doc="DetectionOutput-1 with the class count read from class_preds' shape.",
    )
    infer = staticmethod(_infer)
    kernel = staticmethod(detection_output)
