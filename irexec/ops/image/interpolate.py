"""Interpolate-1, Interpolate-4 and Interpolate-11: resize some axes of a tensor.

The three versions share one kernel (irexec/kernels/interpolate.py). Interpolate-1 is run as
OpenVINO runs it, by its own translation into Interpolate-4's attributes: nearest uses the
``simple`` rounding, linear becomes linear_onnx (rank below 5), and the coordinates are
``align_corners`` when asked, else ``half_pixel`` for linear modes without padding (unless the
data is 4-D and resized on axes 2 and 3), else ``asymmetric``. Its pads only choose the
coordinate mode: OpenVINO's shape inference of Interpolate-1 leaves them out of the output shape,
and so does irexec, which also leaves them out of the computation. Its ``area`` mode, which the
specification names without defining and OpenVINO's CPU plugin refuses, averages the input over
each output element's share of it (s = in / out input elements, partly covered ones weighed by
the part covered: OpenCV's INTER_AREA when shrinking); align_corners and antialias do not change
it.
"""

from __future__ import annotations

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.ir.shape_rules import normalize_axis
from irexec.kernels import interpolate as kernel
from irexec.ops import windows
from irexec.ops.domains import as_int64
from irexec.ops.spec import register
from irexec.ops.spec import (INTEGER, REAL, VECTOR, Attr, Input, Op, OpSpec, Output, TensorType,
                             TypeVar)

T = TypeVar("T", windows.ARITH)
COORDINATE_MODES = ("half_pixel", "pytorch_half_pixel", "asymmetric", "tf_half_pixel_for_nn",
                    "align_corners")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple")


def _attrs(modes):
    return (
        Attr("mode", "enum", values=modes, doc="how to compute an output element from its "
                                               "neighbourhood"),
        Attr("shape_calculation_mode", "enum", values=("sizes", "scales"),
             doc="which input gives the output's sizes: sizes, or scales (floor(scale * "
                 "padded size))"),
        Attr("coordinate_transformation_mode", "enum", default="half_pixel",
             values=COORDINATE_MODES, doc="where an output position falls in the input"),
        Attr("nearest_mode", "enum", default="round_prefer_floor", values=NEAREST_MODES,
             doc="how nearest mode rounds a coordinate to an index"),
        Attr("antialias", "bool", default=False,
             doc="widen the linear filter when downsampling"),
        Attr("pads_begin", "uint_list", default=(0,),
             doc="zeros added before each axis first (missing axes: 0)"),
        Attr("pads_end", "uint_list", default=(0,),
             doc="zeros added after each axis first (missing axes: 0)"),
        Attr("cube_coeff", "float", default=-0.75, doc="the parameter a of cubic modes"),
    )


def _pads(attrs, rank: int) -> tuple[list[int], list[int]]:
    def fit(p):
        p = list(p)[:rank]
        return p + [0] * (rank - len(p))
    return fit(attrs.get("pads_begin", ())), fit(attrs.get("pads_end", ()))


def _axes(values, rank: int) -> list[int]:
    axes = [normalize_axis(int(a), rank, "axes") for a in as_int64(values)]
    if len(set(axes)) != len(axes):
        raise OpError(f"axes {[int(a) for a in as_int64(values)]} name an axis twice",
                      code="IR308")
    return axes


def _sizes_from(axes, values, how: str, padded) -> list:
    """The interpolated axes' sizes: ``values`` as sizes, or as scales of the padded sizes."""
    if len(values) != len(axes):
        raise OpError(f"{how} has {len(values)} values but {len(axes)} axes are interpolated; "
                      f"give one per axis", code="IR307")
    if how == "sizes":
        sizes = [int(v) for v in as_int64(np.asarray(values))]
        if any(s < 0 for s in sizes):
            raise OpError(f"sizes {sizes} has a negative size", code="IR308")
        return [Dimension.static(s) for s in sizes]
    scales = [float(v) for v in np.asarray(values, dtype=np.float64).reshape(-1)]
    if any(not s > 0 for s in scales):
        raise OpError(f"scales {scales} has a value that is not positive", code="IR308")
    if any(not np.isfinite(s) for s in scales):
        raise OpError(f"scales {scales} has a value that is not finite; give a finite scale "
                      f"per axis", code="IR308")
    return [Dimension(_scaled(d.min, s), None if d.max is None else _scaled(d.max, s))
            for s, d in zip(scales, (padded[a] for a in axes))]


def _scaled(size: int, scale: float) -> int:
    """OpenVINO's rule for a size times a scale: in float32, the scale plus 1e-6, the product
    truncated (so 3 * 0.333333 gives 1)."""
    if scale == 1.0:
        return size
    with np.errstate(over="ignore"):
        product = np.float32(size) * (np.float32(scale) + np.float32(1e-6))
    if not np.isfinite(product):
        raise OpError(f"a size of {size} times the scale {scale} is past float32's range, "
                      f"where OpenVINO computes the output size; give a smaller scale",
                      code="IR308")
    return int(product)


def infer_shape(ctx, how: str, values_index: int, axes_index: int | None, fixed_axes=None,
                padded_axes: bool = True):
    data = ctx.input_shape(0)
    et = ctx.output_element_types(1)[0]
    if not data.rank_is_static:
        return [TensorType(et, PartialShape.dynamic())]
    rank = len(data)
    pb, pe = _pads(ctx.attrs if padded_axes else {}, rank)
    padded = [Dimension(d.min + b + e, None if d.max is None else d.max + b + e)
              for d, b, e in zip(data, pb, pe)]
    if fixed_axes is not None:
        axes = _axes(np.array(fixed_axes, np.int64), rank)
    elif axes_index is not None and axes_index < ctx.num_inputs:
        value = ctx.input_value(axes_index)
        if value is None:
            return [TensorType(et, PartialShape([Dimension.dynamic()] * rank))]
        axes = _axes(value, rank)
    else:
        axes = list(range(rank))
    values = ctx.input_value(values_index)
    if values is None:
        shape = list(padded)
        for a in axes:
            shape[a] = Dimension.dynamic()
        return [TensorType(et, PartialShape(shape))]
    shape = list(padded)
    for a, d in zip(axes, _sizes_from(axes, np.asarray(values).reshape(-1), how, padded)):
        shape[a] = d
    return [TensorType(et, PartialShape(shape))]


def run(data, values, axes_values, attrs, how: str):
    rank = data.ndim
    pb, pe = _pads(attrs, rank)
    axes = _axes(axes_values, rank) if axes_values is not None else list(range(rank))
    padded = np.pad(data, list(zip(pb, pe))) if any(pb) or any(pe) else data
    dims = [Dimension.static(n) for n in padded.shape]
    sizes = [d.min for d in _sizes_from(axes, np.asarray(values).reshape(-1), how, dims)]
    out_shape = list(padded.shape)
    for a, s in zip(axes, sizes):
        out_shape[a] = s
    if how == "scales":
        scales = [float(v) for v in np.asarray(values, np.float64).reshape(-1)]
    else:
        scales = [s / padded.shape[a] if padded.shape[a] else 1.0 for a, s in zip(axes, sizes)]
    if any(n == 0 for n in out_shape) or padded.size == 0:
        return np.zeros(out_shape, data.dtype)
    return kernel.interpolate(padded, out_shape, axes, scales, attrs)


@register
class Interpolate4(Op):
    spec = OpSpec(
        type="Interpolate",
        since=4,
        until=10,
        attrs=_attrs(("nearest", "linear", "linear_onnx", "cubic")),
        inputs=(
            Input("data", T, doc="the tensor to resize"),
            Input("sizes", INTEGER, VECTOR, doc="the output sizes of the axes (sizes mode)"),
            Input("scales", REAL, VECTOR, doc="the scales of the axes (scales mode)"),
            Input("axes", INTEGER, VECTOR, optional=True,
                  doc="the axes to resize, in [-rank, rank-1], each once (default: all)"),
        ),
        outputs=(Output("output", "data resized on the axes (other axes: their padded size)",
                        type=T),),
        doc="Resizes axes of a tensor by nearest, linear (optionally antialiased), "
            "linear_onnx or cubic interpolation.",
    )

    @staticmethod
    def infer(ctx):
        how = ctx.attrs["shape_calculation_mode"]
        return infer_shape(ctx, how, 1 if how == "sizes" else 2, 3)

    @staticmethod
    def kernel(data, sizes, scales, axes=None, **attrs):
        how = attrs["shape_calculation_mode"]
        return run(data, sizes if how == "sizes" else scales, axes, attrs, how)


@register
class Interpolate11(Op):
    spec = OpSpec(
        type="Interpolate",
        since=11,
        until=16,
        attrs=_attrs(("nearest", "linear", "linear_onnx", "cubic", "bilinear_pillow",
                      "bicubic_pillow")),
        inputs=(
            Input("data", T, doc="the tensor to resize"),
            Input("scales_or_sizes", windows.ARITH, VECTOR,
                  doc="the output sizes (integers, sizes mode) or scales (floats, scales mode) "
                      "of the axes"),
            Input("axes", INTEGER, VECTOR, optional=True,
                  doc="the axes to resize, in [-rank, rank-1], each once (default: all)"),
        ),
        outputs=(Output("output", "data resized on the axes (other axes: their padded size)",
                        type=T),),
        doc="Resizes axes of a tensor (Interpolate-4's modes, and Pillow's bilinear and "
            "bicubic filters).",
    )

    @staticmethod
    def infer(ctx):
        return infer_shape(ctx, ctx.attrs["shape_calculation_mode"], 1, 2)

    @staticmethod
    def kernel(data, scales_or_sizes, axes=None, **attrs):
        return run(data, scales_or_sizes, axes, attrs, attrs["shape_calculation_mode"])


def _v4_attrs(attrs: dict, rank: int) -> dict:
    """Interpolate-1's attributes as OpenVINO translates them into Interpolate-4's."""
    mode = attrs["mode"]
    if mode == "area":  # not translated: coordinates play no part
        return dict(mode=mode, coordinate_transformation_mode="asymmetric",
                    nearest_mode="simple", antialias=False, pads_begin=(), pads_end=(),
                    cube_coeff=-0.75)
    if mode == "linear":
        mode = "linear_onnx" if rank < 5 else "linear"
    padded = any(attrs["pads_begin"]) or any(attrs["pads_end"])
    if attrs["align_corners"]:
        ctm = "align_corners"
    elif mode in ("linear", "linear_onnx") and not padded \
            and not (rank == 4 and set(attrs["axes"]) == {2, 3}):
        ctm = "half_pixel"
    else:
        ctm = "asymmetric"
    return dict(mode=mode, coordinate_transformation_mode=ctm, nearest_mode="simple",
                antialias=attrs["antialias"], pads_begin=(), pads_end=(), cube_coeff=-0.75)


@register
class Interpolate1(Op):
    spec = OpSpec(
        type="Interpolate",
        since=1,
        until=3,
        attrs=(
            Attr("axes", "uint_list", doc="the axes to resize"),
            Attr("mode", "enum", values=("nearest", "linear", "cubic", "linear_onnx", "area"),
                 doc="nearest, linear or cubic interpolation, or area (the mean of the input "
                     "over each output element's share of it)"),
            Attr("align_corners", "bool", default=False,
                 doc="map the corner elements of input and output onto each other"),
            Attr("antialias", "bool", default=False, doc="widen the filter when shrinking"),
            Attr("pads_begin", "uint_list", default=(0,), doc="zeros added before each axis"),
            Attr("pads_end", "uint_list", default=(0,), doc="zeros added after each axis"),
        ),
        inputs=(
            Input("data", T, doc="the tensor to resize"),
            Input("target_spatial_shape", INTEGER, VECTOR,
                  doc="the output sizes of the axes"),
        ),
        outputs=(Output("output", "data resized on the axes", type=T),),
        doc="Resizes axes of a tensor (run as OpenVINO runs it: translated to Interpolate-4).",
    )

    @staticmethod
    def openvino_refuses(node) -> str | None:
        if node.attrs.get("mode") == "area":
            return "OpenVINO's CPU plugin does not run Interpolate-1's area mode"
        return None

    @staticmethod
    def infer(ctx):
        return infer_shape(ctx, "sizes", 1, None, fixed_axes=ctx.attrs["axes"],
                           padded_axes=False)

    @staticmethod
    def kernel(data, target_spatial_shape, **attrs):
        return run(data, target_spatial_shape, np.array(attrs["axes"], np.int64),
                   _v4_attrs(attrs, data.ndim), "sizes")
