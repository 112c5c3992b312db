"""DFT-7, IDFT-7, RDFT-9 and IRDFT-9: discrete Fourier transforms over some axes of a tensor.

Complex tensors are float tensors with a last axis of 2 (real part, imaginary part). DFT, IDFT
and IRDFT take such data; their axes count the complex tensor's axes (the last axis of 2 left
out), so they lie in [-(r-1), r-2] for data of rank r and a negative axis a means r-1+a. RDFT
takes real data and counts its axes as usual ([-r, r-1]).

``signal_size`` (optional, one value per axis; -1: the axis's own size) trims each transformed
axis, or pads it with zeros at the end, before the transform, as numpy's ``fftn(x, s, axes)``
does. RDFT keeps the first n//2+1 results on the last of its axes; IRDFT treats its input as
those n//2+1 values of a Hermitian-symmetric spectrum, with n = 2*(m-1) for an input of m values
unless its last signal_size says otherwise (numpy's ``irfftn``). IDFT and IRDFT divide by the
product of the signal sizes. The kernels are numpy's ``np.fft`` (pocketfft) in the compute type.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.ir.shape_rules import normalize_axis
from irexec.kernels.numeric import compute_dtype, narrow
from irexec.ops import windows
from irexec.ops.domains import as_int64
from irexec.ops.spec import register
from irexec.ops.spec import (SHAPE_INDEX, VECTOR, Input, Op, OpSpec, Output, Rank, TensorType,
                             TypeVar)

T = TypeVar("T", windows.REAL)


@dataclass(frozen=True)
class Kind:
    type: str
    since: int
    complex_in: bool
    complex_out: bool
    inverse: bool
    doc: str


KINDS = (
    Kind("DFT", 7, True, True, False,
         "The discrete Fourier transform of complex data over the given axes (unnormalized)."),
    Kind("IDFT", 7, True, True, True,
         "The inverse discrete Fourier transform of complex data over the given axes (divided "
         "by the product of the signal sizes)."),
    Kind("RDFT", 9, False, True, False,
         "The discrete Fourier transform of real data over the given axes: the first n//2+1 "
         "complex results on the last of them (numpy.fft.rfftn)."),
    Kind("IRDFT", 9, True, False, True,
         "The inverse of RDFT: real data from the first n//2+1 complex values of a "
         "Hermitian-symmetric spectrum on the last axis (numpy.fft.irfftn)."),
)


def _axes(values, rank: int, complex_in: bool) -> list[int]:
    """The axes as non-negative axes of the (complex) tensor; IR306 outside the range, IR333 for
    an axis named twice."""
    count = rank - 1 if complex_in else rank
    what = "axis (of the complex tensor, without its last axis of 2)" if complex_in else "axis"
    axes = [normalize_axis(int(a), count, what) for a in as_int64(np.asarray(values)).reshape(-1)]
    if len(set(axes)) != len(axes):
        raise OpError(f"axes {[int(a) for a in as_int64(np.asarray(values)).reshape(-1)]} name "
                      f"an axis twice; each axis is transformed once", code="IR333")
    return axes


def _signal_sizes(values, count: int) -> list[int]:
    sizes = [int(v) for v in as_int64(np.asarray(values)).reshape(-1)]
    if len(sizes) != count:
        raise OpError(f"signal_size has {len(sizes)} values but axes has {count}; give one size "
                      f"per axis (-1 keeps the axis's size)", code="IR307")
    bad = [s for s in sizes if s < 1 and s != -1]
    if bad:
        raise OpError(f"signal_size {sizes} holds {bad[0]}; a signal size is at least 1, or -1 "
                      f"for the axis's own size", code="IR308")
    return sizes


def _half(d: Dimension) -> Dimension:  # n -> n//2 + 1
    return Dimension(d.min // 2 + 1, None if d.max is None else d.max // 2 + 1)


def _full(d: Dimension) -> Dimension:  # m -> 2*(m-1)
    return Dimension(max(2 * (d.min - 1), 0), None if d.max is None else max(2 * (d.max - 1), 0))


def infer(ctx, kind: Kind):
    data, axes_shape = ctx.input_shape(0), ctx.input_shape(1)
    et = ctx.output_element_types(1)[0]
    has_sizes = ctx.num_inputs > 2
    if has_sizes:
        sizes_shape = ctx.input_shape(2)
        if axes_shape.rank_is_static and sizes_shape.rank_is_static and len(axes_shape) == 1 \
                and len(sizes_shape) == 1 and not axes_shape[0].compatible(sizes_shape[0]):
            raise OpError(f"signal_size has {sizes_shape[0]} values but axes has "
                          f"{axes_shape[0]}; give one size per axis", code="IR307")
    if not data.rank_is_static:
        return [TensorType(et, PartialShape.dynamic())]
    rank = len(data)
    if kind.complex_in and not data[rank - 1].contains(2):
        raise OpError(f"the data {data} is a complex tensor, whose last axis holds 2 values "
                      f"(real, imaginary), not {data[rank - 1]}", code="IR307")
    count = rank - 1 if kind.complex_in else rank
    if axes_shape.rank_is_static and len(axes_shape) == 1 and axes_shape[0].min > count:
        raise OpError(f"axes has {axes_shape[0]} values but the data {data} has only {count} "
                      f"axes to transform", code="IR307")
    dims = list(data.dims[:count])
    axes_v = ctx.input_value(1)
    if axes_v is None:
        dims = [Dimension.dynamic()] * count
    else:
        axes = _axes(axes_v, rank, kind.complex_in)
        sizes_v = ctx.input_value(2) if has_sizes else None
        if has_sizes and sizes_v is None:
            for a in axes:
                dims[a] = Dimension.dynamic()
        else:
            sizes = _signal_sizes(sizes_v, len(axes)) if has_sizes else [-1] * len(axes)
            for a, s in zip(axes, sizes):
                if s != -1:
                    dims[a] = Dimension.static(s)
            last = axes[-1] if axes else None
            if last is not None and kind.type == "RDFT":
                dims[last] = _half(dims[last])
            if last is not None and kind.type == "IRDFT" and sizes[-1] == -1:
                dims[last] = _full(dims[last])
    if kind.complex_out:
        dims.append(Dimension.static(2))
    return [TensorType(et, PartialShape(dims))]


def run(kind: Kind, data, axes, signal_size=None):
    ct = compute_dtype(data.dtype)
    x = data.astype(ct, copy=False)
    ax = _axes(axes, data.ndim, kind.complex_in)
    if kind.complex_in:
        z = np.empty(x.shape[:-1], np.complex64 if ct == np.float32 else np.complex128)
        z.real, z.imag = x[..., 0], x[..., 1]
        x = z
    sizes = [-1] * len(ax) if signal_size is None else _signal_sizes(signal_size, len(ax))
    s = [x.shape[a] if v == -1 else v for a, v in zip(ax, sizes)]
    if kind.type == "IRDFT" and ax and sizes[-1] == -1:
        s[-1] = 2 * (x.shape[ax[-1]] - 1)
    out_shape = list(x.shape)
    for a, n in zip(ax, s):
        out_shape[a] = n
    if kind.type == "RDFT" and ax:
        out_shape[ax[-1]] = s[-1] // 2 + 1
    if not ax:
        y = x
    elif 0 in out_shape or 0 in x.shape:
        y = np.zeros(out_shape, ct)
    elif kind.type == "DFT":
        y = np.fft.fftn(x, s, ax)
    elif kind.type == "IDFT":
        y = np.fft.ifftn(x, s, ax)
    elif kind.type == "RDFT":
        y = np.fft.rfftn(x, s, ax)
    else:
        y = np.fft.irfftn(x, s, ax)
    if kind.complex_out:
        y = np.stack([y.real, y.imag], axis=-1) if np.iscomplexobj(y) \
            else np.stack([y, np.zeros_like(y)], axis=-1)
    elif np.iscomplexobj(y):
        y = y.real
    return narrow(np.ascontiguousarray(y, dtype=ct), data.dtype)


def _constant(node, i: int):
    source = node.inputs[i].source if i < len(node.inputs) else None
    if source is None or source.node.op is None or source.node.op.spec.role != "constant":
        return None
    return as_int64(np.asarray(source.node.value)).reshape(-1)


def openvino_refuses(node) -> str | None:
    """Where OpenVINO's CPU plugin refuses, crashes on or miscomputes RDFT and IRDFT
    (docs/compatibility.md)."""
    kind = node.op.spec.type
    axes = _constant(node, 1)
    sizes = _constant(node, 2) if len(node.inputs) > 2 else None
    data = node.inputs[0].source.partial_shape if node.inputs[0].source is not None else None
    if axes is None or len(node.inputs) > 2 and sizes is None or data is None \
            or not data.is_static:
        return (f"OpenVINO's CPU plugin refuses {kind} with dynamic dims or non-constant axes "
                f"or signal sizes (docs/compatibility.md)")
    shape = data.to_shape()
    rank = len(shape) - 1 if kind == "IRDFT" else len(shape)
    axes = [int(a) % rank for a in axes]
    if sizes is not None and (sizes == -1).any():
        return f"OpenVINO's CPU plugin refuses {kind} with -1 in signal_size"
    if kind == "RDFT" and sizes is not None and any(n > shape[a] for a, n in zip(axes, sizes)):
        return "OpenVINO's CPU plugin refuses RDFT with a signal size beyond its axis"
    if kind == "IRDFT":
        if sizes is not None and ((sizes == 1).any() or any(
                n != shape[a] for a, n in zip(axes[:-1], sizes[:-1]))):
            return ("OpenVINO's CPU plugin computes IRDFT wrong with a signal size of 1 or on "
                    "an axis other than the last (docs/compatibility.md)")
        if sizes is None and axes and shape[axes[-1]] == 1:
            return "OpenVINO's CPU plugin crashes on IRDFT with an output axis of 0"
    return None


def _make(kind: Kind) -> type[Op]:
    data_doc = ("complex data [..., 2] (last axis: real, imaginary)" if kind.complex_in
                else "real data")
    axis_range = "[-(r-1), r-2] of data of rank r (the complex tensor's axes)" \
        if kind.complex_in else "[-r, r-1]"
    out_doc = {"DFT": "the transform, complex [..., 2]; the transformed axes have their "
                      "signal sizes",
               "IDFT": "the inverse transform, complex [..., 2]",
               "RDFT": "complex [..., 2]; the last transformed axis has n//2+1 values",
               "IRDFT": "real; the last transformed axis has its signal size, or 2*(m-1)"}
    spec = OpSpec(
        type=kind.type,
        numerics="accumulating",
        since=kind.since,
        until=16,
        inputs=(
            Input("data", T, Rank(min=2 if kind.complex_in else 1), doc=data_doc),
            Input("axes", SHAPE_INDEX, VECTOR,
                  doc=f"the axes to transform, each once, in {axis_range}"),
            Input("signal_size", SHAPE_INDEX, VECTOR, optional=True,
                  doc="one size per axis: the axis is trimmed or zero-padded to it first (-1: "
                      "its own size)"),
        ),
        outputs=(Output("output", out_doc[kind.type], type=T),),
        doc=kind.doc,
    )

    def kernel(data, axes, signal_size=None):
        return run(kind, data, axes, signal_size)

    members = {"spec": spec, "__module__": __name__,
               "infer": staticmethod(lambda ctx: infer(ctx, kind)),
               "kernel": staticmethod(kernel)}
    if kind.type in ("RDFT", "IRDFT"):
        members["openvino_refuses"] = staticmethod(openvino_refuses)
    return type(kind.type, (Op,), members)


for _kind in KINDS:
    register(_make(_kind))
