"""What the non-maximum-suppression ops share: boxes as corners, intersection over union in f32
(the operation order of OpenVINO's kernels, so that a threshold compares the same number), the
exact (score descending, index ascending) order as sortable integer keys, and the greedy
selection of NonMaxSuppression, run for every (batch, class) pair at once.

The selection loops over selection *steps* (at most ``max_output_boxes_per_class`` of them),
never over box pairs: each step picks the next box of every pair still selecting and suppresses,
in one vectorised IoU, what overlaps it. Hard NMS looks at a window of the best candidates of
each pair and widens it only when a pair runs out of candidates in it, so its cost follows the
boxes it selects, not the boxes it is given.
"""

from __future__ import annotations

import numpy as np

from irexec.ir.element_type import from_name
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.rules import check_index_type
from irexec.ops.spec import Attr

F32 = np.float32
_NO_KEY = np.uint64(0xFFFFFFFFFFFFFFFF)


def corners(boxes: np.ndarray, encoding: str = "corner"):
    """Boxes [..., 4] as four f32 arrays (y1, x1, y2, x2) with y1 <= y2 and x1 <= x2: corner
    boxes may name either diagonal pair; center boxes are [x_center, y_center, width, height]."""
    b = np.asarray(boxes, F32)
    if encoding == "center":
        xc, yc, w, h = (b[..., i] for i in range(4))
        hw, hh = w / F32(2), h / F32(2)
        return yc - hh, xc - hw, yc + hh, xc + hw
    y1, x1, y2, x2 = (b[..., i] for i in range(4))
    return np.minimum(y1, y2), np.minimum(x1, x2), np.maximum(y1, y2), np.maximum(x1, x2)


def area(c) -> np.ndarray:
    y1, x1, y2, x2 = c
    return (y2 - y1) * (x2 - x1)


def iou(a, area_a, b, area_b) -> np.ndarray:
    """IoU of corner boxes ``a`` and ``b`` (broadcasting), in f32; 0 when either area is not
    positive. ``area_a``/``area_b`` are their areas (``area``)."""
    ay1, ax1, ay2, ax2 = a
    by1, bx1, by2, bx2 = b
    ih = np.maximum(np.minimum(ay2, by2) - np.maximum(ay1, by1), F32(0))
    iw = np.maximum(np.minimum(ax2, bx2) - np.maximum(ax1, bx1), F32(0))
    inter = ih * iw
    with np.errstate(divide="ignore", invalid="ignore"):
        out = inter / (area_a + area_b - inter)
    return np.where((area_a <= 0) | (area_b <= 0), F32(0), out)


def overlaps(a, area_a, pos_a, b, area_b, pos_b, threshold) -> np.ndarray:
    """iou(a, b) > threshold as booleans, without materialising the IoU: ``pos_a``/``pos_b``
    say where the areas are positive (elsewhere the IoU is 0)."""
    ay1, ax1, ay2, ax2 = a
    by1, bx1, by2, bx2 = b
    ih = np.minimum(ay2, by2)
    ih -= np.maximum(ay1, by1)
    np.maximum(ih, F32(0), out=ih)
    iw = np.minimum(ax2, bx2)
    iw -= np.maximum(ax1, bx1)
    np.maximum(iw, F32(0), out=iw)
    ih *= iw  # the intersection
    union = area_a + area_b
    union -= ih
    with np.errstate(divide="ignore", invalid="ignore"):
        ih /= union
    over = ih > threshold
    if F32(0) > threshold:  # a box without area has IoU 0, which is above a negative threshold
        return over | ~(pos_a & pos_b)
    return over & pos_a & pos_b


def order_keys(scores: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """uint64 keys, one per score along the last axis, whose ascending order is score
    descending then index ascending (-0.0 equal to 0.0); entries not kept get the largest key.
    Keys are unique, so partial sorts of them are exact."""
    s = np.asarray(scores, F32) + F32(0)  # -0.0 -> 0.0
    bits = s.view(np.int32).astype(np.int64)
    rank = np.where(bits < 0, bits ^ 0x7FFFFFFF, bits)  # monotone in the float's value
    idx = np.arange(s.shape[-1], dtype=np.uint64)
    key = (np.uint64((1 << 31) - 1) - rank.astype(np.uint64)) << np.uint64(32) | idx
    key[~keep] = _NO_KEY
    return key


def best_sorted(key: np.ndarray, lo: int, hi: int):
    """Positions lo..hi-1 of each row's ascending key order: (indices, present), where present
    is False for padding (keys of entries not kept)."""
    n = key.shape[-1]
    hi = min(hi, n)
    part = key if hi >= n else np.partition(key, hi - 1, axis=-1)[..., :hi]
    part = np.sort(part, axis=-1)[..., lo:hi]
    present = part != _NO_KEY
    return np.where(present, part & np.uint64(0xFFFFFFFF), 0).astype(np.intp), present


def _gather(c, rows_batch, idx):
    return tuple(x[rows_batch[:, None], idx] for x in c)


def select(boxes_c, scores, max_per_class: int, iou_threshold: float, score_threshold: float,
           soft_sigma: float = 0.0, geometry=None):
    """NonMaxSuppression's selection for boxes_c (corners, four [B, N] arrays) and scores
    [B, C, N]: per (batch, class) pair in row-major order, the selected boxes in the order they
    were selected. Returns (batch, class, box, score) arrays. ``geometry``: (prepare, overlap)
    for boxes that are not axis-aligned corners (hard NMS only; see ``_hard``).

    Hard (soft_sigma == 0): candidates score > score_threshold, best first (ties: smaller index);
    a candidate is dropped when its IoU with a box already selected exceeds iou_threshold.
    Soft: each selection multiplies the others' scores by exp(-0.5 * iou^2 / sigma); the next
    box is the best current score (ties: smaller index); scores <= score_threshold drop out."""
    B, C, N = scores.shape
    P = B * C
    K = min(int(max_per_class), N)
    empty = (np.zeros(0, np.int64),) * 3 + (np.zeros(0, F32),)
    if K <= 0 or P == 0:
        return empty
    s = np.asarray(scores, F32).reshape(P, N)
    thr = F32(score_threshold)
    valid = s > thr
    row_batch = np.repeat(np.arange(B), C)
    if soft_sigma > 0:
        sel, sel_score, nsel = _soft(boxes_c, s, valid, row_batch, K, F32(soft_sigma), thr)
    else:
        sel, sel_score, nsel = _hard(boxes_c, s, valid, row_batch, K, F32(iou_threshold),
                                     *(geometry or ()))
    taken = np.arange(K)[None, :] < nsel[:, None]
    rows = np.nonzero(taken)[0]
    return (row_batch[rows].astype(np.int64), (rows % C).astype(np.int64),
            sel[taken].astype(np.int64), sel_score[taken])


def _corner_prepare(c):
    """Corner boxes (four arrays) with their areas and whether those are positive."""
    a = area(c)
    return tuple(c) + (a, a > 0)


def _corner_overlaps(a, b, threshold):
    return overlaps(a[:4], a[4], a[5], b[:4], b[4], b[5], threshold)


def _hard(boxes_c, s, valid, row_batch, K, thr, prepare=_corner_prepare,
          overlap=_corner_overlaps):
    """Greedy hard NMS of every row of ``s`` at once. ``boxes_c``: per-box arrays [B, N] (the
    box's numbers); ``prepare`` adds what ``overlap(a, b, thr)`` needs to such a tuple, and
    ``overlap`` says (broadcasting) which pairs overlap by more than ``thr``."""
    P, N = s.shape
    counts = valid.sum(axis=1)
    key = order_keys(s, valid)
    width = min(N, 2 * K + 16)
    idx, alive = best_sorted(key, 0, width)
    wc = prepare(_gather(boxes_c, row_batch, idx))
    sel = np.zeros((P, K), np.intp)
    nsel = np.zeros(P, np.intp)
    while True:
        has = alive.any(axis=1)
        short = (nsel < K) & ~has & (counts > width)
        if short.any():  # a pair ran out of its window: widen every pair's window
            new = min(N, 2 * width)
            nidx, nalive = best_sorted(key, width, new)
            nc = prepare(_gather(boxes_c, row_batch, nidx))
            top = int(nsel.max())
            if top:
                sc = prepare(tuple(x[:, :top, None]
                                   for x in _gather(boxes_c, row_batch, sel[:, :top])))
                hit = overlap(sc, tuple(x[:, None, :] for x in nc), thr)
                hit &= (np.arange(top)[None, :] < nsel[:, None])[:, :, None]
                nalive &= ~hit.any(axis=1)
            idx = np.concatenate([idx, nidx], axis=1)
            alive = np.concatenate([alive, nalive], axis=1)
            wc = tuple(np.concatenate([a, b], axis=1) for a, b in zip(wc, nc))
            width = new
            continue
        going = (nsel < K) & has
        if going.all():  # every pair still selecting: whole arrays, no row gathers
            rows = slice(None)
            n = P
        else:
            rows = np.nonzero(going)[0]
            n = rows.size
            if n == 0:
                break
        live = alive[rows]
        pos = live.argmax(axis=1)
        at = np.arange(n)
        which = np.arange(P) if n == P else rows
        sel[which, nsel[which]] = idx[which, pos]
        nsel[which] += 1
        live[at, pos] = False
        here = tuple(x[rows] for x in wc)
        chosen = tuple(x[at, pos][:, None] for x in here)
        live &= ~overlap(chosen, here, thr)
        alive[rows] = live
    sel_score = s[np.arange(P)[:, None], sel]
    return sel, sel_score, nsel


def _soft(boxes_c, s, valid, row_batch, K, sigma, thr):
    P, N = s.shape
    scale = F32(-0.5) / sigma
    cur = np.where(valid, s, F32(-np.inf))
    allc = _gather(boxes_c, row_batch, np.broadcast_to(np.arange(N), (P, N)))
    aarea = area(allc)
    sel = np.zeros((P, K), np.intp)
    sel_score = np.zeros((P, K), F32)
    nsel = np.zeros(P, np.intp)
    while True:
        rows = np.nonzero((nsel < K) & (cur > thr).any(axis=1))[0]
        if rows.size == 0:
            break
        c = cur[rows]
        pos = c.argmax(axis=1)  # the first of equal maxima: the smaller index
        sel[rows, nsel[rows]] = pos
        sel_score[rows, nsel[rows]] = c[np.arange(rows.size), pos]
        nsel[rows] += 1
        c[np.arange(rows.size), pos] = -np.inf
        chosen = tuple(x[rows, pos][:, None] for x in allc)
        o = iou(chosen, aarea[rows, pos][:, None], tuple(x[rows] for x in allc), aarea[rows])
        with np.errstate(invalid="ignore", over="ignore"):
            c = c * np.exp(scale * o * o)
        c[~(c > thr)] = -np.inf
        cur[rows] = c
    return sel, sel_score, nsel


def iou_offset(a, b, norm) -> np.ndarray:
    """IoU of boxes ``a`` and ``b`` (four arrays each, broadcasting, either axis naming) in f32,
    with ``norm`` (0 or 1) added to every width and height, as MulticlassNms does for boxes that
    are not normalized; 0 when either area is not positive."""
    norm = F32(norm)
    a0, a1, a2, a3 = a
    b0, b1, b2, b3 = b
    area_a = (a2 - a0 + norm) * (a3 - a1 + norm)
    area_b = (b2 - b0 + norm) * (b3 - b1 + norm)
    i0 = np.maximum(np.minimum(a2, b2) - np.maximum(a0, b0) + norm, F32(0))
    i1 = np.maximum(np.minimum(a3, b3) - np.maximum(a1, b1) + norm, F32(0))
    inter = i0 * i1
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = inter / (area_a + area_b - inter)
    return np.where((area_a <= 0) | (area_b <= 0), F32(0), out)


def select_adaptive(coords, scores, keep, top_k: int, iou_threshold: float, eta: float = 1.0,
                    norm: float = 0.0, score_threshold: float | None = None):
    """MulticlassNms's per-class greedy NMS for P rows at once: ``coords`` four [P, M] arrays
    (each row its own boxes), ``scores`` [P, M], ``keep`` [P, M] the candidates. At most
    ``top_k`` candidates per row (-1: all), best score first (ties: smaller index); a candidate
    is dropped when its IoU with a selected box reaches the adaptive threshold, which starts at
    ``iou_threshold`` and, after each selection while above 0.5, is multiplied by ``eta`` (< 1).

    With ``score_threshold`` given (OpenVINO's adaptive path, nms_eta < 1), a candidate is
    compared with the selected boxes from the latest back, stopping as soon as its score is not
    above the threshold: one scoring exactly the threshold is checked against the latest
    selected box only (so it is here).

    Returns (row, column, score) of the selected boxes, row by row in selection order."""
    P, M = scores.shape
    width = M if top_k < 0 else min(M, top_k)
    if P == 0 or width == 0:
        return np.zeros(0, np.intp), np.zeros(0, np.intp), np.zeros(0, F32)
    idx, present = best_sorted(order_keys(scores, keep), 0, width)
    at = np.arange(P)[:, None]
    cand = tuple(x[at, idx] for x in coords)
    worst = np.full((P, width), -np.inf, F32)  # the largest IoU with a selected box so far
    latest = np.full((P, width), -np.inf, F32)  # the IoU with the latest selected box
    s_sorted = np.asarray(scores, F32)[at, idx]
    at_floor = (s_sorted <= F32(score_threshold)) if score_threshold is not None else \
        np.zeros((P, width), bool)
    thr = np.full(P, F32(iou_threshold), F32)
    last = np.full(P, -1)
    cols = np.arange(width)
    sel = np.zeros((P, width), np.intp)
    nsel = np.zeros(P, np.intp)
    while True:
        seen = np.where(at_floor, latest, worst)
        ok = present & (cols[None, :] > last[:, None]) & ~(seen >= thr[:, None])
        rows = np.nonzero(ok.any(axis=1))[0]
        if rows.size == 0:
            break
        pos = ok[rows].argmax(axis=1)
        sel[rows, nsel[rows]] = pos
        nsel[rows] += 1
        last[rows] = pos
        if eta < 1:
            shrink = rows[thr[rows] > F32(0.5)]
            thr[shrink] *= F32(eta)
        chosen = tuple(x[rows, pos][:, None] for x in cand)
        o = iou_offset(tuple(x[rows] for x in cand), chosen, norm)
        worst[rows] = np.fmax(worst[rows], o)
        latest[rows] = o
    taken = np.arange(width)[None, :] < nsel[:, None]
    rows = np.nonzero(taken)[0]
    cols_sel = idx[rows, sel[taken]]
    return rows, cols_sel, np.asarray(scores, F32)[rows, cols_sel]


# --- rotated boxes (NMSRotated) -----------------------------------------------------------------

def rotated_prepare(b):
    """Rotated boxes (x_ctr, y_ctr, w, h, angle in radians, clockwise) with their four vertices
    (as OpenVINO's kernel places them, in f32) and their areas w * h."""
    xc, yc, w, h, a = (np.asarray(x, F32) for x in b[:5])
    cos2 = np.cos(a.astype(np.float64)).astype(F32) * F32(0.5)
    sin2 = np.sin(a.astype(np.float64)).astype(F32) * F32(0.5)
    x0 = xc - sin2 * h - cos2 * w
    y0 = yc + cos2 * h - sin2 * w
    x1 = xc + sin2 * h - cos2 * w
    y1 = yc - cos2 * h - sin2 * w
    x2, y2 = F32(2) * xc - x0, F32(2) * yc - y0
    x3, y3 = F32(2) * xc - x1, F32(2) * yc - y1
    return (xc, yc, w, h, a, x0, y0, x1, y1, x2, y2, x3, y3, w * h)


def _inside(px, py, q):
    """Whether points (px, py) lie in the rectangle with vertices q (x0, y0, ... x3, y3)."""
    abx, aby = q[2] - q[0], q[3] - q[1]
    dax, day = q[0] - q[6], q[1] - q[7]
    apx, apy = px - q[0], py - q[1]
    along = apx * abx + apy * aby
    across = -(apx * dax + apy * day)
    return (along >= 0) & (across >= 0) & (along <= abx * abx + aby * aby) & \
        (across <= dax * dax + day * day)


def rotated_iou(a, b) -> np.ndarray:
    """IoU of rotated boxes prepared by ``rotated_prepare`` (broadcasting): the intersection is
    the convex polygon of the edge crossings and of each box's corners inside the other, its
    area by the shoelace formula over the points in angular order (computed in f64)."""
    pa, pb = a[5:13], b[5:13]
    shape = np.broadcast_shapes(np.shape(a[0]), np.shape(b[0]))
    xs, ys, ok = [], [], []
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for i in range(4):
            ax, ay = pa[2 * i], pa[2 * i + 1]
            ux, uy = pa[(2 * i + 2) % 8] - ax, pa[(2 * i + 3) % 8] - ay
            for j in range(4):
                bx, by = pb[2 * j], pb[2 * j + 1]
                vx, vy = pb[(2 * j + 2) % 8] - bx, pb[(2 * j + 3) % 8] - by
                det = vx * uy - ux * vy
                wx, wy = bx - ax, by - ay
                t1 = (vx * wy - wx * vy) / det
                t2 = (ux * wy - wx * uy) / det
                good = (np.abs(det) > 1e-14) & (t1 >= 0) & (t1 <= 1) & (t2 >= 0) & (t2 <= 1)
                xs.append(ax + ux * t1)
                ys.append(ay + uy * t1)
                ok.append(good)
        for p, q in ((pa, pb), (pb, pa)):
            for i in range(4):
                xs.append(p[2 * i])
                ys.append(p[2 * i + 1])
                ok.append(_inside(p[2 * i], p[2 * i + 1], q))
    X = np.stack([np.broadcast_to(x, shape) for x in xs]).astype(np.float64)
    Y = np.stack([np.broadcast_to(y, shape) for y in ys]).astype(np.float64)
    V = np.stack([np.broadcast_to(v, shape) for v in ok])
    count = V.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        cx = np.where(V, X, 0).sum(axis=0) / count
        cy = np.where(V, Y, 0).sum(axis=0) / count
        angle = np.where(V, np.arctan2(Y - cy, X - cx), np.inf)
    order = np.argsort(angle, axis=0, kind="stable")
    X = np.take_along_axis(X, order, axis=0)
    Y = np.take_along_axis(Y, order, axis=0)
    last = np.maximum(count - 1, 0)[None]
    keep = np.arange(X.shape[0]).reshape((-1,) + (1,) * len(shape)) <= last
    X = np.where(keep, X, np.take_along_axis(X, last, axis=0))
    Y = np.where(keep, Y, np.take_along_axis(Y, last, axis=0))
    cross = X * np.roll(Y, -1, axis=0) - np.roll(X, -1, axis=0) * Y
    inter = np.where(count > 2, np.abs(cross.sum(axis=0)) / 2, 0.0).astype(F32)
    area_a, area_b = a[13], b[13]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = inter / (area_a + area_b - inter)
    return np.where((area_a <= 0) | (area_b <= 0), F32(0), out)


def rotated_overlap(a, b, threshold):
    return rotated_iou(a, b) > threshold


ROTATED = (rotated_prepare, rotated_overlap)


def check_boxes_scores(ctx, boxes: PartialShape, scores: PartialShape, *,
                       scores_boxes_axis: int = 2, what: str = "scores", box_size: int = 4):
    """IR307 unless boxes [B, N, 4] and scores [B, C, N] agree (both of rank 3)."""
    if boxes.rank_is_static and not boxes[2].contains(box_size):
        ctx.error("IR307", f"boxes have shape {boxes}; their last dim must be {box_size}")
    if boxes.rank_is_static and scores.rank_is_static:
        if not boxes[0].compatible(scores[0]):
            ctx.error("IR307", f"boxes {boxes} and {what} {scores} disagree on the batch "
                               f"count (dim 0 of both)")
        if not boxes[1].compatible(scores[scores_boxes_axis]):
            ctx.error("IR307", f"boxes {boxes} and {what} {scores} disagree on the box count "
                               f"(boxes dim 1, {what} dim {scores_boxes_axis})")


def sort_attrs(default_across=False):
    return (Attr("sort_result_type", "enum", default="none", values=SORTS,
                 doc="order of the selected boxes: by class id, by score, or none (by score "
                     "within each image)"),
            Attr("sort_result_across_batch", "bool", default=default_across,
                 doc="sort all images' boxes together (else image by image)"),
            Attr("output_type", "element_type", default=from_name("i64"),
                 doc="element type of selected_indices and selected_num: i32 or i64"))


def check_common(ctx):
    check_index_type(ctx, "output_type")
    for name in ("nms_top_k", "keep_top_k", "background_class"):
        if ctx.attrs[name] < -1:
            ctx.error("IR302", f"{name} is {ctx.attrs[name]}; it is -1 or more")
    eta = ctx.attrs.get("nms_eta", 1.0)
    if not 0 <= eta <= 1:
        ctx.error("IR302", f"nms_eta is {eta}; it lies in [0, 1]")
    boxes = ctx.input_shape(0)
    if boxes.rank_is_static and not boxes[2].contains(4):
        ctx.error("IR307", f"boxes have shape {boxes}; their last dim must be 4")


def output_rows(ctx, num_boxes: Dimension, num_classes: Dimension, images: Dimension):
    """The upper bound of the selected count: min(boxes, nms_top_k) * classes, at most
    keep_top_k, per image (OpenVINO's rule)."""
    top, keep = ctx.attrs["nms_top_k"], ctx.attrs["keep_top_k"]
    per = num_boxes.max
    if top > -1:
        per = top if per is None else min(per, top)
    per = None if per is None or num_classes.max is None else per * num_classes.max
    if keep > -1:
        per = keep if per is None else min(per, keep)
    hi = None if per is None or images.max is None else per * images.max
    return Dimension(0, hi)


def order_within_images(batch, cls, box, score, keep_top_k, sort_result_type, across):
    """The output order: each image's boxes by score (then class, then box), cut to keep_top_k;
    then by class within each image, or everything sorted across images. Returns the order as
    indices into the given arrays and the per-image counts."""
    order = np.lexsort((box, cls, -score.astype(np.float64), batch))
    b = batch[order]
    images = int(batch.max()) + 1 if batch.size else 0
    counts = np.bincount(b, minlength=images)
    if keep_top_k > -1:
        rank = np.arange(b.size) - np.repeat(np.cumsum(counts) - counts, counts)
        order = order[rank < keep_top_k]
        counts = np.minimum(counts, keep_top_k)
    s = -score[order].astype(np.float64)
    if across:
        if sort_result_type == "score":
            order = order[np.lexsort((box[order], cls[order], batch[order], s))]
        elif sort_result_type == "classid":
            order = order[np.lexsort((box[order], s, batch[order], cls[order]))]
    elif sort_result_type == "classid":
        order = order[np.lexsort((box[order], s, cls[order], batch[order]))]
    return order, counts


SORTS = ("classid", "score", "none")
