"""SearchSorted-15: where values would be inserted into sorted rows to keep them sorted."""

import numpy as np

from irexec.errors import OpError
from irexec.ir.element_type import from_name
from irexec.ir.shape import PartialShape
from irexec.kernels.numeric import compare_pair
from irexec.ops.domains import SortedRows
from irexec.ops.spec import register
from irexec.ops.rules import check_index_type
from irexec.ops.spec import NUMERIC, Attr, Input, Op, OpSpec, Output, TensorType, TypeVar

T = TypeVar("T", NUMERIC)


def _leading(seq: PartialShape, values: PartialShape) -> PartialShape:
    """The values' shape with its leading dims merged with the sequence's (all but the last
    must agree unless the sequence is 1-D)."""
    if not (seq.rank_is_static and values.rank_is_static) or len(seq) == 1:
        return values
    if len(seq) != len(values):
        raise OpError(f"sorted_sequence {seq} and values {values} differ in rank; they must "
                      f"have the same rank unless sorted_sequence is 1-D", code="IR307")
    dims = []
    for i, (a, b) in enumerate(zip(seq.dims[:-1], values.dims[:-1])):
        m = a.merge(b)
        if m is None:
            raise OpError(f"sorted_sequence {seq} and values {values} differ in dim {i}; all "
                          f"but the last dim must agree", code="IR307")
        dims.append(m)
    return PartialShape(dims + [values[-1]])


@register
class SearchSorted(Op):
    spec = OpSpec(
        type="SearchSorted",
        since=15,
        until=16,
        attrs=(Attr("right_mode", "bool", default=False,
                    doc="false: the first index that keeps the order (seq[i-1] < v <= seq[i]); "
                        "true: the last (seq[i-1] <= v < seq[i])"),
               Attr("output_type", "element_type", default=from_name("i64"),
                    doc="the indices' element type: i32 or i64")),
        inputs=(Input("sorted_sequence", T, domain=SortedRows(1),
                      doc="rows sorted ascending along the last axis (not checked)"),
                Input("values", T, doc="the values to place; leading dims as the sequence's "
                                       "(any shape for a 1-D sequence)")),
        outputs=(Output("output", "the insertion index of each value in its row",
                        type="@output_type"),),
        doc="For each value, the index in its row of the sorted sequence where inserting it keeps "
            "the row sorted (binary search).",
    )

    @staticmethod
    def infer(ctx):
        check_index_type(ctx, "output_type")
        seq = ctx.input_shape(0)
        if seq.rank_is_static and len(seq) == 0:
            ctx.error("IR305", "input 0 (sorted_sequence) is a scalar; it needs rank 1 or more")
        try:
            shape = _leading(seq, ctx.input_shape(1))
        except OpError as e:
            ctx.error(e.code, str(e))
        return [TensorType(ctx.attrs["output_type"], shape)]

    @staticmethod
    def kernel(sorted_sequence, values, *, right_mode, output_type):
        _leading(PartialShape(sorted_sequence.shape), PartialShape(values.shape))
        seq, v = compare_pair(sorted_sequence, values)
        side = "right" if right_mode else "left"
        if seq.ndim == 1:
            return np.asarray(np.searchsorted(seq, v, side=side)).astype(output_type.dtype)
        # Rows apart: offset each row past the previous one's values, as one sorted 1-D array.
        rows = seq.reshape(-1, seq.shape[-1])
        vals = v.reshape(rows.shape[0], v.size // max(rows.shape[0], 1))
        out = np.empty(vals.shape, np.int64)
        for r in range(rows.shape[0]):  # one binary search per row (rows, not elements)
            out[r] = np.searchsorted(rows[r], vals[r], side=side)
        return out.reshape(v.shape).astype(output_type.dtype)
