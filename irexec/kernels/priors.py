"""Prior (anchor) boxes of SSD-style detectors: PriorBox and PriorBoxClustered.

Every grid point gets the same list of boxes, shifted to its centre: the list (offsets from the
centre, half sizes, whether each box is clipped on its own) is built once from the attributes,
then every coordinate of every point is computed at once, in float32 with OpenVINO's operation
order (its reference multiplies by 1/image size for PriorBox and divides for PriorBoxClustered).
"""

from __future__ import annotations

import math

import numpy as np

F32 = np.float32


def aspect_ratios(ratios, flip: bool) -> list[float]:
    """OpenVINO's kernel's list: 1 first, then each new ratio (and its inverse when ``flip``),
    a ratio within 1e-6 of one already listed skipped."""
    out = [1.0]
    for r in ratios:
        r = float(F32(r))
        if any(abs(r - e) < 1e-6 for e in out):
            continue
        out.append(r)
        if flip:
            out.append(float(F32(1) / F32(r)))
    return out


def number_of_priors(attrs: dict) -> int:
    """Boxes per grid point as OpenVINO's PriorBox sizes its output."""
    unique = {round(float(F32(r)) * 1e6) / 1e6 for r in attrs["aspect_ratio"]}
    if attrs["flip"]:
        unique |= {round(1 / float(F32(r)) * 1e6) / 1e6 for r in attrs["aspect_ratio"]}
    unique.add(1.0)
    total = len({float(F32(u)) for u in unique})
    if attrs["scale_all_sizes"]:
        count = total * len(attrs["min_size"]) + len(attrs["max_size"])
    else:
        count = total + len(attrs["min_size"]) - 1
    if attrs["fixed_size"]:
        count = total * len(attrs["fixed_size"])
    for d in attrs["density"]:
        d2 = int(d) * int(d) - 1
        count += (len(attrs["fixed_ratio"]) if attrs["fixed_ratio"] else total) * d2
    return count


def _templates(attrs: dict, image_h: int, step: float):
    """The boxes of one grid point: rows (dx, dy, half_w, half_h, clipped) where the centre is
    (cx + dx, cy + dy); dx, dy are None for boxes centred on the point. ``step`` is the step
    already resolved (for the density shifts, which do not use it)."""
    rows = []
    ars = aspect_ratios(attrs["aspect_ratio"], attrs["flip"])
    min_sizes = [float(F32(s)) for s in attrs["min_size"]]
    if not attrs["scale_all_sizes"]:
        min_sizes = [float(F32(s) * F32(image_h)) for s in min_sizes]

    def dense(s: int, half_w, half_h):
        size = attrs["fixed_size"][s]
        size_int = int(size)
        density = int(attrs["density"][s])
        shift = int(F32(size) / F32(density))
        for r in range(density):
            for c in range(density):
                rows.append((("dense", size_int // 2, shift, c), ("dense", size_int // 2, shift, r),
                             half_w, half_h, True))

    for s, size in enumerate(attrs["fixed_size"]):
        size_int = int(size)
        half = F32(size_int) * F32(0.5)
        if attrs["fixed_ratio"]:
            for ar in attrs["fixed_ratio"]:
                root = F32(math.sqrt(F32(ar))) if ar >= 0 else F32(np.nan)
                dense(s, F32(size) * F32(0.5) * root, F32(size) * F32(0.5) / root)
        else:
            if attrs["density"]:
                dense(s, half, half)
            for ar in ars:
                if abs(ar - 1.0) < 1e-6:
                    continue
                root = F32(np.sqrt(F32(ar)))
                dense(s, F32(size) * F32(0.5) * root, F32(size) * F32(0.5) / root)
    max_sizes = [float(F32(s)) for s in attrs["max_size"]]
    order = attrs.get("min_max_aspect_ratios_order", True)
    for i, ms in enumerate(min_sizes):
        ms32 = F32(ms)
        rows.append((None, None, ms32 * F32(0.5), ms32 * F32(0.5), False))
        with_max = []
        if len(max_sizes) > i:
            half = F32(np.sqrt(ms32 * F32(max_sizes[i]))) * F32(0.5)
            with_max = [(None, None, half, half, False)]
        with_ars = []
        if attrs["scale_all_sizes"] or i == len(min_sizes) - 1:
            base = F32(min_sizes[i if attrs["scale_all_sizes"] else 0])
            for ar in ars:
                if abs(ar - 1.0) < 1e-6:
                    continue
                root = F32(np.sqrt(F32(ar)))
                with_ars.append((None, None, base * F32(0.5) * root, base * F32(0.5) / root,
                                 False))
        rows.extend(with_max + with_ars if order else with_ars + with_max)
    return rows


def _variances(values, count: int) -> np.ndarray:
    """The second row of the output: the one variance everywhere, or four repeated per box."""
    values = [float(F32(v)) for v in values] or [0.1]
    if len(values) == 1:
        return np.full(count * 4, values[0], F32)
    return np.tile(np.asarray(values, F32), count)


def prior_box(output_size: np.ndarray, image_size: np.ndarray, attrs: dict,
              priors: int) -> np.ndarray:
    """[2, 4*H*W*priors]: box corners normalized by the image size, then variances."""
    h, w = (int(v) for v in np.asarray(output_size).reshape(-1)[:2])
    ih, iw = (int(v) for v in np.asarray(image_size).reshape(-1)[:2])
    step = F32(attrs["step"])
    if not attrs["scale_all_sizes"]:
        step = F32(ih) / F32(h) if step == -1 else step * F32(ih)
    rows = _templates(attrs, ih, step)
    per_point = len(rows)
    boxes = np.zeros((h, w, max(per_point, 1), 4), F32)
    if per_point and h and w:
        hh = np.arange(h, dtype=np.int64)[:, None]
        ww = np.arange(w, dtype=np.int64)[None, :]
        if step == 0:
            cx = (ww.astype(F32) + F32(0.5)) * (F32(iw) / F32(w))
            cy = (hh.astype(F32) + F32(0.5)) * (F32(ih) / F32(h))
        else:
            offset = F32(attrs["offset"])
            cx = (offset + ww.astype(F32)) * step
            cy = (offset + hh.astype(F32)) * step
        iwi, ihi = F32(1) / F32(iw), F32(1) / F32(ih)
        cxs, cys, hws, hhs, clips = [], [], [], [], []
        for dx, dy, half_w, half_h, clipped in rows:
            cxs.append(_shifted(cx, dx))
            cys.append(_shifted(cy, dy))
            hws.append(F32(half_w))
            hhs.append(F32(half_h))
            clips.append(clipped)
        cxa = np.stack(np.broadcast_arrays(*cxs), axis=-1).astype(F32)  # [.., .., P]
        cya = np.stack(np.broadcast_arrays(*cys), axis=-1).astype(F32)
        hw = np.asarray(hws, F32)
        hgt = np.asarray(hhs, F32)
        clip_one = np.asarray(clips)
        x0 = (cxa - hw) * iwi
        y0 = (cya - hgt) * ihi
        x1 = (cxa + hw) * iwi
        y1 = (cya + hgt) * ihi
        x0 = np.where(clip_one, np.maximum(x0, F32(0)), x0)
        y0 = np.where(clip_one, np.maximum(y0, F32(0)), y0)
        x1 = np.where(clip_one, np.minimum(x1, F32(1)), x1)
        y1 = np.where(clip_one, np.minimum(y1, F32(1)), y1)
        full = np.broadcast_shapes(x0.shape, y0.shape)
        boxes = np.stack([np.broadcast_to(a, full) for a in (x0, y0, x1, y1)], axis=-1)
    flat = boxes.reshape(h * w * per_point * 4) if per_point else np.zeros(0, F32)
    length = 4 * h * w * priors
    out = np.zeros((2, length), F32)
    out[0, :min(length, flat.size)] = flat[:length]
    if attrs["clip"]:
        out[0] = np.clip(out[0], F32(0), F32(1))
    out[1] = _variances(attrs["variance"], h * w * priors)
    return out


def _shifted(centre: np.ndarray, shift) -> np.ndarray:
    """A density box's centre: centre - size//2 + shift/2 + k*shift, in OpenVINO's order."""
    if shift is None:
        return centre
    _, half_size, step, k = shift
    return ((centre - F32(half_size)) + F32(step) / F32(2)) + F32(k * step)


def prior_box_clustered(output_size: np.ndarray, image_size: np.ndarray, attrs: dict) \
        -> np.ndarray:
    """[2, 4*H*W*len(width)]: boxes of the given widths and heights around every grid point,
    corners divided by the image size (clipped to [0, 1] when ``clip``), then variances."""
    h, w = (int(v) for v in np.asarray(output_size).reshape(-1)[:2])
    ih, iw = (int(v) for v in np.asarray(image_size).reshape(-1)[:2])
    widths = np.asarray(attrs["width"], F32)
    heights = np.asarray(attrs["height"], F32)
    step = F32(attrs["step"])
    step_w = step if F32(attrs["step_w"]) == 0 else F32(attrs["step_w"])
    step_h = step if F32(attrs["step_h"]) == 0 else F32(attrs["step_h"])
    if step_w == 0 and step_h == 0:
        with np.errstate(divide="ignore", invalid="ignore"):  # an empty grid: no box uses them
            step_w, step_h = F32(iw) / F32(w), F32(ih) / F32(h)
    offset = F32(attrs["offset"])
    cx = ((np.arange(w, dtype=np.int64).astype(F32) + offset) * step_w)[None, :, None]
    cy = ((np.arange(h, dtype=np.int64).astype(F32) + offset) * step_h)[:, None, None]
    two = F32(2)
    with np.errstate(divide="ignore", invalid="ignore"):
        x0 = (cx - widths / two) / F32(iw)
        y0 = (cy - heights / two) / F32(ih)
        x1 = (cx + widths / two) / F32(iw)
        y1 = (cy + heights / two) / F32(ih)
    full = (h, w, widths.size)
    boxes = np.stack([np.broadcast_to(a, full) for a in (x0, y0, x1, y1)], axis=-1)
    if attrs["clip"]:
        boxes = np.clip(boxes, F32(0), F32(1))
    count = h * w * widths.size
    out = np.zeros((2, 4 * count), F32)
    out[0] = boxes.reshape(-1)
    out[1] = _variances(attrs["variance"], count)
    return out
