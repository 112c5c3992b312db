"""Bitwise operations, one table: BitwiseAnd-13, BitwiseOr-13, BitwiseXor-13 (two inputs of one
integer or boolean type, broadcast by ``auto_broadcast``), BitwiseNot-13, and BitwiseLeftShift-15,
BitwiseRightShift-15 (integers only). Exact; on booleans they are the logical operations.

Shifts: the specification leaves a count below 0 or at least the type's width to the hardware.
irexec gives every such count one answer: every bit is shifted out, so a left shift gives 0 and a
right shift gives 0, or -1 for a negative signed value (numpy's rule, an arithmetic shift by
"infinity"). A Constant count out of range is warned about (IR317), as OpenVINO's CPU plugin
may answer otherwise (x86 takes the count modulo the width). Types narrower than a byte shift
within their own width.
"""

from __future__ import annotations

import numpy as np

from irexec.diagnostics.codes import WARNING, Code
from irexec.ir import element_type as et_table
from irexec.ir.element_type import plain_values
from irexec.kernels import numeric
from irexec.ops import rules
from irexec.ops.spec import register
from irexec.ops.spec import INTEGER, Input, Op, OpSpec, Output, Types, TypeVar

T = TypeVar("T", Types("integer_or_boolean"))
TI = TypeVar("T", INTEGER)

SHIFT_RANGE = Code("IR317", "shift-out-of-range", WARNING,
                   "keep shift counts in [0, bits-1]: the specification leaves other counts to "
                   "the hardware (irexec shifts every bit out)")


def _binary(fn):
    def kernel(a, b, **_attrs):
        if numeric.kind(a.dtype) == numeric.NARROW_INT:
            return numeric.narrow(fn(numeric.widen(a), numeric.widen(b)), a.dtype)
        return numeric.array(fn(a, b))
    return kernel


def _shift(fn):
    def kernel(a, b, **_attrs):
        if numeric.kind(a.dtype) == numeric.NARROW_INT:  # in int64 (signed values sign-extended)
            width = et_table.from_dtype(a.dtype).bits
            count = numeric.widen(b)
            count = np.where((count < 0) | (count >= width), 64, count)  # every bit out
            return numeric.narrow(fn(numeric.widen(a), count), a.dtype)
        return numeric.array(fn(a, b))
    return kernel


def _not(x):
    if numeric.kind(x.dtype) == numeric.NARROW_INT:
        return numeric.narrow(np.invert(numeric.widen(x)), x.dtype)
    return numeric.array(np.invert(x))


def _shift_infer(ctx):
    outputs = ctx.default_outputs()
    count = ctx.input_value(1)
    et = ctx.input_type(0).element_type
    if count is not None and not et.is_dynamic:
        values = plain_values(count).astype(np.int64) if count.dtype.kind != "u" or \
            count.dtype.itemsize < 8 else plain_values(count).view(np.int64)
        bad = (values < 0) | (values >= et.bits)
        if bad.any():
            ctx.warn("IR317", f"shift count {int(values[bad].reshape(-1)[0])} is outside [0, "
                              f"{et.bits - 1}] for {et}: the specification leaves the result to "
                              f"the hardware; irexec shifts every bit out")
    return outputs


def _register(spec: OpSpec, kernel, infer=None) -> type[Op]:
    members = {"spec": spec, "kernel": staticmethod(kernel), "__doc__": spec.doc,
               "__module__": __name__}
    if infer is not None:
        members["infer"] = staticmethod(infer)
    return register(type(spec.type, (Op,), members))


OPS = {}
for _type, _doc, _fn in (("BitwiseAnd", "a & b", np.bitwise_and),
                         ("BitwiseOr", "a | b", np.bitwise_or),
                         ("BitwiseXor", "a ^ b", np.bitwise_xor)):
    OPS[_type] = _register(OpSpec(
        type=_type,
        since=13,
        attrs=(rules.AUTO_BROADCAST,),
        inputs=(Input("a", T, doc="the first operand"), Input("b", T, doc="the second operand")),
        outputs=(Output("output", f"{_doc}, element by element; the inputs' type, their "
                                  f"broadcast shape", type=T),),
        shape=rules.broadcast(),
        doc=f"Element-wise bitwise {_doc} (logical on booleans).",
        exact=True,
    ), _binary(_fn))

OPS["BitwiseNot"] = _register(OpSpec(
    type="BitwiseNot",
    since=13,
    inputs=(Input("x", T, doc="the operand"),),
    outputs=(Output("output", "~x, element by element; x's type and shape", type=T),),
    doc="Element-wise bitwise negation (logical on booleans).",
    exact=True,
), _not)

for _type, _doc, _fn in (("BitwiseLeftShift", "a << b", np.left_shift),
                         ("BitwiseRightShift", "a >> b (arithmetic for signed types)",
                          np.right_shift)):
    OPS[_type] = _register(OpSpec(
        type=_type,
        since=15,
        attrs=(rules.AUTO_BROADCAST,),
        inputs=(Input("a", TI, doc="the data to shift"),
                Input("b", TI, doc="the number of bits to shift by, in [0, bits-1]")),
        outputs=(Output("output", f"{_doc}, element by element; the inputs' type, their "
                                  f"broadcast shape", type=TI),),
        shape=rules.broadcast(),
        doc=f"Element-wise shift {_doc}; a count outside [0, bits-1] shifts every bit out.",
        codes=(SHIFT_RANGE,),
        exact=True,
    ), _shift(_fn), _shift_infer)
