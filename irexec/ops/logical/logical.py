"""Logical operations, one table: LogicalAnd-1, LogicalOr-1, LogicalXor-1 (two boolean inputs,
broadcast by ``auto_broadcast``), Xor-1 (opset1's older name of LogicalXor, in opset1 only) and
LogicalNot-1. Exact."""

from __future__ import annotations

import numpy as np

from irexec.kernels import numeric
from irexec.ops import rules
from irexec.ops.spec import register
from irexec.ops.spec import BOOLEAN, Input, Op, OpSpec, Output


def _binary(fn):
    def kernel(a, b, **_attrs):
        return numeric.array(fn(a, b))
    return kernel


def _not(x):
    return numeric.array(np.logical_not(x))


def _register(spec: OpSpec, kernel) -> type[Op]:
    return register(type(spec.type, (Op,), {"spec": spec, "kernel": staticmethod(kernel),
                                            "__doc__": spec.doc, "__module__": __name__}))


OPS = {}
for _type, _doc, _fn, _until in (("LogicalAnd", "a and b", np.logical_and, None),
                                 ("LogicalOr", "a or b", np.logical_or, None),
                                 ("LogicalXor", "a xor b (true where exactly one is true)",
                                  np.logical_xor, None),
                                 ("Xor", "a xor b (true where exactly one is true; opset1's "
                                         "name of LogicalXor)", np.logical_xor, 1)):
    OPS[_type] = _register(OpSpec(
        type=_type,
        since=1,
        until=_until,
        attrs=(rules.AUTO_BROADCAST,),
        inputs=(Input("a", BOOLEAN, doc="the first operand"),
                Input("b", BOOLEAN, doc="the second operand")),
        outputs=(Output("output", f"{_doc}, element by element; the inputs' broadcast shape",
                        type="boolean"),),
        shape=rules.broadcast(),
        doc=f"Element-wise logical {_doc}.",
        exact=True,
    ), _binary(_fn))

OPS["LogicalNot"] = _register(OpSpec(
    type="LogicalNot",
    since=1,
    inputs=(Input("x", BOOLEAN, doc="the operand"),),
    outputs=(Output("output", "not x, element by element; x's shape", type="boolean"),),
    doc="Element-wise logical negation.",
    exact=True,
), _not)
