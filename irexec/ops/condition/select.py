"""Select-1: take each element from ``then`` where ``cond`` is true, else from ``else``.

Shapes, as OpenVINO's shape inference: numpy broadcasts all three together; pdpd broadcasts
``else`` onto ``then``, then ``cond`` onto that (the output has ``then``'s shape); none wants
three equal shapes.
"""

from __future__ import annotations

import numpy as np

from irexec.ir import shape_rules
from irexec.ops import bounds, rules
from irexec.ops.spec import register
from irexec.ops.spec import BOOLEAN, Input, Op, OpSpec, Output, Types, TypeVar

T = TypeVar("T", Types("numeric_or_boolean"))


def _shape(ctx):
    cond, then, other = ctx.input_shapes()
    mode = ctx.attrs.get("auto_broadcast", "numpy")
    if mode == "pdpd":
        return [shape_rules.broadcast([then, other, cond], "pdpd")]
    return [shape_rules.broadcast([other, then, cond], mode)]


_shape.__doc__ = "numpy: all three broadcast; pdpd: else, then cond onto then; none: all equal"


@register
class Select(Op):
    spec = OpSpec(
        type="Select",
        numerics="exact",
        since=1,
        attrs=(rules.AUTO_BROADCAST,),
        inputs=(
            Input("cond", BOOLEAN, doc="where true, take from then; else from else"),
            Input("then", T, doc="the elements taken where cond is true"),
            Input("else", T, doc="the elements taken where cond is false"),
        ),
        outputs=(Output("output", "then or else by cond, element by element; their type, the "
                                  "broadcast shape", type=T),),
        shape=_shape,
        doc="Chooses each element from then or else by a boolean condition.",
        exact=True,
    )
    bounds = staticmethod(bounds.select)

    @staticmethod
    def kernel(cond, then, other, **_attrs):
        return np.where(cond, then, other)
