"""ShapeOf-1 and ShapeOf-3: a tensor's shape as a 1-D integer tensor."""

import numpy as np

from irexec.ir.element_type import from_name
from irexec.ir.shape import PartialShape
from irexec.ops import bounds
from irexec.ops.rules import check_index_type
from irexec.ops.spec import register
from irexec.ops.spec import ANY, Attr, Input, Op, OpSpec, Output, TensorType


def _infer(ctx):
    if "output_type" in ctx.attrs:
        check_index_type(ctx, "output_type")
    shape = ctx.input_shape(0)
    length = [len(shape)] if shape.rank_is_static else [None]
    return [TensorType(ctx.output_element_types(1)[0], PartialShape(length))]


def _bounds(ctx):
    shape = ctx.input_shape(0)
    return [bounds.of_shape(shape)] if shape.rank_is_static else None


class _ShapeOf(Op):
    infer = staticmethod(_infer)
    bounds = staticmethod(_bounds)


@register
class ShapeOf1(_ShapeOf):
    spec = OpSpec(
        type="ShapeOf",
        since=1,
        until=2,
        inputs=(Input("data", ANY, doc="any tensor; only its shape is read"),),
        outputs=(Output("output", "the data's dims, as i64", type="i64"),),
        doc="Returns the shape of its input as a 1-D i64 tensor.",
        reads_shapes_only=True,
    )

    @staticmethod
    def kernel(data):
        return np.array(data.shape, np.int64)


@register
class ShapeOf3(_ShapeOf):
    spec = OpSpec(
        type="ShapeOf",
        since=3,
        attrs=(Attr("output_type", "element_type", default=from_name("i64"),
                    doc="the output's element type: i32 or i64"),),
        inputs=(Input("data", ANY, doc="any tensor; only its shape is read"),),
        outputs=(Output("output", "the data's dims", type="@output_type"),),
        doc="Returns the shape of its input as a 1-D integer tensor of output_type. A dim that "
            "does not fit i32 wraps, as in OpenVINO.",
        reads_shapes_only=True,
    )

    @staticmethod
    def kernel(data, *, output_type):
        return np.array(data.shape, np.int64).astype(output_type.dtype)
