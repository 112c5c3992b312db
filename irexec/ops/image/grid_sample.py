"""GridSample-9: samples data [N, C, H, W] at the points a grid [N, H_out, W_out, 2] gives.

The grid holds (x, y) pairs normalized to [-1, 1] (-1: the left/top edge; with
``align_corners`` the centre of the first pixel, else its outer edge). As OpenVINO's reference
kernel: a coordinate becomes ``(v + 1) * (size - 1) / 2`` with align_corners, else
``((v + 1) * size - 1) / 2``; ``nearest`` rounds it half to even; ``bilinear`` and ``bicubic``
(a = -0.75) weigh the 2x2 or 4x4 pixels around it. Pixels outside the data are 0 (``zeros``),
the nearest edge pixel (``border``), or the pixel mirrored at the edges (``reflection``: about
the pixel centres with align_corners, about the edges without) -- each neighbour index is
padded on its own, so a coordinate outside the data still interpolates between the padded
neighbours. All gathers are numpy fancy indexing over the whole output at once.
"""

from __future__ import annotations

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.kernels.numeric import compute_dtype, narrow
from irexec.ops import windows
from irexec.ops.spec import register
from irexec.ops.spec import Attr, Input, Op, OpSpec, Output, Rank, TensorType, TypeVar

T = TypeVar("T", windows.ARITH)

_LIMIT = float(1 << 40)  # coordinates are clipped here before becoming integers (NaN -> 0)


def _index(i: np.ndarray, size: int, padding: str, align: bool):
    """(indices inside [0, size), mask of the ones that count) for padded indices ``i``."""
    if padding == "zeros":
        inside = (i >= 0) & (i < size)
        return np.clip(i, 0, size - 1), inside
    if padding == "border":
        return np.clip(i, 0, size - 1), None
    if align:
        period = 1 if size == 1 else 2 * (size - 1)
        m = np.abs(i) % period
        return np.where(m >= size, period - m, m), None
    period = 2 * size
    m = i % period
    return np.where(m >= size, period - 1 - m, m), None


def _cubic(r, a=-0.75):
    """The four weights of Keys' cubic kernel at fraction ``r`` (ONNX's formula)."""
    return (((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
            ((a + 2) * r - (a + 3)) * r * r + 1,
            ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1,
            ((a * (2 - r) - 5 * a) * (2 - r) + 8 * a) * (2 - r) - 4 * a)


def sample(data: np.ndarray, grid: np.ndarray, align_corners: bool, mode: str,
           padding_mode: str) -> np.ndarray:
    """[N, C, Ho, Wo] in the compute dtype of ``data`` (floats) or float64 (integers)."""
    ct = compute_dtype(data.dtype)
    if ct.kind != "f":
        ct = np.dtype(np.float64)
    n, _, h, w = data.shape
    hwc = np.moveaxis(data, 1, -1).astype(ct)  # [N, H, W, C]
    g = grid.astype(compute_dtype(grid.dtype) if ct != np.float64 else ct, copy=False)
    x, y = g[..., 0], g[..., 1]
    if align_corners:
        x, y = (x + 1) * (w - 1) / 2, (y + 1) * (h - 1) / 2
    else:
        x, y = ((x + 1) * w - 1) / 2, ((y + 1) * h - 1) / 2
    with np.errstate(invalid="ignore"):
        x = np.nan_to_num(np.clip(x, -_LIMIT, _LIMIT)).astype(ct, copy=False)
        y = np.nan_to_num(np.clip(y, -_LIMIT, _LIMIT)).astype(ct, copy=False)
    batch = np.arange(n).reshape(n, 1, 1)

    def pixel(iy, ix):
        jy, my = _index(iy, h, padding_mode, align_corners)
        jx, mx = _index(ix, w, padding_mode, align_corners)
        v = hwc[batch, jy, jx]  # [N, Ho, Wo, C]
        if my is not None:
            v = np.where((my & mx)[..., None], v, ct.type(0))
        return v

    if mode == "nearest":
        out = pixel(np.rint(y).astype(np.int64), np.rint(x).astype(np.int64))
    else:
        fy, fx = np.floor(y), np.floor(x)
        dy, dx = (y - fy)[..., None], (x - fx)[..., None]
        iy, ix = fy.astype(np.int64), fx.astype(np.int64)
        if mode == "bilinear":
            q0 = (1 - dx) * pixel(iy, ix) + dx * pixel(iy, ix + 1)
            q1 = (1 - dx) * pixel(iy + 1, ix) + dx * pixel(iy + 1, ix + 1)
            out = dy * q1 + (1 - dy) * q0
        else:
            cy, cx = _cubic(dy), _cubic(dx)
            out = 0
            for j in range(4):
                row = 0
                for i in range(4):
                    row = row + cx[i] * pixel(iy + j - 1, ix + i - 1)
                out = out + cy[j] * row
    return np.moveaxis(np.asarray(out, ct), -1, 1)


@register
class GridSample(Op):
    spec = OpSpec(
        type="GridSample",
        numerics="accumulating",
        since=9,
        until=16,
        attrs=(
            Attr("align_corners", "bool", default=False,
                 doc="-1 and 1 are the centres of the corner pixels (else their outer edges)"),
            Attr("mode", "enum", default="bilinear", values=("bilinear", "bicubic", "nearest"),
                 doc="how a point's value comes from the pixels around it"),
            Attr("padding_mode", "enum", default="zeros",
                 values=("zeros", "border", "reflection"),
                 doc="the value of a pixel outside the data: 0, the nearest edge pixel, or the "
                     "mirrored pixel"),
        ),
        inputs=(
            Input("data", T, Rank(exact=4), doc="[N, C, H, W]"),
            Input("grid", windows.REAL, Rank(exact=4),
                  doc="[N, H_out, W_out, 2]: (x, y) of each output point, normalized to "
                      "[-1, 1]"),
        ),
        outputs=(Output("output", "[N, C, H_out, W_out]: data sampled at the grid's points",
                        type=T),),
        doc="Samples data at the points of a grid of normalized coordinates (bilinear, "
            "bicubic or nearest; zeros, border or reflection padding).",
    )

    @staticmethod
    def infer(ctx):
        data, grid = ctx.input_shape(0), ctx.input_shape(1)
        et = ctx.output_element_types(1)[0]
        if grid.rank_is_static and not grid[3].contains(2):
            raise OpError(f"the grid {grid} holds {grid[3]} values per point; it holds (x, y) "
                          f"pairs, a last axis of 2", code="IR307")
        batch = data[0] if data.rank_is_static else Dimension.dynamic()
        if grid.rank_is_static:
            merged = batch.merge(grid[0])
            if merged is None:
                raise OpError(f"the data {data} has a batch of {data[0]} but the grid {grid} "
                              f"one of {grid[0]}; they must be equal", code="IR307")
            batch = merged
        channels = data[1] if data.rank_is_static else Dimension.dynamic()
        out = grid.dims[1:3] if grid.rank_is_static else (Dimension.dynamic(),) * 2
        return [TensorType(et, PartialShape([batch, channels, *out]))]

    @staticmethod
    def kernel(data, grid, *, align_corners, mode, padding_mode):
        y = sample(data, grid, align_corners, mode, padding_mode)
        if data.dtype.kind in "iu":
            with np.errstate(invalid="ignore", over="ignore"):
                return np.trunc(y).astype(data.dtype)
        return narrow(y, data.dtype)
