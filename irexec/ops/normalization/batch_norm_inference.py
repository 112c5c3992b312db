"""BatchNormInference-1 and BatchNormInference-5: per-channel normalization with given
statistics. The two versions differ only in the order of their inputs."""

import numpy as np

from irexec.diagnostics.codes import ERROR, Code
from irexec.errors import OpError
from irexec.kernels.numeric import compute_dtype, narrow
from irexec.ops import windows
from irexec.ops.spec import register
from irexec.ops.spec import VECTOR, Attr, Input, Op, OpSpec, Output, Rank, TensorType, TypeVar

T = TypeVar("T", windows.REAL)
NEGATIVE_EPSILON = Code("IR351", "negative-epsilon", ERROR,
                        "epsilon is added to a variance: give a value of at least 0")
EPSILON = Attr("epsilon", "float", doc="added to the variance, at least 0")
DATA = Input("data", T, Rank(min=2), doc="[N, C, ...]: channels on axis 1")
PARAMS = {name: Input(name, T, VECTOR, doc=f"the {what} of each channel, [C]")
          for name, what in (("gamma", "scale"), ("beta", "shift"), ("mean", "mean"),
                             ("variance", "variance"))}
OUTPUT = Output("output", "gamma * (data - mean) / sqrt(variance + epsilon) + beta, per "
                          "channel", type=T)


def infer(ctx, data_index: int, param_indices):
    if ctx.attrs["epsilon"] < 0:
        raise OpError(f"epsilon is {ctx.attrs['epsilon']}; it must be at least 0",
                      code="IR351")
    data = ctx.input_shape(data_index)
    channel = data[1] if data.rank_is_static else None
    merged = channel
    for name, i in param_indices:
        s = ctx.input_shape(i)
        if not s.rank_is_static:
            continue
        m = s[0] if merged is None else merged.merge(s[0])
        if m is None:
            raise OpError(f"{name} has {s[0]} values but the data {data} has {merged} "
                          f"channels (or another input disagrees); give one per channel",
                          code="IR348")
        merged = m
    if data.rank_is_static and merged is not None:
        data = data.replace(1, merged)
    return [TensorType(ctx.output_element_types(1)[0], data)]


def kernel(data, gamma, beta, mean, variance, epsilon):
    ct = compute_dtype(data.dtype)
    shape = (1, -1) + (1,) * (data.ndim - 2)
    g, b, m, v = (p.astype(ct, copy=False).reshape(shape) for p in (gamma, beta, mean,
                                                                       variance))
    scale = g / np.sqrt(v + ct.type(epsilon))
    return narrow(data.astype(ct, copy=False) * scale + (b - m * scale), data.dtype)


@register
class BatchNormInference1(Op):
    spec = OpSpec(
        type="BatchNormInference",
        since=1,
        until=4,
        attrs=(EPSILON,),
        inputs=(PARAMS["gamma"], PARAMS["beta"], DATA, PARAMS["mean"], PARAMS["variance"]),
        outputs=(OUTPUT,),
        doc="Batch normalization with given statistics (inputs: gamma, beta, data, mean, "
            "variance).",
        codes=(NEGATIVE_EPSILON,),
    )

    @staticmethod
    def infer(ctx):
        return infer(ctx, 2, (("gamma", 0), ("beta", 1), ("mean", 3), ("variance", 4)))

    @staticmethod
    def kernel(gamma, beta, data, mean, variance, *, epsilon):
        return kernel(data, gamma, beta, mean, variance, epsilon)


@register
class BatchNormInference5(Op):
    spec = OpSpec(
        type="BatchNormInference",
        since=5,
        until=16,
        attrs=(EPSILON,),
        inputs=(DATA, PARAMS["gamma"], PARAMS["beta"], PARAMS["mean"], PARAMS["variance"]),
        outputs=(OUTPUT,),
        doc="Batch normalization with given statistics (inputs: data, gamma, beta, mean, "
            "variance).",
        codes=(NEGATIVE_EPSILON,),
    )

    @staticmethod
    def infer(ctx):
        return infer(ctx, 0, (("gamma", 1), ("beta", 2), ("mean", 3), ("variance", 4)))

    @staticmethod
    def kernel(data, gamma, beta, mean, variance, *, epsilon):
        return kernel(data, gamma, beta, mean, variance, epsilon)


