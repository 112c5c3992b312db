"""ExperimentalDetectronPriorGridGenerator-6: the priors laid on every cell of a feature map.

Cell (h, w) moves each prior ``[x0, y0, x1, y1]`` by ``(step_w * (w + 0.5), step_h * (h + 0.5))``;
the steps are ``stride_x``/``stride_y``, or (when 0) the image's size over the grid's. The grid is
``h`` x ``w`` cells, or (when 0) the feature map's; the output has the feature map's size (as
OpenVINO's shape inference says), so a grid that differs from it fills the output's first cells
and leaves the rest 0. Computed in f32.
"""

import numpy as np

from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.detection.proposal_common import F32
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


def _infer(ctx):
    priors, feature = ctx.input_shape(0), ctx.input_shape(1)
    if priors.rank_is_static and priors[1].is_static and priors[1].min != 4:
        ctx.error("IR307", f"priors' last dim is {priors[1]}; it must be 4")
    count = priors[0] if priors.rank_is_static else Dimension.dynamic()
    h, w = (feature[2], feature[3]) if feature.rank_is_static else (Dimension.dynamic(),) * 2
    for name in ("h", "w"):
        if ctx.attrs[name] < 0:
            ctx.error("IR302", f"{name} is {ctx.attrs[name]}; it must not be negative")
    if ctx.attrs["flatten"]:
        cells = None
        if h.max is not None and w.max is not None and count.max is not None:
            cells = h.max * w.max * count.max
        rows = Dimension.static(cells) if h.is_static and w.is_static and count.is_static \
            else Dimension(h.min * w.min * count.min, cells)
        shape = PartialShape([rows, Dimension.static(4)])
    else:
        shape = PartialShape([h, w, count, Dimension.static(4)])
    return [TensorType(ctx.type_var("T"), shape)]


@register
class ExperimentalDetectronPriorGridGenerator(Op):
    spec = OpSpec(
        type="ExperimentalDetectronPriorGridGenerator",
        since=6,
        until=16,
        attrs=(
            Attr("flatten", "bool", default=True, doc="true: [H*W*P, 4]; false: [H, W, P, 4]"),
            Attr("h", "int", default=0, doc="grid height in cells (0: the feature map's)"),
            Attr("w", "int", default=0, doc="grid width in cells (0: the feature map's)"),
            Attr("stride_x", "float", default=0.0,
                 doc="step between cells along x (0: image width / grid width)"),
            Attr("stride_y", "float", default=0.0,
                 doc="step between cells along y (0: image height / grid height)"),
        ),
        inputs=(
            Input("priors", T, Rank(exact=2), doc="[P, 4]: x0, y0, x1, y1"),
            Input("feature_map", T, Rank(exact=4), doc="[N, C, H, W]: only its shape is read"),
            Input("im_data", T, Rank(exact=4), doc="[N, C, IH, IW]: only its shape is read"),
        ),
        outputs=(Output("rois", "the priors of every cell, cell after cell (row-major), "
                                "prior after prior", type=T),),
        doc="Lays the priors on every cell of a grid over the image.",
    )
    infer = staticmethod(_infer)

    @staticmethod
    def kernel(priors, feature_map, im_data, *, flatten, h, w, stride_x, stride_y):
        fh, fw = feature_map.shape[2:]
        gh, gw = h or fh, w or fw
        step_w = F32(stride_x) if stride_x else F32(im_data.shape[3]) / F32(gw)
        step_h = F32(stride_y) if stride_y else F32(im_data.shape[2]) / F32(gh)
        p = priors.astype(F32)
        sx = step_w * (np.arange(gw, dtype=F32) + F32(0.5))  # [gw]
        sy = step_h * (np.arange(gh, dtype=F32) + F32(0.5))  # [gh]
        shift = np.zeros((gh, gw, 1, 4), F32)
        shift[..., 0::2] = sx[None, :, None, None]
        shift[..., 1::2] = sy[:, None, None, None]
        grid = (p[None, None] + shift).reshape(-1)
        out = np.zeros(fh * fw * p.shape[0] * 4, F32)
        n = min(out.size, grid.size)
        out[:n] = grid[:n]
        shape = (-1, 4) if flatten else (fh, fw, p.shape[0], 4)
        return out.reshape(shape).astype(priors.dtype)
