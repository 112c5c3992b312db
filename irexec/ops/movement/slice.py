"""Slice-8: the elements from ``start`` (inclusive) to ``stop`` (exclusive) by ``step`` along
some axes, as Python's ``data[start:stop:step]`` -- with OpenVINO's clamping, which the
specification leaves to it and irexec follows (/work/shared facts): a start beyond either end is
clamped into the dim, so with a negative step a start below ``-dim`` takes element 0 (Python's
slice would be empty). The result is a view of the data (never written through).

The helpers here (one dim's slice, with bounds for dynamic dims) serve StridedSlice and
SliceScatter too.
"""

from __future__ import annotations

from irexec.ops.movement.slicing import SLICE_INPUTS, slice_shape, slices
from irexec.ops.openvino_cpu import refuses
from irexec.ops.spec import ANY, Input, Op, OpSpec, Output, Rank, TensorType, TypeVar, register

T = TypeVar("T", ANY)


@register
class Slice(Op):
    spec = OpSpec(
        type="Slice",
        since=8,
        until=16,
        inputs=(
            Input("data", T, Rank(min=1), doc="the tensor to slice"),
            *SLICE_INPUTS,
        ),
        outputs=(Output("output", "the selected elements; same rank as data", type=T),),
        doc="Takes a strided slice of some axes, as Python's data[start:stop:step].",
        exact=True,
        returns_view=True,  # the plan copies it where the caller must own it
    )
    openvino_refuses = refuses(strings=True)

    @staticmethod
    def infer(ctx):
        return [TensorType(ctx.input_type(0).element_type, slice_shape(ctx))]

    @staticmethod
    def kernel(data, start, stop, step, axes=None):
        return data[slices(data.shape, start, stop, step, axes)]

