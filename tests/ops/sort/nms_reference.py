"""Plain-Python references for the NMS tests: one box pair at a time, f32 scalars, written from the
specifications (and OpenVINO's reference kernels where the text is loose), independent of
irexec.ops.sort.nms_common."""

from __future__ import annotations

import heapq

import numpy as np

F = np.float32


def box_corners(box, encoding="corner"):
    b = [F(v) for v in box]
    if encoding == "center":
        xc, yc, w, h = b
        return yc - h / F(2), xc - w / F(2), yc + h / F(2), xc + w / F(2)
    return min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])


def iou(a, b):
    area_a = (a[2] - a[0]) * (a[3] - a[1])
    area_b = (b[2] - b[0]) * (b[3] - b[1])
    if area_a <= 0 or area_b <= 0:
        return F(0)
    ih = max(min(a[2], b[2]) - max(a[0], b[0]), F(0))
    iw = max(min(a[3], b[3]) - max(a[1], b[1]), F(0))
    inter = ih * iw
    return F(inter / (area_a + area_b - inter))


def nms_class(boxes, scores, max_out, iou_thr, score_thr, sigma=0.0):
    """One class: [(box index, score)] in selection order. A lazy priority queue, as OpenVINO's
    kernels do: a candidate's score is brought up to date with the boxes selected since its last
    visit when it reaches the top."""
    iou_thr, score_thr, sigma = F(iou_thr), F(score_thr), F(sigma)
    scale = F(-0.5) / sigma if sigma > 0 else F(0)
    heap = [(-F(s), i, F(s), 0) for i, s in enumerate(scores) if F(s) > score_thr]
    heapq.heapify(heap)
    selected = []
    while heap and len(selected) < max_out:
        _, i, score, since = heapq.heappop(heap)
        original = score
        dropped = False
        for j in range(len(selected) - 1, since - 1, -1):
            o = iou(boxes[i], boxes[selected[j][0]])
            if sigma > 0:
                score = F(score * F(np.exp(F(scale * o * o))))
                if score <= score_thr:
                    dropped = True
                    break
            elif o > iou_thr:
                dropped = True
                break
        if dropped:
            continue
        if score == original:
            selected.append((i, score))
        else:
            heapq.heappush(heap, (-score, i, score, len(selected)))
    return selected


def nms(boxes, scores, max_out, iou_thr, score_thr, sigma=0.0, encoding="corner",
        sort_desc=True):
    """All of NonMaxSuppression-5/9: [(batch, class, box, score)]."""
    out = []
    for b in range(scores.shape[0]):
        corners = [box_corners(x, encoding) for x in boxes[b]]
        for c in range(scores.shape[1]):
            for i, s in nms_class(corners, scores[b, c], max_out, iou_thr, score_thr, sigma):
                out.append((b, c, i, s))
    if sort_desc:
        out.sort(key=lambda r: (-r[3], r[0], r[1], r[2]))
    return out


def iou_plus(a, b, norm):
    """MulticlassNms's IoU: raw [x1, y1, x2, y2] (no reordering), ``norm`` added to sides."""
    a = [F(v) for v in a]
    b = [F(v) for v in b]
    n = F(norm)
    area_a = (a[2] - a[0] + n) * (a[3] - a[1] + n)
    area_b = (b[2] - b[0] + n) * (b[3] - b[1] + n)
    if area_a <= 0 or area_b <= 0:
        return F(0)
    iw = max(min(a[2], b[2]) - max(a[0], b[0]) + n, F(0))
    ih = max(min(a[3], b[3]) - max(a[1], b[1]) + n, F(0))
    inter = iw * ih
    return F(inter / (area_a + area_b - inter))


def multiclass_class(boxes, scores, attrs):
    """One class of one image: [(box index, score)]. Greedy over the best nms_top_k candidates;
    with nms_eta < 1 a lazy queue whose comparison stops once the score is not above the
    threshold (OpenVINO's adaptive path)."""
    thr_s = F(attrs["score_threshold"])
    cands = sorted((i for i, s in enumerate(scores) if F(s) >= thr_s),
                   key=lambda i: (-F(scores[i]), i))
    if attrs["nms_top_k"] > -1:
        cands = cands[:attrs["nms_top_k"]]
    norm = 0 if attrs["normalized"] else 1
    thr = F(attrs["iou_threshold"])
    eta = F(attrs["nms_eta"])
    chosen = []
    for i in cands:
        score = F(scores[i])
        ok = True
        for j in reversed(chosen):
            if iou_plus(boxes[i], boxes[j], norm) >= thr:
                ok = False
                break
            if eta < 1 and score <= thr_s:
                break
        if ok:
            chosen.append(i)
            if eta < 1 and thr > F(0.5):
                thr = F(thr * eta)
    return [(i, F(scores[i])) for i in chosen]


def multiclass(boxes, scores, attrs, roisnum=None):
    """MulticlassNms: (rows [(batch, class, flat index, score, box)], counts per image)."""
    per_image = []
    if roisnum is None:
        B, C, N = scores.shape
        images = [(b, boxes[b], scores[b], [b * N + j for j in range(N)]) for b in range(B)]
    else:
        C = scores.shape[0]
        images, head = [], 0
        for b, n in enumerate(roisnum):
            images.append((b, None, None, head))
            head += int(n)
    rows_all = []
    for b, (batch, bx, sc, extra) in enumerate(images):
        rows = []
        for c in range(C):
            if c == attrs["background_class"]:
                continue
            if roisnum is None:
                cb, cs, flat = bx, sc[c], [batch * N + j for j in range(len(bx))]
                coords = list(bx)
            else:
                head, n = extra, int(roisnum[b])
                coords = list(boxes[c, head:head + n])
                cs = scores[c, head:head + n]
                flat = [(head + j) * C + c for j in range(n)]
                cb = coords
            for j, s in multiclass_class(cb, cs, attrs):
                rows.append((batch, c, j, s, flat[j], tuple(coords[j])))
        rows.sort(key=lambda r: (-r[3], r[1], r[2]))
        if attrs["keep_top_k"] > -1:
            rows = rows[:attrs["keep_top_k"]]
        if not attrs["sort_result_across_batch"] and attrs["sort_result_type"] == "classid":
            rows.sort(key=lambda r: (r[1], -r[3], r[2]))
        per_image.append(len(rows))
        rows_all += rows
    if attrs["sort_result_across_batch"]:
        if attrs["sort_result_type"] == "score":
            rows_all.sort(key=lambda r: (-r[3], r[0], r[1], r[2]))
        elif attrs["sort_result_type"] == "classid":
            rows_all.sort(key=lambda r: (r[1], r[0], -r[3], r[2]))
    return rows_all, per_image


def matrix_iou(a, b, norm):
    """MatrixNms's IoU of [x1, y1, x2, y2] boxes: 0 when they do not touch."""
    a = [F(v) for v in a]
    b = [F(v) for v in b]
    n = F(norm)
    if b[0] > a[2] or b[2] < a[0] or b[1] > a[3] or b[3] < a[1]:
        return F(0)

    def box_area(x):
        return F(0) if x[2] < x[0] or x[3] < x[1] else (x[2] - x[0] + n) * (x[3] - x[1] + n)

    inter = (min(a[2], b[2]) - max(a[0], b[0]) + n) * (min(a[3], b[3]) - max(a[1], b[1]) + n)
    return F(inter / (box_area(a) + box_area(b) - inter))


def matrix_nms(boxes, scores, attrs):
    """MatrixNms, one pair at a time: (rows [(batch, class, box, score)], counts per image)."""
    B, C, N = scores.shape
    norm = 0 if attrs["normalized"] else 1
    rows_all, counts = [], []
    for b in range(B):
        rows = []
        for c in range(C):
            if c == attrs["background_class"]:
                continue
            cand = sorted((i for i in range(N) if F(scores[b, c, i]) > F(attrs["score_threshold"])),
                          key=lambda i: (-F(scores[b, c, i]), i))
            if attrs["nms_top_k"] > -1:
                cand = cand[:attrs["nms_top_k"]]
            iou = [[matrix_iou(boxes[b, cand[i]], boxes[b, cand[j]], norm) for j in range(i)]
                   for i in range(len(cand))]
            max_iou = [max([F(0)] + row) for row in iou]
            for i, box in enumerate(cand):
                decay = F(1)
                for j in range(i):
                    if attrs["decay_function"] == "gaussian":
                        d = F(np.exp(F((max_iou[j] * max_iou[j] - iou[i][j] * iou[i][j])
                                       * F(attrs["gaussian_sigma"]))))
                    else:
                        d = F((1.0 - float(iou[i][j]))
                              / (1.0 - float(max_iou[j]) + float(F(1e-10))))
                    decay = min(decay, d)
                ds = F(decay * F(scores[b, c, box]))
                if ds > F(attrs["post_threshold"]):
                    rows.append((b, c, box, ds))
        rows.sort(key=lambda r: (-r[3], r[1], r[2]))
        if attrs["keep_top_k"] > -1:
            rows = rows[:attrs["keep_top_k"]]
        counts.append(len(rows))
        rows_all += rows
    if attrs["sort_result_across_batch"]:
        if attrs["sort_result_type"] == "score":
            rows_all.sort(key=lambda r: (-r[3], r[0], r[1], r[2]))
        elif attrs["sort_result_type"] == "classid":
            rows_all.sort(key=lambda r: (r[1], r[0], -r[3], r[2]))
    return rows_all, counts


def rotated_corners(box, clockwise=True):
    xc, yc, w, h, a = (float(v) for v in box)
    if not clockwise:
        a = -a
    c, s = np.cos(a) / 2, np.sin(a) / 2
    p0 = (xc - s * h - c * w, yc + c * h - s * w)
    p1 = (xc + s * h - c * w, yc - c * h - s * w)
    return [p0, p1, (2 * xc - p0[0], 2 * yc - p0[1]), (2 * xc - p1[0], 2 * yc - p1[1])]


def clip_area(subject, clip):
    """Area of a convex polygon clipped by another (Sutherland-Hodgman), in f64."""
    def inside(p, a, b):
        return (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])

    # orient the clip polygon counterclockwise
    signed = sum(clip[i][0] * clip[(i + 1) % 4][1] - clip[(i + 1) % 4][0] * clip[i][1]
                 for i in range(4))
    if signed < 0:
        clip = clip[::-1]
    out = list(subject)
    for i in range(len(clip)):
        a, b = clip[i], clip[(i + 1) % len(clip)]
        pts, out = out, []
        for j in range(len(pts)):
            p, q = pts[j], pts[(j + 1) % len(pts)]
            fp, fq = inside(p, a, b), inside(q, a, b)
            if fp >= 0:
                out.append(p)
            if (fp >= 0) != (fq >= 0):
                t = fp / (fp - fq)
                out.append((p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])))
        if not out:
            return 0.0
    return abs(sum(out[i][0] * out[(i + 1) % len(out)][1] - out[(i + 1) % len(out)][0] * out[i][1]
                   for i in range(len(out)))) / 2


def rotated_iou(a, b, clockwise=True):
    area_a, area_b = float(a[2]) * float(a[3]), float(b[2]) * float(b[3])
    if area_a <= 0 or area_b <= 0:
        return 0.0
    inter = clip_area(rotated_corners(a, clockwise), rotated_corners(b, clockwise))
    return inter / (area_a + area_b - inter)


def nms_rotated(boxes, scores, max_out, iou_thr, score_thr, clockwise=True, sort_desc=True):
    out = []
    for b in range(scores.shape[0]):
        for c in range(scores.shape[1]):
            cand = sorted((i for i in range(scores.shape[2]) if F(scores[b, c, i]) > F(score_thr)),
                          key=lambda i: (-F(scores[b, c, i]), i))
            chosen = []
            for i in cand:
                if len(chosen) == max_out:
                    break
                if all(rotated_iou(boxes[b, i], boxes[b, j], clockwise) <= iou_thr
                       for j in chosen):
                    chosen.append(i)
            out += [(b, c, i, F(scores[b, c, i])) for i in chosen]
    if sort_desc:
        out.sort(key=lambda r: (-r[3], r[0], r[1], r[2]))
    return out
