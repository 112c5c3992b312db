"""Parameter-1: a model input."""

from irexec.ir.element_type import ElementType
from irexec.ir.shape import PartialShape
from irexec.ops.spec import register
from irexec.ops.spec import Attr, Op, OpSpec, Output, TensorType


@register
class Parameter(Op):
    spec = OpSpec(
        type="Parameter",
        since=1,
        attrs=(
            Attr("shape", "partial_shape", default=PartialShape([]),
                 doc="the input's partial shape; empty means a scalar"),
            Attr("element_type", "element_type", default=ElementType.dynamic, dynamic_ok=True,
                 doc="the input's element type; dynamic takes any type at run time"),
        ),
        outputs=(Output("output", "the value the caller gives"),),
        doc="A model input, fed by the caller at run time.",
        role="parameter",
        exact=True,
    )

    @staticmethod
    def infer(ctx):
        return [TensorType(ctx.attrs["element_type"], ctx.attrs["shape"])]
