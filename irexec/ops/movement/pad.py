"""Pad-1 and Pad-12: grow a tensor on each side of each axis (irexec/kernels/pad.py).

``pads_begin`` and ``pads_end`` hold one count per axis. Pad-12 also crops: a negative count
removes elements, and a dim never goes below 0. Pad-1's specification allows non-negative counts
only (IR332 for a negative one). ``reflect`` pads at most dim-1 per side and ``symmetric`` at
most dim; both, and ``edge``, need a dim with elements to copy from (IR332). The optional
``pad_value`` (constant mode only; 0, or an empty string, without it) is a scalar of the data's
type.
"""

from __future__ import annotations

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.kernels.pad import pad
from irexec.ops.domains import PadSizes
from irexec.ops.openvino_cpu import refuses
from irexec.ops.spec import register
from irexec.ops.spec import (ANY, INTEGER, SCALAR, VECTOR, Attr, Input, Op, OpSpec, Output,
                             TensorType, TypeVar)
from irexec.ops.values import ints

T = TypeVar("T", ANY)


def check_pads(shape: PartialShape, begins, ends, mode: str, negative: bool) -> PartialShape:
    """The padded shape; OpError IR332 for pads the mode cannot make from the data."""
    rank = len(shape)
    for name, pads in (("pads_begin", begins), ("pads_end", ends)):
        if len(pads) != rank:
            raise OpError(f"{name} {list(pads)} has {len(pads)} values but the data {shape} has "
                          f"rank {rank}; give one per axis", code="IR332")
        if not negative and any(p < 0 for p in pads):
            raise OpError(f"{name} {list(pads)} holds a negative count; Pad-1 only adds "
                          f"elements (Pad-12 also crops)", code="IR332")
    dims = []
    for axis, (d, b, e) in enumerate(zip(shape, begins, ends)):
        grows = b > 0 or e > 0
        if d.is_static and grows and mode != "constant":
            n = d.min
            if n == 0:
                raise OpError(f"{mode} padding copies from the data, but dim {axis} of the data "
                              f"{shape} is empty", code="IR332")
            limit = n - 1 if mode == "reflect" else n if mode == "symmetric" else None
            if limit is not None and max(b, e) > limit:
                raise OpError(f"{mode} padding of dim {axis} ({n}) by {b} and {e} exceeds "
                              f"{limit}, the most {mode} can copy from it", code="IR332")
        lo = max(d.min + b + e, 0)
        hi = None if d.max is None else max(d.max + b + e, 0)
        dims.append(Dimension(lo, hi))
    return PartialShape._of(tuple(dims))


def infer_pad(ctx, negative: bool):
    data = ctx.input_type(0)
    shape = data.shape
    mode = ctx.attrs["pad_mode"]
    begins, ends = ctx.input_value(1), ctx.input_value(2)
    if not shape.rank_is_static:
        return [data]
    if begins is None or ends is None:
        for i in (1, 2):
            n = ctx.input_shape(i)
            if n.rank_is_static and n[0].is_static and n[0].min != len(shape):
                raise OpError(f"{('pads_begin', 'pads_end')[i - 1]} has {n[0].min} values but "
                              f"the data {shape} has rank {len(shape)}; give one per axis",
                              code="IR332")
        return [TensorType(data.element_type, PartialShape([None] * len(shape)))]
    out = check_pads(shape, ints(begins), ints(ends), mode, negative)
    return [TensorType(data.element_type, out)]


def kernel(data, pads_begin, pads_end, pad_value=None, *, pad_mode):
    value = pad_value[()] if pad_value is not None else None
    return pad(data, list(ints(pads_begin)), list(ints(pads_end)), pad_mode, value)


MODE = Attr("pad_mode", "enum", values=("constant", "edge", "reflect", "symmetric"),
            doc="how new elements are made: a constant, the nearest edge, a reflection without "
                "the edge, or one with it")


def inputs(pads_doc: str):
    return (
        Input("data", T, doc="the tensor to pad"),
        Input("pads_begin", INTEGER, VECTOR, domain=PadSizes(0),
              doc=f"elements to add before each axis; {pads_doc}"),
        Input("pads_end", INTEGER, VECTOR, domain=PadSizes(0),
              doc=f"elements to add after each axis; {pads_doc}"),
        Input("pad_value", T, SCALAR, optional=True,
              doc="the constant mode's value (0, or an empty string, without it)"),
    )


@register
class Pad1(Op):
    spec = OpSpec(
        type="Pad", since=1, until=11, attrs=(MODE,), inputs=inputs("one per axis, >= 0"),
        outputs=(Output("output", "pads_begin + dim + pads_end along each axis", type=T),),
        doc="Grows a tensor on each side of each axis by a mode's values.", exact=True)
    openvino_refuses = refuses(strings=True)
    kernel = staticmethod(kernel)

    @staticmethod
    def infer(ctx):
        return infer_pad(ctx, negative=False)


@register
class Pad12(Op):
    spec = OpSpec(
        type="Pad", since=12, until=16, attrs=(MODE,),
        inputs=inputs("one per axis; negative crops"),
        outputs=(Output("output", "max(pads_begin + dim + pads_end, 0) along each axis",
                        type=T),),
        doc="Grows or crops a tensor on each side of each axis; new elements by a mode's values.",
        exact=True)
    openvino_refuses = refuses(strings=True)
    kernel = staticmethod(kernel)

    @staticmethod
    def infer(ctx):
        return infer_pad(ctx, negative=True)
