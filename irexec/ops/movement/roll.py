"""Roll-7: shift the elements of a tensor along axes, those pushed past the end coming back at
the start (``numpy.roll``).

``shift`` and ``axes`` have one value each per shifted axis, or ``shift`` is a scalar (a 0-D
tensor) that every axis takes. An axis named twice is shifted by the sum of its shifts (as numpy
does).
"""

from __future__ import annotations

from irexec.errors import OpError
from irexec.ir.shape_rules import normalize_axes
from irexec.kernels import buffers
from irexec.ops.domains import AxisIndices, SmallInts
from irexec.ops.openvino_cpu import refuses
from irexec.ops.spec import register
from irexec.ops.spec import (ANY, SCALAR_OR_VECTOR, SHAPE_INDEX, Input, Op, OpSpec, Output,
                             TypeVar)
from irexec.ops.values import ints

T = TypeVar("T", ANY)


def shifts(shift: tuple[int, ...], scalar: bool, axes: tuple[int, ...]) -> tuple[int, ...]:
    """One shift per axis: a scalar shift repeated, else shift and axes of one length (IR307)."""
    if scalar:
        return shift * len(axes)
    if len(shift) != len(axes):
        raise OpError(f"shift has {len(shift)} values but axes {len(axes)}; a 1-D shift gives one "
                      f"value per axis (a scalar shift serves them all)", code="IR307")
    return shift


@register
class Roll(Op):
    spec = OpSpec(
        type="Roll",
        since=7,
        until=16,
        inputs=(
            Input("data", T, doc="the tensor to roll"),
            Input("shift", SHAPE_INDEX, SCALAR_OR_VECTOR, domain=SmallInts(0, -3, 3),
                  doc="the shift per axis (negative: toward the start), or a scalar for all"),
            Input("axes", SHAPE_INDEX, SCALAR_OR_VECTOR, domain=AxisIndices(0),
                  doc="the axes to roll, in [-rank, rank-1]; one named twice rolls by the sum"),
        ),
        outputs=(Output("output", "the data rolled; same shape", type=T),),
        doc="Shifts elements along axes, wrapping around (numpy.roll).",
        exact=True,
    )
    openvino_refuses = refuses()

    @staticmethod
    def infer(ctx):
        data = ctx.input_type(0)
        shift_v, axes_v = ctx.input_value(1), ctx.input_value(2)
        n_shift, n_axes = ctx.input_shape(1), ctx.input_shape(2)
        if n_shift.rank_is_static and len(n_shift) == 1 and n_shift[0].is_static \
                and n_axes.rank_is_static and n_axes.is_static:
            count = n_axes[0].min if len(n_axes) else 1
            shifts((0,) * n_shift[0].min, False, (0,) * count)
        if axes_v is not None:
            axes = ints(axes_v)
            if data.shape.rank_is_static:
                normalize_axes(axes, len(data.shape))
            if shift_v is not None:
                shifts(ints(shift_v), shift_v.ndim == 0, axes)
        return [data]

    @staticmethod
    def kernel(data, shift, axes):
        named = ints(axes)
        total = {}
        for a, s in zip(named, shifts(ints(shift), shift.ndim == 0, named)):
            a %= data.ndim
            total[a] = total.get(a, 0) + s
        out = buffers.empty(data.shape, data.dtype)
        # Each output block is one input block: 2 choices per rolled axis.
        moves = [(a, s % data.shape[a]) for a, s in total.items() if data.shape[a]]
        pieces = [((), ())]
        for a, s in moves:
            n = data.shape[a]
            pieces = [(dst + ((a, slice(s, n)),), src + ((a, slice(0, n - s)),))
                      for dst, src in pieces] + \
                     [(dst + ((a, slice(0, s)),), src + ((a, slice(n - s, n)),))
                      for dst, src in pieces]
        for dst, src in pieces:
            d = [slice(None)] * data.ndim
            r = [slice(None)] * data.ndim
            for a, sl in dst:
                d[a] = sl
            for a, sl in src:
                r[a] = sl
            out[tuple(d)] = data[tuple(r)]
        return out
