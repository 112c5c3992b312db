"""ShuffleChannels-1: interleave the groups of one axis (as ShuffleNet does with channels).

The axis (``C`` long) is read as ``[group, C / group]`` and written as ``[C / group, group]``. C
must be divisible by the group (IR331). OpenVINO's opsets hold ShuffleChannels in opset1 and
opset3 to opset16, not in opset2: irexec registers it twice so that opset2 refuses it too.
"""

from __future__ import annotations

import math

from irexec.errors import OpError
from irexec.ir.shape_rules import normalize_axis
from irexec.kernels.strided_copy import transposed
from irexec.ops.openvino_cpu import refuses
from irexec.ops.spec import register
from irexec.ops.spec import ANY, Attr, Input, Op, OpSpec, Output, Rank, TypeVar

T = TypeVar("T", ANY)


def infer(ctx):
    data = ctx.input_type(0)
    shape = data.shape
    group = ctx.attrs["group"]
    if group == 0:
        ctx.error("IR302", "group is 0; the axis splits into at least one group")
    axis = normalize_axis(ctx.attrs["axis"], shape.rank)
    if axis is not None and shape[axis].is_static and shape[axis].min % group:
        raise OpError(f"dim {axis} of the data {shape} is {shape[axis].min}, not divisible by "
                      f"the group {group}", code="IR331")
    return [data]


def kernel(data, *, axis, group):
    a = axis % data.ndim
    before = math.prod(data.shape[:a])
    after = math.prod(data.shape[a + 1:])
    x = data.reshape(before, group, data.shape[a] // group, after)
    return transposed(x, (0, 2, 1, 3)).reshape(data.shape)


ATTRS = (Attr("axis", "int", default=1, doc="the axis to shuffle, in [-rank, rank-1]"),
         Attr("group", "uint", default=1, doc="how many groups; it must divide the dim"))
INPUTS = (Input("data", T, Rank(min=1), doc="the tensor to shuffle"),)
OUTPUTS = (Output("output", "the data with the axis's groups interleaved; same shape",
                  type=T),)


@register
class ShuffleChannels1(Op):
    spec = OpSpec(type="ShuffleChannels", since=1, until=1, attrs=ATTRS, inputs=INPUTS,
                  outputs=OUTPUTS, exact=True,
                  doc="Interleaves the groups of an axis (opset1; opset2 lacks it).")
    openvino_refuses = refuses()
    infer = staticmethod(infer)
    kernel = staticmethod(kernel)


@register
class ShuffleChannels3(Op):
    spec = OpSpec(type="ShuffleChannels", since=3, until=16, attrs=ATTRS, inputs=INPUTS,
                  outputs=OUTPUTS, exact=True,
                  doc="Interleaves the groups of an axis (opset3 to opset16).")
    openvino_refuses = refuses()
    infer = staticmethod(infer)
    kernel = staticmethod(kernel)
