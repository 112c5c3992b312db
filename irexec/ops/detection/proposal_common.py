"""What the proposal and detection-output ops share: OpenVINO's order of equal scores, a greedy
non-maximum suppression over boxes already in score order, and small shape helpers.

Order of equal scores. OpenVINO's kernels pick their top boxes with ``std::partial_sort``, which
is not stable: among boxes of equal score, the order that comes out is the one the C++ standard
library's heap gives (GCC's libstdc++, which OpenVINO's Linux builds use). Equal scores are
common (a box under ``min_size`` gets score 0), and that order decides which boxes survive and
in which row they land, so :func:`partial_sort_order` gives libstdc++'s order exactly: a stable
numpy sort when no tie touches the chosen boxes (the usual case), else a replay of libstdc++'s
heap selection on the scores.

(This file keeps its own NMS loop: the NonMaxSuppression ops are another helper's work, done at
the same time.)
"""

from __future__ import annotations

import math

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import Dimension

F32 = np.float32
MATRIX_LIMIT = 1024  # candidates up to which NMS tests every pair in one vectorised step


def _libstdcxx_partial_sort(keys: list, k: int) -> list[int]:
    """The first ``k`` positions after libstdc++'s ``std::partial_sort(first, first + k, last,
    comp)`` with ``comp(a, b) = keys[a] < keys[b]``: heap selection, then heap sort."""
    n = len(keys)
    key = list(keys)
    idx = list(range(n))

    def adjust(hole: int, length: int, vkey, vid: int) -> None:  # std::__adjust_heap
        top = child = hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if key[child] < key[child - 1]:
                child -= 1
            key[hole], idx[hole] = key[child], idx[child]
            hole = child
        if length % 2 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            key[hole], idx[hole] = key[child - 1], idx[child - 1]
            hole = child - 1
        parent = (hole - 1) // 2  # std::__push_heap
        while hole > top and key[parent] < vkey:
            key[hole], idx[hole] = key[parent], idx[parent]
            hole = parent
            parent = (hole - 1) // 2
        key[hole], idx[hole] = vkey, vid

    if k >= 2:  # std::__make_heap
        parent = (k - 2) // 2
        while True:
            adjust(parent, k, key[parent], idx[parent])
            if parent == 0:
                break
            parent -= 1
    for i in range(k, n):  # std::__heap_select
        if key[i] < key[0]:
            vkey, vid = key[i], idx[i]
            key[i], idx[i] = key[0], idx[0]
            adjust(0, k, vkey, vid)
    last = k
    while last > 1:  # std::__sort_heap
        last -= 1
        vkey, vid = key[last], idx[last]
        key[last], idx[last] = key[0], idx[0]
        adjust(0, last, vkey, vid)
    return idx[:k]


def partial_sort_ranked(rank: np.ndarray, k: int) -> np.ndarray:
    """The first ``k`` positions after ``std::partial_sort`` with ``comp(a, b) = rank[a] <
    rank[b]`` (equal ranks are the ties the comparison cannot order)."""
    rank = np.asarray(rank).reshape(-1)
    n = rank.size
    k = min(k, n)
    if k <= 0:
        return np.zeros(0, np.int64)
    order = np.argsort(rank, kind="stable")
    chosen = rank[order[:k]]
    if bool(np.all(chosen[1:] != chosen[:-1])) and (k == n or rank[order[k - 1]] !=
                                                     rank[order[k]]):
        return order[:k]  # no tie among (or at the edge of) the chosen: any sort agrees
    return np.array(_libstdcxx_partial_sort(rank.tolist(), k), np.int64)


def partial_sort_order(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` highest scores, highest first, in the order OpenVINO's
    ``std::partial_sort`` by ``a.score > b.score`` leaves them (see the module's docstring)."""
    scores = np.asarray(scores, np.float64).reshape(-1)
    return partial_sort_ranked(np.unique(-scores, return_inverse=True)[1].reshape(-1), k)


def greedy_nms(count: int, overlaps, limit: int | None = None,
               dead: np.ndarray | None = None) -> np.ndarray:
    """Greedy suppression over candidates 0..count-1 already in score order: the first live one
    is kept, and ``overlaps(i, rest)`` (a boolean mask over the candidate indices ``rest`` after
    ``i``) says which of the later ones it suppresses. Stops after ``limit`` kept. The kept
    indices, in order. The test must be elementwise: for up to MATRIX_LIMIT candidates it runs
    once on every pair (``i`` a column of indices, ``rest`` a row)."""
    dead = np.zeros(count, bool) if dead is None else dead.copy()
    kept: list[int] = []
    if 0 < count <= MATRIX_LIMIT:  # every pair at once (the tests are elementwise), then a scan
        every = np.arange(count)
        matrix = overlaps(every[:, None], every[None, :]) & (every[None, :] > every[:, None])
        for i in range(count):
            if dead[i]:
                continue
            kept.append(i)
            if limit is not None and len(kept) >= limit:
                break
            dead |= matrix[i]
        return np.array(kept, np.int64)
    i = 0
    while i < count:
        live = np.flatnonzero(~dead[i:])
        if live.size == 0:
            break
        i += int(live[0])
        kept.append(i)
        if limit is not None and len(kept) >= limit:
            break
        rest = np.arange(i + 1, count)
        if rest.size:
            dead[rest[overlaps(i, rest)]] = True
        i += 1
    return np.array(kept, np.int64)


def round_half_away(x: np.ndarray) -> np.ndarray:
    """C's ``roundf``: halves away from zero (numpy's ``round`` takes them to even)."""
    x = np.asarray(x)
    a = np.abs(x)
    f = np.floor(a)
    r = np.where(a - f >= 0.5, f + 1, f).astype(x.dtype)
    return np.copysign(r, x).astype(x.dtype)


def times(d: Dimension, k: int) -> Dimension:
    """A dimension multiplied by a whole number."""
    return Dimension(d.min * k, None if d.max is None else d.max * k)


def merge_dim(a: Dimension, b: Dimension, what: str) -> Dimension:
    """Two dims that must agree; OpError IR307 naming ``what`` when they cannot."""
    merged = a.merge(b)
    if merged is None:
        raise OpError(f"{what}: {a} and {b} differ", code="IR307")
    return merged


def static_or_none(d: Dimension) -> int | None:
    return d.min if d.is_static else None


def as_f32(*arrays):
    return tuple(np.asarray(a).astype(F32) for a in arrays)


MAX_DELTA_LOG_WH = F32(math.log(1000.0 / 16.0))


def refine_anchors(anchors, deltas, scores, img_h, img_w, offset):
    """Anchors ``[H, W, A, 4]`` moved by ``deltas`` ``[4*A, H, W]``, clipped to the image: boxes
    ``[H*W*A, 4]`` in the kernel's order (h, w, anchor), their scores (from ``[A, H, W]``) and
    their widths and heights (for the size filter). All f32, in OpenVINO's operation order."""
    a = anchors.reshape(-1, 4)
    count = scores.shape[0]
    h, w = deltas.shape[1:]
    d = deltas.reshape(count, 4, h, w).transpose(2, 3, 0, 1).reshape(-1, 4)
    score = scores.transpose(1, 2, 0).reshape(-1)
    x0, y0, x1, y1 = (a[:, i] for i in range(4))
    ww = x1 - x0 + offset
    hh = y1 - y0 + offset
    cx = x0 + F32(0.5) * ww
    cy = y0 + F32(0.5) * hh
    pcx = d[:, 0] * ww + cx
    pcy = d[:, 1] * hh + cy
    pw = np.exp(np.minimum(d[:, 2], MAX_DELTA_LOG_WH)) * ww
    ph = np.exp(np.minimum(d[:, 3], MAX_DELTA_LOG_WH)) * hh
    x0 = pcx - F32(0.5) * pw
    y0 = pcy - F32(0.5) * ph
    x1 = pcx + F32(0.5) * pw - offset
    y1 = pcy + F32(0.5) * ph - offset
    zero = F32(0)
    x0, x1 = (np.maximum(zero, np.minimum(v, img_w - offset)) for v in (x0, x1))
    y0, y1 = (np.maximum(zero, np.minimum(v, img_h - offset)) for v in (y0, y1))
    return np.stack([x0, y0, x1, y1], -1), score, x1 - x0 + offset, y1 - y0 + offset


def nms_overlaps(boxes, thresh, offset):
    """The suppression test of OpenVINO's proposal NMS (nms_cpu): IoU above ``thresh`` and the
    boxes touch."""
    x0, y0, x1, y1 = (boxes[:, i] for i in range(4))
    thresh = F32(thresh)

    def overlaps(i, rest):
        a0, b0, a1, b1 = x0[i], y0[i], x1[i], y1[i]
        c0, d0, c1, d1 = x0[rest], y0[rest], x1[rest], y1[rest]
        width = np.minimum(a1, c1) - np.maximum(a0, c0) + offset
        height = np.minimum(b1, d1) - np.maximum(b0, d0) + offset
        area = np.maximum(F32(0), width) * np.maximum(F32(0), height)
        area_a = (a1 - a0 + offset) * (b1 - b0 + offset)
        area_b = (c1 - c0 + offset) * (d1 - d0 + offset)
        with np.errstate(invalid="ignore", divide="ignore"):
            iou = area / (area_a + area_b - area)
        return (thresh < iou) & (a0 <= c1) & (b0 <= d1) & (c0 <= a1) & (d0 <= b1)
    return overlaps
