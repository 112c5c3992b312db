"""Interpolation (Interpolate-1/4/11), one axis at a time.

Every mode of OpenVINO's Interpolate is separable: the output along an axis is a weighted sum of
a few input elements of that axis (nearest: one element, weight 1), and the weights of several
axes multiply. So each interpolated axis is resampled in turn: its weights and the positions they
read are computed once (float64 coordinates, as the specification's reference code computes
them), as small [out, taps] arrays, and applied to whole slices of the tensor -- no loop over
elements.

How they are applied is where the time goes (an AxisPlan per axis, memoised):
- zero weights are dropped, and taps of one output reading the same element merged (linear's
  triangle spans five taps of which two weigh anything when upsampling by 2);
- when the rows repeat -- output o + p reads the elements of output o shifted by s, with the same
  weights, as at every ratio p/s of small integers (2x up, 2x down, 3/2...) -- and the axis
  splits into chunks of whole periods, the axis is one BLAS matrix product: [chunks, K inputs]
  by a [K, N outputs] matrix, the few taps that reach into a neighbouring chunk and the rows at
  the ends (where taps are clipped) added after. A short axis is one dense matrix product;
- otherwise each of the p phases is a few multiply-adds of strided slices of the input (taps of
  equal weight added first), and an axis without a short period is gathered, one ``np.take`` of
  whole rows per tap; a last axis is then resampled on a transposed copy, so that every inner
  loop is contiguous;
- axes that shrink go first and axes that grow last, so the intermediate result is small;
- the leading axes (before the first resampled one) are cut into blocks of a few MiB that run
  all the passes in turn, the last one writing into the output, with the intermediates taken
  from a per-thread arena kept across calls (fresh arrays were faulted in on every call).
A matrix product multiplies zero weights too, so it only runs on finite data. An infinity or
NaN reaches the outputs whose nonzero weights read it; in linear_onnx and cubic modes, as on
OpenVINO's CPU plugin, also those that read it with a zero weight (0 * inf is NaN): there a
float input that is not all finite, where some axis dropped such a tap, takes every tap of
every axis (:func:`_every_tap`).
Only rounding differs between these and gathering every tap (tests/ops/image/
test_interpolate_fast.py holds them to it).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np

from irexec.kernels import scratch
from irexec.kernels.numeric import compute_dtype, narrow, is_float


def original_coordinates(out_len: int, in_len: int, scale: float, mode: str) -> np.ndarray:
    """Where each output position of an axis falls in the (padded) input."""
    x = np.arange(out_len, dtype=np.float64)
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if out_len > 1 else np.zeros(out_len)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) / scale
    # align_corners
    return np.zeros(out_len) if out_len == 1 else x * (in_len - 1) / (out_len - 1)


def nearest_indices(coords: np.ndarray, nearest_mode: str, downsample: bool, in_len: int) \
        -> np.ndarray:
    away = np.sign(coords) * np.floor(np.abs(coords) + 0.5)  # C++ round: halves away from 0
    if nearest_mode == "round_prefer_floor":
        idx = np.where(coords == np.floor(coords) + 0.5, np.floor(coords), away)
    elif nearest_mode == "round_prefer_ceil":
        idx = away
    elif nearest_mode == "floor":
        idx = np.floor(coords)
    elif nearest_mode == "ceil":
        idx = np.ceil(coords)
    else:  # simple
        idx = np.ceil(coords) if downsample else np.trunc(coords)
    return np.clip(idx, 0, in_len - 1).astype(np.int64)


def cubic_coefficients(t: np.ndarray, a: float) -> np.ndarray:
    """The four weights of taps floor-1 .. floor+2 for fractional offsets ``t`` [out]."""
    s = np.abs(t)
    return np.stack([
        a * (s - 1.0) * (s - 1.0) * s,
        ((a + 2.0) * s - (a + 3.0)) * s * s + 1.0,
        (((-a - 2.0) * s + (2.0 * a + 3.0)) * s - a) * s,
        -a * s * s * (s - 1.0),
    ], axis=1)


def axis_weights(mode: str, out_len: int, in_len: int, scale: float, attrs: dict,
                 antialias_scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(positions [out, taps], weights [out, taps]) that resample one axis."""
    if mode in ("bilinear_pillow", "bicubic_pillow"):
        return _pillow(mode, out_len, in_len)
    if mode == "area":
        return area_weights(out_len, in_len)
    coords = original_coordinates(out_len, in_len, scale, attrs["coordinate_transformation_mode"])
    if mode == "linear_onnx":
        c = np.clip(coords, 0, in_len - 1)
        i1 = np.minimum(c.astype(np.int64), in_len - 1)
        i2 = np.minimum(i1 + 1, in_len - 1)
        d1, d2 = np.abs(c - i1), np.abs(c - i2)
        same = i1 == i2
        d1[same], d2[same] = 0.5, 0.5
        return np.stack([i1, i2], axis=1), np.stack([d2, d1], axis=1)
    if mode == "cubic":
        base = np.floor(coords)
        taps = base[:, None].astype(np.int64) + np.arange(-1, 3)[None, :]
        return np.clip(taps, 0, in_len - 1), cubic_coefficients(coords - base,
                                                                attrs["cube_coeff"])
    # linear: a triangle filter, stretched by the scale when antialiasing a downsample
    a = antialias_scale
    r = 2 if scale > 1.0 else int(math.ceil(2.0 / a))
    centre = np.round(coords)  # numpy and Python's round agree: halves to even
    taps = centre[:, None].astype(np.int64) + np.arange(-r, r + 1)[None, :]
    dz = coords[:, None] - taps
    w = a * np.maximum(0.0, 1.0 - np.abs(a * dz))
    inside = (taps >= 0) & (taps < in_len)
    w = np.where(inside, w, 0.0)
    total = w.sum(axis=1, keepdims=True)
    w = np.divide(w, total, out=np.zeros_like(w), where=total != 0)
    return np.clip(taps, 0, in_len - 1), w


def area_weights(out_len: int, in_len: int) -> tuple[np.ndarray, np.ndarray]:
    """Interpolate-1's ``area`` mode: output element o is the mean of the input over the interval
    [o * s, (o + 1) * s) with s = in / out, each input element i standing for [i, i + 1) and
    weighed by how much of it the interval covers (OpenCV's INTER_AREA when shrinking; when
    growing, an output inside one input element copies it)."""
    s = in_len / out_len
    start = np.arange(out_len) * s
    stop = start + s
    first = np.floor(start).astype(np.int64)
    taps = first[:, None] + np.arange(int(math.ceil(s)) + 1)[None, :]
    covered = np.minimum(stop[:, None], taps + 1) - np.maximum(start[:, None], taps)
    w = np.where(taps < in_len, np.maximum(covered, 0.0), 0.0) / s
    return np.clip(taps, 0, in_len - 1), w


def _pillow(mode: str, out_len: int, in_len: int):
    """Pillow's resampling filters (its Resample.c, as OpenVINO's reference ports it): the
    support widens by in/out when shrinking; weights normalized per output element. Pillow's
    bicubic filter has a = -0.5: OpenVINO ignores cube_coeff here, and so does irexec."""
    support_base, a = (1.0, None) if mode == "bilinear_pillow" else (2.0, -0.5)
    scale = in_len / out_len
    filterscale = max(scale, 1.0)
    support = support_base * filterscale
    ksize = int(math.ceil(support)) * 2 + 1
    xx = np.arange(out_len, dtype=np.float64)
    centre = (xx + 0.5) * scale
    xmin = np.maximum((centre - support + 0.5).astype(np.int64), 0)
    xmax = np.minimum((centre + support + 0.5).astype(np.int64), in_len) - xmin
    k = np.arange(ksize)[None, :]
    x = (k + xmin[:, None] - centre[:, None] + 0.5) / filterscale
    s = np.abs(x)
    if a is None:
        w = np.where(s < 1.0, 1.0 - s, 0.0)
    else:
        w = np.where(s < 1.0, ((a + 2.0) * s - (a + 3.0)) * s * s + 1,
                     np.where(s < 2.0, (((s - 5) * s + 8) * s - 4) * a, 0.0))
    w = np.where(k < xmax[:, None], w, 0.0)
    total = w.sum(axis=1, keepdims=True)
    w = np.divide(w, total, out=w.copy(), where=total != 0)
    return np.minimum(xmin[:, None] + k, in_len - 1), w


BLOCK_BYTES = 8 << 20  # the working set of one block of leading rows (half without products)
MAX_WEIGHT_DRIFT = 1e-12  # how far a period's weights may differ from the first period's
MAX_PHASES = 8  # beyond, the phases' many small slices cost more than gathering every row
DENSE_BELOW = 16  # an axis this short or shorter is a dense matrix product even when periodic,
DENSE_MAX = 32  # and one up to this long when it does not split into chunks (2 * in flops each)


class AxisPlan:
    """How one axis is resampled: ``positions`` and ``weights`` [out, taps] with each output's
    zero weights dropped (its taps then read the input in increasing order, the unused ones
    padded with weight 0 at the last position read), and, when the pattern repeats, its
    ``period`` (p, s, lo, hi): output o + p of rows lo .. hi-1 reads positions of o plus s with
    the same weights (up to MAX_WEIGHT_DRIFT), so those rows are p strided slices of the input,
    one per phase, each a few multiply-adds over whole slices instead of gathers."""

    __slots__ = ("_cache", "copy", "drops", "in_len", "longest_run", "period", "positions",
                 "taps", "weights")

    def __init__(self, positions: np.ndarray, weights: np.ndarray, in_len: int,
                 ratios=(), every_column: bool = False):
        # the taps a NaN or infinity reaches an output through (0 * NaN is NaN): every tap
        # column that weighs anything somewhere, or (``every_column``) all of them
        used = np.arange(weights.shape[1]) if every_column \
            else np.flatnonzero(np.any(weights != 0, axis=0))
        self.taps = (positions[:, used].astype(np.int64), weights[:, used])
        self.positions, self.weights = compact_taps(positions, weights)
        # whether some output no longer reads a position it read there (a zero weight, or
        # weights that add up to zero): a NaN or infinity at it would have made it NaN
        distinct = 1 + np.count_nonzero(np.diff(self.taps[0], axis=1), axis=1) if len(used) \
            else np.zeros(len(positions), np.int64)
        self.drops = not np.array_equal(distinct, np.count_nonzero(self.weights, axis=1))
        self.in_len = in_len
        self.copy = self.positions.shape[1] == 1 and bool(np.all(self.weights == 1.0))
        self.period = find_period(self.positions, self.weights, ratios)
        self.longest_run = 0
        self._cache: dict = {}
        for a in (self.positions, self.weights, *self.taps):
            a.flags.writeable = False

    def runs(self, dtype: np.dtype):
        """The periodic plan as runs of rows (dst slice, rows, ((weight, src slices), ...)):
        one per phase and one per row outside the periodic ones; taps of one row reading the
        same position add their weights, taps of equal weight are added before one multiply,
        and weight None means a copy. None when the axis has no period (then: ``columns``)."""
        if self.period is None:
            return None
        key = ("runs", np.dtype(dtype))
        if key not in self._cache:
            self._cache[key] = self._build_runs(np.dtype(dtype).type)
        return self._cache[key]

    def _build_runs(self, ct):
        p, s, lo, hi = self.period
        rows = [(o, 1, 1, 1) for o in (*range(lo), *range(hi, self.out_len))]
        rows += [(lo + q, len(range(lo + q, hi, p)), p, s) for q in range(p)]
        runs = []
        for first, n, step_out, step_in in rows:
            taps: dict[int, float] = {}
            for pos, w in zip(self.positions[first].tolist(), self.weights[first].tolist()):
                if w != 0:
                    taps[pos] = taps.get(pos, 0.0) + w
            by_weight: dict[float, list] = {}
            for pos, w in taps.items():
                if w != 0:
                    by_weight.setdefault(w, []).append(
                        slice(pos, pos + (n - 1) * step_in + 1, step_in))
            groups = tuple((None if w == 1.0 else ct(w), tuple(sources))
                           for w, sources in by_weight.items())
            runs.append((slice(first, first + (n - 1) * step_out + 1, step_out), n, groups))
        self.longest_run = max(n for _, n, _ in runs)
        return runs

    def columns(self, dtype: np.dtype):
        """The taps as (positions [out], weights [1, out, 1] in ``dtype`` or None for a copy),
        the columns whose weights are all 0 left out."""
        key = ("columns", np.dtype(dtype))
        if key not in self._cache:
            cols = []
            for t in range(self.positions.shape[1]):
                w = self.weights[:, t]
                if w.any():
                    cols.append((self.positions[:, t], None if self.copy
                                 else w.astype(dtype).reshape(1, -1, 1)))
            self._cache[key] = cols
        return self._cache[key]

    def chunks(self, dtype: np.dtype):
        """The periodic plan as a matrix product over the last axis, or None: the axis cut into
        C chunks of K inputs that make N outputs each (K = k * s, N = k * p: k periods), so
        that [rows * C, K] @ M [K, N] computes every chunk at once with BLAS. Returns (K, N, C,
        M, halos, singles): a tap that falls outside its chunk is a halo (output j, chunk
        offset, input within that chunk, weight), added afterwards; ``singles`` are the runs
        of the rows outside the periodic ones, recomputed last. A short axis is one chunk, a
        dense matrix (no halos, no end rows). None when the axis is long and does not split
        evenly into such chunks, and for copies (nearest stays exact for every type)."""
        key = ("chunks", np.dtype(dtype))
        if key not in self._cache:
            self._cache[key] = self._build_chunks(np.dtype(dtype))
        return self._cache[key]

    def _build_chunks(self, dtype: np.dtype):
        if self.copy:
            return None
        found = None
        if self.period is not None and self.in_len > DENSE_BELOW:
            found = self._periodic_chunks(dtype)
        if found is None and self.in_len <= DENSE_MAX:
            # a short axis: one dense [in, out] matrix, every row at once
            matrix = np.zeros((self.in_len, self.out_len))
            np.add.at(matrix, (self.positions, np.arange(self.out_len)[:, None]), self.weights)
            found = (self.in_len, self.out_len, 1, matrix.astype(dtype), (), [])
        return found

    def _periodic_chunks(self, dtype: np.dtype):
        p, s, lo, hi = self.period
        valid = [k for k in range(1, 65) if k * s <= 64 and k * p <= 64
                 and self.in_len % (k * s) == 0 and self.in_len // (k * s) >= 2
                 and self.out_len == self.in_len // (k * s) * (k * p)]
        if not valid:
            return None
        k = next((k for k in valid if k * s >= 8 and k * p >= 8), valid[-1])
        size_in, size_out = k * s, k * p
        anchor = -(-lo // size_out)  # a chunk all of whose rows are periodic
        if (anchor + 1) * size_out > hi:
            return None
        matrix = np.zeros((size_in, size_out))
        halos = []
        for j in range(size_out):
            row = anchor * size_out + j
            for pos, w in zip(self.positions[row].tolist(), self.weights[row].tolist()):
                if w == 0:
                    continue
                i = pos - anchor * size_in
                if 0 <= i < size_in:
                    matrix[i, j] += w
                else:
                    halos.append((j, i // size_in, i % size_in, dtype.type(w)))
        singles = [run for run in self.runs(dtype) if run[1] == 1 and run[0].step == 1
                   and not (lo <= run[0].start < hi)]
        return (size_in, size_out, self.in_len // size_in, matrix.astype(dtype), tuple(halos),
                singles)

    @property
    def out_len(self) -> int:
        return self.positions.shape[0]

    def is_identity(self) -> bool:
        return self.copy and self.out_len == self.in_len \
            and bool(np.all(self.positions[:, 0] == np.arange(self.in_len)))


def compact_taps(positions: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's taps that read the same position merged (their weights added: clipped taps
    at the ends read one element several times), then its nonzero weights first, in their order,
    in as few tap columns as the row with the most of them needs; a row's unused taps get weight
    0 and its last used position."""
    positions = positions.astype(np.int64)
    weights = weights.astype(np.float64)  # a copy: merged below
    for t in range(1, positions.shape[1]):  # a row's positions never decrease
        same = positions[:, t] == positions[:, t - 1]
        if same.any():
            weights[same, t] += weights[same, t - 1]
            weights[same, t - 1] = 0.0
    nonzero = weights != 0
    taps = max(int(nonzero.sum(axis=1).max(initial=0)), 1)
    if taps == positions.shape[1] and nonzero.all():
        return positions, weights
    order = np.argsort(~nonzero, axis=1, kind="stable")[:, :taps]
    pos = np.take_along_axis(positions, order, axis=1)
    w = np.take_along_axis(weights, order, axis=1)
    used = np.take_along_axis(nonzero, order, axis=1)
    count = used.sum(axis=1)
    last = pos[np.arange(len(pos)), np.maximum(count - 1, 0)]
    last = np.where(count > 0, last, 0)
    pos = np.where(used, pos, last[:, None])
    return pos, np.where(used, w, 0.0)


def find_period(positions: np.ndarray, weights: np.ndarray, ratios) -> tuple | None:
    """(p, s, lo, hi) for the longest run of rows whose taps repeat every p outputs, s inputs
    further on (p / s one of ``ratios``, the axis's scale as a fraction), or None when no run
    gives each of the p phases a few rows, or p > MAX_PHASES (then gathers are cheaper)."""
    out_len = positions.shape[0]
    for ratio in ratios:
        p, s = ratio
        if not 1 <= p <= MAX_PHASES or s < 0 or out_len < 4 * p:
            continue
        same = np.all(positions[p:] == positions[:-p] + s, axis=1)
        same &= np.all(np.abs(weights[p:] - weights[:-p]) <= MAX_WEIGHT_DRIFT, axis=1)
        # the longest run of rows o with row o + p repeating row o
        edges = np.diff(np.concatenate(([0], same.view(np.int8), [0])))
        starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
        if not len(starts):
            continue
        best = int(np.argmax(stops - starts))
        lo, run = int(starts[best]), int(stops[best] - starts[best])
        if run >= 3 * p:
            return p, s, lo, lo + run + p
    return None


def scale_ratios(*values) -> list[tuple[int, int]]:
    """Candidate periods (outputs p per s inputs) of an axis resampled at these ratios."""
    found = []
    for v in values:
        if not (v > 0 and math.isfinite(v)):
            continue
        f = Fraction(v).limit_denominator(64)
        if abs(float(f) - v) <= 1e-9 * v and (f.numerator, f.denominator) not in found:
            found.append((f.numerator, f.denominator))
    return found


# The blocks' intermediate arrays come from this thread's scratch arena (kernels/scratch.py),
# kept from call to call up to ARENA_LIMIT: on the benchmark machine, fresh arrays of a few MiB
# were faulted in again on every call, which cost as much as the arithmetic. No result is ever
# a view of it.
ARENA_LIMIT = 16 << 20
# The modes whose every tap OpenVINO's CPU plugin multiplies, zero weights too (checked: a NaN
# reaches the same outputs); in linear and Pillow modes it reads some of them, not all.
EVERY_TAP = ("linear_onnx", "cubic")


def apply_axis(src: np.ndarray, axis: int, plan: AxisPlan, dst: np.ndarray,
               take=np.empty) -> None:
    """dst[..., o, ...] = sum over taps t of weights[o, t] * src[..., positions[o, t], ...]
    (``src`` and ``dst`` C-contiguous, of the plan's compute type; ``take(shape, dtype)``
    gives the scratch arrays). A periodic axis that splits into chunks is a matrix product
    (AxisPlan.chunks); otherwise a last axis is resampled with the two last axes swapped, so that
    every slice and gather moves whole rows (contiguous inner loops): the two transposing copies
    cost less than strided or element-wise loops."""
    chunks = plan.chunks(dst.dtype)
    if chunks is not None:
        # a matrix product multiplies every input of a chunk by every column, zero weights
        # too: an infinity or NaN would spread over its whole chunk. The chunks tile the axis,
        # so a non-finite input makes a non-finite output, and the smaller of the two tells;
        # then the other paths redo every output
        with np.errstate(invalid="ignore", over="ignore"):
            if src.size <= dst.size:
                if _finite(src):
                    _apply_chunks(_as3(src, axis), chunks, _as3(dst, axis), take)
                    return
            else:
                _apply_chunks(_as3(src, axis), chunks, _as3(dst, axis), take)
                if _finite(dst):
                    return
    if axis == src.ndim - 1 and src.ndim >= 2 and src.shape[-2] > 1:
        src_t = take(src.shape[:-2] + (src.shape[-1], src.shape[-2]), src.dtype)
        np.copyto(src_t, np.swapaxes(src, -1, -2))
        dst_t = take(dst.shape[:-2] + (dst.shape[-1], dst.shape[-2]), dst.dtype)
        _apply_rows(src_t, axis - 1, plan, dst_t, take)
        np.copyto(dst, np.swapaxes(dst_t, -1, -2))
    else:
        _apply_rows(src, axis, plan, dst, take)


def _finite(a: np.ndarray) -> bool:
    """Whether a C-contiguous array holds no infinity or NaN (its dot product with itself, 3x
    faster than a sum; values beyond 1e19 in f32 also say no, which only costs time)."""
    flat = a.reshape(-1)
    return math.isfinite(np.dot(flat, flat))


def _as3(a: np.ndarray, axis: int) -> np.ndarray:
    """A C-contiguous array as a view [outer, axis, inner]."""
    if not a.flags.c_contiguous:
        raise ValueError("interpolate: a pass needs C-contiguous arrays")
    return a.reshape(math.prod(a.shape[:axis]), a.shape[axis], -1)


def _apply_rows(src: np.ndarray, axis: int, plan: AxisPlan, dst: np.ndarray, take) -> None:
    s3, d3 = _as3(src, axis), _as3(dst, axis)
    runs = plan.runs(dst.dtype)
    if runs is None:
        _gather(s3, plan.columns(dst.dtype), d3, take)
    else:
        _apply_runs(s3, runs, d3, plan.longest_run, take)


def _apply_runs(s3: np.ndarray, runs, d3: np.ndarray, longest: int, take) -> None:
    """The runs of AxisPlan.runs on [outer, axis, inner] views."""
    scratch = None
    for dsl, n, groups in runs:
        out = d3[:, dsl]
        if not groups:
            out[...] = 0
        for g, (w, sources) in enumerate(groups):
            if g:
                if scratch is None:
                    scratch = take((d3.shape[0], longest, d3.shape[2]), d3.dtype)
                target = scratch[:, :n]
            else:
                target = out
            if len(sources) == 1:
                if w is None:
                    np.copyto(target, s3[:, sources[0]])
                else:
                    np.multiply(s3[:, sources[0]], w, out=target)
            else:
                np.add(s3[:, sources[0]], s3[:, sources[1]], out=target)
                for sl in sources[2:]:
                    np.add(target, s3[:, sl], out=target)
                if w is not None:
                    np.multiply(target, w, out=target)
            if g:
                np.add(out, target, out=out)


def _apply_chunks(s3: np.ndarray, chunks, d3: np.ndarray, take) -> None:
    """An axis by AxisPlan.chunks on [outer, axis, inner] views: one matrix product, the halos,
    the end rows. Each halo is one strided operation over all chunks of all rows; where a chunk
    has no neighbour there it reads the neighbouring row's chunk instead, but such an output
    reads outside the axis, so it is one of the end rows, recomputed last."""
    size_in, size_out, _, matrix, halos, singles = chunks
    inner = s3.shape[2]
    if inner == 1:  # the last axis: [rows * C, K] @ [K, N]
        x, o = s3.reshape(-1, size_in), d3.reshape(-1, size_out)
        np.matmul(x, matrix, out=o)
    else:  # [N, K] @ [K, inner] for each chunk of each row
        x, o = s3.reshape(-1, size_in, inner), d3.reshape(-1, size_out, inner)
        np.matmul(matrix.T, x, out=o)
    if halos:
        scratch = take((len(x),) + x.shape[2:], d3.dtype)
        for j, shift, i, w in halos:
            first, stop = max(0, -shift), len(x) - max(0, shift)
            part = scratch[:stop - first]
            np.multiply(x[first + shift:stop + shift, i], w, out=part)
            target = o[first:stop, j]
            np.add(target, part, out=target)
    if singles:
        _apply_runs(s3, singles, d3, 1, take)


def _gather(s3: np.ndarray, columns, d3: np.ndarray, take) -> None:
    """Every output row at once, one gather (np.take) of whole rows per tap."""
    if not columns:
        d3[...] = 0
        return
    term = None
    for t, (pos, w) in enumerate(columns):
        if t == 0:
            np.take(s3, pos, axis=1, out=d3, mode="clip")
            if w is not None:
                d3 *= w
        else:
            if term is None:
                term = take(d3.shape, d3.dtype)
            np.take(s3, pos, axis=1, out=term, mode="clip")
            term *= w
            d3 += term


def plan_axis(mode: str, out_len: int, in_len: int, scale: float, attrs: dict,
              antialias_scale: float) -> AxisPlan:
    """The plan of one axis (memoised: a model resizes the same way again and again)."""
    key = (mode, out_len, in_len, scale, antialias_scale,
           attrs.get("coordinate_transformation_mode"), attrs.get("nearest_mode"),
           float(attrs.get("cube_coeff", -0.75)))
    return _plan_axis(*key)


@lru_cache(maxsize=256)
def _plan_axis(mode, out_len, in_len, scale, antialias_scale, ctm, nearest_mode, cube_coeff):
    attrs = {"coordinate_transformation_mode": ctm, "nearest_mode": nearest_mode,
             "cube_coeff": cube_coeff}
    if mode == "nearest":
        coords = original_coordinates(out_len, in_len, scale, ctm)
        idx = nearest_indices(coords, nearest_mode, scale < 1, in_len)
        positions, weights = idx[:, None], np.ones((out_len, 1))
    else:
        positions, weights = axis_weights(mode, out_len, in_len, scale, attrs, antialias_scale)
    ratios = scale_ratios(scale, out_len / in_len,
                          (out_len - 1) / (in_len - 1) if in_len > 1 and out_len > 1 else 0)
    # OpenVINO's cubic multiplies its four taps even where a whole column weighs 0 (an output
    # on an input: a NaN next to it spreads, measured against the CPU plugin)
    return AxisPlan(positions, weights, in_len, ratios,
                    every_column=mode == "cubic" and antialias_scale == 1.0)


def _order(plans: list[tuple[int, AxisPlan]], last: int) -> list[tuple[int, AxisPlan]]:
    """Shrinking axes first and growing ones last (the intermediate results stay small); of
    axes that grow alike, the last axis first, and of axes that shrink alike, the last axis last
    (its strided pass then runs on the smaller array)."""
    def key(item):
        axis, plan = item
        growth = plan.out_len / plan.in_len
        return growth, (-1 if growth > 1 else 1) if axis == last else 0
    return sorted(plans, key=key)


def interpolate(x: np.ndarray, out_shape, axes, scales, attrs: dict) -> np.ndarray:
    """``x`` already padded; ``out_shape`` the full output shape; ``axes`` the interpolated axes
    and ``scales`` their scales (output / input for sizes mode)."""
    mode = attrs["mode"]
    if mode == "nearest":
        axis_scale = dict(zip(axes, scales))
        # every axis, as the specification's reference does (an axis not named keeps scale 1)
        plans = [(axis, plan_axis(mode, out_shape[axis], x.shape[axis],
                                  axis_scale.get(axis, 1.0), attrs, 1.0))
                 for axis in range(x.ndim)]
        plans = [(a, p) for a, p in plans if not p.is_identity()]
        return _run_plans(x, out_shape, _order(plans, x.ndim - 1), x.dtype, None)
    ct = compute_dtype(x.dtype) if is_float(x.dtype) else np.dtype(np.float64)
    antialias = attrs.get("antialias", False) and any(s < 1 for s in scales)
    pillow = mode in ("bilinear_pillow", "bicubic_pillow")
    plans = []
    for axis, scale in zip(axes, scales):
        if pillow and out_shape[axis] == x.shape[axis]:
            continue  # Pillow skips an axis whose size does not change
        plan = plan_axis(mode, out_shape[axis], x.shape[axis], scale, attrs,
                         scale if antialias else 1.0)
        if not plan.is_identity():
            plans.append((axis, plan))
    between = None
    if pillow and not is_float(x.dtype):
        between = x.dtype  # Pillow rounds between its two passes, in its own order
    else:
        plans = _order(plans, x.ndim - 1)
        if mode in EVERY_TAP and is_float(x.dtype) and any(plan.drops for _, plan in plans) \
                and not _all_finite(x):
            return _every_tap(x, plans, ct)
    return _run_plans(x, out_shape, plans, ct, between)


def _all_finite(x: np.ndarray) -> bool:
    if x.dtype in (np.float32, np.float64) and x.flags.c_contiguous:
        with np.errstate(over="ignore", invalid="ignore"):
            return _finite(x)  # may say no for huge finite values: then only slower
    return bool(np.isfinite(x).all())


def _every_tap(x: np.ndarray, plans, ct) -> np.ndarray:
    """The plans applied with every tap column that weighs anything (zero weights in it
    too), as the kernel did before the plans: for data holding an infinity or a NaN, which
    then reaches every output that reads it."""
    data = x.astype(ct)
    for axis, plan in plans:
        positions, weights = plan.taps
        shape = [1] * x.ndim
        shape[axis] = -1
        total = np.zeros(data.shape[:axis] + (plan.out_len,) + data.shape[axis + 1:], ct)
        with np.errstate(invalid="ignore", over="ignore"):  # 0 * inf, inf - inf: NaN
            for t in range(positions.shape[1]):
                term = np.take(data, positions[:, t], axis=axis)
                term *= weights[:, t].astype(ct).reshape(shape)
                total += term
        data = total
    return narrow(data, x.dtype)


def _run_plans(x: np.ndarray, out_shape, plans, ct, between) -> np.ndarray:
    """Applies the axes' plans in turn, a block of leading rows (the axes before the first one
    resampled) at a time so that each block's intermediate results stay in the cache; the last
    pass writes into the output, rounded to the input's type block by block. Blocks of 8 MiB
    (input, intermediates and output) were the fastest on the 2-core benchmark machine (1 MiB L2
    per core, a large shared L3) when every pass is a matrix product, and of 4 MiB otherwise:
    smaller ones pay the per-block work (numpy calls, the end rows, the finiteness checks) too
    often, larger ones leave the cache."""
    dtype = x.dtype
    out = np.empty(out_shape, dtype)
    if not plans:
        np.copyto(out, x)
        return out
    lead = min(axis for axis, _ in plans)
    x = np.ascontiguousarray(x)
    rows = math.prod(x.shape[:lead])
    xs = x.reshape((rows,) + x.shape[lead:])
    ys = out.reshape((rows,) + tuple(out_shape[lead:]))
    shapes = []
    shape = list(xs.shape[1:])
    for axis, plan in plans:
        shape[axis - lead] = plan.out_len
        shapes.append(tuple(shape))
    per_row = np.dtype(ct).itemsize * (math.prod(xs.shape[1:]) +
                                       sum(math.prod(s) for s in shapes))
    budget = BLOCK_BYTES
    if any(plan.chunks(ct) is None for _, plan in plans):
        budget //= 2  # slices and gathers: many more numpy calls, each over less data
    block = max(1, min(rows, budget // max(per_row, 1)))
    arena = scratch.arena("interpolate", ARENA_LIMIT)
    for r in range(0, rows, block):
        n = min(block, rows - r)
        arena.start()
        data = xs[r:r + n]
        if data.dtype != ct:
            data = arena.take(data.shape, ct)
            np.copyto(data, xs[r:r + n], casting="unsafe")
        for i, ((axis, plan), shape) in enumerate(zip(plans, shapes)):
            final = i == len(plans) - 1
            target = ys[r:r + n] if final and ct == dtype else arena.take((n,) + shape, ct)
            apply_axis(data, axis - lead + 1, plan, target, arena.take)
            if between is not None and not final:
                np.copyto(target, round_clip(target, between))
            data = target
        if ct != dtype:
            if is_float(dtype):
                ys[r:r + n] = narrow(data, dtype)
            else:
                ys[r:r + n] = round_clip(data, dtype)
    return out


def round_clip(values: np.ndarray, dtype) -> np.ndarray:
    """Floats to an integer type: rounded half away from zero, saturated."""
    info = np.iinfo(dtype)
    rounded = np.where(values >= 0, np.floor(values + 0.5), np.ceil(values - 0.5))
    return np.clip(rounded, info.min, info.max).astype(dtype)
