"""What convolution and pooling specs share: their window attributes and the checks on them.

Every op that slides a window over the spatial axes of [N, C, *spatial] data (Convolution,
GroupConvolution, their BackpropData forms, MaxPool, AvgPool) declares its strides, dilations,
pads and auto_pad with the attributes below and checks them with :func:`check_attrs`; the
output sizes come from :func:`spatial_dims` (the window arithmetic itself is
:mod:`irexec.ir.shape_rules`', which the kernels use too). Codes: IR345 (one value per spatial
axis), IR346 (the window does not fit), IR347 (a zero stride, dilation or kernel size, a negative
pad), IR348 (channel counts that do not match).
"""

from __future__ import annotations

from collections.abc import Sequence

from irexec.errors import OpError
from irexec.ir import shape_rules
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.spec import Attr, TypeSet

# The element types the compute kernels work with: numpy's integers and floats (narrow and f8
# types are converted to one of these by a Convert layer in real models).
ARITH = TypeSet(("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32",
                 "f64"))
REAL = TypeSet(("f16", "bf16", "f32", "f64"))

AUTO_PAD_VALUES = ("explicit", "same_upper", "same_lower", "valid")


def strides(doc="the step between windows on each spatial axis (at least 1)") -> Attr:
    return Attr("strides", "uint_list", doc=doc)


def dilations(default=None, doc="the distance between kernel taps on each spatial axis (at "
                                "least 1)") -> Attr:
    return Attr("dilations", "uint_list", **({} if default is None else {"default": default}),
                doc=doc)


def pads(name: str, signed: bool, where: str) -> Attr:
    return Attr(name, "int_list" if signed else "uint_list",
                doc=f"elements of padding {where} each spatial axis (at least 0); ignored unless "
                    f"auto_pad is explicit")


def auto_pad(default="explicit") -> Attr:
    return Attr("auto_pad", "enum", default=default, values=AUTO_PAD_VALUES,
                doc="explicit (pads_begin, pads_end), valid (no padding), same_upper or "
                    "same_lower (pad so that ceil(size / stride) windows fit; an odd total "
                    "pads one more at the end, or at the beginning)")


def rounding_type(values=("floor", "ceil")) -> Attr:
    return Attr("rounding_type", "enum", default="floor", values=values,
                doc="how to count windows: floor (whole windows only), ceil (one more partial "
                    "window)" + (", ceil_torch (ceil, but no window may start in the end "
                                 "padding)" if "ceil_torch" in values else ""))


def num_spatial(*candidates: tuple[PartialShape, int]) -> int | None:
    """The number of spatial axes: from the first shape of static rank, minus its non-spatial
    dims (``(shape, non_spatial)`` pairs); None when every rank is dynamic."""
    for shape, non_spatial in candidates:
        if shape.rank_is_static:
            return len(shape) - non_spatial
    return None


def check_attrs(attrs: dict, count: int | None, names: Sequence[str],
                positive: Sequence[str] = ("strides", "dilations", "kernel"),
                non_negative: Sequence[str] = ("pads_begin", "pads_end")) -> None:
    """OpError IR345 when an attribute has a length other than ``count`` (the spatial axes;
    None: only the lengths must agree), IR347 when a stride, dilation or kernel size is 0 or a
    pad negative."""
    present = [n for n in names if n in attrs and attrs[n] is not None]
    if count is None and present:
        count = len(attrs[present[0]])
    for name in present:
        if len(attrs[name]) != count:
            raise OpError(f"{name} has {len(attrs[name])} value{'s' * (len(attrs[name]) != 1)} "
                          f"({_show(attrs[name])}) but the data has {count} spatial "
                          f"ax{'es' if count != 1 else 'is'}; give one value per spatial axis",
                          code="IR345")
    for name in present:
        values = attrs[name]
        if name in positive and any(v < 1 for v in values):
            raise OpError(f"{name} ({_show(values)}) has a value below 1; every {name[:-1]} "
                          f"is at least 1", code="IR347")
        if name in non_negative and any(v < 0 for v in values):
            raise OpError(f"{name} ({_show(values)}) has a negative value; pads are at "
                          f"least 0", code="IR347")


def _show(values) -> str:
    return ",".join(str(v) for v in values) or "empty"


def spatial_dims(data: PartialShape, kernel: Sequence[int | None], strides_: Sequence[int],
                 dilations_: Sequence[int], pads_begin: Sequence[int], pads_end: Sequence[int],
                 auto_pad_: str, rounding: str = "floor") -> list[Dimension]:
    """The output's spatial dims for data [N, C, *spatial] (static rank). ``kernel`` sizes may be
    None where the weights' dims are not known. OpError IR346 when the dilated kernel is longer
    than the padded input."""
    dims = data.dims[2:]
    out = []
    for i, (dim, k, s, d) in enumerate(zip(dims, kernel, strides_, dilations_)):
        if auto_pad_ in ("same_upper", "same_lower"):
            if dim.is_static and k is not None:
                pb, pe = shape_rules.same_padding(dim.min, k, s, d, auto_pad_ == "same_upper")
                out.append(shape_rules.window_dim(dim, shape_rules.dilated(k, d), s, pb, pe,
                                                  rounding, i))
            else:
                out.append(shape_rules.ceil_div_dim(dim, s))
        elif k is None:
            out.append(Dimension.dynamic())
        else:
            pb, pe = (0, 0) if auto_pad_ == "valid" else (pads_begin[i], pads_end[i])
            out.append(shape_rules.window_dim(dim, shape_rules.dilated(k, d), s, pb, pe,
                                              rounding, i))
    return out


def kernel_sizes(weights: PartialShape, count: int) -> list[int | None]:
    """The last ``count`` dims of the weights: each size, or None where it is not static."""
    if not weights.rank_is_static:
        return [None] * count
    return [d.min if d.is_static else None for d in weights.dims[len(weights) - count:]]


def channels_mismatch(have: Dimension, want: Dimension) -> bool:
    return have.merge(want) is None
