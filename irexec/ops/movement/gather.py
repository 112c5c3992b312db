"""Gather-1, Gather-7 and Gather-8: take slices of the data along an axis at the given indices.

Output shape: ``data.shape[:axis] + indices.shape[batch_dims:] + data.shape[axis+1:]``; with
``batch_dims`` (7 and 8) the first ``batch_dims`` dims of data and indices are batches that
pair up. The versions differ in the indices they accept, as their specifications say:

* Gather-1 and Gather-7: indices in [0, dim-1]; any other is an error (IR325). OpenVINO's CPU
  plugin gives zeros for them, negative indices included (docs/compatibility.md).
* Gather-8: indices in [-dim, dim-1], negative ones counting from the end; any other index
  gives zeros (the specification's example 7; zero bits, an empty string for strings).
"""

from __future__ import annotations

import math

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import PartialShape
from irexec.ir.shape_rules import normalize_axis
from irexec.kernels import buffers
from irexec.ops.domains import AxisIndices, Indices
from irexec.ops.movement.indexing import check_range, index_values
from irexec.ops.openvino_cpu import refuses
from irexec.ops.spec import UNKNOWN_BYTES, register
from irexec.ops.spec import (ANY, INTEGER, SCALAR_OR_VECTOR, Attr, Input, Op, OpSpec, Output,
                             TensorType, TypeVar)
from irexec.ops.values import scalar

T = TypeVar("T", ANY)


def zero_of(dtype: np.dtype):
    """The value Gather-8 gives for an index out of range: zero bits, or an empty string."""
    return "" if dtype.hasobject else np.zeros((), dtype)


def batch_dims_of(batch_dims: int, data_rank: int, indices_rank: int, axis: int | None) -> int:
    """batch_dims made non-negative and checked against both ranks and the axis (IR302)."""
    b = batch_dims + indices_rank if batch_dims < 0 else batch_dims
    top = min(data_rank, indices_rank)
    if not 0 <= b <= top:
        raise OpError(f"batch_dims {batch_dims} is outside [-{top}, {top}] for data of rank "
                      f"{data_rank} and indices of rank {indices_rank}", code="IR302")
    if axis is not None and b > axis:
        raise OpError(f"batch_dims {batch_dims} ({b}) is greater than the axis {axis}; the "
                      f"axis must not be a batch dim", code="IR302")
    return b


def gather_shape(ctx, negative: bool) -> list[TensorType]:
    data, indices = ctx.input_type(0), ctx.input_type(1)
    shape, ishape = data.shape, indices.shape
    batch_dims = ctx.attrs.get("batch_dims", 0)
    values = ctx.input_value(2)
    axis = None
    if values is not None:
        axis = normalize_axis(scalar(values, "axis"), shape.rank)
    if not shape.rank_is_static or not ishape.rank_is_static:
        return [TensorType(data.element_type, PartialShape.dynamic())]
    b = batch_dims_of(batch_dims, len(shape), len(ishape), axis)
    merged = []
    for i in range(b):
        d = shape[i].merge(ishape[i])
        if d is None:
            raise OpError(f"batch dim {i} is {shape[i]} in the data {shape} but {ishape[i]} in "
                          f"the indices {ishape}; batch dims must agree", code="IR307")
        merged.append(d)
    if axis is None:
        # Rank known: data rank - 1 + indices rank - batch_dims; the dims are not.
        rank = len(shape) - 1 + len(ishape) - b
        return [TensorType(data.element_type, PartialShape(merged + [None] * (rank - b)))]
    out = merged + list(shape.dims[b:axis]) + list(ishape.dims[b:]) + list(shape.dims[axis + 1:])
    idx = ctx.input_value(1)
    dim = shape[axis]
    if idx is not None and dim.is_static and not negative:
        check_range(index_values(idx), dim.min, negative=False)
    return [TensorType(data.element_type, PartialShape._of(tuple(out)))]


_RAW = {n: np.dtype(f"u{n}") for n in (1, 2, 4, 8)}  # the bits of an element of n bytes
FEW_INDICES = 16  # at most this many indices are tested for range in Python
FEW_ELEMENTS = 64  # data this small is taken from directly (numpy's own types)
STAGE = 1 << 18  # bytes of data staged in cache at a time (measured: 64 KiB to 512 KiB)
PIECE = 64  # bytes: pieces this small, picked at random, are worth staging


def take(data: np.ndarray, idx: np.ndarray, axis: int, out: np.ndarray) -> None:
    """``np.take(data, idx, axis, out=out)`` for indices in range, the bits copied as unsigned
    integers of the element's size (one path for numpy's types and ml_dtypes' alike).

    Taking small pieces (a few elements each, e.g. along the last axis) in random order from
    data in memory waits on a cache miss for nearly every piece: the hardware prefetcher sees
    no pattern. When each slab the indices pick from (``data.shape[axis:]``) is small, the slabs
    are copied a few at a time into a scratch array first (a sequential read, at memory speed)
    and taken from there, in cache: the Gather of 2048 of 4096 columns of a [4096, 4096] f32
    goes from 4.4 to about 3 times a memcpy of its output."""
    if axis == 0 and data.dtype.kind in "biuf":  # slabs of numpy's own types: no staging
        data.take(idx, axis=0, out=out, mode="clip")
        return
    raw = _RAW.get(data.itemsize)
    if raw is not None and not data.dtype.hasobject:
        data, out = data.view(raw), out.view(raw)
    pre = math.prod(data.shape[:axis])
    piece = math.prod(data.shape[axis + 1:]) * data.itemsize
    slab = data.shape[axis] * piece
    if data.dtype.hasobject or piece > PIECE or slab > STAGE // 2 or pre < 4 \
            or idx.size * 4 < data.shape[axis] or not data.flags.c_contiguous:
        data.take(idx, axis=axis, out=out, mode="clip")
        return
    group = STAGE // slab
    rows = data.reshape(pre, slab // data.itemsize)
    ends = out.reshape(pre, -1)
    scratch = np.empty((group,) + data.shape[axis:], data.dtype)
    for start in range(0, pre, group):
        n = min(group, pre - start)
        np.copyto(scratch[:n].reshape(n, -1), rows[start:start + n])
        np.take(scratch[:n], idx, axis=1, out=ends[start:start + n].reshape(
            (n,) + out.shape[axis:axis + idx.ndim] + data.shape[axis + 1:]), mode="clip")


def gather(data, indices, axis, batch_dims: int = 0, zeros_out_of_range: bool = False):
    """The kernel of every version: ``zeros_out_of_range`` (Gather-8) counts negative indices
    from the end and gives zeros for others; otherwise the indices are in [0, dim-1]."""
    a = scalar(axis, "axis") % data.ndim
    b = batch_dims + indices.ndim if batch_dims < 0 else batch_dims
    dim = data.shape[a]
    if indices.ndim == 0:
        # one index: the slab at it, a view (ViT's query, key and value taken from one tensor)
        i = int(indices)
        if zeros_out_of_range and i < 0:
            i += dim
        if 0 <= i < dim:
            view = data[(slice(None),) * a + (slice(i, i + 1),)].reshape(
                data.shape[:a] + data.shape[a + 1:])
            block = data.base if isinstance(data.base, np.ndarray) else data
            # a view while it is a good part of the memory it keeps alive (a result or a state
            # holding one token's row of a large block would keep the whole block)
            return view if 4 * view.nbytes >= block.nbytes else view.copy()
    # 32- and 64-bit signed indices as they are (numpy indexes with either; nothing here
    # writes into them); any other type converted
    idx = indices if type(indices) is np.ndarray and indices.dtype.kind == "i" \
        and indices.dtype.itemsize >= 4 else index_values(indices)
    invalid = None
    if zeros_out_of_range:
        if idx.size <= FEW_INDICES:
            # a few indices (a token, a beam, a shape's element): in range by Python's min and
            # max, without the array passes (each costs more than these on a few values)
            flat = idx.ravel().tolist()
            zeros_out_of_range = bool(flat) and (min(flat) < 0 or max(flat) >= dim)
        else:  # two reductions decide it for the usual indices, all in range
            zeros_out_of_range = bool(idx.size) and not (0 <= idx.min() and idx.max() < dim)
    if zeros_out_of_range:
        # some index negative or outside: count from the end, zeros for those outside
        idx = index_values(idx)
        idx = np.where(idx < 0, idx + dim, idx)
        outside = (idx < 0) | (idx >= dim)
        if outside.any():
            invalid = outside
            idx = np.where(outside, 0, idx)
    out_shape = data.shape[:a] + indices.shape[b:] + data.shape[a + 1:]
    if math.prod(out_shape) == 0:
        return buffers.empty(out_shape, data.dtype)
    if dim == 0:  # every index is out of range (Gather-8 only gets here)
        out = buffers.empty(out_shape, data.dtype)
        out[...] = zero_of(data.dtype)
        return out
    if b == 0 and data.size <= FEW_ELEMENTS and data.dtype.kind in "biuf":
        out = np.empty(out_shape, data.dtype)  # a shape's element, a token's row: at once
        data.take(idx, axis=a, out=out, mode="clip")
    elif b == 0:
        out = buffers.empty(out_shape, data.dtype)
        take(data, idx, a, out)
    else:
        lead = data.shape[:b]
        inner = math.prod(data.shape[b:a])
        rest = math.prod(data.shape[a + 1:])
        d4 = data.reshape(math.prod(lead), inner, dim, rest)
        i4 = idx.reshape(math.prod(lead), 1, -1, 1)
        out = np.take_along_axis(d4, i4, axis=2).reshape(out_shape)
    if invalid is not None:
        pre = math.prod(data.shape[:a]) // math.prod(data.shape[:b])
        view = out.reshape(math.prod(data.shape[:b]), pre, -1, math.prod(data.shape[a + 1:]))
        mask = invalid.reshape(view.shape[0], 1, -1)
        view[np.broadcast_to(mask, view.shape[:3])] = zero_of(data.dtype)
    return out


def gather_bytes(data, indices, axis, **_) -> int:
    """``output_bytes``: the slices the indices pick (at most their count for batch dims)."""
    try:
        a = scalar(axis, "axis") % data.ndim
    except Exception:  # noqa: BLE001  (an axis the rules refuse: the full check says so)
        return UNKNOWN_BYTES
    return math.prod(data.shape[:a]) * indices.size * math.prod(data.shape[a + 1:]) \
        * data.itemsize


INPUTS = (
    Input("data", T, doc="the tensor to gather from"),
    Input("indices", INTEGER, domain=Indices(0), doc="where to take slices along the axis"),
    Input("axis", INTEGER, SCALAR_OR_VECTOR, domain=AxisIndices(0),
          doc="the axis to gather along, in [-rank, rank-1], not a batch dim (a scalar)"),
)
OUTPUT = (Output("output", "data.shape[:axis] + indices.shape[batch_dims:] + "
                           "data.shape[axis+1:]", type=T),)
BATCH_DIMS = Attr("batch_dims", "int", default=0,
                  doc="leading dims that data and indices share as batches, in "
                      "[-rank(indices), min(ranks)]; negative counts from the indices' rank")


@register
class Gather1(Op):
    spec = OpSpec(
        type="Gather", since=1, until=6, inputs=INPUTS, outputs=OUTPUT,
        output_bytes=gather_bytes,
        exact=True, returns_view=True,  # one index: a view (the plan copies where it must)
        doc="Takes slices of the data along an axis at the given indices, in [0, dim-1].")
    openvino_refuses = refuses()

    @staticmethod
    def infer(ctx):
        return gather_shape(ctx, negative=False)

    @staticmethod
    def kernel(data, indices, axis):
        return gather(data, indices, axis)


@register
class Gather7(Op):
    spec = OpSpec(
        type="Gather", since=7, until=7, attrs=(BATCH_DIMS,), inputs=INPUTS, outputs=OUTPUT,
        output_bytes=gather_bytes,
        exact=True, returns_view=True,  # one index: a view (the plan copies where it must)
        doc="Takes slices of the data along an axis at the given indices, in [0, dim-1], with "
            "leading batch dims.")
    openvino_refuses = refuses()

    @staticmethod
    def infer(ctx):
        return gather_shape(ctx, negative=False)

    @staticmethod
    def kernel(data, indices, axis, *, batch_dims):
        return gather(data, indices, axis, batch_dims)


@register
class Gather8(Op):
    spec = OpSpec(
        type="Gather", since=8, until=16, attrs=(BATCH_DIMS,), inputs=INPUTS, outputs=OUTPUT,
        output_bytes=gather_bytes,
        exact=True, returns_view=True,  # one index: a view (the plan copies where it must)
        doc="Takes slices of the data along an axis at the given indices, negative ones from "
            "the end; an index outside [-dim, dim-1] gives zeros.")
    openvino_refuses = refuses()

    @staticmethod
    def infer(ctx):
        return gather_shape(ctx, negative=True)

    @staticmethod
    def kernel(data, indices, axis, *, batch_dims):
        return gather(data, indices, axis, batch_dims, zeros_out_of_range=True)
