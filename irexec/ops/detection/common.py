"""What the ROI pooling ops share: their attribute checks, the ROI table's shape rule and a value
domain for ROI tables that carry their batch index in column 0."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irexec.errors import OpError
from irexec.ir.element_type import plain_values
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.domains import Domain, _sizes
from irexec.ops.spec import Types, TypeVar

REAL_T = TypeVar("T", Types("real"))


def positive(ctx, *names: str) -> None:
    """IR302 for the first of these integer attributes that is below 1."""
    for name in names:
        if ctx.attrs[name] < 1:
            ctx.error("IR302", f"{name} is {ctx.attrs[name]}; it must be a positive integer")


def positive_scale(ctx, name: str = "spatial_scale") -> None:
    value = ctx.attrs[name]
    if not value > 0:
        ctx.error("IR302", f"{name} is {value}; it must be a positive number")


def dim(shape: PartialShape, i: int) -> Dimension:
    """Dim ``i`` of a shape, dynamic when the rank is."""
    return shape[i] if shape.rank_is_static else Dimension.dynamic()


def roi_count(ctx, rois: int, width: int, what: str = "rois") -> Dimension:
    """The ROI count of a [NUM_ROIS, width] table (IR307 when its second dim is not ``width``)."""
    shape = ctx.input_shape(rois)
    if not shape.rank_is_static:
        return Dimension.dynamic()
    if not shape[1].contains(width):
        ctx.error("IR307", f"{what} has shape {shape}; each ROI is a row of {width} values, so "
                           f"its second dim must be {width}")
    return shape[0]


def batch_ids(rois: np.ndarray) -> np.ndarray:
    """Column 0 of a ROI table as the int the runtimes read (truncated toward zero)."""
    values = plain_values(rois).astype(np.float64).reshape(-1, rois.shape[-1])[:, 0]
    return np.trunc(np.nan_to_num(values, nan=-(2.0 ** 40))).astype(np.int64)


@dataclass(frozen=True)
class RoiTable(Domain):
    """ROIs [batch_id, x1, y1, x2, y2] over input ``of`` ([N, C, H, W]): batch ids in [0, N-1]
    (``end_marker``: -1 also, which ends the list as OpenVINO's CPU plugin reads it), corners
    inside the image the feature map was scaled from (by ``spatial_scale``), or in [0, 1] when
    ``normalized`` names the attribute value that asks for it."""

    of: int = 0
    end_marker: bool = False
    normalized: tuple[str, str] | None = None  # (attribute, value) meaning normalized corners

    def check(self, values, data_shape, attrs) -> None:
        if values.size == 0 or len(data_shape) != 4:
            return
        ids = batch_ids(values)
        if self.end_marker:
            stop = np.flatnonzero(ids == -1)
            ids = ids[:stop[0]] if stop.size else ids
        bad = (ids < 0) | (ids >= data_shape[0])
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise OpError(f"ROI {i} has batch index {int(ids[i])}; the data holds "
                          f"{data_shape[0]} images, so it must be in [0, {data_shape[0] - 1}]",
                          code="IR308")

    def generate(self, rng, data_shape, attrs, declared, unsigned):
        count = _sizes(declared, 3)[0] if declared.rank_is_static else 3
        n, _, h, w = data_shape if len(data_shape) == 4 else (1, 1, 1, 1)
        if self.normalized and attrs.get(self.normalized[0]) == self.normalized[1]:
            top_w = top_h = 1.0
        else:
            scale = attrs.get("spatial_scale", 1.0) or 1.0
            top_w, top_h = w / scale, h / scale
        a = rng.uniform(0, 1, size=(count, 2)) * [top_w, top_h]
        b = rng.uniform(0, 1, size=(count, 2)) * [top_w, top_h]
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        ids = rng.integers(0, max(n, 1), size=(count, 1))
        return np.concatenate([ids, lo, hi], axis=1)
