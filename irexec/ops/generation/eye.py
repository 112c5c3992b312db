"""Eye-9: identity-like matrices with ones on one diagonal, optionally in a batch."""

import numpy as np

from irexec.diagnostics.codes import ERROR, Code
from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.domains import as_int64
from irexec.ops.spec import register
from irexec.ops.rules import check_output_size
from irexec.ops.spec import (SCALAR_OR_VECTOR, SHAPE_INDEX, VECTOR, Attr, Input, Op, OpSpec,
                             Output, TensorType)

CODE = Code("IR339", "eye-size", ERROR,
            "give Eye non-negative num_rows, num_columns and batch_shape values")


def _count(value, name: str) -> int:
    v = as_int64(np.asarray(value))
    if v.size != 1:
        raise OpError(f"{name} holds {v.size} values; it must hold one", code="IR305")
    if v[0] < 0:
        raise OpError(f"{name} is {int(v[0])}; it must not be negative", code="IR339")
    return int(v[0])


def _batch(value) -> tuple[int, ...]:
    v = as_int64(np.asarray(value))
    if (v < 0).any():
        raise OpError(f"batch_shape {v.tolist()} holds a negative size", code="IR339")
    return tuple(int(x) for x in v)


def _dim(ctx, i, name) -> Dimension:
    value = ctx.input_value(i)
    if value is not None:
        try:
            return Dimension.static(_count(value, name))
        except OpError as e:
            ctx.error(e.code, str(e))
    got = ctx.input_bounds(i)
    if got is not None and got[0].size == 1:
        lo, hi = float(got[0].reshape(-1)[0]), float(got[1].reshape(-1)[0])
        return Dimension(max(int(lo), 0) if np.isfinite(lo) else 0,
                         int(hi) if np.isfinite(hi) and hi >= 0 else None)
    return Dimension.dynamic()


@register
class Eye(Op):
    spec = OpSpec(
        type="Eye",
        since=9,
        until=16,
        attrs=(Attr("output_type", "element_type", doc="the output's element type"),),
        inputs=(Input("num_rows", SHAPE_INDEX, SCALAR_OR_VECTOR, doc="rows; not negative"),
                Input("num_columns", SHAPE_INDEX, SCALAR_OR_VECTOR, doc="columns; not negative"),
                Input("diagonal_index", SHAPE_INDEX, SCALAR_OR_VECTOR,
                      doc="which diagonal holds the ones: 0 the main one, > 0 above, < 0 below"),
                Input("batch_shape", SHAPE_INDEX, VECTOR, optional=True,
                      doc="leading dims: the matrix repeated over them")),
        outputs=(Output("output", "[*batch_shape, num_rows, num_columns]",
                        type="@output_type"),),
        doc="Matrices of zeros with ones on the diagonal diagonal_index (out of the matrix: all "
            "zeros), repeated over batch_shape.",
        codes=(CODE,),
    )

    @staticmethod
    def infer(ctx):
        et = ctx.attrs["output_type"]
        if et.kind not in ("int", "uint", "float", "boolean"):
            ctx.error("IR302", f"output_type is {et}; Eye makes numbers or booleans")
        rows, cols = _dim(ctx, 0, "num_rows"), _dim(ctx, 1, "num_columns")
        if ctx.num_inputs > 3:
            value = ctx.input_value(3)
            if value is not None:
                try:
                    _batch(value)
                except OpError as e:
                    ctx.error(e.code, str(e))
            batch = ctx.input_as_shape(3)
            if batch is None:
                return [TensorType(et, PartialShape.dynamic())]
            dims = list(batch.dims)
        else:
            dims = []
        return [TensorType(et, PartialShape(dims + [rows, cols]))]

    @staticmethod
    def kernel(num_rows, num_columns, diagonal_index, batch_shape=None, *, output_type):
        n, m = _count(num_rows, "num_rows"), _count(num_columns, "num_columns")
        k = as_int64(np.asarray(diagonal_index))
        if k.size != 1:
            raise OpError(f"diagonal_index holds {k.size} values; it must hold one", code="IR305")
        k = int(k[0])
        batch = () if batch_shape is None else _batch(batch_shape)
        check_output_size(batch + (n, m), np.dtype(output_type.dtype).itemsize)
        if not -n < k < m:
            k = m  # out of the matrix: np.eye gives zeros for any k past the edge
        eye = np.eye(n, m, k, dtype=output_type.dtype)
        return np.broadcast_to(eye, batch + (n, m)).copy()
