"""Identity-16: a copy of its input."""

import numpy as np

from irexec.ops.spec import register
from irexec.ops.spec import ANY, Input, Op, OpSpec, Output


@register
class Identity(Op):
    spec = OpSpec(
        type="Identity",
        since=16,
        until=16,
        inputs=(Input("data", ANY, doc="any tensor"),),
        outputs=(Output("output", "the same values, type and shape"),),
        doc="Returns its input unchanged (a copy).",
        exact=True,
    )

    @staticmethod
    def kernel(data):
        return np.array(data, copy=True)
