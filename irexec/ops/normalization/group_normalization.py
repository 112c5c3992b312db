"""GroupNormalization-12: normalization over groups of channels, then a per-channel scale and
bias."""

import numpy as np

from irexec.diagnostics.codes import ERROR, Code
from irexec.errors import OpError
from irexec.kernels.numeric import compute_dtype, narrow
from irexec.ops import windows
from irexec.ops.spec import register
from irexec.ops.spec import VECTOR, Attr, Input, Op, OpSpec, Output, Rank, TensorType, TypeVar

T = TypeVar("T", windows.REAL)


@register
class GroupNormalization(Op):
    spec = OpSpec(
        type="GroupNormalization",
        since=12,
        until=16,
        attrs=(
            Attr("num_groups", "int", doc="how many groups the channels split into (at least "
                                          "1, dividing the channel count)"),
            Attr("epsilon", "float", doc="added to each group's variance"),
        ),
        inputs=(
            Input("data", T, Rank(min=2), doc="[N, C, ...]: channels on axis 1"),
            Input("scale", T, VECTOR, doc="[C]: multiplies each channel"),
            Input("bias", T, VECTOR, doc="[C]: added to each channel"),
        ),
        outputs=(Output("output", "scale * (data - mean) / sqrt(variance + epsilon) + bias, "
                                  "statistics per batch item and group", type=T),),
        doc="Group normalization: statistics over each group of C/G channels and the other "
            "axes, per batch item.",
        codes=(Code("IR350", "group-count", ERROR,
                    "num_groups is at least 1 and divides the channel count"),),
    )

    @staticmethod
    def infer(ctx):
        data = ctx.input_shape(0)
        groups = ctx.attrs["num_groups"]
        if groups < 1:
            raise OpError(f"num_groups is {groups}; it must be at least 1", code="IR350")
        channels = data[1] if data.rank_is_static else None
        if channels is not None and channels.is_static and channels.min % groups:
            raise OpError(f"the data has {channels} channels, which {groups} groups do not "
                          f"divide evenly", code="IR350")
        for name, i in (("scale", 1), ("bias", 2)):
            s = ctx.input_shape(i)
            if channels is not None and s.rank_is_static and channels.merge(s[0]) is None:
                raise OpError(f"{name} has {s[0]} values but the data {data} has {channels} "
                              f"channels; give one per channel", code="IR348")
        return [TensorType(ctx.output_element_types(1)[0], data)]

    @staticmethod
    def kernel(data, scale, bias, *, num_groups, epsilon):
        ct = compute_dtype(data.dtype)
        n, c = data.shape[:2]
        x = data.astype(ct, copy=False).reshape(n, num_groups, -1)
        mean = x.mean(axis=2, keepdims=True, dtype=ct)
        centred = x - mean
        variance = np.mean(centred * centred, axis=2, keepdims=True, dtype=ct)
        y = (centred / np.sqrt(variance + ct.type(epsilon))).reshape(data.shape)
        shape = (1, c) + (1,) * (data.ndim - 2)
        y = y * scale.astype(ct, copy=False).reshape(shape) \
            + bias.astype(ct, copy=False).reshape(shape)
        return narrow(y, data.dtype)
