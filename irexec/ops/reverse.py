"""Reverse-1: flip a tensor along some axes, given as axis numbers (``index``) or a mask."""

import functools

import numpy as np

from irexec.errors import OpError
from irexec.ir.element_type import plain_values
from irexec.kernels.flip import flip
from irexec.kernels.flip_inplace import flip_in_place
from irexec.ops.registry import register
from irexec.ops.spec import (ANY, BOOLEAN, INTEGER, Attr, ByAttr, AxisIndices, AxisMask, Input, Op,
                             OpSpec, Output, Rank)


def _normalize_axes(axes: np.ndarray, rank: int) -> tuple[int, ...]:
    """Axis numbers -> sorted unique non-negative axes; OpError names the first one out of range.

    Unsigned values are read as signed 64-bit, as OpenVINO does (u64 2**64-1 is -1).
    """
    values = plain_values(axes).reshape(-1)
    if values.dtype.kind == "u":
        values = values.astype(np.uint64).view(np.int64)
    else:
        values = values.astype(np.int64)
    bad = values[(values < -rank) | (values >= rank)]
    if bad.size:
        allowed = f"[-{rank}, {rank - 1}]" if rank else "nothing: a scalar has no axes"
        raise OpError(f"axis {int(bad[0])} is out of range {allowed} for data of rank {rank}",
                      code="IR306")
    return tuple(sorted({int(a) % rank for a in values})) if rank else ()


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
            Input("axis", ByAttr("mode", {"index": INTEGER, "mask": BOOLEAN}), Rank(exact=1),
                  domain=ByAttr("mode", {"index": AxisIndices(0), "mask": AxisMask(0)}),
                  doc="axes to reverse: axis numbers in [-rank, rank-1] (index mode; repeats "
                      "flip once) or a boolean mask with one entry per axis (mask mode)"),
        ),
        outputs=(Output("output", "data reversed along the chosen axes; same type and shape"),),
        doc="Reverses the elements of a tensor along the chosen axes.",
    )

    @staticmethod
    def infer(ctx):
        data, axes = ctx.input_type(0), ctx.input_type(1)
        rank = data.shape.rank
        if ctx.attrs["mode"] == "mask":
            if rank.is_static and axes.shape.rank_is_static:
                if not axes.shape[0].contains(rank.min):
                    ctx.error("IR314", f"the mask has {axes.shape[0]} entries but data has rank "
                                       f"{rank.min}; mask mode needs one entry per axis")
        else:
            values = ctx.input_value(1)
            if values is not None and rank.is_static:
                try:
                    unique = (_cached_axes(values.tobytes(), values.dtype, rank.min)
                              if values.size <= 16 else _normalize_axes(values, rank.min))
                except OpError as e:
                    ctx.error(e.code or "IR308", str(e))
                if values.size > rank.min:
                    ctx.warn("IR313", f"{values.size} axes are named for data of rank "
                                      f"{rank.min}; the specification allows at most {rank.min}")
                elif len(unique) < values.size:
                    ctx.warn("IR312", f"axes {values.reshape(-1).tolist()} name the same axis "
                                      f"more than once; it is flipped once")
        return [data]

    @staticmethod
    def kernel(data, axis, *, mode):
        return flip(data, _kernel_axes(data, axis, mode))

    @staticmethod
    def kernel_in_place(data, axis, *, mode):
        return flip_in_place(data, _kernel_axes(data, axis, mode))


def _kernel_axes(data, axis, mode) -> tuple[int, ...]:
    """The kernel's axes: sorted, unique, non-negative."""
    if mode == "mask":
        if axis.shape != (data.ndim,):  # only dynamic shapes get here unchecked
            raise OpError(f"the mask has {axis.size} entries but data has rank {data.ndim}; "
                          f"mask mode needs one entry per axis", code="IR314")
        axes = tuple(int(i) for i in np.flatnonzero(axis))
    elif axis.size <= 16:
        # The axes are nearly always a small constant: normalize each distinct one once.
        axes = _cached_axes(axis.tobytes(), axis.dtype, data.ndim)
    else:
        axes = _normalize_axes(axis, data.ndim)
    return axes


@functools.lru_cache(maxsize=256)
def _cached_axes(raw: bytes, dtype: np.dtype, rank: int) -> tuple[int, ...]:
    return _normalize_axes(np.frombuffer(raw, dtype), rank)
