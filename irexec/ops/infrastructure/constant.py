"""Constant-1 (spelled ``Const`` in IR files): a tensor stored in the .bin file."""

import functools

from irexec.ir.shape import PartialShape
from irexec.ops.spec import register
from irexec.ops.spec import Attr, Op, OpSpec, Output, TensorType


@register
class Constant(Op):
    spec = OpSpec(
        type="Constant",
        aliases=("Const",),
        since=1,
        attrs=(
            Attr("element_type", "element_type", doc="the element type of the stored values"),
            Attr("shape", "shape", doc="the static shape of the tensor"),
            Attr("offset", "uint", doc="where the values start in the .bin file, in bytes"),
            Attr("size", "uint", doc="how many bytes the values take in the .bin file"),
        ),
        outputs=(Output("output", "the stored tensor"),),
        doc="A tensor whose values are read from the .bin file.",
        role="constant",
        exact=True,
    )

    @staticmethod
    def infer(ctx):
        return [TensorType(ctx.attrs["element_type"], _shape(tuple(ctx.attrs["shape"])))]


@functools.lru_cache(maxsize=1024)
def _shape(sizes: tuple[int, ...]) -> PartialShape:
    """The PartialShape of a Const's shape attribute (a tuple), made once per distinct shape:
    a model has many Consts and few shapes."""
    return PartialShape(sizes)
