"""MatMul-1: matrix products over the last two axes, with batch axes broadcast."""

import numpy as np

from irexec.errors import OpError
from irexec.ir import shape_rules
from irexec.ir.shape import Dimension, PartialShape
from irexec.kernels import blas
from irexec.kernels.numeric import compute_dtype, narrow
from irexec.ops import windows
from irexec.ops.spec import register
from irexec.ops.spec import Attr, Input, Op, OpSpec, Output, TensorType, TypeVar

_OWN = (np.dtype(np.float32), np.dtype(np.float64))  # computed in their own type

T = TypeVar("T", windows.ARITH)
_ONE = Dimension.static(1)


def _matrix(shape: PartialShape, transpose: bool, is_a: bool) -> PartialShape:
    """The input as a stack of matrices: a vector becomes [1, K] (A) or [K, 1] (B), and a
    transposed input has its last two axes swapped; a 1-D input ignores transpose."""
    dims = list(shape.dims)
    if len(dims) == 1:
        dims = [_ONE, dims[0]] if is_a else [dims[0], _ONE]
    elif transpose:
        dims[-1], dims[-2] = dims[-2], dims[-1]
    return PartialShape(dims)


def output_shape(a: PartialShape, b: PartialShape, transpose_a: bool, transpose_b: bool) \
        -> PartialShape:
    if not a.rank_is_static or not b.rank_is_static:
        return PartialShape.dynamic()
    for name, s in (("A", a), ("B", b)):
        if len(s) == 0:
            raise OpError(f"input {name} is a scalar; MatMul needs at least a vector",
                          code="IR305")
    ma, mb = _matrix(a, transpose_a, True), _matrix(b, transpose_b, False)
    if ma[-1].merge(mb[-2]) is None:
        raise OpError(f"A {a}{' transposed' * transpose_a} has {ma[-1]} columns but B "
                      f"{b}{' transposed' * transpose_b} has {mb[-2]} rows; the inner "
                      f"dims of a matrix product must agree", code="IR307")
    batch = shape_rules.broadcast_numpy(PartialShape(ma.dims[:-2]), PartialShape(mb.dims[:-2]))
    dims = list(batch.dims)
    if len(a) > 1:
        dims.append(ma[-2])
    if len(b) > 1:
        dims.append(mb[-1])
    return PartialShape(dims)


@register
class MatMul(Op):
    spec = OpSpec(
        type="MatMul",
        numerics="accumulating",
        since=1,
        until=16,
        attrs=(
            Attr("transpose_a", "bool", default=False,
                 doc="swap A's last two axes first (ignored for a 1-D A)"),
            Attr("transpose_b", "bool", default=False,
                 doc="swap B's last two axes first (ignored for a 1-D B)"),
        ),
        inputs=(
            Input("A", T, doc="[..., M, K], or a vector [K] (a row, dropped from the output)"),
            Input("B", T, doc="[..., K, N], or a vector [K] (a column, dropped from the "
                              "output)"),
        ),
        outputs=(Output("output", "[batch..., M, N]: the batch axes of A and B broadcast "
                                  "(numpy rules)", type=T),),
        doc="Matrix product of the last two axes of A and B (numpy.matmul's rules, with "
            "optional transposes).",
    )

    @staticmethod
    def infer(ctx):
        shape = output_shape(ctx.input_shape(0), ctx.input_shape(1), ctx.attrs["transpose_a"],
                             ctx.attrs["transpose_b"])
        return [TensorType(ctx.output_element_types(1)[0], shape)]

    @staticmethod
    def kernel(a, b, *, transpose_a, transpose_b):
        dtype = a.dtype
        if dtype in _OWN and not transpose_a and not transpose_b and a.ndim > 1 < b.ndim:
            return np.matmul(a, b)  # f32/f64 matrices: numpy's product in their own type
        ct = compute_dtype(dtype)
        if transpose_a and a.ndim > 1:
            a = np.swapaxes(a, -1, -2)
        if transpose_b and b.ndim > 1:
            b = np.swapaxes(b, -1, -2)
        if ct != dtype:
            a, b = a.astype(ct), b.astype(ct)
        y = blas.matmul(a, b)
        if type(y) is not np.ndarray:  # two vectors: numpy gives a scalar
            y = np.asarray(y)
        return y if ct == dtype else narrow(y, dtype)
