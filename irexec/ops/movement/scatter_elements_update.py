"""ScatterElementsUpdate-3 and -12: a copy of the data with single elements updated, one per
index: the element at the index's own position, but ``indices[...]`` along the axis.

Indices and updates have one shape, of the data's rank, no larger than the data in any dim but
the axis. Indices lie in [-dim, dim-1] (negative from the end); any other is IR325.
ScatterElementsUpdate-12 combines instead of replacing (``reduction``: sum, prod, min, max, mean;
with ``use_init_val`` false the data's element does not take part). Updates are applied in
their order, as OpenVINO's reference implementation does (irexec/kernels/scatter.py): where
indices repeat without a reduction, the last one wins.
"""

from __future__ import annotations

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape_rules import normalize_axis
from irexec.kernels import buffers
from irexec.kernels.scatter import mean_of, neutral, reduce_into, reducible
from irexec.ops.domains import AxisIndices, Indices
from irexec.ops.movement.indexing import check_range, index_values
from irexec.ops.openvino_cpu import refuses
from irexec.ops.spec import register
from irexec.ops.spec import (ANY, INTEGER, SCALAR_OR_VECTOR, Attr, Input, Op, OpSpec, Output,
                             TensorType, TypeVar)
from irexec.ops.values import scalar

T = TypeVar("T", ANY)


def targets(data_shape: tuple[int, ...], idx: np.ndarray, axis: int) -> np.ndarray:
    """The flat position in the data of each index's element: its own coordinates, but the
    index along the axis."""
    strides = np.cumprod((1,) + data_shape[::-1][:-1])[::-1]
    flat = np.zeros(idx.shape, np.int64)
    for d, n in enumerate(idx.shape):
        coord = idx if d == axis else np.arange(n, dtype=np.int64).reshape(
            [n if k == d else 1 for k in range(idx.ndim)])
        flat = flat + coord * int(strides[d])
    return flat.reshape(-1)


def check_shapes(ctx) -> tuple[TensorType, int | None]:
    data, indices, updates = (ctx.input_type(i) for i in range(3))
    shape, ishape, ushape = data.shape, indices.shape, updates.shape
    if ishape.rank_is_static and ushape.rank_is_static and ishape.merge(ushape) is None:
        raise OpError(f"the indices {ishape} and the updates {ushape} must have the same shape",
                      code="IR307")
    values = ctx.input_value(3)
    if not shape.rank_is_static:
        return data, None
    axis = normalize_axis(scalar(values, "axis"), len(shape)) if values is not None else None
    for s, name in ((ishape, "indices"), (ushape, "updates")):
        if not s.rank_is_static:
            continue
        if len(s) != len(shape):
            raise OpError(f"the {name} {s} have rank {len(s)} but the data {shape} has rank "
                          f"{len(shape)}; they must have the same rank", code="IR307")
        for d in range(len(shape)):
            if d != axis and shape[d].max is not None and s[d].min > shape[d].max:
                raise OpError(f"the {name} {s} are larger than the data {shape} in dim {d}; "
                              f"only the axis may be larger", code="IR307")
    idx = ctx.input_value(1)
    if idx is not None and axis is not None and shape[axis].is_static:
        check_range(index_values(idx), shape[axis].min, negative=True)
    return data, axis


def scatter_elements(data, indices, updates, axis, reduction="none", use_init_val=True):
    a = scalar(axis, "axis") % data.ndim
    out = buffers.copy(data)
    if indices.size == 0:
        return out
    dim = data.shape[a]
    idx = index_values(indices)
    idx = np.where(idx < 0, idx + dim, idx)
    rows = targets(data.shape, idx, a)
    flat = out.reshape(-1)
    values = updates.reshape(-1)
    if reduction == "none":
        flat[rows] = values
        return out
    if not use_init_val:
        flat[rows] = neutral(out.dtype, "sum" if reduction == "mean" else reduction)
    reduce_into(flat, rows, values, "sum" if reduction == "mean" else reduction)
    if reduction == "mean":
        hit, counts = np.unique(rows, return_counts=True)
        flat[hit] = mean_of(flat[hit], counts + int(use_init_val))
    return out


INPUTS = (
    Input("data", T, doc="the tensor to update"),
    Input("indices", INTEGER, domain=Indices(0),
          doc="the index along the axis of each update, in [-dim, dim-1]; the data's rank"),
    Input("updates", T, doc="the new values; the indices' shape"),
    Input("axis", INTEGER, SCALAR_OR_VECTOR, domain=AxisIndices(0),
          doc="the axis the indices index, in [-rank, rank-1] (a scalar)"),
)
OUTPUT = (Output("output", "the data with the elements updated", type=T),)


@register
class ScatterElementsUpdate3(Op):
    spec = OpSpec(
        type="ScatterElementsUpdate", since=3, until=11, inputs=INPUTS, outputs=OUTPUT,
        exact=True, doc="Replaces single elements of a tensor at indices along an axis.")
    openvino_refuses = refuses()

    @staticmethod
    def infer(ctx):
        return [check_shapes(ctx)[0]]

    @staticmethod
    def kernel(data, indices, updates, axis):
        return scatter_elements(data, indices, updates, axis)


@register
class ScatterElementsUpdate12(Op):
    spec = OpSpec(
        type="ScatterElementsUpdate", since=12, until=16,
        attrs=(
            Attr("reduction", "enum", default="none",
                 values=("none", "sum", "prod", "min", "max", "mean"),
                 doc="how an update combines with the element: none replaces; mean rounds "
                     "integers down (not for booleans)"),
            Attr("use_init_val", "bool", default=True,
                 doc="false: the data's element does not take part in the reduction"),
        ),
        inputs=INPUTS, outputs=OUTPUT, exact=True,
        doc="Updates single elements of a tensor at indices along an axis, replacing them or "
            "combining with them.")
    openvino_refuses = refuses()

    @staticmethod
    def infer(ctx):
        data, _ = check_shapes(ctx)
        et = data.element_type
        if ctx.attrs["reduction"] == "mean" and et.kind == "boolean":
            ctx.error("IR302", "reduction mean is not defined for boolean data")
        if ctx.attrs["reduction"] != "none" and not reducible(et):
            ctx.error("IR302", f"reduction {ctx.attrs['reduction']} computes in the data's type, "
                               f"which must be boolean, an integer of 8 bits or more, f16, bf16, "
                               f"f32 or f64; the data is {et}")
        return [data]

    @staticmethod
    def kernel(data, indices, updates, axis, *, reduction, use_init_val):
        return scatter_elements(data, indices, updates, axis, reduction, use_init_val)
