"""Result-1: a model output."""

from irexec.ops.spec import register
from irexec.ops.spec import Attr, Input, Op, OpSpec


@register
class Result(Op):
    spec = OpSpec(
        type="Result",
        since=1,
        attrs=(
            Attr("output_names", "string_list", default=(), on_layer=True,
                 doc="the model output's names (IR v11, on the <layer> element); the first one "
                     "names the output"),
        ),
        inputs=(Input("input", doc="the value to return"),),
        doc="A model output: returns the value it is given.",
        role="result",
    )

    @staticmethod
    def infer(ctx):
        return []
