"""Split-1: cut a tensor into ``num_splits`` equal parts along an axis.

The parts are views of the data (never written through): no element is copied.
"""

from __future__ import annotations

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.domains import AxisIndices
from irexec.ops.movement.slicing import split_axis
from irexec.ops.openvino_cpu import refuses
from irexec.ops.spec import register
from irexec.ops.spec import (ANY, INTEGER, SCALAR_OR_VECTOR, Attr, Input, Op, OpSpec, Output,
                             TensorType, TypeVar)
from irexec.ops.values import scalar

T = TypeVar("T", ANY)


@register
class Split(Op):
    spec = OpSpec(
        type="Split",
        since=1,
        until=16,
        attrs=(Attr("num_splits", "uint", doc="how many equal parts; it must divide the dim"),),
        inputs=(
            Input("data", T, doc="the tensor to split"),
            Input("axis", INTEGER, SCALAR_OR_VECTOR, domain=AxisIndices(0),
                  doc="the axis to cut, in [-rank, rank-1] (a scalar)"),
        ),
        outputs=(Output("output", "one part: the dim along the axis divided by num_splits",
                        type=T, variadic=True),),
        doc="Splits a tensor into equal parts along an axis.",
        exact=True,
        returns_view=True,  # the plan copies it where the caller must own it
    )
    openvino_refuses = refuses(strings=True)

    @staticmethod
    def infer(ctx):
        data = ctx.input_type(0)
        n = ctx.attrs["num_splits"]
        if n == 0:
            ctx.error("IR302", "num_splits is 0; a tensor splits into at least one part")
        axis = split_axis(ctx)
        shape = data.shape
        if axis is None:
            part = PartialShape([None] * len(shape)) if shape.rank_is_static else shape
            return [TensorType(data.element_type, part)] * n
        dim = shape[axis]
        if dim.is_static and dim.min % n:
            raise OpError(f"dim {axis} of the data {shape} is {dim.min}, which {n} parts cannot "
                          f"share equally", code="IR329")
        part = Dimension(-(-dim.min // n), None if dim.max is None else dim.max // n)
        return [TensorType(data.element_type, shape.replace(axis, part))] * n

    @staticmethod
    def kernel(data, axis, *, num_splits):
        a = scalar(axis, "axis") % data.ndim
        size = data.shape[a] // num_splits
        lead = (slice(None),) * a
        parts = tuple(data[lead + (slice(i * size, (i + 1) * size),)] for i in range(num_splits))
        return parts if num_splits > 1 else parts[0]  # one output: the array itself

