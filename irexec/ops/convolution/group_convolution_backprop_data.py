"""GroupConvolutionBackpropData-1: transposed convolution of G channel groups."""

from irexec.ops import windows
from irexec.ops.convolution import common
from irexec.ops.spec import register
from irexec.ops.spec import INTEGER, VECTOR, Input, Op, OpSpec, Output, Rank, TypeVar

T = TypeVar("T", windows.ARITH)


@register
class GroupConvolutionBackpropData(Op):
    spec = OpSpec(
        type="GroupConvolutionBackpropData",
        since=1,
        until=16,
        attrs=(
            windows.strides(),
            windows.pads("pads_begin", True, "cut from the start of"),
            windows.pads("pads_end", True, "cut from the end of"),
            windows.dilations(),
            windows.auto_pad(),
            common.OUTPUT_PADDING,
        ),
        scratch=common.backward_scratch(grouped=True),
        inputs=(
            Input("data", T, Rank(min=3, max=5),
                  doc="[N, G * C_IN, *spatial]: 1 to 3 spatial axes"),
            Input("filters", T, Rank(min=4, max=6),
                  doc="[G, C_IN, C_OUT, *kernel], rank of the data + 1"),
            Input("output_shape", INTEGER, VECTOR, optional=True,
                  doc="the output's spatial sizes (as in ConvolutionBackpropData)"),
        ),
        outputs=(Output("output", "[N, G * C_OUT, *out] (sizes as in "
                                  "ConvolutionBackpropData)", type=T),),
        doc="ConvolutionBackpropData of G channel groups, each with its own weights.",
    )

    @staticmethod
    def infer(ctx):
        return common.infer_backward(ctx, grouped=True)

    @staticmethod
    def kernel(data, filters, output_shape=None, *, strides, pads_begin, pads_end, dilations,
               auto_pad, output_padding):
        return common.run_backward(data, filters, output_shape, strides, dilations, pads_begin,
                                   pads_end, auto_pad, output_padding)
