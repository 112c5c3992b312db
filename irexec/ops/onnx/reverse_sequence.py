"""ONNX ReverseSequence-10 and -28 (``version="onnx10"``, family ``onnx``): for each slice along
``batch_axis``, reverse the first ``sequence_lens[i]`` elements along ``time_axis``.

ONNX's rules (seeds/004, docs/reverse-semantics.md): ``time_axis`` defaults to 0 and
``batch_axis`` to 1; each must be 0 or 1 and they must differ (negative axes are refused, where
ONNX Runtime lets them through: docs/compatibility.md); ``sequence_lens`` is int64 of shape
``[batch]``; a length of 0 reverses nothing; a length outside ``[0, T]`` is an error, as in ONNX
Runtime's CPU provider. -28 only adds bfloat16 data. The reversal is the shared kernel's.
"""

import numpy as np

from irexec.errors import OpError
from irexec.kernels.reverse_subsequences import reverse_subsequences
from irexec.ops.domains import SequenceLengths
from irexec.ops.movement.sequence_axes import SAME_AXIS, merge_batch_dim
from irexec.ops.spec import register
from irexec.ops.spec import ANY, VECTOR, Attr, Input, Op, OpSpec, Output, Rank, TensorType, TypeSet

# ReverseSequence-10's data types (bfloat16 arrives in -28); strings are object arrays of str.
V10_TYPES = TypeSet(("boolean", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16",
                     "f32", "f64", "string", "complex64", "complex128"))
LENGTH_TYPES = TypeSet(("i64",))


def check_axes(batch_axis: int, time_axis: int) -> None:
    for name, axis in (("batch_axis", batch_axis), ("time_axis", time_axis)):
        if axis not in (0, 1):
            raise OpError(f"{name} is {axis}; ONNX ReverseSequence takes 0 or 1", code="IR302")
    if batch_axis == time_axis:
        raise OpError(f"batch_axis and time_axis are both {batch_axis}; they must differ",
                      code="IR311")


def check_lengths(lengths: np.ndarray, dim: int | None) -> None:
    """OpError naming the first length outside [0, dim] (ONNX Runtime's CPU rule)."""
    values = np.asarray(lengths).reshape(-1)
    bad = values < 0
    if dim is not None:
        bad |= values > dim
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        limit = f"[0, {dim}]" if dim is not None else "[0, the time dimension]"
        raise OpError(f"sequence_lens[{i}] = {values[i]} is not in {limit}", code="IR308")


def _infer(ctx):
    data, lengths = ctx.input_type(0), ctx.input_type(1)
    b_axis, t_axis = ctx.attrs["batch_axis"], ctx.attrs["time_axis"]
    check_axes(b_axis, t_axis)
    shape = data.shape
    if not shape.rank_is_static:
        return [data]
    shape = merge_batch_dim(shape, lengths.shape, b_axis, "input", "sequence_lens")
    values = ctx.input_value(1)
    if values is not None:
        check_lengths(values, shape[t_axis].max)
    return [TensorType(data.element_type, shape)]


def _kernel(data, sequence_lens, *, batch_axis, time_axis):
    per_batch = [data.shape[batch_axis] if d == batch_axis else 1 for d in range(data.ndim)]
    return reverse_subsequences(data, sequence_lens.reshape(per_batch), time_axis)


def _to_openvino(b, node, data, lengths):
    return b.op("ReverseSequence", data, lengths, name=node.name,
                batch_axis=node.attrs["batch_axis"], seq_axis=node.attrs["time_axis"])


def _spec(since: int, until: int | None, data_types) -> OpSpec:
    return OpSpec(
        type="ReverseSequence",
        family="onnx",
        since=since,
        until=until,
        attrs=(
            Attr("batch_axis", "int", default=1, doc="the axis that indexes sequence_lens: 0 or 1"),
            Attr("time_axis", "int", default=0,
                 doc="the axis whose leading elements are reversed: 0 or 1, not batch_axis"),
        ),
        inputs=(
            Input("input", data_types, Rank(min=2), doc="the tensor to reverse, rank >= 2"),
            Input("sequence_lens", LENGTH_TYPES, VECTOR,
                  domain=SequenceLengths(0, seq_axis="time_axis"),
                  doc="int64, one length per index along batch_axis, in [0, dim(time_axis)]; "
                      "0 reverses nothing"),
        ),
        outputs=(Output("Y", "input with each sequence's leading elements reversed"),),
        doc="ONNX's ReverseSequence: reverses variable-length prefixes along time_axis.",
        codes=(SAME_AXIS,),
        exact=True,
    )


@register
class OnnxReverseSequence10(Op):
    spec = _spec(10, 27, V10_TYPES)
    infer = staticmethod(_infer)
    kernel = staticmethod(_kernel)
    to_openvino = staticmethod(_to_openvino)


@register
class OnnxReverseSequence28(Op):
    spec = _spec(28, None, ANY)
    infer = staticmethod(_infer)
    kernel = staticmethod(_kernel)
    to_openvino = staticmethod(_to_openvino)
