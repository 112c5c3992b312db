"""Softmax-1, Softmax-8 and LogSoftmax-5, one table: normalised exponentials along an axis."""

from __future__ import annotations

import numpy as np

from irexec.ir import shape_rules
from irexec.kernels import buffers, numeric
from irexec.ops.spec import register
from irexec.ops.spec import REAL, Attr, Input, Op, OpSpec, Output, TypeVar

T = TypeVar("T", REAL)


def _axis_rule(ctx):
    shape = ctx.input_shape(0)
    shape_rules.normalize_axis(ctx.attrs["axis"], shape.rank)
    return [shape]


def _shifted(x, axis):
    """x - max(x) along the axis, in the compute type (a new array)."""
    w = numeric.widen(x)
    out = np.subtract(w, w.max(axis=axis, keepdims=True), out=buffers.empty(w.shape, w.dtype)
                      if w.dtype == x.dtype else None)
    return out


def softmax(x, *, axis):
    """exp(x - max) / sum(exp(x - max)) along the axis."""
    if x.size == 0:
        return x.copy()
    with numeric.quiet():  # (nothing to enter inside a run: see numeric.ignoring)
        e = _shifted(x, axis)
        np.exp(e, out=e)
        e /= e.sum(axis=axis, keepdims=True)
    return numeric.narrow(e, x.dtype)


def log_softmax(x, *, axis):
    """(x - max) - log(sum(exp(x - max))) along the axis."""
    if x.size == 0:
        return x.copy()
    with numeric.quiet():  # (nothing to enter inside a run: see numeric.ignoring)
        d = _shifted(x, axis)
        s = np.exp(d).sum(axis=axis, keepdims=True)
        d -= np.log(s)
    return numeric.narrow(d, x.dtype)


def _spec(type_name, since, until, axis_kind, doc, axis_doc):
    return OpSpec(
        type=type_name, since=since, until=until, numerics="accumulating",
        attrs=(Attr("axis", axis_kind, default=1, doc=axis_doc),),
        inputs=(Input("data", T, doc="a floating-point tensor"),),
        outputs=(Output("output", "same type and shape as data", type=T),),
        shape=_axis_rule,
        doc=doc,
    )


_SOFTMAX = "Computes exp(x) / sum(exp(x)) along an axis (the maximum subtracted first)."
_RANGE = "the axis to normalise along, in [-rank, rank-1]"


@register
class Softmax1(Op):
    spec = _spec("Softmax", 1, 7, "uint", _SOFTMAX, "the axis to normalise along, in [0, rank-1]")
    kernel = staticmethod(softmax)


@register
class Softmax8(Op):
    spec = _spec("Softmax", 8, 16, "int", _SOFTMAX, _RANGE)
    kernel = staticmethod(softmax)


@register
class LogSoftmax(Op):
    spec = _spec("LogSoftmax", 5, 16, "int", "Computes x - log(sum(exp(x))) along an axis (the "
                                             "maximum subtracted first).", _RANGE)
    kernel = staticmethod(log_softmax)

