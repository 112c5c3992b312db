"""SliceScatter-15: a copy of the data with a slice replaced by the updates.

The slice is Slice-8's (the same clamping, irexec/ops/movement/slice.py); the updates have the
slice's shape (IR307 otherwise).
"""

from __future__ import annotations

from irexec.errors import OpError
from irexec.kernels import buffers
from irexec.ops.movement.slicing import SLICE_INPUTS, slice_shape, slices
from irexec.ops.openvino_cpu import refuses
from irexec.ops.spec import (
    ANY,
    Input,
    Op,
    OpSpec,
    Output,
    Rank,
    TensorType,
    TypeVar,
    register,
)

T = TypeVar("T", ANY)


@register
class SliceScatter(Op):
    spec = OpSpec(
        type="SliceScatter",
        since=15,
        until=16,
        inputs=(
            Input("data", T, Rank(min=1), doc="the tensor to update"),
            Input("updates", T, doc="the new values of the slice; the slice's shape"),
            *SLICE_INPUTS,
        ),
        outputs=(Output("output", "the data with the slice replaced; the data's shape", type=T),),
        doc="Replaces a strided slice of a tensor (as Slice-8 takes it) by the updates.",
        exact=True,
    )
    openvino_refuses = refuses(strings=True)

    @staticmethod
    def infer(ctx):
        data, updates = ctx.input_type(0), ctx.input_type(1)
        wanted = slice_shape(ctx, data_index=0, first=2)
        if wanted.rank_is_static and updates.shape.rank_is_static \
                and wanted.merge(updates.shape) is None:
            raise OpError(f"the updates have shape {updates.shape} but the slice of the data "
                          f"{data.shape} has shape {wanted}", code="IR307")
        return [TensorType(data.element_type, data.shape)]

    @staticmethod
    def kernel(data, updates, start, stop, step, axes=None):
        out = buffers.copy(data)
        out[slices(data.shape, start, stop, step, axes)] = updates
        return out
