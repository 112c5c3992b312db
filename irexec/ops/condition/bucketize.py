"""Bucketize-3: which bucket each element falls in, given the buckets' sorted boundaries."""

import numpy as np

from irexec.ir.element_type import from_name
from irexec.ops.domains import SortedRows
from irexec.kernels.numeric import compare_pair
from irexec.ops.spec import register
from irexec.ops.rules import check_index_type
from irexec.ops.spec import NUMERIC, VECTOR, Attr, Input, Op, OpSpec, Output, TensorType


@register
class Bucketize(Op):
    spec = OpSpec(
        type="Bucketize",
        since=3,
        until=16,
        attrs=(Attr("output_type", "element_type", default=from_name("i64"),
                    doc="the bucket indices' element type: i32 or i64"),
               Attr("with_right_bound", "bool", default=True,
                    doc="a bucket holds its right boundary (true) or its left one (false)")),
        inputs=(Input("data", NUMERIC, doc="the values to place"),
                Input("buckets", NUMERIC, VECTOR, domain=SortedRows(0),
                      doc="the boundaries, sorted ascending (not checked, as in OpenVINO)")),
        outputs=(Output("output", "each value's bucket: 0 before the first boundary, "
                                  "len(buckets) after the last", type="@output_type"),),
        doc="For each element, the index of the bucket it falls in; the buckets are the "
            "intervals between consecutive boundaries, right-closed when with_right_bound.",
    )

    @staticmethod
    def infer(ctx):
        check_index_type(ctx, "output_type")
        return [TensorType(ctx.attrs["output_type"], ctx.input_shape(0))]

    @staticmethod
    def kernel(data, buckets, *, output_type, with_right_bound):
        d, b = compare_pair(data, buckets)
        side = "left" if with_right_bound else "right"
        return np.asarray(np.searchsorted(b, d, side=side)).astype(output_type.dtype)
