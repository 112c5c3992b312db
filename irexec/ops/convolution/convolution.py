"""Convolution-1: 1-D, 2-D or 3-D convolution (cross-correlation) of data with weights."""

from irexec.ops import windows
from irexec.ops.convolution import common
from irexec.ops.spec import register
from irexec.ops.spec import Input, Op, OpSpec, Output, Rank, TypeVar

T = TypeVar("T", windows.ARITH)


@register
class Convolution(Op):
    spec = OpSpec(
        type="Convolution",
        numerics="accumulating",
        since=1,
        until=16,
        attrs=(
            windows.strides(),
            windows.pads("pads_begin", True, "before"),
            windows.pads("pads_end", True, "after"),
            windows.dilations(),
            windows.auto_pad(),
        ),
        scratch=common.forward_scratch(grouped=False),
        inputs=(
            Input("data", T, Rank(min=3, max=5), doc="[N, C_IN, *spatial]: 1 to 3 spatial axes"),
            Input("filters", T, Rank(min=3, max=5),
                  doc="[C_OUT, C_IN, *kernel], of the data's rank"),
        ),
        outputs=(Output("output", "[N, C_OUT, *out]: each window's dot product with each "
                                  "output channel's weights", type=T),),
        doc="Slides the weights over the data's spatial axes (strides, dilations, padding) "
            "and sums the products in each window.",
    )

    @staticmethod
    def infer(ctx):
        return common.infer_forward(ctx, grouped=False)

    @staticmethod
    def kernel(data, filters, *, strides, pads_begin, pads_end, dilations, auto_pad):
        return common.run_forward(data, common.as_grouped(filters), strides, dilations,
                                  pads_begin, pads_end, auto_pad)
