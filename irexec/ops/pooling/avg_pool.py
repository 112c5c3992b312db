"""AvgPool-1, AvgPool-14 and AvgPool-16: the mean of each window (14 adds the ceil_torch
rounding, 16 dilations)."""

from irexec.kernels import pool
from irexec.ops import windows
from irexec.ops.pooling import common
from irexec.ops.spec import register
from irexec.ops.spec import Attr, Input, Op, OpSpec, Output, Rank, TensorType, TypeVar

T = TypeVar("T", windows.ARITH)
DATA = Input("data", T, Rank(min=3, max=5), doc="[N, C, *spatial]: 1 to 3 spatial axes")
OUTPUT = Output("output", "[N, C, *out]: the mean of each window (integers round to nearest)",
                type=T)
EXCLUDE_PAD = Attr("exclude-pad", "bool",
                   doc="average over the data's elements only (true), or count padding as "
                       "zeros (false)")


def _attrs(rounding, dilations=False):
    return (
        windows.strides(),
        windows.pads("pads_begin", False, "before"),
        windows.pads("pads_end", False, "after"),
        common.KERNEL,
        EXCLUDE_PAD,
        windows.rounding_type(rounding),
        windows.auto_pad(),
        *((windows.dilations(default=(), doc="the distance between kernel taps on each "
                                             "spatial axis (at least 1; none given means 1)"),)
          if dilations else ()),
    )


class _AvgPool(Op):
    @staticmethod
    def infer(ctx):
        return [TensorType(ctx.output_element_types(1)[0], common.spatial_shape(ctx))]

    @staticmethod
    def kernel(data, **attrs):
        kernel, strides, dil, pb, pe, out = common.geometry(data, attrs)
        return pool.avg_pool(data, kernel, strides, dil, pb, pe, out, attrs["exclude-pad"])


@register
class AvgPool1(_AvgPool):
    spec = OpSpec(type="AvgPool", numerics="accumulating", since=1, until=13, attrs=_attrs(("floor", "ceil")),
                  inputs=(DATA,), outputs=(OUTPUT,),
                  doc="The mean of each window over the spatial axes.")


@register
class AvgPool14(_AvgPool):
    spec = OpSpec(type="AvgPool", numerics="accumulating", since=14, until=15,
                  attrs=_attrs(("floor", "ceil", "ceil_torch")), inputs=(DATA,),
                  outputs=(OUTPUT,),
                  doc="The mean of each window (PyTorch's ceil_torch rounding too).")


@register
class AvgPool16(_AvgPool):
    spec = OpSpec(type="AvgPool", numerics="accumulating", since=16, until=16,
                  attrs=_attrs(("floor", "ceil", "ceil_torch"), dilations=True),
                  inputs=(DATA,), outputs=(OUTPUT,),
                  doc="The mean of each window, with dilated windows.")
