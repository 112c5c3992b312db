"""ExperimentalDetectronROIFeatureExtractor-6: ROIAlign on a feature pyramid (Detectron's FPN).

Each box goes to the level ``floor(2 + log2(sqrt(area) / 224 + 1e-6))``, clamped to the levels
there are (a box of no area goes to none: its features are 0). On its level it is pooled to
``output_size`` x ``output_size`` bins by ROIAlign at scale ``1 / pyramid_scales[level]``: each bin
averages a grid of ``sampling_ratio`` (or, when 0, ``ceil(bin size)``) bilinear samples; samples
beyond a pixel outside the map count 0. ``aligned`` shifts the box by half a pixel. The boxes
come out in their input order, and the second output is the boxes themselves. Computed in f32.
"""

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.detection.proposal_common import F32, merge_dim
from irexec.ops.spec import (
    REAL,
    Attr,
    Input,
    Op,
    OpSpec,
    Output,
    Rank,
    TensorType,
    TypeVar,
    register,
)

T = TypeVar("T", REAL)


def levels_of(rois: np.ndarray, levels: int) -> np.ndarray:
    """The pyramid level of each box; ``levels`` (no level) for a box of no area."""
    x0, y0, x1, y1 = (rois[:, i] for i in range(4))
    area = (x1 - x0) * (y1 - y0)
    with np.errstate(invalid="ignore", divide="ignore"):
        level = np.floor(np.log2(np.sqrt(area) / F32(224) + F32(1e-6)) + F32(2))
    level = np.clip(np.nan_to_num(level, nan=0, posinf=levels - 1, neginf=0), 0, levels - 1)
    return np.where(area > 0, level, levels).astype(np.int64)


def roi_align_one(fmap, box, scale, pooled, sampling_ratio, aligned):
    """One box pooled from ``fmap`` [C, H, W]: [C, pooled, pooled], in OpenVINO's f32 steps."""
    height, width = fmap.shape[1:]
    offset = F32(0.5) if aligned else F32(0)
    start_w, start_h, end_w, end_h = (box[i] * scale - offset for i in range(4))
    roi_w = max(end_w - start_w, F32(1))
    roi_h = max(end_h - start_h, F32(1))
    bin_h = roi_h / F32(pooled)
    bin_w = roi_w / F32(pooled)
    grid_h = sampling_ratio if sampling_ratio > 0 else int(np.ceil(roi_h / F32(pooled)))
    grid_w = sampling_ratio if sampling_ratio > 0 else int(np.ceil(roi_w / F32(pooled)))
    p = np.arange(pooled, dtype=F32)
    iy = np.arange(grid_h, dtype=F32) + F32(0.5)
    ix = np.arange(grid_w, dtype=F32) + F32(0.5)
    y = (start_h + p[:, None] * bin_h) + iy[None, :] * bin_h / F32(grid_h)  # [ph, iy]
    x = (start_w + p[:, None] * bin_w) + ix[None, :] * bin_w / F32(grid_w)  # [pw, ix]

    def axis(v, size):
        outside = (v < F32(-1)) | (v > F32(size))
        v = np.maximum(v, F32(0))
        low = v.astype(np.int64)
        top = low >= size - 1
        low = np.where(top, size - 1, low)
        high = np.where(top, size - 1, low + 1)
        v = np.where(top, low.astype(F32), v)
        frac = (v - low.astype(F32)).astype(F32)
        return outside, low, high, frac, (F32(1) - frac).astype(F32)

    oy, yl, yh, ly, hy = axis(y, height)
    ox, xl, xh, lx, hx = axis(x, width)
    # [ph, iy, pw, ix] sample grids
    out_of_map = oy[:, :, None, None] | ox[None, None, :, :]
    w1 = hy[:, :, None, None] * hx[None, None]
    w2 = hy[:, :, None, None] * lx[None, None]
    w3 = ly[:, :, None, None] * hx[None, None]
    w4 = ly[:, :, None, None] * lx[None, None]
    w1, w2, w3, w4 = (np.where(out_of_map, F32(0), wt) for wt in (w1, w2, w3, w4))

    def gather(yi, xi):
        return fmap[:, yi[:, :, None, None], xi[None, None, :, :]]  # [C, ph, iy, pw, ix]

    values = (w1 * gather(yl, xl) + w2 * gather(yl, xh)) + w3 * gather(yh, xl) \
        + w4 * gather(yh, xh)
    values = np.where(out_of_map, F32(0), values)
    total = values.sum(axis=(2, 4), dtype=F32)
    return (total / F32(grid_h * grid_w)).astype(F32)


def _infer(ctx):
    attrs = ctx.attrs
    if attrs["output_size"] <= 0:
        ctx.error("IR302", f"output_size is {attrs['output_size']}; it must be positive")
    if attrs["sampling_ratio"] < 0:
        ctx.error("IR302", f"sampling_ratio is {attrs['sampling_ratio']}; it must not be "
                           f"negative")
    levels = ctx.num_inputs - 1
    if len(attrs["pyramid_scales"]) < levels:
        ctx.error("IR302", f"pyramid_scales has {len(attrs['pyramid_scales'])} values for "
                           f"{levels} feature maps; it needs one per map")
    if any(s <= 0 for s in attrs["pyramid_scales"]):
        ctx.error("IR302", f"pyramid_scales {list(attrs['pyramid_scales'])} must be positive")
    rois = ctx.input_shape(0)
    count = rois[0] if rois.rank_is_static else Dimension.dynamic()
    if rois.rank_is_static and rois[1].is_static and rois[1].min != 4:
        ctx.error("IR307", f"input_rois' last dim is {rois[1]}; it must be 4")
    channels = Dimension.dynamic()
    try:
        for i in range(1, ctx.num_inputs):
            shape = ctx.input_shape(i)
            if shape.rank_is_static:
                if shape[0].is_static and shape[0].min != 1:
                    raise OpError(f"feature map {i - 1} has a batch of {shape[0]}; the "
                                  f"extractor takes one image (batch 1)", code="IR307")
                channels = merge_dim(channels, shape[1], "the channels of the feature maps")
    except OpError as e:
        ctx.error(e.code, str(e))
    size = Dimension.static(attrs["output_size"])
    et = ctx.type_var("T")
    return [TensorType(et, PartialShape([count, channels, size, size])),
            TensorType(et, PartialShape([count, Dimension.static(4)]))]


@register
class ExperimentalDetectronROIFeatureExtractor(Op):
    spec = OpSpec(
        type="ExperimentalDetectronROIFeatureExtractor",
        since=6,
        until=16,
        attrs=(
            Attr("output_size", "int", doc="bins per side of each pooled box, > 0"),
            Attr("sampling_ratio", "int", default=0,
                 doc="samples per bin side (0: the bin's size, rounded up)"),
            Attr("pyramid_scales", "int_list", doc="each feature map's stride in image pixels"),
            Attr("aligned", "bool", default=False, doc="shift boxes by half a pixel"),
        ),
        inputs=(
            Input("input_rois", T, Rank(exact=2), doc="[N, 4]: x0, y0, x1, y1 in image pixels"),
            Input("feature_maps", T, Rank(exact=4), variadic=1,
                  doc="[1, C, H_l, W_l] per pyramid level, finest first"),
        ),
        outputs=(
            Output("output_rois_features", "[N, C, output_size, output_size]", type=T),
            Output("output_rois", "[N, 4]: the input boxes", type=T),
        ),
        doc="ROIAlign on the pyramid level each box's size picks.",
    )
    infer = staticmethod(_infer)

    @staticmethod
    def kernel(input_rois, *feature_maps, output_size, sampling_ratio, pyramid_scales,
               aligned):
        rois = input_rois.astype(F32)
        maps = [f.astype(F32)[0] for f in feature_maps]
        levels = levels_of(rois, len(maps))
        out = np.zeros((rois.shape[0], maps[0].shape[0], output_size, output_size), F32)
        for i in range(rois.shape[0]):  # one box at a time, vectorised over its samples
            level = int(levels[i])
            if level < len(maps):
                out[i] = roi_align_one(maps[level], rois[i], F32(1) / F32(pyramid_scales[level]),
                                       output_size, sampling_ratio, aligned)
        return out.astype(input_rois.dtype), input_rois.copy()
