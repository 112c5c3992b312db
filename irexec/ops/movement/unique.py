"""Unique-10: the distinct elements (or slices along an axis), where each first occurs, where
each element went, and how often each occurs."""

import numpy as np

from irexec.errors import OpError
from irexec.ir.element_type import from_name
from irexec.ir.shape import Dimension, PartialShape
from irexec.ir.shape_rules import normalize_axis
from irexec.ops.domains import as_int64
from irexec.ops.spec import register
from irexec.ops.rules import check_index_type
from irexec.ops.spec import (NUMERIC, SCALAR_OR_VECTOR, SHAPE_INDEX, Attr, Input, Op, OpSpec,
                             Output, TensorType, TypeVar)

T = TypeVar("T", NUMERIC)


def _axis(value, rank: int) -> int:
    v = as_int64(np.asarray(value))
    if v.size != 1:
        raise OpError(f"axis holds {v.size} values; it must hold one", code="IR305")
    if rank == 0:
        raise OpError("axis is given but the data is a scalar", code="IR306")
    return normalize_axis(int(v[0]), rank)


def _some(d: Dimension) -> Dimension:
    """How many distinct entries n entries (n in d) can have: 1..n, or 0 for none."""
    return Dimension(min(d.min, 1), d.max)


@register
class Unique(Op):
    spec = OpSpec(
        type="Unique",
        since=10,
        until=16,
        attrs=(Attr("sorted", "bool", default=True,
                    doc="ascending order (slices compared element by element) or the order "
                        "of first occurrence"),
               Attr("index_element_type", "element_type", default=from_name("i64"),
                    doc="element type of outputs 1 and 2: i32 or i64"),
               Attr("count_element_type", "element_type", default=from_name("i64"),
                    doc="element type of output 3: i32 or i64")),
        inputs=(Input("data", T, doc="the tensor; flattened unless an axis is given"),
                Input("axis", SHAPE_INDEX, SCALAR_OR_VECTOR, optional=True,
                      doc="compare whole slices along this axis (one value)")),
        outputs=(Output("unique", "the distinct elements or slices", type=T),
                 Output("indices", "where each first occurs", type="@index_element_type"),
                 Output("rev_indices", "for each element or slice of data, its entry in "
                                       "unique", type="@index_element_type"),
                 Output("counts", "how often each occurs", type="@count_element_type")),
        doc="Finds the distinct elements of a tensor (or its distinct slices along an axis). "
            "The count is known only from the values: outputs 0, 1 and 3 have a dynamic dim.",
    )

    @staticmethod
    def infer(ctx):
        check_index_type(ctx, "index_element_type")
        check_index_type(ctx, "count_element_type")
        et = ctx.input_type(0).element_type
        index, count = ctx.attrs["index_element_type"], ctx.attrs["count_element_type"]
        shape = ctx.input_shape(0)
        if ctx.num_inputs < 2:
            total = Dimension.static(1)
            if not shape.rank_is_static:
                total = Dimension.dynamic()
            else:
                for d in shape:
                    total = Dimension(total.min * d.min,
                                      None if total.max is None or d.max is None
                                      else total.max * d.max)
            some = PartialShape([_some(total)])
            return [TensorType(et, some), TensorType(index, some),
                    TensorType(index, PartialShape([total])), TensorType(count, some)]
        value = ctx.input_value(1)
        if value is None or not shape.rank_is_static:
            dyn = PartialShape([-1])
            rank_only = PartialShape([-1] * len(shape)) if shape.rank_is_static \
                else PartialShape.dynamic()
            return [TensorType(et, rank_only), TensorType(index, dyn), TensorType(index, dyn),
                    TensorType(count, dyn)]
        try:
            a = _axis(value, len(shape))
        except OpError as e:
            ctx.error(e.code, str(e))
        some = _some(shape[a])
        return [TensorType(et, shape.replace(a, some)), TensorType(index, PartialShape([some])),
                TensorType(index, PartialShape([shape[a]])),
                TensorType(count, PartialShape([some]))]

    @staticmethod
    def kernel(data, axis=None, *, sorted, index_element_type, count_element_type):
        if axis is None:
            x, a = data.reshape(-1), None
        else:
            x, a = data, _axis(axis, data.ndim)
        unique, first, inverse, counts = np.unique(
            x, return_index=True, return_inverse=True, return_counts=True, axis=a)
        inverse = inverse.reshape(-1)
        if not sorted:  # the order of first occurrence
            order = np.argsort(first, kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)
            unique = np.take(unique, order, axis=0 if a is None else a)
            first, counts, inverse = first[order], counts[order], rank[inverse]
        return (unique, first.astype(index_element_type.dtype),
                inverse.astype(index_element_type.dtype), counts.astype(count_element_type.dtype))
