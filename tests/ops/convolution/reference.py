"""Direct-loop convolutions in float64, the reference the convolution tests hold irexec to.

Each returns the result and the sum of the magnitudes of the terms of every output element
(the same loop over absolute values), which sets the tolerance of float results.
"""

from __future__ import annotations

import itertools

import numpy as np


def same_pads(size, k, s, d, upper):
    out = -(-size // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
    small = total // 2
    return (small, total - small) if upper else (total - small, small)


def pads_for(spatial, kernel, strides, dilations, pads_begin, pads_end, auto_pad):
    if auto_pad == "valid":
        return [0] * len(kernel), [0] * len(kernel)
    if auto_pad in ("same_upper", "same_lower"):
        pairs = [same_pads(n, k, s, d, auto_pad == "same_upper")
                 for n, k, s, d in zip(spatial, kernel, strides, dilations)]
        return [p[0] for p in pairs], [p[1] for p in pairs]
    return list(pads_begin), list(pads_end)


def conv(x, w, strides, dilations, pads_begin, pads_end, auto_pad="explicit"):
    """Grouped convolution: x [N, G*Ci, *S], w [G, Co, Ci, *K] -> (y [N, G*Co, *out], mag)."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    n, c = x.shape[:2]
    g, co, ci = w.shape[:3]
    kernel = w.shape[3:]
    spatial = x.shape[2:]
    pb, pe = pads_for(spatial, kernel, strides, dilations, pads_begin, pads_end, auto_pad)
    out = [(sz + b + e - (k - 1) * d - 1) // s + 1
           for sz, k, s, d, b, e in zip(spatial, kernel, strides, dilations, pb, pe)]
    y = np.zeros((n, g * co, *out))
    mag = np.zeros_like(y)
    for o in itertools.product(*map(range, out)):
        for k in itertools.product(*map(range, kernel)):
            pos = [oi * s + ki * d - b for oi, ki, s, d, b in zip(o, k, strides, dilations, pb)]
            if not all(0 <= p < sz for p, sz in zip(pos, spatial)):
                continue
            for gi in range(g):
                xs = x[(slice(None), slice(gi * ci, (gi + 1) * ci), *pos)]  # [N, Ci]
                ws = w[(gi, slice(None), slice(None), *k)]  # [Co, Ci]
                y[(slice(None), slice(gi * co, (gi + 1) * co), *o)] += xs @ ws.T
                mag[(slice(None), slice(gi * co, (gi + 1) * co), *o)] += np.abs(xs) @ np.abs(ws).T
    return y, mag


def backprop(x, w, strides, dilations, pads_begin, out_sizes):
    """Grouped transposed convolution: x [N, G*Ci, *S], w [G, Ci, Co, *K]; the full result cut
    from pads_begin on to ``out_sizes`` (zeros past its end) -> (y, mag)."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    n = x.shape[0]
    g, ci, co = w.shape[:3]
    kernel = w.shape[3:]
    spatial = x.shape[2:]
    y = np.zeros((n, g * co, *out_sizes))
    mag = np.zeros_like(y)
    for i in itertools.product(*map(range, spatial)):
        for k in itertools.product(*map(range, kernel)):
            pos = [ii * s + ki * d - b for ii, ki, s, d, b in zip(i, k, strides, dilations,
                                                                    pads_begin)]
            if not all(0 <= p < o for p, o in zip(pos, out_sizes)):
                continue
            for gi in range(g):
                xs = x[(slice(None), slice(gi * ci, (gi + 1) * ci), *i)]  # [N, Ci]
                ws = w[(gi, slice(None), slice(None), *k)]  # [Ci, Co]
                y[(slice(None), slice(gi * co, (gi + 1) * co), *pos)] += xs @ ws
                mag[(slice(None), slice(gi * co, (gi + 1) * co), *pos)] += np.abs(xs) @ np.abs(ws)
    return y, mag


def _taps(kernel):
    return itertools.product(*map(range, kernel))


def conv_by_taps(x, w, strides, dilations, pads_begin, pads_end, auto_pad="explicit"):
    """The same as ``conv``, one numpy product per kernel tap instead of per output element
    (for the larger conformance cases)."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    n = x.shape[0]
    g, co, ci = w.shape[:3]
    kernel = w.shape[3:]
    spatial = x.shape[2:]
    pb, pe = pads_for(spatial, kernel, strides, dilations, pads_begin, pads_end, auto_pad)
    out = [(sz + b + e - (k - 1) * d - 1) // s + 1
           for sz, k, s, d, b, e in zip(spatial, kernel, strides, dilations, pb, pe)]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(b, max(e, 0) + k * d) for b, e, k, d in
                                       zip(pb, pe, kernel, dilations)])
    xg = xp.reshape((n, g, ci) + xp.shape[2:])
    y = np.zeros((n, g, co, *out))
    mag = np.zeros_like(y)
    for k in _taps(kernel):
        index = tuple(slice(kk * d, kk * d + (o - 1) * s + 1, s)
                      for kk, d, o, s in zip(k, dilations, out, strides))
        xs = xg[(Ellipsis, *index)]  # [N, G, Ci, *out]
        ws = w[(slice(None), slice(None), slice(None), *k)]  # [G, Co, Ci]
        y += np.einsum("ngi...,goi->ngo...", xs, ws)
        mag += np.einsum("ngi...,goi->ngo...", np.abs(xs), np.abs(ws))
    return y.reshape((n, g * co, *out)), mag.reshape((n, g * co, *out))


def backprop_by_taps(x, w, strides, dilations, pads_begin, out_sizes):
    """The same as ``backprop``, one numpy product per kernel tap."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    n = x.shape[0]
    g, ci, co = w.shape[:3]
    kernel = w.shape[3:]
    spatial = x.shape[2:]
    full = [(sz - 1) * s + (k - 1) * d + 1 for sz, s, k, d in
            zip(spatial, strides, kernel, dilations)]
    ends = [max(f, b + o) for f, b, o in zip(full, pads_begin, out_sizes)]
    xg = x.reshape((n, g, ci) + spatial)
    y = np.zeros((n, g, co, *ends))
    mag = np.zeros_like(y)
    for k in _taps(kernel):
        index = tuple(slice(kk * d, kk * d + (sz - 1) * s + 1, s)
                      for kk, d, sz, s in zip(k, dilations, spatial, strides))
        ws = w[(slice(None), slice(None), slice(None), *k)]  # [G, Ci, Co]
        y[(Ellipsis, *index)] += np.einsum("ngi...,gio->ngo...", xg, ws)
        mag[(Ellipsis, *index)] += np.einsum("ngi...,gio->ngo...", np.abs(xg), np.abs(ws))
    cut = (Ellipsis, *(slice(b, b + o) for b, o in zip(pads_begin, out_sizes)))
    shape = (n, g * co, *out_sizes)
    return y[cut].reshape(shape), mag[cut].reshape(shape)
