"""ROIPooling-1 (in opset2 and later): max pooling over the bins of each ROI rounded onto the
feature map, or bilinear interpolation at one point per bin of a normalized ROI."""

from irexec.ir.shape import PartialShape
from irexec.kernels import roi
from irexec.ops.detection.common import REAL_T, RoiTable, dim, positive_scale, roi_count
from irexec.ops.spec import Attr, Input, Op, OpSpec, Output, Rank, TensorType, register


@register
class ROIPooling(Op):
    spec = OpSpec(
        type="ROIPooling",
        numerics="accumulating",
        since=2,
        attrs=(
            Attr("pooled_h", "int", doc="the output's height in bins, at least 0"),
            Attr("pooled_w", "int", doc="the output's width in bins, at least 0"),
            Attr("spatial_scale", "float", doc="the feature map's size over the image's, "
                                               "positive"),
            Attr("method", "enum", default="max", values=("max", "bilinear"),
                 doc="max: the largest value of each bin (0 for an empty one); bilinear: ROI "
                     "corners in [0, 1], one interpolated point per bin"),
            Attr("output_size", "uint_list", default=(), omit_empty=True,
                 doc="[pooled_h, pooled_w] as OpenVINO also writes them; pooled_h and pooled_w "
                     "decide"),
            Attr("output_roi", "uint_list", default=(), omit_empty=True,
                 doc="written by OpenVINO beside output_size; not read"),
        ),
        inputs=(
            Input("data", REAL_T, Rank(exact=4), doc="[N, C, H, W] feature maps"),
            Input("rois", REAL_T, Rank(exact=2),
                  domain=RoiTable(0, normalized=("method", "bilinear")),
                  doc="[NUM_ROIS, 5]: [batch_id, x_1, y_1, x_2, y_2], batch_id in [0, N-1]"),
        ),
        outputs=(Output("output", "[NUM_ROIS, C, pooled_h, pooled_w]", type=REAL_T),),
        doc="Pools every ROI to a fixed number of bins.",
    )

    @staticmethod
    def infer(ctx):
        for name in ("pooled_h", "pooled_w"):
            if ctx.attrs[name] < 0:
                ctx.error("IR302", f"{name} is {ctx.attrs[name]}; it must be at least 0")
        positive_scale(ctx)
        count = roi_count(ctx, 1, 5)
        data = ctx.input_shape(0)
        values = ctx.input_value(1)
        if values is not None and data.is_static:
            RoiTable(0).check(values, data.to_shape(), ctx.attrs)
        shape = PartialShape([count, dim(data, 1), ctx.attrs["pooled_h"],
                              ctx.attrs["pooled_w"]])
        return [TensorType(ctx.output_element_types(1)[0], shape)]

    @staticmethod
    def kernel(data, rois, *, pooled_h, pooled_w, spatial_scale, method, output_size=(),
               output_roi=()):
        return roi.roi_pooling(data, rois, pooled_h=pooled_h, pooled_w=pooled_w,
                               spatial_scale=spatial_scale, method=method)
