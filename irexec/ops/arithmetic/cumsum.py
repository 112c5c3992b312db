"""CumSum-3: running sums along an axis (inclusive or exclusive, forward or reversed)."""

import numpy as np

from irexec.ir.element_type import from_dtype
from irexec.ir.shape_rules import normalize_axis
from irexec.errors import OpError
from irexec.ops import rules
from irexec.ops.domains import as_int64
from irexec.ops.spec import register
from irexec.ops.spec import INTEGER, NUMERIC, SCALAR, Attr, Input, Op, OpSpec, Output, TypeVar

T = TypeVar("T", NUMERIC)


def _axis(axis, rank) -> int:
    values = as_int64(np.asarray(axis))
    if values.size != 1:
        raise OpError(f"axis holds {values.size} values; it must be a scalar", code="IR305")
    return normalize_axis(int(values[0]), rank)


@register
class CumSum(Op):
    spec = OpSpec(
        type="CumSum",
        since=3,
        until=16,
        attrs=(Attr("exclusive", "bool", default=False,
                    doc="leave each element out of its own sum (the first sum is 0)"),
               Attr("reverse", "bool", default=False, doc="sum from the end of the axis")),
        inputs=(Input("data", T, doc="the tensor to sum"),
                Input("axis", INTEGER, SCALAR, optional=True,
                      doc="the axis, in [-rank, rank-1]; 0 when absent")),
        outputs=(Output("output", "the running sums; same shape", type=T),),
        shape=rules.same_as(0),
        doc="Cumulative sums along an axis, accumulated one element after another in the data's "
            "element type (integers wrap); f16 and bf16 accumulate in f32 and round each sum "
            "once, as OpenVINO's CPU plugin does.",
    )

    @staticmethod
    def infer(ctx):
        data = ctx.input_shape(0)
        if ctx.num_inputs > 1 and data.rank_is_static:
            value = ctx.input_value(1)
            if value is not None:
                try:
                    _axis(value, len(data))
                except OpError as e:
                    ctx.error(e.code, str(e))
        return ctx.default_outputs()

    @staticmethod
    def kernel(data, axis=None, *, exclusive, reverse):
        if data.ndim == 0:
            return np.zeros_like(data) if exclusive else data.copy()
        a = 0 if axis is None else _axis(axis, data.ndim)
        x = np.flip(data, a) if reverse else data
        narrow = data.dtype.itemsize < 4 and from_dtype(data.dtype).is_real  # f16, bf16, f8
        wide = np.float32 if narrow else data.dtype
        out = np.cumsum(x, axis=a, dtype=wide)
        if wide is not data.dtype:
            out = out.astype(data.dtype)
        if exclusive:
            out = np.roll(out, 1, axis=a)
            out[(slice(None),) * a + (0,)] = 0
        return np.ascontiguousarray(np.flip(out, a)) if reverse else out
