"""ReverseSubsequences-1 (irexec's own op, ``version="irexec1"``): DirectML's
DML_REVERSE_SUBSEQUENCES_OPERATOR_DESC (seeds/002). One length per fibre along ``axis``; lengths
above the axis size clamp to it; 0 and 1 change nothing. See docs/reverse-semantics.md."""

import numpy as np

from irexec.ir.shape import Dimension
from irexec.kernels.reverse_subsequences import reverse_subsequences
from irexec.ops.spec import register
from irexec.ops.domains import FibreLengths
from irexec.ops.spec import Attr, Input, Op, OpSpec, Output, Rank, TensorType, TypeSet

# DirectML's table at DML_FEATURE_LEVEL_5_0 (the widest): no bool, string, bf16 or complex.
DATA_TYPES = TypeSet(("f64", "f32", "f16", "i64", "i32", "i16", "i8", "u64", "u32", "u16", "u8"))
LENGTH_TYPES = TypeSet(("u32", "u64"))
MAX_RANK = 8


@register
class ReverseSubsequences(Op):
    spec = OpSpec(
        type="ReverseSubsequences",
        family="irexec",
        since=1,
        attrs=(
            Attr("axis", "uint", doc="the axis whose leading elements are reversed; must be less "
                                     "than the data's rank"),
        ),
        inputs=(
            Input("data", DATA_TYPES, Rank(min=1, max=MAX_RANK),
                  doc="the tensor to reverse, rank 1 to 8"),
            Input("lengths", LENGTH_TYPES, domain=FibreLengths(0),
                  doc="one length per fibre along axis: the data's shape with 1 at axis; a length "
                      "above dim(axis) counts as dim(axis); 0 and 1 change nothing"),
        ),
        outputs=(Output("output", "data with each fibre's leading elements reversed; same type "
                                  "and shape"),),
        doc="Reverses a leading run of each fibre along one axis, one length per fibre "
            "(DirectML's reverse-subsequences).",
        exact=True,
    )

    @staticmethod
    def infer(ctx):
        data, lengths = ctx.input_type(0), ctx.input_type(1)
        axis = ctx.attrs["axis"]
        shape = data.shape
        if not shape.rank_is_static:
            return [data]
        rank = len(shape)
        if axis >= rank:
            ctx.error("IR306", f"axis {axis} is out of range [0, {rank - 1}] for data of rank "
                               f"{rank}")
        if lengths.shape.rank_is_static:
            expected = shape.replace(axis, Dimension.static(1))
            merged = expected.merge(lengths.shape)  # the lengths may pin data's dynamic dims
            if merged is None:
                ctx.error("IR307", f"lengths has shape {lengths.shape} but data {shape} with "
                                   f"axis {axis} needs lengths of shape {expected}")
            shape = merged.replace(axis, shape[axis])
        return [TensorType(data.element_type, shape)]

    @staticmethod
    def kernel(data, lengths, *, axis):
        dim = data.shape[axis]
        if dim < np.iinfo(lengths.dtype).max:  # DirectML: a longer length acts as dim(axis)
            lengths = np.minimum(lengths, lengths.dtype.type(dim))
        return reverse_subsequences(data, lengths, axis)
