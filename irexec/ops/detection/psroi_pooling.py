"""PSROIPooling-1 and DeformablePSROIPooling-1: position-sensitive pooling, each output bin read
from its own group of input channels, as OpenVINO's CPU plugin computes it (a ROI whose batch
index is -1 ends the list: it and every later ROI give zeros)."""

from irexec.ir.shape import PartialShape
from irexec.kernels import roi
from irexec.ops.detection.common import REAL_T, RoiTable, positive, positive_scale, roi_count
from irexec.ops.spec import Attr, Input, Op, OpSpec, Output, Rank, TensorType, register

ROIS_DOC = ("[NUM_ROIS, 5]: [batch_id, x_1, y_1, x_2, y_2], batch_id in [0, N-1] (-1 ends the "
            "list)")
ROIS = Input("rois", REAL_T, Rank(exact=2), domain=RoiTable(0, end_marker=True), doc=ROIS_DOC)
PS_ROIS = Input("rois", REAL_T, Rank(exact=2), doc=ROIS_DOC + "; corners in [0, 1] in bilinear "
                                                              "mode",
                domain=RoiTable(0, end_marker=True, normalized=("mode", "bilinear")))
BINS = (Attr("spatial_bins_x", "int", default=1, doc="sub-bins across each bin, positive"),
        Attr("spatial_bins_y", "int", default=1, doc="sub-bins down each bin, positive"))


def _refuses_dynamic(node) -> str | None:
    """OpenVINO's CPU plugin compiles (Deformable)PSROIPooling only with static input shapes."""
    for port in node.inputs:
        shape = port.source.partial_shape if port.source is not None else None
        if shape is None or not shape.is_static:
            return (f"OpenVINO's CPU plugin refuses {node.type} with dynamic input shapes "
                    f"(docs/compatibility.md)")
    return None


def _check_rois(ctx):
    values = ctx.input_value(1)
    data = ctx.input_shape(0)
    if values is not None and data.is_static:
        RoiTable(0, end_marker=True).check(values, data.to_shape(), ctx.attrs)


@register
class PSROIPooling(Op):
    spec = OpSpec(
        type="PSROIPooling",
        numerics="accumulating",
        since=1,
        attrs=(
            Attr("output_dim", "int", doc="output channels, positive"),
            Attr("group_size", "int", default=1,
                 doc="bins along each side of a ROI (the output's height and width), positive"),
            Attr("spatial_scale", "float", doc="multiplies ROI coordinates, positive"),
            Attr("mode", "enum", default="average", values=("average", "bilinear"),
                 doc="average: absolute corners, rounded, each bin averaged; bilinear: "
                     "corners in [0, 1], sub-bins bilinearly sampled"),
            *BINS,
        ),
        inputs=(Input("data", REAL_T, Rank(exact=4),
                      doc="[N, C, H, W]: C = output_dim*group_size^2 (average) or "
                          "output_dim*spatial_bins_x*spatial_bins_y (bilinear)"),
                PS_ROIS),
        outputs=(Output("output", "[NUM_ROIS, output_dim, group_size, group_size]",
                        type=REAL_T),),
        doc="Position-sensitive ROI pooling (R-FCN).",
    )
    openvino_refuses = staticmethod(_refuses_dynamic)

    @staticmethod
    def infer(ctx):
        positive(ctx, "output_dim", "group_size", "spatial_bins_x", "spatial_bins_y")
        positive_scale(ctx)
        a = ctx.attrs
        count = roi_count(ctx, 1, 5)
        data = ctx.input_shape(0)
        if a["mode"] == "average":
            need, how = a["output_dim"] * a["group_size"] ** 2, "output_dim*group_size^2"
        else:
            need = a["output_dim"] * a["spatial_bins_x"] * a["spatial_bins_y"]
            how = "output_dim*spatial_bins_x*spatial_bins_y"
        if data.rank_is_static and not data[1].contains(need):
            ctx.error("IR307", f"data has {data[1]} channels; {a['mode']} mode reads {how} = "
                               f"{need}")
        _check_rois(ctx)
        g = a["group_size"]
        shape = PartialShape([count, a["output_dim"], g, g])
        return [TensorType(ctx.output_element_types(1)[0], shape)]

    @staticmethod
    def kernel(data, rois, *, output_dim, group_size, spatial_scale, mode, spatial_bins_x,
               spatial_bins_y):
        return roi.psroi_pooling(data, rois, output_dim=output_dim, group_size=group_size,
                                 spatial_scale=spatial_scale, mode=mode,
                                 spatial_bins_x=spatial_bins_x, spatial_bins_y=spatial_bins_y)


@register
class DeformablePSROIPooling(Op):
    spec = OpSpec(
        type="DeformablePSROIPooling",
        numerics="accumulating",
        since=1,
        attrs=(
            Attr("output_dim", "int", doc="output channels, positive"),
            Attr("spatial_scale", "float", doc="multiplies ROI coordinates, positive"),
            Attr("group_size", "int", default=1,
                 doc="bins along each side of a ROI (the output's height and width), positive"),
            Attr("mode", "enum", default="bilinear_deformable", values=("bilinear_deformable",),
                 doc="the one mode: each bin averages its bilinearly sampled sub-bins"),
            *BINS,
            Attr("trans_std", "float", default=1.0, doc="multiplies every offset"),
            Attr("part_size", "int", default=1, doc="the offsets' height and width, positive"),
        ),
        inputs=(Input("data", REAL_T, Rank(exact=4),
                      doc="[N, C, H, W]: C at least output_dim*group_size^2"),
                ROIS,
                Input("offsets", REAL_T, Rank(exact=4), optional=True,
                      doc="[NUM_ROIS, 2*classes, part_size, part_size]: each bin's (x, y) shift "
                          "as a fraction of the ROI's size; output_dim a multiple of classes")),
        outputs=(Output("output", "[NUM_ROIS, output_dim, group_size, group_size]",
                        type=REAL_T),),
        doc="Position-sensitive ROI pooling whose bins move by learned offsets.",
    )
    openvino_refuses = staticmethod(_refuses_dynamic)

    @staticmethod
    def infer(ctx):
        positive(ctx, "output_dim", "group_size", "spatial_bins_x", "spatial_bins_y",
                 "part_size")
        positive_scale(ctx)
        a = ctx.attrs
        count = roi_count(ctx, 1, 5)
        data = ctx.input_shape(0)
        need = a["output_dim"] * a["group_size"] ** 2
        if data.rank_is_static and data[1].max is not None and data[1].max < need:
            ctx.error("IR307", f"data has {data[1]} channels; output_dim*group_size^2 = {need} "
                               f"are read")
        if ctx.num_inputs > 2:
            offsets = ctx.input_shape(2)
            if offsets.rank_is_static:
                merged = count.merge(offsets[0])
                if merged is None:
                    ctx.error("IR307", f"offsets has shape {offsets} but there are {count} ROIs;"
                                       f" its first dim must be the ROI count")
                count = merged
                p = a["part_size"]
                if not (offsets[2].contains(p) and offsets[3].contains(p)):
                    ctx.error("IR307", f"offsets has shape {offsets}; its last two dims must be "
                                       f"part_size = {p}")
                if offsets[1].is_static:
                    pairs = offsets[1].min
                    if pairs == 0 or pairs % 2 or a["output_dim"] % (pairs // 2):
                        ctx.error("IR307", f"offsets has {pairs} channels; they must be 2 per "
                                           f"class, and output_dim {a['output_dim']} a multiple "
                                           f"of the class count")
        _check_rois(ctx)
        g = a["group_size"]
        shape = PartialShape([count, a["output_dim"], g, g])
        return [TensorType(ctx.output_element_types(1)[0], shape)]

    @staticmethod
    def kernel(data, rois, offsets=None, *, output_dim, spatial_scale, group_size, mode,
               spatial_bins_x, spatial_bins_y, trans_std, part_size):
        return roi.deformable_psroi_pooling(
            data, rois, offsets, output_dim=output_dim, group_size=group_size,
            spatial_scale=spatial_scale, spatial_bins_x=spatial_bins_x,
            spatial_bins_y=spatial_bins_y, trans_std=trans_std, part_size=part_size)
