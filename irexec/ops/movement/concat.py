"""Concat-1: join tensors along one axis."""

import numpy as np

from irexec.kernels import buffers
from irexec.ops import rules
from irexec.ops.registry import register
from irexec.ops.spec import Attr, Input, Op, OpSpec, Output, TypeVar

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
        first = inputs[0]
        a = axis % first.ndim
        shape = first.shape[:a] + (sum(x.shape[a] for x in inputs),) + first.shape[a + 1:]
        out = buffers.empty(shape, first.dtype)  # reused memory when a call is running
        np.concatenate(inputs, axis=a, out=out)
        return out
