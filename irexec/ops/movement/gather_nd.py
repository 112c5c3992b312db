"""GatherND-5 and GatherND-8: take elements or slices of the data at index tuples.

The last dim of the indices, ``k``, is the length of each tuple; a tuple names a position in the
``k`` dims after the first ``batch_dims`` (batches that data and indices share). The output is
``indices.shape[:-1] + data.shape[batch_dims + k:]``; GatherND-5 fuses the batch dims into one.
Indices lie in [-s, s-1] of the dim they index, negative ones counting from the end (GatherND-8's
specification; OpenVINO reads GatherND-5's the same way). Any other index is IR325 (OpenVINO's CPU
plugin reads past the dim instead: docs/compatibility.md).
"""

from __future__ import annotations

import math

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import PartialShape
from irexec.ir.shape_rules import product
from irexec.kernels import buffers
from irexec.ops.domains import Indices
from irexec.ops.movement.indexing import check_tuples, index_values, tuple_rows
from irexec.ops.openvino_cpu import refuses
from irexec.ops.spec import register
from irexec.ops.spec import (ANY, INTEGER, Attr, Input, Op, OpSpec, Output, Rank, TensorType,
                             TypeVar)

T = TypeVar("T", ANY)


def gather_nd_shape(ctx, fuse: bool) -> list[TensorType]:
    data, indices = ctx.input_type(0), ctx.input_type(1)
    shape, ishape = data.shape, indices.shape
    b = ctx.attrs["batch_dims"]
    for name, s in (("data", shape), ("indices", ishape)):
        if s.rank_is_static and len(s) <= b:
            raise OpError(f"batch_dims {b} is not below the rank of the {name} {s}",
                          code="IR302")
    if not shape.rank_is_static or not ishape.rank_is_static or ishape[-1].is_dynamic:
        return [TensorType(data.element_type, PartialShape.dynamic())]
    k = ishape[-1].min
    if b + k > len(shape):
        raise OpError(f"index tuples of length {k} after {b} batch dims do not fit data of rank "
                      f"{len(shape)} ({shape})", code="IR307")
    batch = []
    for i in range(b):
        d = shape[i].merge(ishape[i])
        if d is None:
            raise OpError(f"batch dim {i} is {shape[i]} in the data {shape} but {ishape[i]} in "
                          f"the indices {ishape}; batch dims must agree", code="IR307")
        batch.append(d)
    values = ctx.input_value(1)
    indexed = shape.dims[b:b + k]
    if values is not None and all(d.is_static for d in indexed):
        check_tuples(index_values(values), tuple(d.min for d in indexed))
    if fuse and b > 1:
        batch = [product(batch)]
    out = batch + list(ishape.dims[b:-1]) + list(shape.dims[b + k:])
    return [TensorType(data.element_type, PartialShape._of(tuple(out)))]


def gather_nd(data, indices, batch_dims: int, fuse: bool):
    b = batch_dims
    k = indices.shape[-1]
    lead = math.prod(data.shape[:b])
    indexed = data.shape[b:b + k]
    rows = tuple_rows(index_values(indices), indexed).reshape(lead, -1)
    rows = (rows + np.arange(lead, dtype=np.int64)[:, None] * math.prod(indexed)).reshape(-1)
    slice_shape = data.shape[b + k:]
    batch = (lead,) if fuse and b > 1 else data.shape[:b]
    out_shape = batch + indices.shape[b:-1] + slice_shape
    out = buffers.empty(out_shape, data.dtype)
    if out.size:
        table = data.reshape(lead * math.prod(indexed), math.prod(slice_shape))
        np.take(table, rows, axis=0, out=out.reshape(rows.size, -1), mode="clip")
    return out


BATCH_DIMS = Attr("batch_dims", "uint", default=0,
                  doc="leading dims that data and indices share as batches; below both ranks")
INPUTS = (
    Input("data", T, Rank(min=1), doc="the tensor to gather from"),
    Input("indices", INTEGER, Rank(min=1), domain=Indices(0),
          doc="index tuples along the last axis, each element in [-s, s-1] of its dim"),
)


@register
class GatherND5(Op):
    spec = OpSpec(
        type="GatherND", since=5, until=7, attrs=(BATCH_DIMS,), inputs=INPUTS,
        outputs=(Output("output", "[product of the batch dims] + indices.shape[batch_dims:-1] "
                                  "+ data.shape[batch_dims+k:]", type=T),),
        doc="Takes elements or slices of the data at index tuples; batch dims fused into one.",
        exact=True)
    openvino_refuses = refuses()

    @staticmethod
    def infer(ctx):
        return gather_nd_shape(ctx, fuse=True)

    @staticmethod
    def kernel(data, indices, *, batch_dims):
        return gather_nd(data, indices, batch_dims, fuse=True)


@register
class GatherND8(Op):
    spec = OpSpec(
        type="GatherND", since=8, until=16, attrs=(BATCH_DIMS,), inputs=INPUTS,
        outputs=(Output("output", "indices.shape[:-1] + data.shape[batch_dims+k:]", type=T),),
        doc="Takes elements or slices of the data at index tuples.",
        exact=True)
    openvino_refuses = refuses()

    @staticmethod
    def infer(ctx):
        return gather_nd_shape(ctx, fuse=False)

    @staticmethod
    def kernel(data, indices, *, batch_dims):
        return gather_nd(data, indices, batch_dims, fuse=False)
