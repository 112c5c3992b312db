"""The Reduce* family: one table row per op, each reducing the data over the axes its second
input names (ReduceSum-1, ReduceMean-1, ReduceMax-1, ReduceMin-1, ReduceProd-1, ReduceL1-4,
ReduceL2-4, ReduceLogicalAnd-1, ReduceLogicalOr-1).

Shared by every row: axes are a scalar or vector of integers in [-rank, rank-1], repeats count
once, no axes at all leave the data as it is; ``keep_dims`` keeps reduced axes as size 1.

How the values come out, as OpenVINO computes them:

* floats add in the compute type (f32 for f16/bf16, rounded once at the end); integers add in
  their own type and wrap. ReduceMean and ReduceL2 of integers truncate toward zero.
* ReduceMax/ReduceMin skip NaN (NaN only when every value is NaN); a slice whose largest value
  is -inf gives the type's lowest finite value for ReduceMax, and +inf gives the highest finite
  for ReduceMin (OpenVINO's CPU plugin starts from those); an empty slice gives them too, as
  the plugin does (not ONNX's infinities; docs/compatibility.md).
* an empty slice sums to 0, multiplies to 1, averages to 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from irexec.kernels.numeric import compute_dtype, narrow, is_float
from irexec.ops import bounds, rules, windows
from irexec.ops.domains import AxisIndices, sorted_axes
from irexec.ops.spec import register
from irexec.ops.spec import (BOOLEAN, INTEGER, SCALAR_OR_VECTOR, Attr, Input, Op, OpSpec, Output,
                             TypeSet, TypeVar)

AXES = AxisIndices(0)
KEEP_DIMS = Attr("keep_dims", "bool", default=False,
                 doc="keep each reduced axis as a dim of size 1")


def _axes(axes: np.ndarray, rank: int) -> tuple[int, ...]:
    return sorted_axes(axes, rank)


def _limits(dtype):
    if is_float(dtype):
        info = np.finfo(np.float32 if compute_dtype(dtype) == np.float32 else dtype)
        return info.min, info.max
    info = np.iinfo(dtype)
    return info.min, info.max


def _extreme(data, axes, keep, biggest: bool):
    lowest, highest = _limits(data.dtype)
    if data.size == 0 or any(data.shape[a] == 0 for a in axes):
        shape = tuple(1 if i in axes else n for i, n in enumerate(data.shape)) if keep else \
            tuple(n for i, n in enumerate(data.shape) if i not in axes)
        return np.full(shape, lowest if biggest else highest, compute_dtype(data.dtype))
    x = data.astype(compute_dtype(data.dtype), copy=False)
    if not is_float(data.dtype):
        return (np.max if biggest else np.min)(x, axis=axes, keepdims=keep)
    r = np.asarray((np.fmax if biggest else np.fmin).reduce(x, axis=axes, keepdims=keep))
    r[r == (-np.inf if biggest else np.inf)] = lowest if biggest else highest
    return r


def _sum(data, axes, keep):
    # np.add.reduce is what np.sum calls (the same pairwise sums), without its Python wrapper:
    # a third of a small ReduceMean's time (EfficientNet's squeeze-and-excitation layers)
    ct = compute_dtype(data.dtype)
    return np.add.reduce(data, axis=axes, dtype=ct, keepdims=keep)  # np.sum's own call


def _count(data, axes) -> int:
    return math.prod([data.shape[a] for a in axes])


def _divide(total, count: int, dtype):
    """total / count; integers truncate toward zero; 0 for an empty slice."""
    if count == 0:
        return np.zeros_like(total)
    if is_float(dtype):
        if type(total) is np.ndarray and total.ndim:  # the sums are ours: divide in place
            return np.true_divide(total, total.dtype.type(count), out=total)
        return total / total.dtype.type(count)
    q = total // count
    return q + ((total % count != 0) & (total < 0)).astype(q.dtype)


def _mean(data, axes, keep):
    return _divide(_sum(data, axes, keep), _count(data, axes), data.dtype)


def _prod(data, axes, keep):
    return np.prod(data, axis=axes, dtype=compute_dtype(data.dtype), keepdims=keep)


def _l1(data, axes, keep):
    return _sum(np.abs(data.astype(compute_dtype(data.dtype), copy=False)), axes, keep)


def _l2(data, axes, keep):
    x = data.astype(compute_dtype(data.dtype), copy=False)
    total = np.sum(x * x, axis=axes, dtype=x.dtype, keepdims=keep)
    if is_float(data.dtype):
        return np.sqrt(total)
    return np.trunc(np.sqrt(total.astype(np.float64))).astype(total.dtype)


@dataclass(frozen=True)
class Row:
    type: str
    since: int
    function: object
    types: object
    doc: str


ROWS = (
    Row("ReduceSum", 1, _sum, windows.ARITH, "the sum of the slice"),
    Row("ReduceMean", 1, _mean, windows.ARITH,
        "the mean of the slice (integers truncate toward zero)"),
    Row("ReduceMax", 1, lambda d, a, k: _extreme(d, a, k, True), windows.ARITH,
        "the largest value of the slice (NaN skipped)"),
    Row("ReduceMin", 1, lambda d, a, k: _extreme(d, a, k, False), windows.ARITH,
        "the smallest value of the slice (NaN skipped)"),
    Row("ReduceProd", 1, _prod, windows.ARITH, "the product of the slice"),
    Row("ReduceL1", 4, _l1, windows.ARITH, "the sum of absolute values of the slice"),
    Row("ReduceL2", 4, _l2, windows.ARITH,
        "the square root of the sum of squares of the slice (integers truncate)"),
    Row("ReduceLogicalAnd", 1, None, BOOLEAN, "true when every element of the slice is"),
    Row("ReduceLogicalOr", 1, None, BOOLEAN, "true when some element of the slice is"),
)

_SELECTING = ("ReduceMax", "ReduceMin", "ReduceLogicalAnd", "ReduceLogicalOr")


def _make(row: Row) -> type[Op]:
    t = TypeVar("T", row.types if isinstance(row.types, TypeSet) else row.types)
    function = row.function

    def kernel(data, axes, *, keep_dims):
        reduce_axes = _axes(axes, data.ndim)
        if not reduce_axes:
            return data.copy()
        if function is None:
            op = np.all if row.type == "ReduceLogicalAnd" else np.any
            return op(data, axis=reduce_axes, keepdims=keep_dims)
        return narrow(np.asarray(function(data, reduce_axes, keep_dims)), data.dtype)

    def openvino_refuses(node):
        source = node.inputs[1].source
        value = source.node.value if source.node.op.spec.role == "constant" else None
        if value is not None and value.size == 0:
            return (f"OpenVINO refuses {row.type} with a constant empty axes input "
                    f"(docs/compatibility.md)")
        return None

    spec = OpSpec(
        type=row.type,
        # sums and products round in an order of their own; the extremes and logic select
        numerics="exact" if row.type in _SELECTING else "accumulating",
        since=row.since,
        until=16,
        attrs=(KEEP_DIMS,),
        inputs=(
            Input("data", t, doc="the tensor to reduce"),
            Input("axes", INTEGER, SCALAR_OR_VECTOR, domain=AXES,
                  doc="the axes to reduce, in [-rank, rank-1]; a repeated axis counts once; "
                      "none leaves the data as it is"),
        ),
        outputs=(Output("output", f"{row.doc}, per slice: the data's shape without the reduced "
                                  f"axes (size 1 with keep_dims)", type=t),),
        shape=rules.reduce(1, "keep_dims"),
        doc=f"Reduces the data over the given axes to {row.doc}.",
        exact=function is None,
    )
    members = {"spec": spec, "kernel": staticmethod(kernel),
               "openvino_refuses": staticmethod(openvino_refuses), "__module__": __name__}
    if row.type in _BOUNDS:  # how shape arithmetic's value bounds pass through
        members["bounds"] = staticmethod(_BOUNDS[row.type])
    return type(row.type, (Op,), members)


_BOUNDS = {"ReduceSum": bounds.reduce(np.sum), "ReduceMax": bounds.reduce(np.max),
           "ReduceMin": bounds.reduce(np.min),
           "ReduceProd": bounds.reduce(np.prod, nonnegative=True)}


for _row in ROWS:
    register(_make(_row))
