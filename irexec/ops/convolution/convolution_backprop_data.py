"""ConvolutionBackpropData-1: transposed convolution (the gradient of Convolution with respect
to its data)."""

from irexec.ops import windows
from irexec.ops.convolution import common
from irexec.ops.spec import register
from irexec.ops.spec import INTEGER, VECTOR, Input, Op, OpSpec, Output, Rank, TypeVar

T = TypeVar("T", windows.ARITH)


@register
class ConvolutionBackpropData(Op):
    spec = OpSpec(
        type="ConvolutionBackpropData",
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
        scratch=common.backward_scratch(grouped=False),
        inputs=(
            Input("data", T, Rank(min=3, max=5), doc="[N, C_IN, *spatial]: 1 to 3 spatial axes"),
            Input("filters", T, Rank(min=3, max=5),
                  doc="[C_IN, C_OUT, *kernel], of the data's rank"),
            Input("output_shape", INTEGER, VECTOR, optional=True,
                  doc="the output's spatial sizes; then pads_begin/pads_end are ignored "
                      "unless auto_pad is explicit, and same_upper/same_lower split the "
                      "padding"),
        ),
        outputs=(Output("output", "[N, C_OUT, *out]: out = stride*(in-1) + dilated kernel - "
                                  "pads + output_padding, or output_shape", type=T),),
        doc="Spreads each data element over a window of the output, weighted by the kernel: "
            "the transpose of Convolution.",
    )

    @staticmethod
    def infer(ctx):
        return common.infer_backward(ctx, grouped=False)

    @staticmethod
    def kernel(data, filters, output_shape=None, *, strides, pads_begin, pads_end, dilations,
               auto_pad, output_padding):
        return common.run_backward(data, common.as_grouped(filters), output_shape, strides,
                                   dilations, pads_begin, pads_end, auto_pad, output_padding)
