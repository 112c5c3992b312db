"""ReverseSequence-1: for each index along batch_axis, reverse the first seq_lengths[i] elements
along seq_axis."""

import numpy as np

from irexec.diagnostics.codes import WARNING, Code
from irexec.errors import OpError
from irexec.ir.element_type import from_dtype, plain_values
from irexec.kernels.reverse_subsequences import reverse_subsequences
from irexec.ops.domains import SequenceLengths
from irexec.ops.movement.sequence_axes import SAME_AXIS, merge_batch_dim, normalize_axes
from irexec.ops.spec import register
from irexec.ops.spec import ANY, NUMERIC, VECTOR, Attr, Input, Op, OpSpec, Output, Rank, TensorType

ZERO_LENGTH = Code("IR309", "zero-sequence-length", WARNING,
                   "the specification asks for lengths >= 1; runtimes treat 0 as 1 (no change)")


def lengths_to_int(lengths: np.ndarray, dim: int | None) -> np.ndarray:
    """The lengths as int64, after OpenVINO's rules: floats truncate toward zero; 0 means no
    change. OpError names the first length that is NaN, negative or above ``dim``."""
    values = plain_values(lengths).reshape(-1)
    et = from_dtype(values.dtype)
    if et.is_real:
        values = np.trunc(values.astype(np.float64))
        bad = np.isnan(values) | (values < 0)
    elif et.kind == "int":
        values = values.astype(np.int64)
        bad = values < 0
    else:  # unsigned: compared as uint64, so 2**64-1 is too long rather than -1
        values = values.astype(np.uint64)
        bad = np.zeros(values.shape, dtype=bool)
    if dim is not None:
        bad |= values > dim
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        limit = f"[0, {dim}]" if dim is not None else "[0, the sequence length]"
        raise OpError(f"seq_lengths[{i}] = {lengths.reshape(-1)[i]} is not in {limit}: "
                      f"a length must be a whole number of elements along seq_axis",
                      code="IR308")
    return values.astype(np.int64)


@register
class ReverseSequence(Op):
    spec = OpSpec(
        type="ReverseSequence",
        since=1,
        until=16,
        attrs=(
            Attr("batch_axis", "int", default=0,
                 doc="the axis that indexes seq_lengths, in [-rank, rank-1]"),
            Attr("seq_axis", "int", default=1,
                 doc="the axis whose leading elements are reversed, in [-rank, rank-1]; "
                     "must differ from batch_axis"),
        ),
        inputs=(
            Input("data", ANY, Rank(min=2), doc="the tensor to reverse, rank >= 2"),
            Input("seq_lengths", NUMERIC, VECTOR, domain=SequenceLengths(0),
                  doc="one length per index along batch_axis, in [1, dim(seq_axis)] (0 is "
                      "accepted and changes nothing); floats truncate toward zero"),
        ),
        outputs=(Output("output", "data with each sequence's leading elements reversed"),),
        doc="Reverses variable-length prefixes of slices along seq_axis.",
        codes=(ZERO_LENGTH, SAME_AXIS),
        exact=True,
    )

    @staticmethod
    def infer(ctx):
        data, lengths = ctx.input_type(0), ctx.input_type(1)
        shape = data.shape
        axes = normalize_axes(ctx.attrs["batch_axis"], ctx.attrs["seq_axis"], shape.rank)
        if axes is None:
            return [data]
        b, s = axes
        shape = merge_batch_dim(shape, lengths.shape, b, "data", "seq_lengths")
        values = ctx.input_value(1)
        if values is not None:
            ints = lengths_to_int(values, shape[s].max)  # a bounded dim limits the lengths
            if (ints == 0).any():
                i = int(np.flatnonzero(ints == 0)[0])
                ctx.warn("IR309", f"seq_lengths[{i}] = {values.reshape(-1)[i]} counts as 0; the "
                                  f"specification asks for lengths >= 1 (0 reverses nothing)")
        return [TensorType(data.element_type, shape)]

    @staticmethod
    def kernel(data, seq_lengths, *, batch_axis, seq_axis):
        b, s = batch_axis % data.ndim, seq_axis % data.ndim
        ints = lengths_to_int(seq_lengths, data.shape[s])
        per_batch = [data.shape[b] if d == b else 1 for d in range(data.ndim)]
        return reverse_subsequences(data, ints.reshape(per_batch), s)
