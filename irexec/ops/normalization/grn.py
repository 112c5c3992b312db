"""GRN-1: global response normalization across channels."""

import numpy as np

from irexec.kernels.numeric import compute_dtype, narrow
from irexec.ops import windows
from irexec.ops.spec import register
from irexec.ops.spec import Attr, Input, Op, OpSpec, Output, Rank, TypeVar

T = TypeVar("T", windows.REAL)


@register
class GRN(Op):
    spec = OpSpec(
        type="GRN",
        since=1,
        until=16,
        attrs=(Attr("bias", "float", doc="added to the sum of squares"),),
        inputs=(Input("data", T, Rank(min=2, max=4), doc="[N, C, ...], rank 2 to 4"),),
        outputs=(Output("output", "data / sqrt(sum over channels of data^2 + bias), same "
                                  "shape", type=T),),
        doc="Divides each element by the L2 norm of its position across the channels.",
    )

    @staticmethod
    def kernel(data, *, bias):
        ct = compute_dtype(data.dtype)
        x = data.astype(ct, copy=False)
        norm = np.sqrt(np.sum(x * x, axis=1, keepdims=True, dtype=ct) + ct.type(bias))
        return narrow(x / norm, data.dtype)
