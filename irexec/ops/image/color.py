"""Colour conversion, one family: NV12toRGB-8, NV12toBGR-8, I420toRGB-8, I420toBGR-8 (YUV 4:2:0
to three channels) and RGBtoNV12-17, BGRtoNV12-17 (back).

Images are NHWC. NV12 is a Y plane [N, H, W, 1] and an interleaved UV plane [N, H/2, W/2, 2];
I420 has separate U and V planes [N, H/2, W/2, 1]; either may come as one plane [N, 3H/2, W, 1]
(Y rows, then the chroma rows). Each 2x2 block of pixels shares one U and one V.

The arithmetic is the specification's BT.601 formulas in float32, in the order OpenVINO's
reference writes them, so u8 results are bit-exact with it: clipped to [0, 255], u8 rounded half
away from zero. RGBtoNV12 averages the four (clipped, and for u8 rounded) chroma values of each
block. Floats are clipped and not rounded.
"""

from __future__ import annotations

import numpy as np

from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.spec import (Attr, Input, Op, OpSpec, Output, Rank, TensorType, TypeSet,
                             TypeVar, register)

T = TypeVar("T", TypeSet(("u8", "f16", "bf16", "f32", "f64")))
F = np.float32


def _finish(a: np.ndarray, dtype) -> np.ndarray:
    """Clip to [0, 255]; u8 rounds half away from zero (std::round) first."""
    if np.dtype(dtype) == np.uint8:
        return np.clip(np.floor(a.astype(np.float64) + 0.5), 0, 255).astype(np.uint8)
    return np.clip(a, F(0), F(255)).astype(dtype)


def yuv_to_rgb(y, u, v, dtype, bgr: bool) -> np.ndarray:
    """y [N, H, W], u and v [N, H/2, W/2] -> [N, H, W, 3]."""
    c = y.astype(F) - F(16)
    d = np.repeat(np.repeat(u.astype(F) - F(128), 2, axis=1), 2, axis=2)
    e = np.repeat(np.repeat(v.astype(F) - F(128), 2, axis=1), 2, axis=2)
    yc = F(1.164) * c
    b = yc + F(2.018) * d
    g = yc - F(0.391) * d - F(0.813) * e
    r = yc + F(1.596) * e
    planes = (b, g, r) if bgr else (r, g, b)
    return np.stack([_finish(p, dtype) for p in planes], axis=-1)


def _split_single(image: np.ndarray):
    h = image.shape[1] * 2 // 3
    return image[:, :h, :, 0], image[:, h:, :, 0]


def _nv12_kernel(bgr):
    def kernel(y, uv=None):
        if uv is None:
            y, chroma = _split_single(y)
            n, h, w = y.shape
            chroma = chroma.reshape(n, h // 2, w // 2, 2)
        else:
            y, chroma = y[..., 0], uv
        return yuv_to_rgb(y, chroma[..., 0], chroma[..., 1], y.dtype, bgr)
    return kernel


def _i420_kernel(bgr):
    def kernel(y, u=None, v=None):
        if u is None:
            y, chroma = _split_single(y)
            n, h, w = y.shape
            flat = chroma.reshape(n, -1)
            quarter = h * w // 4
            u = flat[:, :quarter].reshape(n, h // 2, w // 2)
            v = flat[:, quarter:].reshape(n, h // 2, w // 2)
        else:
            y, u, v = y[..., 0], u[..., 0], v[..., 0]
        return yuv_to_rgb(y, u, v, y.dtype, bgr)
    return kernel


def _half(d: Dimension) -> Dimension:
    return Dimension(d.min // 2, None if d.max is None else d.max // 2) if d.is_dynamic \
        else Dimension.static(d.min // 2)


def _even(ctx, d: Dimension, what: str) -> None:
    if d.is_static and d.min % 2:
        ctx.error("IR307", f"the image {what} is {d.min}; it must be even (2x2 pixels share "
                           f"their chroma)")


def _check_plane(ctx, port: int, shape: PartialShape, want: list, channels: int, what: str):
    if not shape.rank_is_static:
        return
    if shape[3].is_static and shape[3].min != channels:
        ctx.error("IR307", f"the {what} plane (input {port}) {shape} must have {channels} "
                           f"channel{'s' * (channels != 1)} (dim 3)")
    for axis, (got, expected) in enumerate(zip(shape.dims[:3], want)):
        if got.merge(expected) is None:
            ctx.error("IR307", f"the {what} plane (input {port}) {shape} has dim {axis} {got}; "
                               f"the Y plane asks for {expected}")


def _yuv_infer(planes: int):
    def infer(ctx):
        y = ctx.input_shape(0)
        et = ctx.type_var("T")
        if not y.rank_is_static:
            return [TensorType(et, PartialShape([-1, -1, -1, 3]))]
        n, h, w, c = y.dims
        if c.is_static and c.min != 1:
            ctx.error("IR307", f"the Y plane {y} must have 1 channel (dim 3)")
        if ctx.num_inputs == 1:
            if h.is_static and h.min % 3:
                ctx.error("IR307", f"a single-plane image {y} has a height of {h.min}; it must "
                                   f"be 3/2 of an even image height")
            h = Dimension.static(h.min * 2 // 3) if h.is_static else Dimension.dynamic()
        elif ctx.num_inputs != planes:
            ctx.error("IR303", f"the layer has {ctx.num_inputs} inputs; give 1 (one plane) or "
                               f"{planes} (Y and chroma planes)")
        _even(ctx, h, "height")
        _even(ctx, w, "width")
        if ctx.num_inputs > 1:
            names = ("UV",) if planes == 2 else ("U", "V")
            for k, name in enumerate(names, start=1):
                _check_plane(ctx, k, ctx.input_shape(k), [n, _half(h), _half(w)],
                             2 if planes == 2 else 1, name)
        return [TensorType(et, PartialShape._of((n, h, w, Dimension.static(3))))]
    return infer


def _to_nv12_kernel(bgr):
    def kernel(image, *, single_plane):
        x = image.astype(F)
        r, g, b = (x[..., 2], x[..., 1], x[..., 0]) if bgr else (x[..., 0], x[..., 1], x[..., 2])
        y = _finish(F(0.257) * r + F(0.504) * g + F(0.098) * b + F(16), image.dtype)
        u = _finish(F(-0.148) * r - F(0.291) * g + F(0.439) * b + F(128), image.dtype)
        v = _finish(F(0.439) * r - F(0.368) * g - F(0.071) * b + F(128), image.dtype)
        n, h, w = y.shape

        def mean(p):
            q = p.astype(F).reshape(n, h // 2, 2, w // 2, 2)
            total = ((q[:, :, 0, :, 0] + q[:, :, 0, :, 1]) + q[:, :, 1, :, 0]) + q[:, :, 1, :, 1]
            s = total / F(4)
            if image.dtype == np.uint8:
                return np.floor(s.astype(np.float64) + 0.5).astype(np.uint8)
            return s.astype(image.dtype)

        uv = np.stack([mean(u), mean(v)], axis=-1)
        if single_plane:
            return np.concatenate([y, uv.reshape(n, h // 2, w)], axis=1)[..., None]
        return y[..., None], uv
    return kernel


def _to_nv12_infer(ctx):
    shape = ctx.input_shape(0)
    et = ctx.type_var("T")
    single = ctx.attrs["single_plane"]
    if not shape.rank_is_static:
        shape = PartialShape([-1, -1, -1, 3])
    n, h, w, c = shape.dims
    if c.is_static and c.min != 3:
        ctx.error("IR307", f"the image {shape} must have 3 channels (dim 3)")
    _even(ctx, h, "height")
    _even(ctx, w, "width")
    one = Dimension.static(1)
    if single:
        tall = Dimension.static(h.min * 3 // 2) if h.is_static else Dimension.dynamic()
        return [TensorType(et, PartialShape._of((n, tall, w, one)))]
    return [TensorType(et, PartialShape._of((n, h, w, one))),
            TensorType(et, PartialShape._of((n, _half(h), _half(w), Dimension.static(2))))]


def _make(name, spec, kernel, infer):
    return register(type(name, (Op,), {"spec": spec, "kernel": staticmethod(kernel),
                                       "infer": staticmethod(infer), "__doc__": spec.doc,
                                       "__module__": __name__}))


IMAGE_OUT = Output("output", "[N, H, W, 3]: the image, channels in the op's order", type=T)
Y_PLANE = Input("y", T, Rank(exact=4), doc="[N, H, W, 1] (Y plane) or [N, 3H/2, W, 1] (the whole "
                                           "image in one plane)")
OPS = {}
for _order, _bgr in (("RGB", False), ("BGR", True)):
    _name = f"NV12to{_order}"
    OPS[_name] = _make(_name, OpSpec(
        type=_name, since=8, until=16,
        inputs=(Y_PLANE, Input("uv", T, Rank(exact=4), optional=True,
                               doc="[N, H/2, W/2, 2]: interleaved U and V (absent with one "
                                   "plane)")),
        outputs=(IMAGE_OUT,),
        doc=f"Converts an NV12 image (one or two planes) to {_order}.",
    ), _nv12_kernel(_bgr), _yuv_infer(2))
    _name = f"I420to{_order}"
    OPS[_name] = _make(_name, OpSpec(
        type=_name, since=8, until=16,
        inputs=(Y_PLANE,
                Input("u", T, Rank(exact=4), optional=True, doc="[N, H/2, W/2, 1]"),
                Input("v", T, Rank(exact=4), optional=True, doc="[N, H/2, W/2, 1]")),
        outputs=(IMAGE_OUT,),
        doc=f"Converts an I420 image (one or three planes) to {_order}.",
    ), _i420_kernel(_bgr), _yuv_infer(3))
    _name = f"{_order}toNV12"
    OPS[_name] = _make(_name, OpSpec(
        type=_name, since=17,
        attrs=(Attr("single_plane", "bool", default=True,
                    doc="one output [N, 3H/2, W, 1], or the Y and UV planes apart"),),
        inputs=(Input("image", T, Rank(exact=4), doc=f"[N, H, W, 3]: {_order}, H and W even"),),
        outputs=(Output("y", "[N, 3H/2, W, 1] with single_plane, else the Y plane "
                             "[N, H, W, 1]", type=T),
                 Output("uv", "[N, H/2, W/2, 2]: the UV plane (only without single_plane)",
                        type=T, variadic=True)),
        doc=f"Converts a {_order} image to NV12 (one plane, or Y and UV planes).",
    ), _to_nv12_kernel(_bgr), _to_nv12_infer)
