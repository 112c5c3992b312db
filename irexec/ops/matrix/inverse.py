"""Inverse-14: the inverse (or its transpose, ``adjoint``) of each square matrix in a batch.

Computed by LAPACK's LU factorization with partial pivoting (``numpy.linalg.inv``), in f32 for
the floats narrower than f32 and in f64 in precise mode. The specification leaves the result for
a singular matrix undefined; irexec gives NaN for every element of such a matrix (OpenVINO's CPU
plugin gives NaN and infinities), leaving the other matrices of the batch untouched.
"""

from __future__ import annotations

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import PartialShape
from irexec.kernels.numeric import compute_dtype, narrow
from irexec.ops import windows
from irexec.ops.spec import register
from irexec.ops.spec import Attr, Input, Op, OpSpec, Output, Rank, TensorType, TypeVar

T = TypeVar("T", windows.REAL)


def invert(x: np.ndarray) -> np.ndarray:
    """The inverse of each matrix of ``x`` [..., N, N]; NaN matrices where one is singular."""
    try:
        return np.linalg.inv(x)
    except np.linalg.LinAlgError:
        pass
    flat = x.reshape((-1,) + x.shape[-2:])
    out = np.full(flat.shape, np.nan, x.dtype)
    for i, m in enumerate(flat):  # only when some matrix is singular
        try:
            out[i] = np.linalg.inv(m)
        except np.linalg.LinAlgError:
            pass
    return out.reshape(x.shape)


@register
class Inverse(Op):
    spec = OpSpec(
        type="Inverse",
        numerics="accumulating",
        since=14,
        until=16,
        attrs=(Attr("adjoint", "bool", default=False,
                    doc="return the transpose of each inverse (the adjoint of the spec: "
                        "conjugate transpose, for real matrices the transpose)"),),
        inputs=(Input("input", T, Rank(min=2),
                      doc="[B..., N, N]: square matrices, any number of batch axes"),),
        outputs=(Output("output", "[B..., N, N]: the inverse of each matrix (NaN for a "
                                  "singular one)", type=T),),
        doc="The inverse of each square matrix of a batch (LU with partial pivoting), or its "
            "transpose.",
    )

    @staticmethod
    def infer(ctx):
        shape = ctx.input_shape(0)
        et = ctx.output_element_types(1)[0]
        if shape.rank_is_static:
            rows, cols = shape[len(shape) - 2], shape[len(shape) - 1]
            side = rows.merge(cols)
            if side is None:
                raise OpError(f"the input {shape} holds {rows}x{cols} matrices; Inverse takes "
                              f"square ones", code="IR307")
            shape = PartialShape(list(shape.dims[:-2]) + [side, side])
        return [TensorType(et, shape)]

    @staticmethod
    def kernel(input, *, adjoint):
        y = invert(input.astype(compute_dtype(input.dtype), copy=False))
        if adjoint:
            y = np.swapaxes(y, -1, -2)
        return narrow(np.ascontiguousarray(y), input.dtype)
