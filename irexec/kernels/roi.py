"""Pooling over regions of interest (ROIAlign, ROIAlignRotated, ROIPooling, PSROIPooling,
DeformablePSROIPooling): sample positions computed for every ROI and bin at once, feature values
read by fancy-index gathers and combined with bilinear weights, in blocks of ROIs sized to keep
the gathered samples under ``BLOCK`` elements.

Arithmetic follows OpenVINO's CPU plugin and reference kernels step by step, in the compute type
(f32 for f16/bf16 data; f32 and f64 in their own type), so that results agree to a few units in
the last place: the same operation order for coordinates, the same truncations and clamps.
"""

from __future__ import annotations

import numpy as np

from irexec import budget
from irexec.errors import OpError
from irexec.kernels.numeric import compute_dtype, narrow

BLOCK = 1 << 22  # gathered elements per block of ROIs


def _blocks(count: int, per_roi: int):
    """Ranges of ROI indices whose samples hold at most ``BLOCK`` elements (one ROI at least)."""
    step = max(1, BLOCK // max(per_roi, 1))
    for start in range(0, count, step):
        yield slice(start, min(count, start + step))


def _sized_blocks(sizes: np.ndarray, per_unit: int):
    """Blocks of ROI indices (arrays) grouped by their sample counts ``sizes``, within a power
    of two of each other, so that a block padded to its largest ROI wastes little; each block
    holds at most ``BLOCK`` elements (one ROI at least)."""
    sizes = np.maximum(sizes, 1)
    bucket = np.ceil(np.log2(sizes)).astype(np.int64)
    for b in np.unique(bucket):
        members = np.flatnonzero(bucket == b)
        top = int(sizes[members].max())
        for part in _blocks(members.size, top * per_unit):
            yield members[part]


def round_half_away(x: np.ndarray) -> np.ndarray:
    """C's round(): halves away from zero, exactly (in float64), in x's dtype."""
    w = x.astype(np.float64)
    return np.where(w >= 0, np.floor(w + 0.5), np.ceil(w - 0.5)).astype(x.dtype)


def _as_int(x: np.ndarray) -> np.ndarray:
    """Truncation toward zero as a C cast does; NaN and huge values pinned (masked by callers)."""
    w = np.nan_to_num(x.astype(np.float64), nan=0.0, posinf=2.0 ** 40, neginf=-2.0 ** 40)
    return np.trunc(np.clip(w, -2.0 ** 40, 2.0 ** 40)).astype(np.int64)


# --- ROIAlign and ROIAlignRotated -----------------------------------------------------------------

def roi_align(data, rois, batch_indices, *, pooled_h: int, pooled_w: int, sampling_ratio: int,
              spatial_scale: float, mode: str = "avg", aligned_mode: str = "asymmetric",
              rotated: bool = False, clockwise: bool = False) -> np.ndarray:
    """[R, C, pooled_h, pooled_w]: each bin the average (or the maximum, never below 0) of its
    bilinearly interpolated sample points (OpenVINO's roi_align reference)."""
    ct = compute_dtype(data.dtype)
    x = data.astype(ct, copy=False)
    n, c, h, w = x.shape
    r = rois.astype(ct, copy=False)
    count = r.shape[0]
    out = np.zeros((count, c, pooled_h, pooled_w), ct)
    if count == 0 or c == 0:
        return narrow(out, data.dtype)
    scale = ct.type(np.float32(spatial_scale))
    half = ct.type(0.5)
    if rotated:
        cx = r[:, 0] * scale - half
        cy = r[:, 1] * scale - half
        width = r[:, 2] * scale
        height = r[:, 3] * scale
        angle = -r[:, 4] if clockwise else r[:, 4]
        cos, sin = np.cos(angle).astype(np.float32), np.sin(angle).astype(np.float32)
        x1, y1 = -width / ct.type(2), -height / ct.type(2)
    else:
        src = ct.type(0.5) if aligned_mode == "half_pixel" else ct.type(0)
        dst = ct.type(-0.5) if aligned_mode in ("half_pixel", "half_pixel_for_nn") else ct.type(0)
        x1 = (r[:, 0] + src) * scale + dst
        y1 = (r[:, 1] + src) * scale + dst
        width = (r[:, 2] + src) * scale + dst - x1
        height = (r[:, 3] + src) * scale + dst - y1
        if aligned_mode == "asymmetric":
            width, height = np.maximum(width, ct.type(1)), np.maximum(height, ct.type(1))
    bin_w = width / ct.type(pooled_w)
    bin_h = height / ct.type(pooled_h)
    if sampling_ratio > 0:
        sr_x = np.full(count, sampling_ratio, np.int64)
        sr_y = sr_x
    else:
        sr_x = np.maximum(_as_int(np.ceil(bin_w)), 0)
        sr_y = np.maximum(_as_int(np.ceil(bin_h)), 0)
    samples = sr_x * sr_y
    with np.errstate(divide="ignore", invalid="ignore"):
        dist_x = bin_w / np.maximum(sr_x, 1).astype(ct)
        dist_y = bin_h / np.maximum(sr_y, 1).astype(ct)
    worst = (pooled_h, pooled_w, max(int(sr_y.max()), 1), max(int(sr_x.max()), 1), c)
    problem = budget.shape_problem(worst, x.dtype.itemsize * 4)  # a few arrays of samples
    if problem is not None:
        raise OpError(f"a ROI of {worst[2]} x {worst[3]} samples per bin (sampling_ratio 0 "
                      f"samples ceil(bin size)): {problem}", code="IR109")
    table = x.transpose(0, 2, 3, 1).reshape(n * h * w, c)  # [pixel, channel] rows to gather
    bidx = np.asarray(batch_indices).astype(np.int64).reshape(-1)
    for blk in _sized_blocks(np.maximum(sr_x, 1) * np.maximum(sr_y, 1), pooled_h * pooled_w * c):
        sx, sy = max(int(sr_x[blk].max()), 1), max(int(sr_y[blk].max()), 1)
        ph = np.arange(pooled_h, dtype=ct)[:, None]
        pw = np.arange(pooled_w, dtype=ct)[:, None]
        ky = np.arange(sy, dtype=ct) + half
        kx = np.arange(sx, dtype=ct) + half
        # pre_y [R, PH, SY], pre_x [R, PW, SX]
        pre_y = (y1[blk, None, None] + ph * bin_h[blk, None, None]) + dist_y[blk, None, None] * ky
        pre_x = (x1[blk, None, None] + pw * bin_w[blk, None, None]) + dist_x[blk, None, None] * kx
        # to [R, PH, PW, SY, SX]
        py = pre_y[:, :, None, :, None]
        px = pre_x[:, None, :, None, :]
        if rotated:
            cb, sb = cos[blk, None, None, None, None], sin[blk, None, None, None, None]
            yy = (py * cb - px * sb + cy[blk, None, None, None, None]).astype(ct)
            xx = (py * sb + px * cb + cx[blk, None, None, None, None]).astype(ct)
        else:
            yy, xx = np.broadcast_arrays(py, px)
        keep = ((np.arange(sy)[None, :, None] < sr_y[blk, None, None])
                & (np.arange(sx)[None, None, :] < sr_x[blk, None, None]))[:, None, None]
        corners, weights = _align_corners(yy, xx, h, w, keep)
        base = (bidx[blk] * (h * w))[:, None, None, None, None]
        value = None
        for (iy, ix), wt in zip(corners, weights):
            term = table[(base + iy * w + ix)] * wt[..., None]
            value = term if value is None else value + term
        # value [R, PH, PW, SY, SX, C]
        if mode == "max":
            pooled = np.maximum(value.max(axis=(3, 4)), ct.type(0))
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                share = value / np.maximum(samples[blk], 1).astype(ct)[:, None, None, None, None,
                                                                        None]
            pooled = share.sum(axis=(3, 4))
        out[blk] = pooled.transpose(0, 3, 1, 2)
    return narrow(out, data.dtype)


def _align_corners(y, x, h: int, w: int, keep):
    """ROIAlign's bilinear rule: a sample outside [-1, H] x [-1, W] counts as 0; else it is
    clamped to >= 0 and, past the last row/column, pinned to it. Corner indices and weights
    (weights 0 where the sample does not count)."""
    ct = y.dtype.type
    out = (y < -1) | (y > h) | (x < -1) | (x > w) | np.isnan(y) | np.isnan(x) | ~keep
    y = np.maximum(np.where(out, 0, y), ct(0))
    x = np.maximum(np.where(out, 0, x), ct(0))
    y_lo, x_lo = _as_int(y), _as_int(x)
    last_y, last_x = y_lo >= h - 1, x_lo >= w - 1
    y_lo = np.where(last_y, h - 1, y_lo)
    x_lo = np.where(last_x, w - 1, x_lo)
    y_hi = np.where(last_y, y_lo, y_lo + 1)
    x_hi = np.where(last_x, x_lo, x_lo + 1)
    y = np.where(last_y, y_lo.astype(y.dtype), y)
    x = np.where(last_x, x_lo.astype(x.dtype), x)
    ly = y - y_lo.astype(y.dtype)
    lx = x - x_lo.astype(x.dtype)
    hy, hx = ct(1) - ly, ct(1) - lx
    zero = ct(0)
    weights = [np.where(out, zero, a * b) for a, b in ((hy, hx), (hy, lx), (ly, hx), (ly, lx))]
    corners = [(y_lo, x_lo), (y_lo, x_hi), (y_hi, x_lo), (y_hi, x_hi)]
    return corners, weights


# --- ROIPooling -----------------------------------------------------------------------------------

def roi_pooling(data, rois, *, pooled_h: int, pooled_w: int, spatial_scale: float,
                method: str) -> np.ndarray:
    """[R, C, pooled_h, pooled_w]: max over each bin of the ROI rounded to the feature map
    (``max``), or the value bilinearly interpolated at each bin's point of a normalized ROI
    (``bilinear``), as OpenVINO's roi_pooling reference does."""
    ct = compute_dtype(data.dtype)
    x = data.astype(ct, copy=False)
    n, c, h, w = x.shape
    r = rois.astype(ct, copy=False)
    count = r.shape[0]
    out = np.zeros((count, c, pooled_h, pooled_w), ct)
    if count == 0 or c == 0 or pooled_h == 0 or pooled_w == 0 or h == 0 or w == 0:
        return narrow(out, data.dtype)  # an empty map: every bin covers nothing and gives 0
    batch = _as_int(r[:, 0])
    table = x.transpose(0, 2, 3, 1).reshape(n * h * w, c)
    if method == "max":
        scale = np.float32(spatial_scale).astype(ct)
        start_w = _as_int(round_half_away(r[:, 1] * scale))
        start_h = _as_int(round_half_away(r[:, 2] * scale))
        end_w = _as_int(round_half_away(r[:, 3] * scale))
        end_h = _as_int(round_half_away(r[:, 4] * scale))
        roi_h = np.maximum(end_h - start_h + 1, 1)
        roi_w = np.maximum(end_w - start_w + 1, 1)
        bin_h = roi_h.astype(ct) / ct.type(pooled_h)
        bin_w = roi_w.astype(ct) / ct.type(pooled_w)
        ph = np.arange(pooled_h, dtype=ct)
        pw = np.arange(pooled_w, dtype=ct)
        hs = np.clip(_as_int(np.floor(ph[None] * bin_h[:, None])) + start_h[:, None], 0, h)
        he = np.clip(_as_int(np.ceil((ph[None] + 1) * bin_h[:, None])) + start_h[:, None], 0, h)
        ws = np.clip(_as_int(np.floor(pw[None] * bin_w[:, None])) + start_w[:, None], 0, w)
        we = np.clip(_as_int(np.ceil((pw[None] + 1) * bin_w[:, None])) + start_w[:, None], 0, w)
        tall = np.maximum((he - hs).max(axis=1), 1)
        wide = np.maximum((we - ws).max(axis=1), 1)
        low = np.finfo(ct).min
        for blk in _sized_blocks(tall * wide, pooled_h * pooled_w * c):
            kh, kw = int(tall[blk].max()), int(wide[blk].max())
            yy = hs[blk, :, None, None, None] + np.arange(kh)[:, None]  # [R, PH, 1, KH, 1]
            xx = ws[blk, None, :, None, None] + np.arange(kw)  # [R, 1, PW, 1, KW]
            inside = (yy < he[blk, :, None, None, None]) & (xx < we[blk, None, :, None, None])
            idx = batch[blk, None, None, None, None] * (h * w) + np.minimum(yy, h - 1) * w \
                + np.minimum(xx, w - 1)
            vals = np.where(inside[..., None], table[idx], low)
            best = vals.max(axis=(3, 4))  # [R, PH, PW, C]
            empty = ((he[blk] <= hs[blk])[:, :, None] | (we[blk] <= ws[blk])[:, None, :])
            best = np.where(empty[..., None], ct.type(0), best)
            out[blk] = best.transpose(0, 3, 1, 2)
        return narrow(out, data.dtype)
    # bilinear
    x1, y1, x2, y2 = r[:, 1], r[:, 2], r[:, 3], r[:, 4]
    hm1, wm1 = ct.type(h - 1), ct.type(w - 1)
    in_y = _bilinear_axis(y1, y2, hm1, pooled_h, ct)  # [R, PH]
    in_x = _bilinear_axis(x1, x2, wm1, pooled_w, ct)  # [R, PW]
    yy = in_y[:, :, None]
    xx = in_x[:, None, :]
    bad = (yy < 0) | (yy > hm1) | (xx < 0) | (xx > wm1) | np.isnan(yy) | np.isnan(xx)
    yy = np.where(bad, 0, yy).astype(ct)
    xx = np.where(bad, 0, xx).astype(ct)
    top, left = _as_int(np.floor(yy)), _as_int(np.floor(xx))
    bottom = np.minimum(_as_int(np.ceil(yy)), h - 1)
    right = np.minimum(_as_int(np.ceil(xx)), w - 1)
    base = batch[:, None, None] * (h * w)
    for blk in _blocks(count, pooled_h * pooled_w * c * 4):
        def at(iy, ix):
            return table[base[blk] + iy[blk] * w + ix[blk]]  # [R, PH, PW, C]
        tl, tr, bl, br = at(top, left), at(top, right), at(bottom, left), at(bottom, right)
        dx = (xx[blk] - left[blk].astype(ct))[..., None]
        dy = (yy[blk] - top[blk].astype(ct))[..., None]
        upper = tl + (tr - tl) * dx
        lower = bl + (br - bl) * dx
        value = upper + (lower - upper) * dy
        value = np.where(bad[blk][..., None], ct.type(0), value)
        out[blk] = value.transpose(0, 3, 1, 2)
    return narrow(out, data.dtype)


def _bilinear_axis(start, end, size_m1, pooled: int, ct):
    """ROIPooling's bilinear sample positions along one axis: [R, pooled]."""
    if pooled > 1:
        span = (end - start) * size_m1
        step = span / ct.type(pooled - 1)
        p = np.arange(pooled, dtype=ct)
        pos = p[None] * step[:, None] + (start * size_m1)[:, None]
        pos[:, -1] = size_m1 * end
        return pos
    mid = (0.5 * (start.astype(np.float64) + end.astype(np.float64))
           * float(size_m1)).astype(ct)
    return mid[:, None]


# --- PSROIPooling and DeformablePSROIPooling ------------------------------------------------

def _real_rois(batch: np.ndarray) -> int:
    """OpenVINO's CPU plugin pools the ROIs before the first one whose batch index is -1 and
    writes zeros for that one and every later one."""
    stop = np.flatnonzero(batch == -1)
    return int(stop[0]) if stop.size else batch.shape[0]


def _ps_start(data, rois, output_dim: int, g: int, ct):
    """What both position-sensitive poolings start from: the data and ROIs in ``ct``, the
    zeroed output [R, output_dim, g, g], and the ROIs to pool with their batch indices (those
    before the first batch index -1; none when there is nothing to pool)."""
    x = data.astype(ct, copy=False)
    r = rois.astype(ct, copy=False)
    out = np.zeros((r.shape[0], output_dim, g, g), ct)
    batch = _as_int(r[:, 0])
    real = _real_rois(batch) if output_dim else 0
    return x, out, r[:real], batch[:real]


def psroi_pooling(data, rois, *, output_dim: int, group_size: int, spatial_scale: float,
                  mode: str, spatial_bins_x: int, spatial_bins_y: int) -> np.ndarray:
    """[R, output_dim, group_size, group_size]: position-sensitive average pooling (bin (i, j)
    of output channel k averages input channel (k*G + i)*G + j over its bin), or bilinear
    sampling averaged over spatial_bins_x*spatial_bins_y sub-boxes, as OpenVINO's CPU plugin."""
    ct = compute_dtype(data.dtype)
    g = group_size
    x, out, r, batch = _ps_start(data, rois, output_dim, g, ct)
    n, c_in, h, w = x.shape
    real = r.shape[0]
    if real == 0 or x.shape[2] == 0 or x.shape[3] == 0:  # an empty map: every bin gives 0
        return narrow(out, data.dtype)
    scale = np.float32(spatial_scale).astype(ct)
    if mode == "average":
        start_w = round_half_away(r[:, 1]) * scale
        start_h = round_half_away(r[:, 2]) * scale
        end_w = round_half_away(r[:, 3] + ct.type(1)) * scale
        end_h = round_half_away(r[:, 4] + ct.type(1)) * scale
        roi_w = np.maximum(end_w - start_w, ct.type(0.1))
        roi_h = np.maximum(end_h - start_h, ct.type(0.1))
        bin_h = roi_h / ct.type(g)
        bin_w = roi_w / ct.type(g)
        p = np.arange(g, dtype=ct)
        hs = np.clip(_as_int(np.floor(p[None] * bin_h[:, None] + start_h[:, None])), 0, h)
        he = np.clip(_as_int(np.ceil((p[None] + 1) * bin_h[:, None] + start_h[:, None])), 0, h)
        ws = np.clip(_as_int(np.floor(p[None] * bin_w[:, None] + start_w[:, None])), 0, w)
        we = np.clip(_as_int(np.ceil((p[None] + 1) * bin_w[:, None] + start_w[:, None])), 0, w)
        # sums over rectangles from an integral image (float64: exact enough to stand for the
        # plugin's running f32 sum)
        integral = np.zeros((n, c_in, h + 1, w + 1), np.float64)
        np.cumsum(np.cumsum(x, axis=2, dtype=np.float64), axis=3, out=integral[:, :, 1:, 1:])
        k = np.arange(output_dim)[None, :, None, None]
        i = np.arange(g)[None, None, :, None]
        j = np.arange(g)[None, None, None, :]
        chan = (k * g + i) * g + j  # [1, K, G, G]
        b = batch[:, None, None, None]
        y0, y1 = hs[:, None, :, None], he[:, None, :, None]
        x0, x1 = ws[:, None, None, :], we[:, None, None, :]
        total = (integral[b, chan, y1, x1] - integral[b, chan, y0, x1]
                 - integral[b, chan, y1, x0] + integral[b, chan, y0, x0])
        area = ((y1 - y0) * (x1 - x0)).astype(ct)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = np.where(area > 0, total.astype(ct) / np.where(area > 0, area, 1), 0)
        out[:real] = value
        return narrow(out, data.dtype)
    # bilinear
    start_w, start_h = r[:, 1] * scale, r[:, 2] * scale
    roi_w = r[:, 3] * scale - start_w
    roi_h = r[:, 4] * scale - start_h
    sbx, sby = spatial_bins_x, spatial_bins_y
    hm1, wm1 = ct.type(h - 1), ct.type(w - 1)
    in_y = _ps_axis(start_h, roi_h, sby, g, hm1, ct)  # [R, SBY, G]
    in_x = _ps_axis(start_w, roi_w, sbx, g, wm1, ct)  # [R, SBX, G]
    yy = in_y[:, :, None, :, None]  # [R, SBY, 1, G(h), 1]
    xx = in_x[:, None, :, None, :]  # [R, 1, SBX, 1, G(w)]
    ok = (yy >= 0) & (yy <= hm1) & (xx >= 0) & (xx <= wm1)
    yy = np.where(ok, yy, 0).astype(ct)
    xx = np.where(ok, xx, 0).astype(ct)
    top, left = _as_int(np.floor(yy)), _as_int(np.floor(xx))
    bottom = np.minimum(_as_int(np.ceil(yy)), h - 1)
    right = np.minimum(_as_int(np.ceil(xx)), w - 1)
    dx, dy = xx - left.astype(ct), yy - top.astype(ct)
    flat = x.reshape(n * c_in, h * w)
    acc = np.zeros((real, output_dim, g, g), ct)
    k = np.arange(output_dim)
    for by in range(sby):  # sub-bins in the plugin's order (a few; each step vectorised)
        for bx in range(sbx):
            chan = k + (by * sbx + bx) * output_dim  # [K]
            rows = (batch[:, None] * c_in + chan[None])[:, :, None, None]  # [R, K, 1, 1]

            def at(iy, ix):
                pos = (iy * w + ix)[:, by, bx][:, None]  # [R, 1, G, G]
                return flat[rows, pos]
            tl, tr = at(top, left), at(top, right)
            bl, br = at(bottom, left), at(bottom, right)
            ddx = dx[:, by, bx][:, None]
            ddy = dy[:, by, bx][:, None]
            upper = tl + (tr - tl) * ddx
            lower = bl + (br - bl) * ddx
            value = upper + (lower - upper) * ddy
            acc += np.where(ok[:, by, bx][:, None], value, ct.type(0))
    out[:real] = acc / ct.type(sbx * sby)
    return narrow(out, data.dtype)


def _ps_axis(start, size, bins: int, g: int, size_m1, ct):
    """PSROIPooling's bilinear sample positions along one axis: [R, bins, G]."""
    b = np.arange(bins, dtype=ct)
    part = (size / ct.type(bins))[:, None]
    box_min = start[:, None] + b[None] * part  # [R, bins]
    box_max = start[:, None] + (b[None] + 1) * part
    if g > 1:
        step = (box_max - box_min) * size_m1 / ct.type(g - 1)
        p = np.arange(g, dtype=ct)
        return p[None, None] * step[..., None] + (box_min * size_m1)[..., None]
    return (ct.type(0.5) * (box_min + box_max) * size_m1)[..., None]


def deformable_psroi_pooling(data, rois, offsets=None, *, output_dim: int, group_size: int,
                             spatial_scale: float, spatial_bins_x: int, spatial_bins_y: int,
                             trans_std: float, part_size: int) -> np.ndarray:
    """[R, output_dim, G, G]: each bin, moved by its normalized offset times trans_std, averages
    the bilinear samples of its spatial_bins_x*spatial_bins_y sub-bins that fall inside the
    map (0 when none does), as OpenVINO's CPU plugin."""
    ct = np.dtype(np.float32) if compute_dtype(data.dtype) != np.float64 else np.dtype(np.float64)
    g = group_size
    x, out, r, batch = _ps_start(data, rois, output_dim, g, ct)
    n, c_in, h, w = x.shape
    real = r.shape[0]
    if real == 0 or x.shape[2] == 0 or x.shape[3] == 0:  # an empty map: every bin gives 0
        return narrow(out, data.dtype)
    scale = np.float32(spatial_scale).astype(ct)
    half = ct.type(0.5)
    start_w = round_half_away(r[:, 1]) * scale - half
    start_h = round_half_away(r[:, 2]) * scale - half
    end_w = (round_half_away(r[:, 3]) + ct.type(1)) * scale - half
    end_h = (round_half_away(r[:, 4]) + ct.type(1)) * scale - half
    roi_w = np.maximum(end_w - start_w, ct.type(0.1))
    roi_h = np.maximum(end_h - start_h, ct.type(0.1))
    bin_h, bin_w = roi_h / ct.type(g), roi_w / ct.type(g)
    sub_h, sub_w = bin_h / ct.type(spatial_bins_y), bin_w / ct.type(spatial_bins_x)
    k = np.arange(output_dim)[None, :, None, None]
    i = np.arange(g)[None, None, :, None]
    j = np.arange(g)[None, None, None, :]
    if offsets is not None:
        t = offsets.astype(ct, copy=False)
        classes = t.shape[1] // 2
        per_class = output_dim // classes
        cls = k // per_class
        part_h, part_w = i * part_size // g, j * part_size // g
        rr = np.arange(real)[:, None, None, None]
        std = np.float32(trans_std).astype(ct)
        trans_x = t[rr, cls * 2, part_h, part_w] * std
        trans_y = t[rr, cls * 2 + 1, part_h, part_w] * std
    else:
        trans_x = trans_y = np.zeros((1, 1, 1, 1), ct)
    w_start = (j.astype(ct) * bin_w[:, None, None, None] + start_w[:, None, None, None]) \
        + trans_x * roi_w[:, None, None, None]  # [R, K, G, G]
    h_start = (i.astype(ct) * bin_h[:, None, None, None] + start_h[:, None, None, None]) \
        + trans_y * roi_h[:, None, None, None]
    rows = (batch[:, None, None, None] * c_in + (k * g + i) * g + j)  # [R, K, G, G]
    flat = x.reshape(n * c_in, h * w)
    total = np.zeros(np.broadcast_shapes(w_start.shape, rows.shape), ct)
    hits = np.zeros(total.shape, np.int64)
    for iy in range(spatial_bins_y):  # sub-bins (a few; each step vectorised)
        for ix in range(spatial_bins_x):
            px = w_start + ct.type(ix) * sub_w[:, None, None, None]
            py = h_start + ct.type(iy) * sub_h[:, None, None, None]
            ok = ~((px < -0.5) | (px > w - 0.5) | (py < -0.5) | (py > h - 0.5))
            px = np.clip(np.where(ok, px, 0), 0, w - 1).astype(ct)
            py = np.clip(np.where(ok, py, 0), 0, h - 1).astype(ct)
            x0, y0 = _as_int(np.floor(px)), _as_int(np.floor(py))
            x1, y1 = _as_int(np.ceil(px)), _as_int(np.ceil(py))
            ddx, ddy = px - x0.astype(ct), py - y0.astype(ct)
            one = ct.type(1)
            v11 = flat[rows, y0 * w + x0]
            v12 = flat[rows, y1 * w + x0]
            v21 = flat[rows, y0 * w + x1]
            v22 = flat[rows, y1 * w + x1]
            value = ((one - ddx) * (one - ddy) * v11 + (one - ddx) * ddy * v12
                     + ddx * (one - ddy) * v21 + ddx * ddy * v22)
            total += np.where(ok, value, ct.type(0))
            hits += ok
    with np.errstate(divide="ignore", invalid="ignore"):
        out[:real] = np.where(hits > 0, total / np.maximum(hits, 1).astype(ct), ct.type(0))
    return narrow(out, data.dtype)
