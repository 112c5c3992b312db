"""Interpolation (Interpolate-1/4/11), one axis at a time.

Every mode of OpenVINO's Interpolate is separable: the output along an axis is a weighted sum of
a few input elements of that axis (nearest: one element, weight 1), and the weights of several
axes multiply. So each interpolated axis is resampled in turn: its weights and the positions they
read are computed once, as small [out, taps] arrays, and applied to the whole tensor with one
``np.take`` and one multiply-add per tap -- no loop over elements.

The coordinate arithmetic is float64, as the specification's reference code computes it.
"""

from __future__ import annotations

import math

import numpy as np

from irexec.kernels.numeric import compute_dtype, finish, is_float


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


def resample_axis(x: np.ndarray, axis: int, positions: np.ndarray, weights: np.ndarray,
                  ct) -> np.ndarray:
    """Output[..., o, ...] = sum over taps t of weights[o, t] * x[..., positions[o, t], ...]."""
    shape = [1] * x.ndim
    shape[axis] = -1
    out = None
    for t in range(positions.shape[1]):
        w = weights[:, t]
        if not w.any():
            continue
        term = np.take(x, positions[:, t], axis=axis)
        term *= w.astype(ct).reshape(shape)
        out = term if out is None else np.add(out, term, out=out)
    if out is None:
        shape = list(x.shape)
        shape[axis] = positions.shape[0]
        out = np.zeros(shape, ct)
    return out


def interpolate(x: np.ndarray, out_shape, axes, scales, attrs: dict) -> np.ndarray:
    """``x`` already padded; ``out_shape`` the full output shape; ``axes`` the interpolated axes
    and ``scales`` their scales (output / input for sizes mode)."""
    mode = attrs["mode"]
    if mode == "nearest":
        axis_scale = dict(zip(axes, scales))
        result = x
        for axis in range(x.ndim):  # every axis, as the specification's reference does
            scale = axis_scale.get(axis, 1.0)
            coords = original_coordinates(out_shape[axis], x.shape[axis], scale,
                                          attrs["coordinate_transformation_mode"])
            idx = nearest_indices(coords, attrs["nearest_mode"], scale < 1, x.shape[axis])
            if out_shape[axis] != x.shape[axis] or np.any(idx != np.arange(len(idx))):
                result = np.take(result, idx, axis=axis)
        return result if result is not x else x.copy()
    ct = compute_dtype(x.dtype) if is_float(x.dtype) else np.dtype(np.float64)
    data = x.astype(ct, copy=False)
    antialias = attrs.get("antialias", False) and any(s < 1 for s in scales)
    pillow = mode in ("bilinear_pillow", "bicubic_pillow")
    for axis, scale in zip(axes, scales):
        if pillow and out_shape[axis] == x.shape[axis]:
            continue  # Pillow skips an axis whose size does not change
        positions, weights = axis_weights(mode, out_shape[axis], x.shape[axis], scale, attrs,
                                          scale if antialias else 1.0)
        data = resample_axis(data, axis, positions, weights, ct)
        if pillow and not is_float(x.dtype):  # Pillow rounds between its two passes
            data = round_clip(data, x.dtype).astype(ct)
    if not is_float(x.dtype):
        return round_clip(data, x.dtype)
    return finish(data, x.dtype)


def round_clip(values: np.ndarray, dtype) -> np.ndarray:
    """Floats to an integer type: rounded half away from zero, saturated."""
    info = np.iinfo(dtype)
    rounded = np.where(values >= 0, np.floor(values + 0.5), np.ceil(values - 0.5))
    return np.clip(rounded, info.min, info.max).astype(dtype)
