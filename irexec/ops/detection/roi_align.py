"""ROIAlign-3, ROIAlign-9 and ROIAlignRotated-15: bins of each ROI filled by averaging (or taking
the largest of) bilinearly interpolated sample points of the feature map."""

from irexec.ir.shape import PartialShape
from irexec.kernels import roi
from irexec.ops.detection.common import REAL_T, dim, positive, positive_scale, roi_count
from irexec.ops.domains import IndexRange
from irexec.ops.spec import (INTEGER, Attr, Input, Op, OpSpec, Output, Rank, TensorType,
                             register)

POOLED = (Attr("pooled_h", "int", doc="the output's height in bins, positive"),
          Attr("pooled_w", "int", doc="the output's width in bins, positive"),
          Attr("sampling_ratio", "int",
               doc="sample points per bin along each axis; 0: ceil(bin size) of each ROI"),
          Attr("spatial_scale", "float",
               doc="multiplies the ROI coordinates into the feature map's, positive"))
MODE = Attr("mode", "enum", values=("avg", "max"),
            doc="avg: the mean of a bin's samples; max: the largest (never below 0, as OpenVINO)")


def _inputs(width: int, what: str):
    return (Input("data", REAL_T, Rank(exact=4), doc="[N, C, H, W] feature maps"),
            Input("rois", REAL_T, Rank(exact=2), doc=f"[NUM_ROIS, {width}]: {what}"),
            Input("batch_indices", INTEGER, Rank(exact=1),
                  domain=IndexRange(0, negative=False),
                  doc="[NUM_ROIS]: the image of data each ROI lies on, in [0, N-1]"))


OUTPUT = (Output("output", "[NUM_ROIS, C, pooled_h, pooled_w]", type=REAL_T),)


def infer(ctx, width: int):
    positive(ctx, "pooled_h", "pooled_w")
    if ctx.attrs["sampling_ratio"] < 0:
        ctx.error("IR302", f"sampling_ratio is {ctx.attrs['sampling_ratio']}; it must be 0 "
                           f"(adaptive) or a positive integer")
    positive_scale(ctx)
    count = roi_count(ctx, 1, width)
    indices = ctx.input_shape(2)
    if indices.rank_is_static:
        merged = count.merge(indices[0])
        if merged is None:
            ctx.error("IR307", f"rois has {count} rows but batch_indices has {indices[0]} "
                               f"entries; give one batch index per ROI")
        count = merged
    data = ctx.input_shape(0)
    values = ctx.input_value(2)
    if values is not None and data.rank_is_static and data[0].is_static:
        IndexRange(0, negative=False).check(values, data.to_shape() if data.is_static
                                            else (data[0].min,), ctx.attrs)
    shape = PartialShape([count, dim(data, 1), ctx.attrs["pooled_h"], ctx.attrs["pooled_w"]])
    return [TensorType(ctx.output_element_types(1)[0], shape)]


@register
class ROIAlign3(Op):
    spec = OpSpec(
        type="ROIAlign",
        numerics="accumulating",
        since=3,
        until=8,
        attrs=(*POOLED, MODE),
        inputs=_inputs(4, "boxes [x_1, y_1, x_2, y_2], each side at least 1 after scaling"),
        outputs=OUTPUT,
        doc="Pools each ROI's bins from bilinear samples (the asymmetric coordinates of v3).",
    )

    @staticmethod
    def infer(ctx):
        return infer(ctx, 4)

    @staticmethod
    def kernel(data, rois, batch_indices, *, pooled_h, pooled_w, sampling_ratio, spatial_scale,
               mode):
        return roi.roi_align(data, rois, batch_indices, pooled_h=pooled_h, pooled_w=pooled_w,
                             sampling_ratio=sampling_ratio, spatial_scale=spatial_scale,
                             mode=mode)


@register
class ROIAlign9(Op):
    spec = OpSpec(
        type="ROIAlign",
        numerics="accumulating",
        since=9,
        attrs=(*POOLED, MODE,
               Attr("aligned_mode", "enum", default="asymmetric",
                    values=("asymmetric", "half_pixel_for_nn", "half_pixel"),
                    doc="asymmetric: x*scale, sides at least 1; half_pixel_for_nn: x*scale - "
                        "0.5; half_pixel: (x + 0.5)*scale - 0.5")),
        inputs=_inputs(4, "boxes [x_1, y_1, x_2, y_2]"),
        outputs=OUTPUT,
        doc="Pools each ROI's bins from bilinear samples, with a choice of pixel alignment.",
    )

    @staticmethod
    def infer(ctx):
        return infer(ctx, 4)

    @staticmethod
    def kernel(data, rois, batch_indices, *, pooled_h, pooled_w, sampling_ratio, spatial_scale,
               mode, aligned_mode):
        return roi.roi_align(data, rois, batch_indices, pooled_h=pooled_h, pooled_w=pooled_w,
                             sampling_ratio=sampling_ratio, spatial_scale=spatial_scale,
                             mode=mode, aligned_mode=aligned_mode)


@register
class ROIAlignRotated(Op):
    spec = OpSpec(
        type="ROIAlignRotated",
        numerics="accumulating",
        since=15,
        attrs=(*POOLED,
               Attr("clockwise_mode", "bool", default=False,
                    doc="true: the angles turn clockwise; false: counterclockwise")),
        inputs=_inputs(5, "boxes [center_x, center_y, width, height, angle in radians]"),
        outputs=OUTPUT,
        doc="Averages bilinear samples over the bins of rotated ROIs (centers shifted by -0.5).",
    )

    @staticmethod
    def infer(ctx):
        return infer(ctx, 5)

    @staticmethod
    def kernel(data, rois, batch_indices, *, pooled_h, pooled_w, sampling_ratio, spatial_scale,
               clockwise_mode):
        return roi.roi_align(data, rois, batch_indices, pooled_h=pooled_h, pooled_w=pooled_w,
                             sampling_ratio=sampling_ratio, spatial_scale=spatial_scale,
                             rotated=True, clockwise=clockwise_mode)
