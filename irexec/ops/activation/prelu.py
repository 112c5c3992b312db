"""PRelu-1: x where x >= 0, slope * x below; slope per channel or broadcast onto data."""

import numpy as np

from irexec.diagnostics.codes import ERROR, Code
from irexec.errors import OpError
from irexec.ir import shape_rules
from irexec.ir.shape import PartialShape
from irexec.kernels import numeric
from irexec.ops.spec import register
from irexec.ops.spec import NUMERIC, Input, Op, OpSpec, Output, TypeVar

T = TypeVar("T", NUMERIC)


def _per_channel(data: PartialShape, slope: PartialShape) -> bool:
    """OpenVINO's channel rule: a 1-D slope as long as data's channel dim (dim 1, or dim 0 of
    1-D data) applies along that dim."""
    if not (data.rank_is_static and slope.rank_is_static and len(slope) == 1 and len(data)):
        return False
    channel = data[1 if len(data) > 1 else 0]
    return channel.is_static and slope[0].is_static and channel.min == slope[0].min


def _slope_shape(data: PartialShape, slope: PartialShape) -> PartialShape:
    if _per_channel(data, slope):
        dims = [1] * len(data)
        dims[1 if len(data) > 1 else 0] = slope[0].min
        return PartialShape(dims)
    return slope


def _rule(ctx):
    data, slope = ctx.input_shape(0), ctx.input_shape(1)
    try:
        out = shape_rules.broadcast_numpy(data, _slope_shape(data, slope))
    except OpError:
        out = None
    if out is not None and (not out.rank_is_static or not data.rank_is_static
                            or (len(out) == len(data) and data.merge(out) is not None)):
        return [data]
    raise OpError(f"slope of shape {slope} does not broadcast onto data of shape {data} (a 1-D "
                  f"slope as long as the channel dim, or numpy rules onto data's shape)",
                  code="IR322")


@numeric.rank0_safe
def prelu(x, slope):
    s = slope
    channel = 1 if x.ndim > 1 else 0
    if slope.ndim == 1 and x.ndim and x.shape[channel] == slope.shape[0]:
        shape = [1] * x.ndim
        shape[channel] = slope.shape[0]
        s = slope.reshape(shape)
    w, ws = numeric.widen(x), numeric.widen(s)
    with np.errstate(all="ignore"):
        out = np.multiply(w, ws)
        out = np.where(w < 0, out, w)
    return numeric.narrow(out, x.dtype)


@register
class PRelu(Op):
    spec = OpSpec(
        type="PRelu",
        numerics="rounded",
        since=1,
        until=16,
        inputs=(Input("data", T, doc="a numeric tensor"),
                Input("slope", T, doc="the slopes of the negative part: a 1-D tensor as long "
                                      "as data's channel dim (dim 1), or a shape that "
                                      "broadcasts onto data")),
        outputs=(Output("output", "PRelu of each element; same type and shape as data",
                        type=T),),
        shape=_rule,
        doc="Computes x for x >= 0 and slope * x for x < 0, element-wise.",
        codes=(Code("IR322", "prelu-slope-shape", ERROR,
                    "give slope data's channel count (1-D) or a shape that broadcasts onto "
                    "data"),),
    )
    kernel = staticmethod(prelu)
