"""SegmentMax-16: the maximum of each segment of rows of ``data``.

Row i of ``data`` belongs to segment ``segment_ids[i]`` (sorted, non-negative). There are
``num_segments`` segments (default ``max(segment_ids) + 1``): rows of later segments are left out,
and a segment with no row is filled by ``fill_mode`` (0, or the type's lowest value: -FLT_MAX for
f32, never -inf). NaNs are skipped, as OpenVINO's reference skips them (a segment of NaNs only
gives NaN). Exact: every output element is an input element or the fill value.
"""

from __future__ import annotations

import numpy as np

from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.domains import SmallInts, as_int64
from irexec.ops.domains import SortedIds
from irexec.ops.spec import (NUMERIC, SCALAR, SHAPE_INDEX, VECTOR, Attr, Input, Op, OpSpec,
                             Output, Rank, TensorType, TypeVar, register)

T = TypeVar("T", NUMERIC)


def _check_ids(ctx, ids) -> int:
    v = as_int64(ids)
    if v.size and v[0] < 0:
        ctx.error("IR308", f"segment_ids[0] = {int(v[0])} is negative; segment ids are 0 or more")
    down = np.flatnonzero(np.diff(v) < 0)
    if down.size:
        i = int(down[0]) + 1
        ctx.error("IR308", f"segment_ids[{i}] = {int(v[i])} is below segment_ids[{i - 1}] = "
                           f"{int(v[i - 1])}; segment ids must be sorted")
    return int(v[-1]) + 1 if v.size else 0


def lowest(dtype: np.dtype):
    if dtype.kind in "iu":
        return np.iinfo(dtype).min
    if dtype.kind == "f":
        return np.finfo(dtype).min
    return -float(np.finfo(dtype).max)  # ml_dtypes' narrow floats


@register
class SegmentMax(Op):
    spec = OpSpec(
        type="SegmentMax",
        since=16,
        until=16,
        attrs=(Attr("fill_mode", "enum", values=("zero", "lowest"),
                    doc="what an empty segment holds: 0, or the lowest value of the type"),),
        inputs=(Input("data", T, Rank(min=1), doc="[rows, ...]: the rows to reduce"),
                Input("segment_ids", SHAPE_INDEX, VECTOR, domain=SortedIds(0, top=3),
                      doc="[rows]: each row's segment, sorted and non-negative"),
                Input("num_segments", SHAPE_INDEX, SCALAR, optional=True,
                      domain=SmallInts(0, 3, 4),
                      doc="how many segments (default max(segment_ids) + 1)")),
        outputs=(Output("output", "[num_segments, ...]: the element-wise maximum of each "
                                  "segment's rows", type=T),),
        doc="The element-wise maximum of the rows of each segment.",
        exact=True,
    )

    @staticmethod
    def infer(ctx):
        data, ids = ctx.input_shape(0), ctx.input_shape(1)
        if data.rank_is_static and ids.rank_is_static and data[0].merge(ids[0]) is None:
            ctx.error("IR307", f"segment_ids {ids} must have one entry per row of data {data}")
        ids_value = ctx.input_value(1)
        count = _check_ids(ctx, ids_value) if ids_value is not None else None
        dim = Dimension.dynamic() if count is None else Dimension.static(count)
        if ctx.num_inputs > 2:
            n = ctx.input_value(2)
            dim = Dimension.dynamic()
            if n is not None:
                n = int(as_int64(n)[0])
                if n < 0:
                    ctx.error("IR308", f"num_segments is {n}; it must be 0 or more")
                dim = Dimension.static(n)
        shape = data.replace(0, dim) if data.rank_is_static else PartialShape.dynamic()
        return [TensorType(ctx.type_var("T"), shape)]

    @staticmethod
    def kernel(data, segment_ids, num_segments=None, *, fill_mode):
        ids = as_int64(segment_ids)
        n = int(as_int64(num_segments)[0]) if num_segments is not None else \
            (int(ids[-1]) + 1 if ids.size else 0)
        keep = ids < n
        ids, rows = ids[keep], data[keep]
        fill = 0 if fill_mode == "zero" else lowest(data.dtype)
        out = np.full((n,) + data.shape[1:], fill, dtype=data.dtype)
        if ids.size and rows[0].size:
            present, starts = np.unique(ids, return_index=True)
            out[present] = np.fmax.reduceat(rows, starts, axis=0)
        return out
