"""Comparison, one table: Equal-1, NotEqual-1, Less-1, LessEqual-1, Greater-1, GreaterEqual-1
(two inputs of one type T, broadcast by ``auto_broadcast``), and IsNaN-10, IsInf-10, IsFinite-10
(one floating-point input). Every result is boolean and exact.

Comparisons follow IEEE 754: NaN is unequal to everything, itself included, and no order holds
with it; -0.0 equals 0.0. Types narrower than a byte compare by their values.
"""

from __future__ import annotations

import numpy as np

from irexec.ir.element_type import plain_values
from irexec.kernels import half, numeric
from irexec.ops import rules
from irexec.ops.spec import register
from irexec.ops.spec import REAL, Attr, Input, Op, OpSpec, Output, Types, TypeVar

T = TypeVar("T", Types("numeric_or_boolean"))
BOOL = np.dtype(np.bool_)


def _compare(fn):
    def kernel(a, b, **_attrs):
        if numeric.kind(a.dtype) in (numeric.NARROW_INT, numeric.LOW_FLOAT):
            a, b = plain_values(a), plain_values(b)
        shape = numeric.broadcast_shape(a, b)
        out = numeric.output(shape, BOOL)
        if (a.dtype in half.HALVES and max(a.size, b.size) >= half.USE_MIN and half.active()
                and (a.shape == b.shape or min(a.size, b.size) == 1)):
            # f16/bf16 on integer keys of their bits (irexec/kernels/half.py), faster than
            # numpy's f16 loops and ml_dtypes' bf16 ones
            with numeric.quiet():
                return half.compare(a, b, fn, np.empty(shape, BOOL) if out is None else out)
        with numeric.quiet():  # numpy's f16 loops flag NaN operands
            return numeric.array(fn(a, b, out=out))
    return kernel


def _is_nan(x):
    return numeric.array(np.isnan(plain_values(x)))


def _is_finite(x):
    return numeric.array(np.isfinite(plain_values(x)))


def _is_inf(x, *, detect_negative=True, detect_positive=True):
    x = plain_values(x)
    if detect_negative and detect_positive:
        return numeric.array(np.isinf(x))
    if detect_positive:
        return numeric.array(np.isposinf(x))
    if detect_negative:
        return numeric.array(np.isneginf(x))
    return np.zeros(x.shape, np.bool_)


_BINARY = (
    ("Equal", "a == b", np.equal),
    ("NotEqual", "a != b", np.not_equal),
    ("Less", "a < b", np.less),
    ("LessEqual", "a <= b", np.less_equal),
    ("Greater", "a > b", np.greater),
    ("GreaterEqual", "a >= b", np.greater_equal),
)


def _register(spec: OpSpec, kernel) -> type[Op]:
    return register(type(spec.type, (Op,), {"spec": spec, "kernel": staticmethod(kernel),
                                            "__doc__": spec.doc, "__module__": __name__}))


OPS = {}
for _type, _doc, _fn in _BINARY:
    OPS[_type] = _register(OpSpec(
        type=_type,
        since=1,
        attrs=(rules.AUTO_BROADCAST,),
        inputs=(Input("a", T, doc="the first operand"), Input("b", T, doc="the second operand")),
        outputs=(Output("output", f"{_doc}, element by element; the inputs' broadcast shape",
                        type="boolean"),),
        shape=rules.broadcast(),
        doc=f"Element-wise comparison {_doc} (IEEE 754: false with NaN, but NaN != x is true).",
        exact=True,
    ), _compare(_fn))

_DETECT = (
    Attr("detect_negative", "bool", default=True, doc="whether -inf counts as infinite"),
    Attr("detect_positive", "bool", default=True, doc="whether +inf counts as infinite"),
)
for _type, _doc, _kernel, _attrs in (
        ("IsNaN", "whether x is NaN", _is_nan, ()),
        ("IsInf", "whether x is an infinity the attributes name", _is_inf, _DETECT),
        ("IsFinite", "whether x is neither infinite nor NaN", _is_finite, ())):
    OPS[_type] = _register(OpSpec(
        type=_type,
        since=10,
        attrs=_attrs,
        inputs=(Input("x", REAL, doc="a floating-point tensor"),),
        outputs=(Output("output", f"{_doc}, element by element; x's shape", type="boolean"),),
        doc=f"Element-wise test: {_doc}.",
        exact=True,
    ), _kernel)
