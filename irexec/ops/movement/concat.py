"""Concat-1: join tensors along one axis."""

import numpy as np

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
        return np.concatenate(inputs, axis=axis)
