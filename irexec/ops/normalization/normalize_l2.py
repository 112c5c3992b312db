"""NormalizeL2-1: divide by the L2 norm over some axes."""

import numpy as np

from irexec.ir.shape_rules import normalize_axes
from irexec.kernels.numeric import compute_dtype, narrow
from irexec.ops import windows
from irexec.ops.domains import AxisIndices, as_int64
from irexec.ops.spec import register
from irexec.ops.spec import INTEGER, SCALAR_OR_VECTOR, Attr, Input, Op, OpSpec, Output, TypeVar

T = TypeVar("T", windows.REAL)


@register
class NormalizeL2(Op):
    spec = OpSpec(
        type="NormalizeL2",
        numerics="accumulating",
        since=1,
        until=16,
        attrs=(
            Attr("eps", "float", doc="keeps the norm away from zero, by eps_mode"),
            Attr("eps_mode", "enum", values=("add", "max"),
                 doc="sqrt(sum + eps) (add) or sqrt(max(sum, eps)) (max)"),
        ),
        inputs=(
            Input("data", T, doc="the tensor to normalize"),
            Input("axes", INTEGER, SCALAR_OR_VECTOR, domain=AxisIndices(0),
                  doc="the axes of the norm, in [-rank, rank-1]; none: each element is "
                      "divided by its own magnitude"),
        ),
        outputs=(Output("output", "data / sqrt(eps_mode(sum of squares over axes, eps)), "
                                  "same shape", type=T),),
        doc="L2 normalization along the given axes.",
    )

    @staticmethod
    def infer(ctx):
        values = ctx.input_value(1)
        if values is not None:
            normalize_axes([int(a) for a in as_int64(values)], ctx.input_shape(0).rank)
        return ctx.default_outputs()

    @staticmethod
    def kernel(data, axes, *, eps, eps_mode):
        ct = compute_dtype(data.dtype)
        x = data.astype(ct, copy=False)
        reduce = tuple(sorted({int(a) % data.ndim for a in as_int64(axes)})) if data.ndim \
            else ()
        squares = np.sum(x * x, axis=reduce, keepdims=True, dtype=ct) if reduce else x * x
        e = ct.type(eps)
        norm = np.sqrt(squares + e) if eps_mode == "add" else np.sqrt(np.maximum(squares, e))
        return narrow(x / norm, data.dtype)
