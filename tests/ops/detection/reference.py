"""Loop references for the detection ops' tests: each a direct transcription of OpenVINO's
reference kernel (or of its CPU plugin, where irexec follows the plugin), one ROI, bin and sample
at a time, on float32 scalars so that every floor, ceil and comparison falls as in C++."""

from __future__ import annotations

import math

import numpy as np

F = np.float32


def c_round(v) -> float:
    v = float(v)
    return math.floor(v + 0.5) if v >= 0 else math.ceil(v - 0.5)


def roi_align(x, rois, bidx, ph_n, pw_n, sr, scale, mode, aligned="asymmetric",
              rotated=False, clockwise=False):
    n, c, h, w = x.shape
    out = np.zeros((len(rois), c, ph_n, pw_n), np.float32)
    scale = F(scale)
    for r, roi in enumerate(rois.astype(np.float32)):
        if rotated:
            cx, cy = roi[0] * scale - F(0.5), roi[1] * scale - F(0.5)
            rw, rh = roi[2] * scale, roi[3] * scale
            ang = -roi[4] if clockwise else roi[4]
            ca, sa = F(math.cos(float(ang))), F(math.sin(float(ang)))
            x1, y1 = -rw / F(2), -rh / F(2)
        else:
            src = F(0.5) if aligned == "half_pixel" else F(0)
            dst = F(-0.5) if aligned != "asymmetric" else F(0)
            x1 = (roi[0] + src) * scale + dst
            y1 = (roi[1] + src) * scale + dst
            rw = (roi[2] + src) * scale + dst - x1
            rh = (roi[3] + src) * scale + dst - y1
            if aligned == "asymmetric":
                rw, rh = max(rw, F(1)), max(rh, F(1))
        bw, bh = rw / F(pw_n), rh / F(ph_n)
        sx = sr if sr > 0 else max(int(math.ceil(bw)), 0)
        sy = sr if sr > 0 else max(int(math.ceil(bh)), 0)
        count = sx * sy
        dx = bw / F(max(sx, 1))
        dy = bh / F(max(sy, 1))
        b = int(bidx[r])
        for i in range(ph_n):
            for j in range(pw_n):
                acc = np.zeros(c, np.float32)
                for a in range(sy):
                    py = y1 + F(i) * bh + dy * (F(a) + F(0.5))
                    for k in range(sx):
                        px = x1 + F(j) * bw + dx * (F(k) + F(0.5))
                        if rotated:
                            yy = py * ca - px * sa + cy
                            xx = py * sa + px * ca + cx
                        else:
                            yy, xx = py, px
                        if xx < -1 or xx > w or yy < -1 or yy > h:
                            v = np.zeros(c, np.float32)
                        else:
                            yy, xx = max(yy, F(0)), max(xx, F(0))
                            yl, xl = int(yy), int(xx)
                            if yl >= h - 1:
                                yl = yh = h - 1
                                yy = F(yl)
                            else:
                                yh = yl + 1
                            if xl >= w - 1:
                                xl = xh = w - 1
                                xx = F(xl)
                            else:
                                xh = xl + 1
                            ly, lx = yy - F(yl), xx - F(xl)
                            hy, hx = F(1) - ly, F(1) - lx
                            v = (hy * hx * x[b, :, yl, xl] + hy * lx * x[b, :, yl, xh]
                                 + ly * hx * x[b, :, yh, xl] + ly * lx * x[b, :, yh, xh])
                        if mode == "max":
                            acc = np.maximum(acc, v)
                        else:
                            acc = acc + v / F(count)
                out[r, :, i, j] = acc
    return out


def roi_pooling(x, rois, ph_n, pw_n, scale, method):
    n, c, h, w = x.shape
    out = np.zeros((len(rois), c, ph_n, pw_n), np.float32)
    scale = F(scale)
    for r, roi in enumerate(rois.astype(np.float32)):
        b = int(roi[0])
        if method == "max":
            ws, hs, we, he = (c_round(v * scale) for v in roi[1:])
            rh, rw = max(he - hs + 1, 1), max(we - ws + 1, 1)
            bh, bw = F(rh) / F(ph_n), F(rw) / F(pw_n)
            for i in range(ph_n):
                for j in range(pw_n):
                    y0 = min(max(math.floor(F(i) * bh) + hs, 0), h)
                    y1 = min(max(math.ceil(F(i + 1) * bh) + hs, 0), h)
                    x0 = min(max(math.floor(F(j) * bw) + ws, 0), w)
                    x1 = min(max(math.ceil(F(j + 1) * bw) + ws, 0), w)
                    if y1 > y0 and x1 > x0:
                        out[r, :, i, j] = x[b, :, y0:y1, x0:x1].max(axis=(1, 2))
            continue
        x1, y1, x2, y2 = roi[1:]
        rh, rw = (y2 - y1) * F(h - 1), (x2 - x1) * F(w - 1)
        for i in range(ph_n):
            for j in range(pw_n):
                if ph_n > 1:
                    yy = F(h - 1) * y2 if i == ph_n - 1 else \
                        F(i) * (rh / F(ph_n - 1)) + y1 * F(h - 1)
                else:
                    yy = F(0.5 * (float(y1) + float(y2)) * (h - 1))
                if pw_n > 1:
                    xx = F(w - 1) * x2 if j == pw_n - 1 else \
                        F(j) * (rw / F(pw_n - 1)) + x1 * F(w - 1)
                else:
                    xx = F(0.5 * (float(x1) + float(x2)) * (w - 1))
                if yy < 0 or yy > h - 1 or xx < 0 or xx > w - 1:
                    continue
                t, lft = math.floor(yy), math.floor(xx)
                btm, rgt = min(math.ceil(yy), h - 1), min(math.ceil(xx), w - 1)
                top = x[b, :, t, lft] + (x[b, :, t, rgt] - x[b, :, t, lft]) * (xx - F(lft))
                bot = x[b, :, btm, lft] + (x[b, :, btm, rgt] - x[b, :, btm, lft]) * (xx - F(lft))
                out[r, :, i, j] = top + (bot - top) * (yy - F(t))
    return out


def psroi_pooling(x, rois, k_out, g, scale, mode, sbx=1, sby=1):
    n, c, h, w = x.shape
    out = np.zeros((len(rois), k_out, g, g), np.float32)
    scale = F(scale)
    for r, roi in enumerate(rois.astype(np.float32)):
        b = int(roi[0])
        if b == -1:
            break
        if mode == "average":
            sw, sh = F(c_round(roi[1])) * scale, F(c_round(roi[2])) * scale
            ew, eh = F(c_round(roi[3] + F(1))) * scale, F(c_round(roi[4] + F(1))) * scale
            rw, rh = max(ew - sw, F(0.1)), max(eh - sh, F(0.1))
            bh, bw = rh / F(g), rw / F(g)
            for k in range(k_out):
                for i in range(g):
                    for j in range(g):
                        y0 = min(max(math.floor(F(i) * bh + sh), 0), h)
                        y1 = min(max(math.ceil(F(i + 1) * bh + sh), 0), h)
                        x0 = min(max(math.floor(F(j) * bw + sw), 0), w)
                        x1 = min(max(math.ceil(F(j + 1) * bw + sw), 0), w)
                        area = (y1 - y0) * (x1 - x0)
                        if area:
                            ch = (k * g + i) * g + j
                            out[r, k, i, j] = x[b, ch, y0:y1, x0:x1].astype(np.float64).sum() \
                                / area
            continue
        sw, sh = roi[1] * scale, roi[2] * scale
        rw, rh = roi[3] * scale - sw, roi[4] * scale - sh
        for k in range(k_out):
            for i in range(g):
                for j in range(g):
                    acc = F(0)
                    for by in range(sby):
                        ymin = sh + F(by) * (rh / F(sby))
                        ymax = sh + F(by + 1) * (rh / F(sby))
                        yy = F(i) * ((ymax - ymin) * F(h - 1) / F(g - 1)) + ymin * F(h - 1) \
                            if g > 1 else F(0.5) * (ymin + ymax) * F(h - 1)
                        for bx in range(sbx):
                            xmin = sw + F(bx) * (rw / F(sbx))
                            xmax = sw + F(bx + 1) * (rw / F(sbx))
                            xx = F(j) * ((xmax - xmin) * F(w - 1) / F(g - 1)) \
                                + xmin * F(w - 1) if g > 1 else \
                                F(0.5) * (xmin + xmax) * F(w - 1)
                            if not (0 <= yy <= h - 1 and 0 <= xx <= w - 1):
                                continue
                            ch = k + (by * sbx + bx) * k_out
                            t, lft = math.floor(yy), math.floor(xx)
                            btm, rgt = min(math.ceil(yy), h - 1), min(math.ceil(xx), w - 1)
                            d = x[b, ch]
                            top = d[t, lft] + (d[t, rgt] - d[t, lft]) * (xx - F(lft))
                            bot = d[btm, lft] + (d[btm, rgt] - d[btm, lft]) * (xx - F(lft))
                            acc += top + (bot - top) * (yy - F(t))
                    out[r, k, i, j] = acc / F(sbx * sby)
    return out


def deformable_psroi_pooling(x, rois, offsets, k_out, g, scale, sbx, sby, trans_std,
                             part_size):
    n, c, h, w = x.shape
    out = np.zeros((len(rois), k_out, g, g), np.float32)
    scale = F(scale)
    for r, roi in enumerate(rois.astype(np.float32)):
        b = int(roi[0])
        if b == -1:
            break
        sw = F(c_round(roi[1])) * scale - F(0.5)
        sh = F(c_round(roi[2])) * scale - F(0.5)
        ew = (F(c_round(roi[3])) + F(1)) * scale - F(0.5)
        eh = (F(c_round(roi[4])) + F(1)) * scale - F(0.5)
        rw, rh = max(ew - sw, F(0.1)), max(eh - sh, F(0.1))
        bh, bw = rh / F(g), rw / F(g)
        sub_h, sub_w = bh / F(sby), bw / F(sbx)
        classes = offsets.shape[1] // 2 if offsets is not None else 1
        for k in range(k_out):
            cls = k // (k_out // classes)
            for i in range(g):
                for j in range(g):
                    if offsets is not None:
                        pi, pj = i * part_size // g, j * part_size // g
                        tx = offsets[r, cls * 2, pi, pj] * F(trans_std)
                        ty = offsets[r, cls * 2 + 1, pi, pj] * F(trans_std)
                    else:
                        tx = ty = F(0)
                    w0 = F(j) * bw + sw + tx * rw
                    h0 = F(i) * bh + sh + ty * rh
                    total, hits = F(0), 0
                    for a in range(sby):
                        for bb in range(sbx):
                            px, py = w0 + F(bb) * sub_w, h0 + F(a) * sub_h
                            if px < -0.5 or px > w - 0.5 or py < -0.5 or py > h - 0.5:
                                continue
                            px, py = F(min(max(px, 0), w - 1)), F(min(max(py, 0), h - 1))
                            x1, x2 = math.floor(px), math.ceil(px)
                            y1, y2 = math.floor(py), math.ceil(py)
                            ddx, ddy = px - F(x1), py - F(y1)
                            d = x[b, (k * g + i) * g + j]
                            total += ((F(1) - ddx) * (F(1) - ddy) * d[y1, x1]
                                      + (F(1) - ddx) * ddy * d[y2, x1]
                                      + ddx * (F(1) - ddy) * d[y1, x2] + ddx * ddy * d[y2, x2])
                            hits += 1
                    out[r, k, i, j] = total / F(hits) if hits else 0
    return out


def prior_box(h, w, ih, iw, at):
    """OpenVINO's prior_box reference, point by point."""
    ars = [F(1)]
    for r in at.get("aspect_ratio", ()):
        r = F(r)
        if any(abs(float(r) - float(e)) < 1e-6 for e in ars):
            continue
        ars.append(r)
        if at.get("flip", False):
            ars.append(F(1) / r)
    variance = list(at.get("variance", ())) or [0.1]
    step = F(at.get("step", 0.0))
    min_size = [F(s) for s in at.get("min_size", ())]
    max_size = [F(s) for s in at.get("max_size", ())]
    scale_all = at.get("scale_all_sizes", True)
    order = at.get("min_max_aspect_ratios_order", True)
    fixed_size = list(at.get("fixed_size", ()))
    fixed_ratio = list(at.get("fixed_ratio", ()))
    density = list(at.get("density", ()))
    if not scale_all:
        step = F(ih) / F(h) if step == -1 else step * F(ih)
        min_size = [s * F(ih) for s in min_size]
    iwi, ihi = F(1) / F(iw), F(1) / F(ih)
    boxes = []

    def put(cx, cy, bw, bh, clip):
        v = [(cx - bw) * iwi, (cy - bh) * ihi, (cx + bw) * iwi, (cy + bh) * ihi]
        if clip:
            v = [max(v[0], F(0)), max(v[1], F(0)), min(v[2], F(1)), min(v[3], F(1))]
        boxes.extend(v)

    for i in range(h):
        for j in range(w):
            if step == 0:
                cx = (F(j) + F(0.5)) * (F(iw) / F(w))
                cy = (F(i) + F(0.5)) * (F(ih) / F(h))
            else:
                cx = (F(at["offset"]) + F(j)) * step
                cy = (F(at["offset"]) + F(i)) * step
            for s, size in enumerate(fixed_size):
                size_int = int(size)

                def dense(bw, bh):
                    d = int(density[s])
                    shift = int(F(size) / F(d))
                    for r in range(d):
                        for c in range(d):
                            put(cx - F(size_int // 2) + F(shift) / F(2) + F(c * shift),
                                cy - F(size_int // 2) + F(shift) / F(2) + F(r * shift),
                                bw, bh, True)
                if fixed_ratio:
                    for ar in fixed_ratio:
                        root = F(math.sqrt(F(ar)))
                        dense(F(size) * F(0.5) * root, F(size) * F(0.5) / root)
                    continue
                if density:
                    dense(F(size_int) * F(0.5), F(size_int) * F(0.5))
                for ar in ars:
                    if abs(float(ar) - 1) < 1e-6:
                        continue
                    root = F(math.sqrt(ar))
                    dense(F(size) * F(0.5) * root, F(size) * F(0.5) / root)
            for k, ms in enumerate(min_size):
                put(cx, cy, ms * F(0.5), ms * F(0.5), False)
                extra_max, extra_ar = [], []
                if len(max_size) > k:
                    half = F(math.sqrt(ms * max_size[k])) * F(0.5)
                    extra_max.append((half, half))
                if scale_all or k == len(min_size) - 1:
                    base = min_size[k if scale_all else 0]
                    for ar in ars:
                        if abs(float(ar) - 1) < 1e-6:
                            continue
                        root = F(math.sqrt(ar))
                        extra_ar.append((base * F(0.5) * root, base * F(0.5) / root))
                for bw, bh in (extra_max + extra_ar if order else extra_ar + extra_max):
                    put(cx, cy, bw, bh, False)
    first = np.array(boxes, np.float32)
    if at.get("clip", False):
        first = np.clip(first, 0, 1)
    second = np.resize(np.array(variance, np.float32), first.size) if len(variance) == 4 \
        else np.full(first.size, variance[0], np.float32)
    return np.stack([first, second])


def prior_box_clustered(h, w, ih, iw, at):
    widths, heights = at["width"], at["height"]
    step = F(at.get("step", 0.0))
    sw = step if F(at.get("step_w", 0.0)) == 0 else F(at["step_w"])
    sh = step if F(at.get("step_h", 0.0)) == 0 else F(at["step_h"])
    if sw == 0 and sh == 0:
        sw, sh = F(iw) / F(w), F(ih) / F(h)
    variance = list(at.get("variance", ())) or [0.1]
    first, second = [], []
    for i in range(h):
        for j in range(w):
            cx = (F(j) + F(at["offset"])) * sw
            cy = (F(i) + F(at["offset"])) * sh
            for bw, bh in zip(widths, heights):
                v = [(cx - F(bw) / F(2)) / F(iw), (cy - F(bh) / F(2)) / F(ih),
                     (cx + F(bw) / F(2)) / F(iw), (cy + F(bh) / F(2)) / F(ih)]
                if at.get("clip", True):
                    v = [min(max(e, F(0)), F(1)) for e in v]
                first.extend(v)
                second.extend(variance * 4 if len(variance) == 1 else variance)
    return np.array([first, second], np.float32)


def region_yolo(x, coords, classes, regions, do_softmax):
    """OpenVINO's region_yolo on the flat buffer: sigmoid on x, y and the objectness (and the
    classes without softmax), softmax over the classes with it."""
    n, c, h, w = x.shape
    entries = coords + classes + 1
    flat = x.reshape(-1).astype(np.float64)
    out = flat.copy() if do_softmax else flat[:n * regions * entries * h * w].copy()
    area = h * w
    for b in range(n):
        for r in range(regions):
            base = (b * regions + r) * entries * area
            for e in range(entries):
                for p in range(area):
                    i = base + e * area + p
                    if e < 2 or e == coords or (not do_softmax and e > coords):
                        out[i] = 1 / (1 + math.exp(-flat[i]))
            if do_softmax and classes:
                for p in range(area):
                    idx = [base + (coords + 1 + k) * area + p for k in range(classes)]
                    v = flat[idx]
                    e = np.exp(v - v.max())
                    out[idx] = e / e.sum()
    return out


def reorg_yolo(x, s):
    """OpenVINO's reorg_yolo, element by element."""
    n, c, h, w = x.shape
    src = x.reshape(-1)
    dst = np.empty_like(src)
    oc, oh, ow = c // (s * s), h * s, w * s
    for b in range(n):
        for k in range(c):
            for i in range(h):
                for j in range(w):
                    off = k // oc
                    arg = ((b * oc + k % oc) * oh + i * s + off // s) * ow + j * s + off % s
                    dst[((b * c + k) * h + i) * w + j] = src[arg]
    return dst.reshape(n, c * s * s, h // s, w // s)
