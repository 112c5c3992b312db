"""GroupConvolution-1: the channels split into groups, each convolved with its own weights
(depthwise when every group has one input channel)."""

from irexec.ops import windows
from irexec.ops.convolution import common
from irexec.ops.spec import register
from irexec.ops.spec import Input, Op, OpSpec, Output, Rank, TypeVar

T = TypeVar("T", windows.ARITH)


@register
class GroupConvolution(Op):
    spec = OpSpec(
        type="GroupConvolution",
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
        scratch=common.forward_scratch(grouped=True),
        inputs=(
            Input("data", T, Rank(min=3, max=5),
                  doc="[N, G * C_IN, *spatial]: 1 to 3 spatial axes"),
            Input("filters", T, Rank(min=4, max=6),
                  doc="[G, C_OUT, C_IN, *kernel]: one set of weights per group, rank of the "
                      "data + 1"),
        ),
        outputs=(Output("output", "[N, G * C_OUT, *out]: group g's outputs convolve only "
                                  "group g's input channels", type=T),),
        doc="Convolution of G channel groups, each with its own weights.",
    )

    @staticmethod
    def infer(ctx):
        return common.infer_forward(ctx, grouped=True)

    @staticmethod
    def kernel(data, filters, *, strides, pads_begin, pads_end, dilations, auto_pad):
        return common.run_forward(data, filters, strides, dilations, pads_begin, pads_end,
                                  auto_pad)
