"""VariadicSplit-1: cut a tensor into parts of given lengths along an axis.

``split_lengths`` holds one length per part: sizes >= 0 and at most one -1 (the rest of the dim);
they must add up to the dim. The parts are views of the data (never written through).
"""

from __future__ import annotations

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.domains import AxisIndices, SplitLengths
from irexec.ops.movement.slicing import split_axis
from irexec.ops.openvino_cpu import refuses
from irexec.ops.spec import register
from irexec.ops.spec import (ANY, INTEGER, SCALAR_OR_VECTOR, VECTOR, Input, Op, OpSpec, Output,
                             TensorType, TypeVar)
from irexec.ops.values import ints, scalar

T = TypeVar("T", ANY)


def part_lengths(lengths: tuple[int, ...], dim: Dimension, axis: int) -> list[Dimension]:
    """Each part's length along the axis; OpError IR327 for a malformed length, IR329 when
    they cannot add up to the dim."""
    if lengths.count(-1) > 1:
        raise OpError(f"split_lengths {list(lengths)} holds -1 more than once; at most one "
                      f"length is the rest of the dim", code="IR327")
    bad = [v for v in lengths if v < -1]
    if bad:
        raise OpError(f"split_lengths {list(lengths)} holds {bad[0]}; lengths are >= 0, or -1 "
                      f"for the rest of the dim", code="IR327")
    known = sum(v for v in lengths if v != -1)
    out = [Dimension.static(v) if v != -1 else None for v in lengths]
    if -1 in lengths:
        if dim.max is not None and known > dim.max:
            raise OpError(f"split_lengths {list(lengths)} take {known} elements but dim {axis} "
                          f"is {dim}", code="IR329")
        rest = Dimension(max(dim.min - known, 0), None if dim.max is None else dim.max - known)
        out[lengths.index(-1)] = rest
    elif not dim.contains(known):
        raise OpError(f"split_lengths {list(lengths)} add up to {known} but dim {axis} is {dim}; "
                      f"they must add up to the dim", code="IR329")
    return out


@register
class VariadicSplit(Op):
    spec = OpSpec(
        type="VariadicSplit",
        since=1,
        until=16,
        inputs=(
            Input("data", T, doc="the tensor to split"),
            Input("axis", INTEGER, SCALAR_OR_VECTOR, domain=AxisIndices(0),
                  doc="the axis to cut, in [-rank, rank-1] (a scalar)"),
            Input("split_lengths", INTEGER, VECTOR, domain=SplitLengths(0),
                  doc="one length per part, adding up to the dim; -1 once at most (the rest)"),
        ),
        outputs=(Output("output", "one part, split_lengths[i] long along the axis", type=T,
                        variadic=True),),
        doc="Splits a tensor into parts of given lengths along an axis.",
        exact=True,
        returns_view=True,  # the plan copies it where the caller must own it
    )
    openvino_refuses = refuses(strings=True)

    @staticmethod
    def infer(ctx):
        data = ctx.input_type(0)
        shape = data.shape
        lengths_shape = ctx.input_shape(2)
        values = ctx.input_value(2)
        if values is not None:
            count = len(ints(values))
        elif lengths_shape.rank_is_static and lengths_shape[0].is_static:
            count = lengths_shape[0].min
        else:
            count = len(ctx.node.outputs)  # the file says how many parts
        axis = split_axis(ctx)
        if axis is None or values is None:
            part = PartialShape([None] * len(shape)) if shape.rank_is_static else shape
            if axis is not None:
                part = shape.replace(axis, Dimension(0, shape[axis].max))
            return [TensorType(data.element_type, part)] * count
        parts = part_lengths(ints(values), shape[axis], axis)
        return [TensorType(data.element_type, shape.replace(axis, d)) for d in parts]

    @staticmethod
    def kernel(data, axis, split_lengths):
        a = scalar(axis, "axis") % data.ndim
        lengths = list(ints(split_lengths))
        if -1 in lengths:
            lengths[lengths.index(-1)] = data.shape[a] - sum(v for v in lengths if v != -1)
        lead = (slice(None),) * a
        out, start = [], 0
        for n in lengths:
            out.append(data[lead + (slice(start, start + n),)])
            start += n
        return tuple(out) if len(out) > 1 else out[0]  # one output: the array itself

