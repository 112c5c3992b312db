"""The rules MaxPool and AvgPool share: window attributes, output sizes, the kernel glue."""

from __future__ import annotations

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.ir.shape_rules import normalize_axis
from irexec.kernels import windows as kwin
from irexec.ops import windows
from irexec.ops.spec import Attr

KERNEL = Attr("kernel", "uint_list", doc="the window's size on each spatial axis (at least 1)")
NAMES = ("kernel", "strides", "dilations", "pads_begin", "pads_end")


def dilations_of(attrs: dict, count: int) -> tuple[int, ...]:
    """The dilations attribute; none given (absent or empty) means 1 on every axis."""
    return tuple(attrs.get("dilations") or ()) or (1,) * count


def spatial_shape(ctx) -> PartialShape:
    """The output shape [N, C, *out] of a pooling layer; OpError IR345, IR346 or IR347 when the
    attributes do not fit the data."""
    data = ctx.input_shape(0)
    attrs = dict(ctx.attrs)
    nsp = len(attrs["kernel"])
    if data.rank_is_static and len(data) - 2 != nsp:
        raise OpError(f"kernel has {nsp} value{'s' * (nsp != 1)} ({_show(attrs['kernel'])}) "
                      f"but the data {data} has {len(data) - 2} spatial axes; give one value "
                      f"per spatial axis", code="IR345")
    attrs["dilations"] = dilations_of(attrs, nsp)
    windows.check_attrs(attrs, nsp, NAMES)
    if not data.rank_is_static:
        return PartialShape([Dimension.dynamic()] * (nsp + 2))
    spatial = windows.spatial_dims(data, attrs["kernel"], attrs["strides"], attrs["dilations"],
                                   attrs["pads_begin"], attrs["pads_end"], attrs["auto_pad"],
                                   attrs.get("rounding_type", "floor"))
    return PartialShape([data[0], data[1], *spatial])


def index_axis(ctx) -> None:
    """MaxPool's ``axis`` in [-rank, rank-1] (IR306); its index type i32 or i64 (IR302)."""
    data = ctx.input_shape(0)
    normalize_axis(ctx.attrs["axis"], data.rank, "axis")
    if ctx.attrs["index_element_type"].name not in ("i32", "i64"):
        raise OpError(f"index_element_type is {ctx.attrs['index_element_type']}; MaxPool's "
                      f"indices are i32 or i64", code="IR302")


def _show(values) -> str:
    return ",".join(str(v) for v in values) or "empty"


def geometry(data, attrs):
    """(kernel, strides, dilations, pads_begin, pads_end, out) for this call's data."""
    return geometry_of(data.shape, attrs)


def geometry_of(shape, attrs):
    """:func:`geometry` for data of this (static) shape."""
    kernel = attrs["kernel"]
    dil = dilations_of(attrs, len(kernel))
    pb, pe, out = kwin.geometry(tuple(shape)[2:], kernel, attrs["strides"], dil,
                                attrs["pads_begin"], attrs["pads_end"], attrs["auto_pad"],
                                attrs.get("rounding_type", "floor"))
    return kernel, attrs["strides"], dil, pb, pe, out
