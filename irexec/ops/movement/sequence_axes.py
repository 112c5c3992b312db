"""What OpenVINO's ReverseSequence and ONNX's share: the batch and sequence axes (IR311 when they
meet) and the batch dim merged with the lengths' size."""

from __future__ import annotations

from irexec.diagnostics.codes import ERROR, Code
from irexec.errors import OpError
from irexec.ir.shape import PartialShape
from irexec.ir.shape_rules import normalize_axis

SAME_AXIS = Code("IR311", "same-axis", ERROR, "batch_axis and seq_axis must name different axes")


def normalize_axes(batch_axis: int, seq_axis: int, rank) -> tuple[int, int] | None:
    """Both axes made non-negative (None while the rank is dynamic); OpError if either lies
    outside [-rank, rank-1], is negative against a dynamic rank, or they meet."""
    b = normalize_axis(batch_axis, rank, "batch_axis")
    s = normalize_axis(seq_axis, rank, "seq_axis")
    if b is None or s is None:
        if batch_axis == seq_axis:
            raise OpError(f"batch_axis {batch_axis} and seq_axis {seq_axis} name the same axis; "
                          f"they must differ", code="IR311")
        return None
    if b == s:
        raise OpError(f"batch_axis {batch_axis} and seq_axis {seq_axis} name the same axis {b}; "
                      f"they must differ", code="IR311")
    return b, s


def merge_batch_dim(shape: PartialShape, lengths_shape: PartialShape, b: int, data_name: str,
                    lengths_name: str) -> PartialShape:
    """The data shape with its batch dim narrowed by the lengths' size, as OpenVINO's shape
    inference merges them (ONNX's ReverseSequence shares the rule); OpError IR307 if they
    disagree."""
    if not lengths_shape.rank_is_static:
        return shape
    merged = shape[b].merge(lengths_shape[0])
    if merged is None:
        raise OpError(f"{lengths_name} has {lengths_shape[0]} entries but {data_name} has "
                      f"{shape[b]} along batch_axis {b} ({data_name} {shape}, {lengths_name} "
                      f"{lengths_shape})", code="IR307")
    return shape.replace(b, merged)
