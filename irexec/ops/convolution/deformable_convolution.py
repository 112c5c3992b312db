"""DeformableConvolution-1 and DeformableConvolution-8: a 2-D grouped convolution whose kernel
taps are moved, per output position, by learned offsets (and, in version 8, weighted by a mask).

Offsets [N, DG * 2 * KH * KW, H_out, W_out] hold, for each of the ``deformable_group`` groups
of input channels (DG) and each kernel tap k (row-major), the (dy, dx) pair at channels 2k and
2k+1 of that group's block; the tap of output (oh, ow) reads the data at
``(oh * stride - pad_begin + kh * dilation + dy, ow * ... + dx)`` by bilinear interpolation.
As OpenVINO's reference kernel:

* default: a point outside [0, H) x [0, W) reads 0; inside, its neighbours are clamped into the
  data (so the last row and column stretch to the edge);
* ``bilinear_interpolation_pad`` (version 8): a point in (-1, H) x (-1, W) interpolates between
  its four neighbours, those outside the data reading 0.

Version 8's optional mask [N, DG * KH * KW, H_out, W_out] multiplies each tap's sample. The
kernel builds the sampled im2col matrix [K * H_out * W_out, C] with four gathers of whole pixel
rows (one per neighbour) over all taps and positions at once, a batch item at a time, and
multiplies it by the weights with one ``np.matmul`` per group, as Convolution does.
"""

from __future__ import annotations

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.kernels import windows as kwin
from irexec.kernels.numeric import compute_dtype, narrow
from irexec.ops import windows
from irexec.ops.convolution import common
from irexec.ops.spec import register
from irexec.ops.spec import Attr, Input, Op, OpSpec, Output, Rank, TensorType, TypeVar

T = TypeVar("T", windows.REAL)


def _attrs(v8: bool):
    attrs = (
        windows.strides(),
        windows.pads("pads_begin", True, "before"),
        windows.pads("pads_end", True, "after"),
        windows.dilations(),
        windows.auto_pad(),
        Attr("group", "int", default=1, doc="the number of groups the input and output "
                                             "channels are split into (at least 1)"),
        Attr("deformable_group", "int", default=1,
             doc="the number of groups of input channels with their own offsets (at least 1)"),
    )
    if v8:
        attrs += (Attr("bilinear_interpolation_pad", "bool", default=False,
                       doc="sample points in (-1, size) too, reading 0 outside the data (else "
                           "only points in [0, size), with neighbours clamped into the data)"),)
    return attrs


def _divides(part: int, total: Dimension, what: str) -> None:
    if total.is_static and total.min % part:
        raise OpError(f"{what}", code="IR348")


def _channels_must_match(have: Dimension, want: Dimension, message: str) -> Dimension:
    merged = have.merge(want)
    if merged is None:
        raise OpError(message, code="IR307")
    return merged


def _four(shape: PartialShape) -> PartialShape:
    return shape if shape.rank_is_static else PartialShape([Dimension.dynamic()] * 4)


def infer(ctx):
    data, offsets, filters = (_four(ctx.input_shape(i)) for i in range(3))
    attrs = ctx.attrs
    groups, dgroups = attrs["group"], attrs["deformable_group"]
    for name, value in (("group", groups), ("deformable_group", dgroups)):
        if value < 1:
            raise OpError(f"{name} is {value}; it must be at least 1", code="IR302")
    windows.check_attrs(attrs, 2, common.WINDOW_ATTRS)
    et = ctx.output_element_types(1)[0]
    kernel = windows.kernel_sizes(filters, 2)
    taps = kernel[0] * kernel[1] if None not in kernel else None
    batch = data[0]
    c_out = filters[0]
    if data[1].is_static:
        _divides(groups, data[1], f"the data's {data[1]} channels do not split into {groups} "
                                  f"groups")
        _divides(dgroups, data[1], f"the data's {data[1]} channels do not split into "
                                   f"{dgroups} deformable groups")
        if filters[1].is_static and data[1].min != filters[1].min * groups:
            raise OpError(f"the data has {data[1]} channels but the filters {filters} take "
                          f"{filters[1].min * groups} ({groups} groups of {filters[1]})",
                          code="IR348")
    _divides(groups, c_out, f"the filters' {c_out} output channels do not split into "
                            f"{groups} groups")
    batch = _channels_must_match(batch, offsets[0], f"the offsets {offsets} are for a batch of "
                                                    f"{offsets[0]} but the data has {data[0]}")
    if taps is not None:
        _channels_must_match(offsets[1], Dimension.static(2 * dgroups * taps),
                             f"the offsets have {offsets[1]} channels but {dgroups} deformable "
                             f"groups of a {kernel[0]}x{kernel[1]} kernel need "
                             f"{2 * dgroups * taps} (a (dy, dx) pair per tap)")
    spatial = windows.spatial_dims(data, kernel, attrs["strides"], attrs["dilations"],
                                   attrs["pads_begin"], attrs["pads_end"], attrs["auto_pad"])
    spatial = [_channels_must_match(d, o, f"the offsets {offsets} cover {offsets[2]}x"
                                          f"{offsets[3]} positions but the output has "
                                          f"{spatial[0]}x{spatial[1]}")
               for d, o in zip(spatial, offsets.dims[2:])]
    if ctx.num_inputs > 3:
        mask = _four(ctx.input_shape(3))
        batch = _channels_must_match(batch, mask[0], f"the mask {mask} is for a batch of "
                                                     f"{mask[0]} but the data has {batch}")
        if taps is not None:
            _channels_must_match(mask[1], Dimension.static(dgroups * taps),
                                 f"the mask has {mask[1]} channels but {dgroups} deformable "
                                 f"groups of a {kernel[0]}x{kernel[1]} kernel need "
                                 f"{dgroups * taps}")
        spatial = [_channels_must_match(d, m, f"the mask {mask} covers {mask[2]}x{mask[3]} "
                                              f"positions but the output has {spatial[0]}x"
                                              f"{spatial[1]}")
                   for d, m in zip(spatial, mask.dims[2:])]
    return [TensorType(et, PartialShape([batch, c_out, *spatial]))]


def _corners(y, x, h, w, pad: bool):
    """For sampling points (y, x) of any shape: four (flat index, weight) pairs, the weights
    zero where a neighbour or the point itself does not count."""
    if pad:
        inside = (y > -1) & (y < h) & (x > -1) & (x < w)
        y1, x1 = np.floor(y), np.floor(x)
        y2, x2 = y1 + 1, x1 + 1
    else:
        inside = (y >= 0) & (y < h) & (x >= 0) & (x < w)
        y1, x1 = np.maximum(np.floor(y), 0), np.maximum(np.floor(x), 0)
        y2, x2 = np.minimum(np.ceil(y), h - 1), np.minimum(np.ceil(x), w - 1)
    dy, dx = y - y1, x - x1
    out = []
    for yy, xx, wt in ((y1, x1, (1 - dx) * (1 - dy)), (y2, x1, (1 - dx) * dy),
                       (y1, x2, dx * (1 - dy)), (y2, x2, dx * dy)):
        ok = inside & (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
        flat = np.where(ok, np.clip(yy, 0, h - 1) * w + np.clip(xx, 0, w - 1), 0)
        out.append((flat.astype(np.intp), np.where(ok, wt, 0)))
    return out


def _sampled_product(pixels, corners, weights, k, g, c_g, ct):
    """The weights [G, K * C/G, C_OUT/G] times the bilinear samples of ``pixels`` (one
    [H * W, C/DG] array per deformable group) at the ``corners``' points: [C_OUT, positions]."""
    dg = len(pixels)
    cdg = pixels[0].shape[1]
    count = corners[0][0][0].size  # K * positions
    positions = count // k
    samples = np.empty((count, cdg * dg), ct)  # row k * positions + p: tap k at position p
    part = np.empty((count, cdg), ct)
    for d in range(dg):  # four gathers of whole pixel rows per deformable group
        target = samples if dg == 1 else samples[:, d * cdg:(d + 1) * cdg]
        for i, (flat, wt) in enumerate(corners):
            got = np.take(pixels[d], flat[d].reshape(-1), axis=0, mode="clip",
                          out=samples if dg == 1 and i == 0 else part)
            got *= wt[d].reshape(-1, 1).astype(ct, copy=False)
            if i == 0 and dg > 1:
                target[...] = got
            elif i:
                target += got
    cols = samples.reshape(k, positions, g, c_g).transpose(2, 1, 0, 3).reshape(
        g, positions, k * c_g)
    return np.matmul(cols, weights).transpose(0, 2, 1).reshape(-1, positions)


def run(data, offsets, filters, mask, *, strides, pads_begin, pads_end, dilations, auto_pad,
        group, deformable_group, bilinear_interpolation_pad=False):
    ct = compute_dtype(data.dtype)
    n, c, h, w = data.shape
    c_out, c_g, kh, kw = filters.shape
    pb, _, (ho, wo) = kwin.geometry((h, w), (kh, kw), strides, dilations, pads_begin, pads_end,
                                    auto_pad)
    dg, k, g = deformable_group, kh * kw, group
    # the undeformed tap positions [KH, KW, Ho, Wo]
    base_y = (np.arange(ho) * strides[0] - pb[0])[None, :] \
        + (np.arange(kh) * dilations[0])[:, None]
    base_x = (np.arange(wo) * strides[1] - pb[1])[None, :] \
        + (np.arange(kw) * dilations[1])[:, None]
    base_y = np.broadcast_to(base_y[:, None, :, None], (kh, kw, ho, wo)).reshape(k, ho, wo)
    base_x = np.broadcast_to(base_x[None, :, None, :], (kh, kw, ho, wo)).reshape(k, ho, wo)
    # weights [G, K * C/G, C_OUT/G]: tap-major, to meet the samples' layout
    weights = np.ascontiguousarray(filters.astype(ct, copy=False).reshape(
        g, c_out // g, c_g, k).transpose(0, 3, 2, 1).reshape(g, k * c_g, c_out // g))
    cdg = c // dg
    out = np.empty((n, c_out, ho, wo), ct)
    # the sampled matrix and its copy for the product: 3 * K * C values per output position;
    # built a band of output rows at a time when that passes the tile size
    row_bytes = 3 * k * wo * c * ct.itemsize
    for b in range(n):
        pixels = [np.ascontiguousarray(data[b, d * cdg:(d + 1) * cdg].reshape(cdg, h * w).T,
                                       dtype=ct) for d in range(dg)]
        off = offsets[b].astype(ct, copy=False).reshape(dg, k, 2, ho, wo)
        m = None if mask is None else mask[b].astype(ct, copy=False).reshape(dg, k, ho, wo)
        for r0, r1 in kwin.bands(ho, row_bytes):
            rows = np.s_[:, :, r0:r1]
            y = base_y[:, r0:r1].astype(ct) + off[:, :, 0][rows]  # [DG, K, rows, Wo]
            x = base_x[:, r0:r1].astype(ct) + off[:, :, 1][rows]
            corners = _corners(y, x, h, w, bilinear_interpolation_pad)
            if m is not None:
                corners = [(flat, wt * m[rows]) for flat, wt in corners]
            out[b, :, r0:r1] = _sampled_product(pixels, corners, weights, k, g, c_g, ct) \
                .reshape(c_out, r1 - r0, wo)
    return narrow(out.reshape(n, c_out, ho, wo), data.dtype)


_INPUTS = (
    Input("data", T, Rank(exact=4), doc="[N, C_IN, H, W]"),
    Input("offsets", T, Rank(exact=4),
          doc="[N, DG * 2 * KH * KW, H_out, W_out]: a (dy, dx) pair per deformable group, "
              "tap and output position"),
    Input("filters", T, Rank(exact=4), doc="[C_OUT, C_IN / group, KH, KW]"),
)
_OUTPUT = Output("output", "[N, C_OUT, H_out, W_out]: each output position's deformed window "
                           "convolved with the filters", type=T)


@register
class DeformableConvolution1(Op):
    spec = OpSpec(
        type="DeformableConvolution",
        numerics="accumulating",
        since=1,
        until=7,
        attrs=_attrs(False),
        inputs=_INPUTS,
        outputs=(_OUTPUT,),
        doc="2-D convolution whose kernel taps move by per-position offsets (bilinear "
            "sampling).",
    )

    @staticmethod
    def infer(ctx):
        return infer(ctx)

    @staticmethod
    def kernel(data, offsets, filters, **attrs):
        return run(data, offsets, filters, None, **attrs)


@register
class DeformableConvolution8(Op):
    spec = OpSpec(
        type="DeformableConvolution",
        numerics="accumulating",
        since=8,
        until=16,
        attrs=_attrs(True),
        inputs=_INPUTS + (Input("mask", T, Rank(exact=4), optional=True,
                                doc="[N, DG * KH * KW, H_out, W_out]: a weight per deformable "
                                    "group, tap and output position (default 1)"),),
        outputs=(_OUTPUT,),
        doc="2-D convolution whose kernel taps move by per-position offsets and are weighted "
            "by a mask (bilinear sampling, optionally zero-padded).",
    )

    @staticmethod
    def infer(ctx):
        return infer(ctx)

    @staticmethod
    def kernel(data, offsets, filters, mask=None, **attrs):
        return run(data, offsets, filters, mask, **attrs)
