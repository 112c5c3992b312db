"""SparseFillEmptyRows-16: give every empty row of a 2-D sparse tensor one entry, at column 0.

The sparse tensor is ``indices`` ([M, 2] row/column pairs), ``values`` ([M]) and ``dense_shape``
([2]). The outputs are the entries of the filled tensor in row-major order (entries sharing a
position keep their input order), their values, and which rows were empty. The entry count
``M'`` is known from the values only: inference gives it as the interval
``[M, M + rows]``.
"""

from __future__ import annotations

import numpy as np

from irexec.ir.shape import Dimension, PartialShape
from dataclasses import dataclass

from irexec.ops.domains import Domain, as_int64
from irexec.ops.spec import (ANY, SCALAR, SHAPE_INDEX, VECTOR, Input, Op, OpSpec, Output, Rank,
                             TensorType, TypeVar, register)

T = TypeVar("T", ANY)
T_IDX = TypeVar("T_IDX", SHAPE_INDEX)


def _check(ctx, shape_value, indices_value):
    dense = as_int64(shape_value)
    if dense.size != 2:
        ctx.error("IR307", f"dense_shape has {dense.size} values; a 2-D sparse tensor needs 2")
    if (dense < 0).any():
        ctx.error("IR308", f"dense_shape {dense.tolist()} has a negative dim")
    if indices_value is not None:
        idx = as_int64(indices_value).reshape(-1, 2)
        bad = (idx < 0) | (idx >= dense)
        if bad.any():
            i, j = (int(k) for k in np.argwhere(bad)[0])
            what = "row" if j == 0 else "column"
            ctx.error("IR325", f"indices[{i}] = {idx[i].tolist()}: the {what} lies outside the "
                               f"dense shape {dense.tolist()}")
    return int(dense[0])


@dataclass(frozen=True)
class _Sparse(Domain):
    """Made for ``irexec run``: a dense shape [M + 1, 3] (``cells`` False) from the indices'
    shape [M, 2], or one entry per row, row i at column i % 3 (``cells`` True), from the
    values' shape [M]: every row is inside the shape and the last one is empty."""

    of: int = 0
    cells: bool = False

    def generate(self, rng, data_shape, attrs, declared, unsigned):
        m = data_shape[0] if data_shape else 0
        if not self.cells:
            return np.array([m + 1, 3], np.int64)
        rows = np.arange(m)
        return np.stack([rows, rows % 3], axis=1).reshape(m, 2)


@register
class SparseFillEmptyRows(Op):
    spec = OpSpec(
        type="SparseFillEmptyRows",
        since=16,
        until=16,
        inputs=(Input("values", T, VECTOR, doc="[M]: the value of each entry"),
                Input("dense_shape", T_IDX, VECTOR, domain=_Sparse(2),
                      doc="[2]: rows and columns of the dense tensor"),
                Input("indices", T_IDX, Rank(exact=2), domain=_Sparse(0, cells=True),
                      doc="[M, 2]: the row and column of each entry, inside dense_shape"),
                Input("default_value", T, SCALAR, doc="the value given to each empty row")),
        outputs=(Output("output_indices", "[M', 2]: the entries' positions, row-major",
                        type=T_IDX),
                 Output("output_values", "[M']: their values", type=T),
                 Output("empty_row_indicator", "[rows]: true where a row had no entry",
                        type="boolean")),
        doc="Fills each empty row of a 2-D sparse tensor with default_value at column 0; "
            "returns the entries in row-major order and which rows were empty.",
    )

    @staticmethod
    def infer(ctx):
        values, dense, indices = (ctx.input_shape(i) for i in range(3))
        m = Dimension.dynamic()
        for s, what in ((values, "values"), (indices, "indices")):
            if s.rank_is_static:
                merged = m.merge(s[0])
                if merged is None:
                    ctx.error("IR307", f"values {values} and indices {indices} must have one "
                                       f"entry each (dim 0)")
                m = merged
        if indices.rank_is_static and indices[1].is_static and indices[1].min != 2:
            ctx.error("IR307", f"indices {indices} must be [M, 2]: a row and a column each")
        if dense.rank_is_static and dense[0].is_static and dense[0].min != 2:
            ctx.error("IR307", f"dense_shape {dense} must hold 2 values (rows, columns)")
        rows = Dimension.dynamic()
        shape_value = ctx.input_value(1)
        if shape_value is not None:
            rows = Dimension.static(_check(ctx, shape_value, ctx.input_value(2)))
        total = Dimension(m.min, None if m.max is None or rows.max is None else m.max + rows.max)
        indices_value = ctx.input_value(2)
        if not ctx.read_time and rows.is_static and indices_value is not None:
            # a call's values: the exact count, so that the memory rule sees the outputs' size
            # before the kernel makes them (one entry per filled row's entry, one per empty row)
            filled = np.unique(as_int64(indices_value).reshape(-1, 2)[:, 0]).size
            total = Dimension.static(indices_value.size // 2 + rows.min - filled)
        idx_t, val_t = ctx.type_var("T_IDX"), ctx.type_var("T")
        return [TensorType(idx_t, PartialShape._of((total, Dimension.static(2)))),
                TensorType(val_t, PartialShape._of((total,))),
                TensorType(ctx.output_element_types(3)[2], PartialShape._of((rows,)))]

    @staticmethod
    def kernel(values, dense_shape, indices, default_value):
        rows = int(as_int64(dense_shape)[0])
        idx = as_int64(indices).reshape(-1, 2)
        empty = np.ones(rows, np.bool_)
        empty[idx[:, 0]] = False
        new = np.flatnonzero(empty)
        r = np.concatenate([idx[:, 0], new])
        c = np.concatenate([idx[:, 1], np.zeros(new.size, np.int64)])
        order = np.lexsort((c, r))  # stable: equal positions keep their order
        out_idx = np.stack([r[order], c[order]], axis=1).astype(indices.dtype)
        fill = np.empty(new.size, values.dtype)
        fill[...] = default_value
        out_values = np.concatenate([values, fill])[order]
        return out_idx, out_values, empty
