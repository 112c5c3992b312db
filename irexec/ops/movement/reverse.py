"""Reverse-1: flip a tensor along some axes, given as axis numbers (``index``) or a mask."""

import functools

import numpy as np

from irexec.diagnostics.codes import ERROR, WARNING, Code
from irexec.kernels.flip import flip
from irexec.kernels.flip_inplace import flip_in_place
from irexec.ops.domains import AxisIndices, AxisMask, as_int64
from irexec.ops.spec import register
from irexec.ops.spec import ANY, BOOLEAN, INTEGER, VECTOR, Attr, ByAttr, Input, Op, OpSpec, Output

AXES = AxisIndices(0)
MASK = AxisMask(0)


def _reverse_in_place(data, axis, *, mode):
    """Reverse written over its input (the run loop proves nothing else sees it)."""
    return flip_in_place(data, _kernel_axes(data, axis, mode))


@register
class Reverse(Op):
    spec = OpSpec(
        type="Reverse",
        since=1,
        until=1,
        attrs=(
            Attr("mode", "enum", values=("index", "mask"),
                 doc="how to read the second input: axis numbers (index) or one boolean per axis "
                     "(mask)"),
        ),
        inputs=(
            Input("data", ANY, doc="the tensor to reverse"),
            Input("axis", ByAttr("mode", {"index": INTEGER, "mask": BOOLEAN}), VECTOR,
                  domain=ByAttr("mode", {"index": AXES, "mask": MASK}),
                  doc="axes to reverse: axis numbers in [-rank, rank-1] (index mode; repeats "
                      "flip once) or a boolean mask with one entry per axis (mask mode)"),
        ),
        outputs=(Output("output", "data reversed along the chosen axes; same type and shape"),),
        doc="Reverses the elements of a tensor along the chosen axes.",
        codes=(
            Code("IR312", "repeated-axes", WARNING,
                 "name each axis once; a repeated axis is flipped once"),
            Code("IR313", "too-many-axes", WARNING, "name at most rank axes"),
            Code("IR314", "mask-length", ERROR, "give the mask one boolean per axis of the data"),
        ),
        exact=True,
        in_place=_reverse_in_place,
    )

    @staticmethod
    def infer(ctx):
        data = ctx.input_type(0)
        rank = data.shape.rank
        if not rank.is_static:
            return [data]
        if ctx.attrs["mode"] == "mask":
            axes = ctx.input_type(1).shape
            if axes.rank_is_static and not axes[0].contains(rank.min):
                ctx.error("IR314", MASK.message(axes[0], rank.min))
            return [data]
        values = ctx.input_value(1)
        if values is not None:
            unique = _axes(values.tobytes(), values.dtype, rank.min) if values.size <= 16 \
                else _normalize(values, rank.min)
            if values.size > rank.min:
                ctx.warn("IR313", f"{values.size} axes are named for data of rank {rank.min}; "
                                  f"the specification allows at most {rank.min}")
            elif len(unique) < values.size:
                ctx.warn("IR312", f"axes {values.reshape(-1).tolist()} name the same axis more "
                                  f"than once; it is flipped once")
        return [data]

    @staticmethod
    def kernel(data, axis, *, mode):
        return flip(data, _kernel_axes(data, axis, mode))

    @staticmethod
    def openvino_refuses(node):
        source = node.inputs[0].source
        if source is not None and source.element_type is not None \
                and source.element_type.name == "string":
            return "OpenVINO's CPU plugin aborts the process after Reverse on strings " \
                   "(docs/compatibility.md)"
        return None


def _normalize(values: np.ndarray, rank: int) -> tuple[int, ...]:
    """Axis numbers -> sorted unique non-negative axes; OpError IR306 for one out of range."""
    AXES.check(values, (0,) * rank, {})
    return tuple(sorted({int(a) % rank for a in as_int64(values)})) if rank else ()


@functools.lru_cache(maxsize=256)
def _axes(raw: bytes, dtype: np.dtype, rank: int) -> tuple[int, ...]:
    """The axes are nearly always a small constant: normalize each distinct one once."""
    return _normalize(np.frombuffer(raw, dtype), rank)


def _kernel_axes(data, axis, mode) -> tuple[int, ...]:
    """The kernel's axes: sorted, unique, non-negative (the spec's checks held already)."""
    if mode == "mask":
        return tuple(int(i) for i in np.flatnonzero(axis))
    if axis.size <= 16:
        return _axes(axis.tobytes(), axis.dtype, data.ndim)
    return _normalize(axis, data.ndim)
