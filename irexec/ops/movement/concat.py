"""Concat-1: join tensors along one axis.

The output comes from the pool of reused memory when a call is running (kernels/buffers.py):
a fresh 64 MiB array costs a page fault per page on its first write, about as long as the copy.
"""

import numpy as np

from irexec.kernels import buffers
from irexec.ops import rules
from irexec.ops.spec import Attr, Input, Op, OpSpec, Output, TypeVar, register

T = TypeVar("T")


@register
class Concat(Op):
    spec = OpSpec(
        type="Concat",
        since=1,
        until=16,
        attrs=(Attr("axis", "int", doc="the axis to join along, in [-rank, rank-1]"),),
        inputs=(Input("inputs", T, variadic=1,
                      doc="one or more tensors of one element type and rank, agreeing on every "
                          "dim but the axis"),),
        outputs=(Output("output", "the inputs one after another along axis", type=T),),
        shape=rules.concat("axis"),
        doc="Concatenates tensors along an axis.",
        exact=True,
    )

    @staticmethod
    def kernel(*inputs, axis):
        shape = list(inputs[0].shape)
        shape[axis] = sum(x.shape[axis] for x in inputs)
        return np.concatenate(inputs, axis=axis, out=buffers.empty(shape, inputs[0].dtype))
