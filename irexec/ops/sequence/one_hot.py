"""OneHot-1 and OneHot-16: indices to one-hot vectors of on_value and off_value."""

import numpy as np

from irexec.diagnostics.codes import ERROR, Code
from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.domains import as_int64
from irexec.ops.spec import register
from irexec.ops.rules import check_output_size
from irexec.ops.spec import (ANY, INTEGER, SCALAR, Attr, Input, Op, OpSpec, Output, TensorType,
                             TypeVar)

T = TypeVar("T", ANY)
CODE = Code("IR337", "one-hot-depth", ERROR, "give OneHot a non-negative scalar depth")


def _depth(value) -> int:
    v = as_int64(np.asarray(value))
    if v.size != 1:
        raise OpError(f"depth holds {v.size} values; it must be a scalar", code="IR337")
    if v[0] < 0:
        raise OpError(f"depth is {int(v[0])}; it must not be negative", code="IR337")
    return int(v[0])


def _axis(axis: int, rank: int) -> int:
    if not -rank - 1 <= axis <= rank:
        raise OpError(f"axis {axis} is out of range [{-rank - 1}, {rank}] for indices of rank "
                      f"{rank} (the output has one more axis)", code="IR306")
    return axis % (rank + 1)


def _infer(ctx):
    indices = ctx.input_shape(0)
    value = ctx.input_value(1)
    try:
        depth = Dimension.static(_depth(value)) if value is not None else Dimension.dynamic()
        if not indices.rank_is_static:
            return [TensorType(ctx.type_var("T"), PartialShape.dynamic())]
        axis = _axis(ctx.attrs["axis"], len(indices))
    except OpError as e:
        ctx.error(e.code, str(e))
    if value is None:
        got = ctx.input_bounds(1)
        if got is not None:
            lo, hi = (float(x.reshape(-1)[0]) for x in got)
            depth = Dimension(max(int(lo), 0) if np.isfinite(lo) else 0,
                              int(hi) if np.isfinite(hi) else None)
    dims = list(indices.dims)
    dims.insert(axis, depth)
    return [TensorType(ctx.type_var("T"), PartialShape(dims))]


def one_hot(indices, depth, on_value, off_value, *, axis, negative_indices_mode="ignore_negative"):
    n = _depth(depth)
    a = _axis(axis, indices.ndim)
    check_output_size(indices.shape + (n,), max(on_value.dtype.itemsize, 8))
    idx = as_int64(indices).reshape(indices.shape)
    if negative_indices_mode == "normalize":
        idx = np.where(idx < 0, idx + n, idx)
    hot = idx[..., None] == np.arange(n)  # out-of-range indices match nothing
    hot = np.moveaxis(hot, -1, a)
    on, off = on_value.reshape(()), off_value.reshape(())
    return np.where(hot, on, off)


_INPUTS = (
    Input("indices", INTEGER, doc="the positions of on_value; others (negative or >= depth) "
                                  "give rows of off_value"),
    Input("depth", INTEGER, SCALAR, doc="the size of the new axis; not negative"),
    Input("on_value", T, SCALAR, doc="the value at the indexed positions"),
    Input("off_value", T, SCALAR, doc="the value everywhere else"),
)
_AXIS = Attr("axis", "int", doc="where the new axis goes, in [-rank-1, rank]")


@register
class OneHot1(Op):
    spec = OpSpec(
        type="OneHot",
        since=1,
        until=15,
        attrs=(_AXIS,),
        inputs=_INPUTS,
        outputs=(Output("output", "indices' shape with a new axis of size depth", type=T),),
        doc="One-hot encoding: a new axis of size depth holding on_value at each index and "
            "off_value elsewhere; an index outside [0, depth) gives off_value only.",
        codes=(CODE,),
        exact=True,
    )
    infer = staticmethod(_infer)
    kernel = staticmethod(one_hot)


@register
class OneHot16(Op):
    spec = OpSpec(
        type="OneHot",
        since=16,
        until=16,
        attrs=(_AXIS, Attr("negative_indices_mode", "enum", default="ignore_negative",
                           values=("ignore_negative", "normalize"),
                           doc="negative indices give off_value (ignore_negative) or count from "
                               "the end, -1 being depth-1 (normalize)")),
        inputs=_INPUTS,
        outputs=(Output("output", "indices' shape with a new axis of size depth", type=T),),
        doc="One-hot encoding as OneHot-1; negative_indices_mode normalize makes an index in "
            "[-depth, -1] count from the end.",
        exact=True,
    )
    infer = staticmethod(_infer)
    kernel = staticmethod(one_hot)
