"""TopK-1, TopK-3 and TopK-11: the k largest or smallest elements along an axis, and their
indices. Ties go to the smaller index (OpenVINO's reference sort is stable), so ``stable`` (TopK-11)
changes nothing here."""

import numpy as np

from irexec.diagnostics.codes import ERROR, Code
from irexec.errors import OpError
from irexec.ir.element_type import from_name
from irexec.ir.shape import Dimension
from irexec.ir.shape_rules import normalize_axis
from irexec.ops.spec import register
from irexec.ops.rules import check_index_type
from irexec.ops.spec import (INTEGER, NUMERIC, SCALAR, Attr, Input, Op, OpSpec, Output,
                             TensorType, TypeVar)

T = TypeVar("T", NUMERIC)
CODE = Code("IR336", "topk-k", ERROR, "give TopK a k between 0 and the size of its axis")

_MODE = Attr("mode", "enum", values=("max", "min"), doc="take the largest (max) or smallest (min)")
_SORT = Attr("sort", "enum", values=("value", "index", "none"),
             doc="order of the k results: by value (max: descending, min: ascending), by index "
                 "(ascending), or none (irexec gives the value order)")
_INDEX = Attr("index_element_type", "element_type", default=from_name("i32"),
              doc="element type of the indices output: i32 or i64")
_AXIS = Attr("axis", "int", doc="the axis to choose along, in [-rank, rank-1]")


def check_k(k: int, dim: int | None) -> None:
    if k < 0:
        raise OpError(f"k is {k}; it must not be negative", code="IR336")
    if dim is not None and k > dim:
        raise OpError(f"k is {k} but the axis has {dim} elements; k must not exceed it",
                      code="IR336")


def _infer(ctx):
    check_index_type(ctx, "index_element_type")
    data = ctx.input_shape(0)
    out = data
    if data.rank_is_static:
        if len(data) == 0:
            ctx.error("IR305", "input 0 (data) is a scalar; TopK needs rank 1 or more")
        try:
            axis = normalize_axis(ctx.attrs["axis"], len(data))
        except OpError as e:
            ctx.error(e.code, str(e))
        dim = data[axis]
        value = ctx.input_value(1)
        if value is not None:
            k = int(np.asarray(value).reshape(-1)[0].astype(np.int64))
            try:
                check_k(k, dim.max if dim.is_static else None)
            except OpError as e:
                ctx.error(e.code, str(e))
            if dim.max is not None and k > dim.max:
                ctx.error("IR336", f"k is {k} but the axis has at most {dim.max} elements")
            k_dim = Dimension.static(k)
        else:
            got = ctx.input_bounds(1)
            if got is not None:
                lo, hi = (float(x.reshape(-1)[0]) for x in got)
                top = None if not np.isfinite(hi) else int(hi)
                if dim.max is not None:
                    top = dim.max if top is None else min(top, dim.max)
                k_dim = Dimension(max(int(lo), 0) if np.isfinite(lo) else 0, top)
            else:
                k_dim = Dimension(0, dim.max)
        out = data.replace(axis, k_dim)
    values_type = ctx.input_type(0).element_type
    return [TensorType(values_type, out), TensorType(ctx.attrs["index_element_type"], out)]


def topk(data, k, *, axis, mode, sort, index_element_type, stable=False):
    axis = axis % data.ndim
    k = int(np.asarray(k).reshape(-1)[0].astype(np.int64))
    check_k(k, data.shape[axis])
    if mode == "min":
        order = np.argsort(data, axis=axis, kind="stable")
    else:  # descending, ties by the smaller index: sort the reversed data ascending, stably
        n = data.shape[axis]
        order = (n - 1) - np.flip(np.argsort(np.flip(data, axis), axis=axis, kind="stable"),
                                  axis)
    chosen = order[(slice(None),) * axis + (slice(0, k),)]
    if sort == "index":
        chosen = np.sort(chosen, axis=axis)
    values = np.take_along_axis(data, chosen, axis=axis)
    return values, chosen.astype(index_element_type.dtype)


def _spec(since, until, stable: bool):
    attrs = (_AXIS, _MODE, _SORT, _INDEX)
    if stable:
        attrs += (Attr("stable", "bool", default=False,
                       doc="keep equal values in index order (always so in irexec)"),)
    return OpSpec(
        type="TopK",
        since=since,
        until=until,
        attrs=attrs,
        inputs=(Input("data", T, doc="the tensor to choose from; rank >= 1"),
                Input("k", INTEGER, SCALAR, doc="how many to choose: 0 to the axis' size")),
        outputs=(Output("values", "the k chosen elements along axis", type=T),
                 Output("indices", "their positions along axis", type="@index_element_type")),
        doc="The k largest (mode max) or smallest (mode min) elements along an axis, and their "
            "indices; equal values are taken in index order.",
        codes=(CODE,) if since == 1 else (),
    )


@register
class TopK1(Op):
    spec = _spec(1, 2, False)
    infer = staticmethod(_infer)
    kernel = staticmethod(topk)


@register
class TopK3(Op):
    spec = _spec(3, 10, False)
    infer = staticmethod(_infer)
    kernel = staticmethod(topk)


@register
class TopK11(Op):
    spec = _spec(11, 16, True)
    infer = staticmethod(_infer)
    kernel = staticmethod(topk)
