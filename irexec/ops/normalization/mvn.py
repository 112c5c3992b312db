"""MVN-1 and MVN-6: mean-variance normalization over some axes."""

import numpy as np

from irexec.ir.shape_rules import normalize_axes
from irexec.kernels.numeric import compute_dtype, narrow
from irexec.ops import windows
from irexec.ops.domains import AxisIndices, as_int64, sorted_axes
from irexec.ops.spec import register
from irexec.ops.spec import SHAPE_INDEX, VECTOR, Attr, Input, Op, OpSpec, Output, TypeVar

T = TypeVar("T", windows.REAL)
NORMALIZE_VARIANCE = Attr("normalize_variance", "bool",
                          doc="also divide by the standard deviation (else only subtract the "
                              "mean)")


def _mean(x, axes, count):
    """``x.mean(axis=axes, keepdims=True)`` as numpy computes it (the same pairwise sum, the
    division in float64 rounded to x's type), without np.mean's Python wrapper: about half of
    a small LayerNorm's time went to the two means' wrappers."""
    total = np.add.reduce(x, axis=axes, keepdims=True)
    if total.dtype == np.float32 and count < _F32_EXACT:
        # the same bits at a quarter of the cost: a quotient rounded to f64 then to f32 is the
        # quotient rounded once to f32 (f64 holds more than twice f32's digits), and the count
        # is exact in f32
        return np.true_divide(total, np.float32(count), out=total)
    return np.true_divide(total, np.float64(count), out=total, casting="unsafe")


_F32_EXACT = 1 << 24  # every integer below is exact in f32


def mvn(x, axes, normalize_variance, eps, inside_sqrt=True):
    """(x - mean) / sqrt(variance + eps) (or / (sqrt(variance) + eps)) over ``axes``,
    computed in the compute type and rounded once."""
    ct = compute_dtype(x.dtype)
    xc = x.astype(ct, copy=False)
    count = 1
    for a in axes:
        count *= x.shape[a]
    if not axes or not count:  # no axes (a rank-0 input too), or empty slices: np.mean's way
        centred = xc - xc.mean(axis=axes, keepdims=True, dtype=ct) if axes else xc - xc
        if normalize_variance:
            variance = np.mean(centred * centred, axis=axes, keepdims=True, dtype=ct) \
                if axes else np.zeros_like(centred)
            e = ct.type(eps)
            centred = centred / (np.sqrt(variance + e) if inside_sqrt
                                 else np.sqrt(variance) + e)
        return narrow(centred, x.dtype)
    centred = xc - _mean(xc, axes, count)
    if normalize_variance:
        variance = _mean(np.multiply(centred, centred), axes, count)
        e = ct.type(eps)
        if inside_sqrt:
            variance += e
        denominator = np.sqrt(variance, out=variance)
        if not inside_sqrt:
            denominator += e
        np.true_divide(centred, denominator, out=centred)
    return narrow(centred, x.dtype)


@register
class MVN1(Op):
    spec = OpSpec(
        type="MVN",
        numerics="accumulating",
        since=1,
        until=5,
        attrs=(
            Attr("across_channels", "bool", default=False,
                 doc="statistics over the channels and spatial axes (else per channel, over "
                     "the spatial axes); ignored when reduction_axes is given"),
            Attr("reduction_axes", "int_list", default=(),
                 doc="the axes the statistics run over, in [-rank, rank-1] (instead of "
                     "across_channels)"),
            NORMALIZE_VARIANCE,
            Attr("eps", "float", doc="added to the variance inside the square root"),
        ),
        inputs=(Input("data", T, doc="the tensor to normalize, of rank 2 or more when "
                                     "across_channels chooses the axes"),),
        outputs=(Output("output", "(data - mean) / sqrt(variance + eps), same shape",
                        type=T),),
        doc="Mean-variance normalization (instance normalization, or layer normalization "
            "with across_channels).",
    )

    @staticmethod
    def infer(ctx):
        data = ctx.input_shape(0)
        axes = ctx.attrs["reduction_axes"]
        if axes:
            normalize_axes(axes, data.rank, "reduction_axes")
        return ctx.default_outputs()

    @staticmethod
    def kernel(data, *, across_channels, reduction_axes, normalize_variance, eps):
        if reduction_axes:
            axes = tuple(sorted({a % data.ndim for a in reduction_axes}))
        else:
            axes = tuple(range(1 if across_channels else 2, data.ndim))
        return mvn(data, axes, normalize_variance, eps)


@register
class MVN6(Op):
    spec = OpSpec(
        type="MVN",
        numerics="accumulating",
        since=6,
        until=16,
        attrs=(
            NORMALIZE_VARIANCE,
            Attr("eps", "float", doc="added to the variance (or to its square root)"),
            Attr("eps_mode", "enum", values=("inside_sqrt", "outside_sqrt"),
                 doc="add eps inside the square root, or to the standard deviation"),
        ),
        inputs=(
            Input("data", T, doc="the tensor to normalize"),
            Input("axes", SHAPE_INDEX, VECTOR, domain=AxisIndices(0),
                  doc="the axes the statistics run over, in [-rank, rank-1]"),
        ),
        outputs=(Output("output", "(data - mean) / sqrt(variance + eps) (or / (sqrt(variance) "
                                  "+ eps)), same shape", type=T),),
        doc="Mean-variance normalization over the given axes.",
    )

    @staticmethod
    def infer(ctx):
        values = ctx.input_value(1)
        if values is not None:
            normalize_axes([int(a) for a in as_int64(values)], ctx.input_shape(0).rank)
        return ctx.default_outputs()

    @staticmethod
    def kernel(data, axes, *, normalize_variance, eps, eps_mode):
        return mvn(data, sorted_axes(axes, data.ndim), normalize_variance, eps,
                   eps_mode == "inside_sqrt")
