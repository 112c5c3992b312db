"""GatherElements-6: take single elements along an axis, one per index (the output has the
indices' shape).

Indices and data have the same rank and agree on every dim but the axis. The specification asks
for indices in [0, dim-1]; OpenVINO also counts negative ones, down to -dim, from the end (ONNX's
GatherElements, which it serves, allows them), and so does irexec. Any other index is IR325.
"""

from __future__ import annotations

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import PartialShape
from irexec.ir.shape_rules import normalize_axis
from irexec.ops.domains import Indices
from irexec.ops.movement.indexing import check_range, index_values
from irexec.ops.openvino_cpu import refuses
from irexec.ops.spec import register
from irexec.ops.spec import (ANY, SHAPE_INDEX, Attr, Input, Op, OpSpec, Output, Rank,
                             TensorType, TypeVar)

T = TypeVar("T", ANY)


def along_axis_shape(data: PartialShape, indices: PartialShape, axis: int, what: str) \
        -> PartialShape:
    """The indices' shape, merged with the data's on every dim but the axis (IR307 when they
    differ)."""
    if len(indices) != len(data):
        raise OpError(f"{what} {indices} have rank {len(indices)} but the data {data} has rank "
                      f"{len(data)}; they must have the same rank", code="IR307")
    dims = list(indices.dims)
    for i in range(len(data)):
        if i == axis:
            continue
        d = data[i].merge(indices[i])
        if d is None:
            raise OpError(f"{what} {indices} and the data {data} differ in dim {i}; they must "
                          f"agree on every dim but the axis {axis}", code="IR307")
        dims[i] = d
    return PartialShape._of(tuple(dims))


@register
class GatherElements(Op):
    spec = OpSpec(
        type="GatherElements",
        since=6,
        until=16,
        attrs=(Attr("axis", "int", doc="the axis to gather along, in [-rank, rank-1]"),),
        inputs=(
            Input("data", T, Rank(min=1), doc="the tensor to gather from"),
            Input("indices", SHAPE_INDEX, Rank(min=1), domain=Indices(0),
                  doc="one index along the axis per output element, in [-dim, dim-1]; the "
                      "data's shape but for the axis"),
        ),
        outputs=(Output("output", "the indices' shape", type=T),),
        doc="Takes one element along an axis per index.",
        exact=True,
    )
    openvino_refuses = refuses()

    @staticmethod
    def infer(ctx):
        data, indices = ctx.input_type(0), ctx.input_type(1)
        shape, ishape = data.shape, indices.shape
        axis = normalize_axis(ctx.attrs["axis"], shape.rank if shape.rank_is_static
                              else ishape.rank)
        if not shape.rank_is_static or not ishape.rank_is_static:
            return [TensorType(data.element_type, ishape if ishape.rank_is_static else shape)]
        out = along_axis_shape(shape, ishape, axis, "indices")
        values = ctx.input_value(1)
        if values is not None and shape[axis].is_static:
            check_range(index_values(values), shape[axis].min, negative=True)
        return [TensorType(data.element_type, out)]

    @staticmethod
    def kernel(data, indices, *, axis):
        a = axis % data.ndim
        idx = index_values(indices)
        idx = np.where(idx < 0, idx + data.shape[a], idx)
        if idx.size == 0:
            return np.empty(idx.shape, data.dtype)
        return np.take_along_axis(data, idx, axis=a)
