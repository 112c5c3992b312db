"""NonZero-3: the indices of the non-zero elements, one row per axis."""

import numpy as np

from irexec.ir.element_type import from_name
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.spec import register
from irexec.ops.rules import check_index_type
from irexec.ops.spec import Attr, Input, Op, OpSpec, Output, TensorType, Types


@register
class NonZero(Op):
    spec = OpSpec(
        type="NonZero",
        since=3,
        until=16,
        attrs=(Attr("output_type", "element_type", default=from_name("i64"),
                    doc="the indices' element type: i32 or i64"),),
        inputs=(Input("data", Types("numeric_or_boolean"),
                      doc="any tensor; NaN counts as non-zero, -0.0 as zero"),),
        outputs=(Output("output", "[rank, count]: the coordinates of each non-zero element, in "
                                  "row-major order (a scalar counts as rank 1)",
                        type="@output_type"),),
        doc="Returns the coordinates of the non-zero elements: a [max(rank, 1), count] tensor. "
            "Its second dim is known only from the values (dynamic, at most the element count).",
    )

    @staticmethod
    def infer(ctx):
        check_index_type(ctx, "output_type")
        shape = ctx.input_shape(0)
        if not shape.rank_is_static:
            return [TensorType(ctx.attrs["output_type"], PartialShape([-1, -1]))]
        most = 1
        for d in shape:
            most = None if most is None or d.max is None else most * d.max
        return [TensorType(ctx.attrs["output_type"],
                           PartialShape([max(len(shape), 1), Dimension(0, most)]))]

    @staticmethod
    def kernel(data, *, output_type):
        flat = np.atleast_1d(data)
        return np.array(np.nonzero(flat), dtype=output_type.dtype).reshape(flat.ndim, -1)
