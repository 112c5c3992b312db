"""ScatterNDUpdate-3 (in opset4 to opset14) and ScatterNDUpdate-15: a copy of the data with the
elements or slices at index tuples updated.

The indices' last dim ``k`` is the tuple length (at most the data's rank); the updates have
shape ``indices.shape[:-1] + data.shape[k:]``. Tuple elements lie in [-s, s-1] of the dim they
index (negative from the end); any other is IR325. ScatterNDUpdate-15 combines instead of
replacing (``reduction``: sum, sub, prod, min, max; for booleans sum is or, sub xor, prod and).
Updates are applied in their order, as OpenVINO's reference implementation does
(irexec/kernels/scatter.py): where tuples repeat without a reduction, the last one wins.
"""

from __future__ import annotations

import math

from irexec.errors import OpError
from irexec.ir.shape import PartialShape
from irexec.kernels import buffers
from irexec.kernels.scatter import reduce_into, reducible
from irexec.ops.domains import Indices
from irexec.ops.movement.indexing import check_tuples, index_values, tuple_rows
from irexec.ops.openvino_cpu import refuses
from irexec.ops.spec import register
from irexec.ops.spec import (ANY, INTEGER, SHAPE_INDEX, Attr, Input, Op, OpSpec, Output, Rank,
                             TensorType, TypeVar)

T = TypeVar("T", ANY)


def check_shapes(ctx) -> TensorType:
    data, indices, updates = (ctx.input_type(i) for i in range(3))
    shape, ishape, ushape = data.shape, indices.shape, updates.shape
    if not shape.rank_is_static or not ishape.rank_is_static or ishape[-1].is_dynamic:
        return data
    k = ishape[-1].min
    if k > len(shape):
        raise OpError(f"index tuples of length {k} do not fit data of rank {len(shape)} "
                      f"({shape})", code="IR307")
    wanted = PartialShape._of(ishape.dims[:-1] + shape.dims[k:])
    if ushape.rank_is_static and wanted.merge(ushape) is None:
        raise OpError(f"the updates have shape {ushape} but indices {ishape} into data {shape} "
                      f"need {wanted}", code="IR307")
    idx = ctx.input_value(1)
    if idx is not None and all(d.is_static for d in shape.dims[:k]):
        check_tuples(index_values(idx), tuple(d.min for d in shape.dims[:k]))
    return data


def scatter_nd(data, indices, updates, reduction="none"):
    out = buffers.copy(data)
    k = indices.shape[-1]
    rows = tuple_rows(index_values(indices), data.shape[:k]).reshape(-1)
    if out.size == 0 or rows.size == 0:
        return out
    table = out.reshape(math.prod(data.shape[:k]), -1)
    values = updates.reshape(rows.size, table.shape[1])
    if reduction == "none":
        table[rows] = values
    else:
        reduce_into(table, rows, values, reduction)
    return out


INPUTS3 = (
    Input("data", T, Rank(min=1), doc="the tensor to update"),
    Input("indices", INTEGER, Rank(min=1), domain=Indices(0),
          doc="index tuples along the last axis, each element in [-s, s-1] of its dim"),
    Input("updates", T, doc="the new values: indices.shape[:-1] + data.shape[k:]"),
)
OUTPUT = (Output("output", "the data with the elements or slices updated", type=T),)


@register
class ScatterNDUpdate3(Op):
    spec = OpSpec(
        type="ScatterNDUpdate", since=4, until=14, inputs=INPUTS3, outputs=OUTPUT, exact=True,
        doc="Replaces the elements or slices of a tensor at index tuples (ScatterNDUpdate-3, "
            "which OpenVINO's opsets hold from opset4).")
    openvino_refuses = refuses()

    @staticmethod
    def infer(ctx):
        return [check_shapes(ctx)]

    @staticmethod
    def kernel(data, indices, updates):
        return scatter_nd(data, indices, updates)


@register
class ScatterNDUpdate15(Op):
    spec = OpSpec(
        type="ScatterNDUpdate", since=15, until=16,
        attrs=(Attr("reduction", "enum", default="none",
                    values=("none", "sum", "sub", "prod", "min", "max"),
                    doc="how an update combines with the element: none replaces"),),
        inputs=(INPUTS3[0], Input("indices", SHAPE_INDEX, Rank(min=1), domain=Indices(0),
                                  doc=INPUTS3[1].doc), INPUTS3[2]),
        outputs=OUTPUT, exact=True,
        doc="Updates the elements or slices of a tensor at index tuples, replacing them or "
            "combining with them.")
    openvino_refuses = refuses()

    @staticmethod
    def infer(ctx):
        data = check_shapes(ctx)
        et = data.element_type
        if ctx.attrs["reduction"] != "none" and not reducible(et):
            ctx.error("IR302", f"reduction {ctx.attrs['reduction']} computes in the data's type, "
                               f"which must be boolean, an integer of 8 bits or more, f16, bf16, "
                               f"f32 or f64; the data is {et}")
        return [data]

    @staticmethod
    def kernel(data, indices, updates, *, reduction):
        return scatter_nd(data, indices, updates, reduction)
