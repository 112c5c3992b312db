"""Squeeze-1 and Squeeze-15: drop dims of size 1 (a view of the data).

Without axes (or with an empty axes tensor) every dim of size 1 goes. With axes, each named dim
goes if it is 1; a named dim that is not 1 stays, as the specification says (irexec warns,
IR328). A dynamic dim that may be 1 counts as 1 when an axis names it; Squeeze-15 with
``allow_axis_skip`` leaves the output rank dynamic instead, and so does a Squeeze without axes
over a dynamic dim that may be 1. An axis named twice counts once (IR334).
"""

from __future__ import annotations

from irexec.ir.shape import PartialShape
from irexec.ir.shape_rules import normalize_axes
from irexec.ops.domains import AxisIndices
from irexec.ops.spec import register, same_bytes
from irexec.ops.spec import (ANY, INTEGER, SCALAR_OR_VECTOR, Attr, Input, Op, OpSpec, Output,
                             TensorType, TypeVar)
from irexec.ops.values import ints

T = TypeVar("T", ANY)

INPUTS = (
    Input("data", T, doc="the tensor to squeeze"),
    Input("axes", INTEGER, SCALAR_OR_VECTOR, domain=AxisIndices(0), optional=True,
          doc="the dims to drop, in [-rank, rank-1]; without it (or empty) every dim of size 1"),
)
OUTPUTS = (Output("output", "the data without the dropped dims; same elements in the same "
                            "order", type=T),)


def _infer(ctx, skip_means_dynamic: bool):
    data = ctx.input_type(0)
    shape = data.shape
    dynamic = TensorType(data.element_type, PartialShape.dynamic())
    values = ctx.input_value(1) if ctx.num_inputs > 1 else None
    if ctx.num_inputs > 1 and values is None:  # axes known only when running
        axes_shape = ctx.input_shape(1)
        if not shape.rank_is_static or len(shape) == 0 or not axes_shape.is_static \
                or axes_shape.to_shape() not in ((), (1,)):
            return [dynamic]
        if not any(d.contains(1) for d in shape):
            return [data]
        # One axis: one dim goes (Squeeze-15 cannot tell whether any does).
        if skip_means_dynamic:
            return [dynamic]
        return [TensorType(data.element_type, PartialShape([None] * (len(shape) - 1)))]
    if not shape.rank_is_static:
        return [dynamic]
    axes = ints(values) if values is not None else ()
    if not axes:
        if any(d.is_dynamic and d.contains(1) for d in shape):
            return [dynamic]
        return [TensorType(data.element_type, PartialShape([d for d in shape if d.min != 1
                                                            or d.max != 1]))]
    named = normalize_axes(axes, len(shape))
    unique = set(named)
    if len(unique) < len(named):
        ctx.warn("IR334", f"axes {list(axes)} name the same axis more than once; it is dropped "
                          f"once")
    if ctx.attrs.get("allow_axis_skip") and any(shape[a].is_dynamic and shape[a].contains(1)
                                                for a in unique):
        return [dynamic]
    kept = sorted(a for a in unique if not shape[a].contains(1))
    if kept:
        ctx.warn("IR328", f"axis {kept[0]} names a dim of size {shape[kept[0]]}, not 1: Squeeze "
                          f"keeps it")
    return [TensorType(data.element_type, PartialShape([d for i, d in enumerate(shape)
                                                        if i not in unique or not d.contains(1)]))]


def squeeze(data, axes=None):
    """The kernel of both versions: a view of ``data`` without the dims that go."""
    named = ints(axes) if axes is not None else ()
    if named:
        rank = data.ndim
        drop = {a % rank for a in named}
        sizes = [n for i, n in enumerate(data.shape) if i not in drop or n != 1]
    else:
        sizes = [n for n in data.shape if n != 1]
    return data.reshape(sizes)



@register
class Squeeze1(Op):
    spec = OpSpec(
        type="Squeeze",
        since=1,
        until=14,
        inputs=INPUTS,
        outputs=OUTPUTS,
        doc="Removes dims of size 1: all of them, or those the axes name.",
        exact=True,
        returns_view=True,  # the plan copies it where the caller must own it
        reshapes=True,
        output_bytes=same_bytes,
    )
    kernel = staticmethod(squeeze)

    @staticmethod
    def infer(ctx):
        return _infer(ctx, skip_means_dynamic=False)


@register
class Squeeze15(Op):
    spec = OpSpec(
        type="Squeeze",
        since=15,
        until=16,
        attrs=(Attr("allow_axis_skip", "bool", default=False,
                    doc="true: a named dynamic dim that may be 1 leaves the output rank dynamic "
                        "(it is dropped only if it is 1 when running)"),),
        inputs=INPUTS,
        outputs=OUTPUTS,
        doc="Removes dims of size 1: all of them, or those the axes name.",
        exact=True,
        returns_view=True,  # the plan copies it where the caller must own it
        reshapes=True,
        output_bytes=same_bytes,
    )

    @staticmethod
    def kernel(data, axes=None, *, allow_axis_skip):
        return squeeze(data, axes)

    @staticmethod
    def infer(ctx):
        return _infer(ctx, skip_means_dynamic=True)

