"""ScatterUpdate-3: a copy of the data with whole slices along an axis replaced.

``updates`` has shape ``data.shape[:axis] + indices.shape + data.shape[axis+1:]``; slice
``indices[j]`` of the output along the axis takes ``updates[..., j, ...]``. Indices lie in
[0, dim-1] (the specification raises for a negative one too: IR325). Where several indices name
the same slice the specification leaves the order open; irexec applies them in order, so the
last one wins, as OpenVINO's reference implementation does.
"""

from __future__ import annotations

import math

from irexec.errors import OpError
from irexec.ir.shape import PartialShape
from irexec.ir.shape_rules import normalize_axis
from irexec.kernels import buffers
from irexec.ops.domains import AxisIndices, Indices
from irexec.ops.movement.indexing import check_range, index_values
from irexec.ops.openvino_cpu import refuses
from irexec.ops.spec import register
from irexec.ops.spec import ANY, INTEGER, SCALAR_OR_VECTOR, Input, Op, OpSpec, Output, TypeVar
from irexec.ops.values import scalar

T = TypeVar("T", ANY)


@register
class ScatterUpdate(Op):
    spec = OpSpec(
        type="ScatterUpdate",
        since=3,
        until=16,
        inputs=(
            Input("data", T, doc="the tensor to update"),
            Input("indices", INTEGER, domain=Indices(0),
                  doc="which slices along the axis to replace, in [0, dim-1]"),
            Input("updates", T, doc="the new slices: data.shape[:axis] + indices.shape + "
                                    "data.shape[axis+1:]"),
            Input("axis", INTEGER, SCALAR_OR_VECTOR, domain=AxisIndices(0),
                  doc="the axis the indices index, in [-rank, rank-1] (a scalar)"),
        ),
        outputs=(Output("output", "the data with the slices replaced", type=T),),
        doc="Replaces slices of a tensor along an axis.",
        exact=True,
    )
    openvino_refuses = refuses(strings=True)

    @staticmethod
    def infer(ctx):
        data, indices, updates = (ctx.input_type(i) for i in range(3))
        shape = data.shape
        values = ctx.input_value(3)
        if values is None or not shape.rank_is_static or not indices.shape.rank_is_static:
            return [data]
        axis = normalize_axis(scalar(values, "axis"), len(shape))
        wanted = PartialShape._of(shape.dims[:axis] + indices.shape.dims + shape.dims[axis + 1:])
        if updates.shape.rank_is_static and wanted.merge(updates.shape) is None:
            raise OpError(f"the updates have shape {updates.shape} but data {shape} and indices "
                          f"{indices.shape} along axis {axis} need {wanted}", code="IR307")
        idx = ctx.input_value(1)
        if idx is not None and shape[axis].is_static:
            check_range(index_values(idx), shape[axis].min, negative=False)
        return [data]

    @staticmethod
    def kernel(data, indices, updates, axis):
        a = scalar(axis, "axis") % data.ndim
        out = buffers.copy(data)
        idx = index_values(indices).reshape(-1)
        if out.size and idx.size:
            lead = math.prod(data.shape[:a])
            rest = math.prod(data.shape[a + 1:])
            view = out.reshape(lead, data.shape[a], rest)
            view[:, idx, :] = updates.reshape(lead, idx.size, rest)
        return out
