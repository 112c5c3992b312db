"""MaxPool-1, MaxPool-8 and MaxPool-14: the largest value of each window (8 and 14 also give its
index, and take dilations; 14 adds the ceil_torch rounding)."""

from irexec.ir.element_type import ElementType
from irexec.kernels import pool
from irexec.ops import windows
from irexec.ops.pooling import common
from irexec.ops.spec import register
from irexec.ops.spec import Attr, Input, Op, OpSpec, Output, Rank, TensorType, TypeVar

T = TypeVar("T", windows.ARITH)
DATA = Input("data", T, Rank(min=3, max=5), doc="[N, C, *spatial]: 1 to 3 spatial axes")
VALUES = Output("output", "[N, C, *out]: the largest value of each window (padding counts as "
                          "-inf)", type=T)
INDICES = Output("indices", "[N, C, *out]: where each largest value is, as a flat index into "
                            "the data (dims from axis on), the first one in a tie",
                 type="@index_element_type")
INDEX_ATTRS = (
    Attr("index_element_type", "element_type", default=ElementType.i64,
         doc="the indices' element type: i32 or i64"),
    Attr("axis", "int", default=0,
         doc="indices count the dims from this axis on, in [-rank, rank-1]"),
)


def _attrs(rounding):
    return (
        windows.strides(),
        windows.dilations(default=(), doc="the distance between kernel taps on each spatial "
                                          "axis (at least 1; none given means 1)"),
        windows.pads("pads_begin", False, "before"),
        windows.pads("pads_end", False, "after"),
        common.KERNEL,
        windows.rounding_type(rounding),
        windows.auto_pad(),
        *INDEX_ATTRS,
    )


def _indices_scratch(node, inputs, outputs):
    """The padded block the indices are found in, when something reads them (else only the
    values are computed, without one: kernels/pool.py)."""
    if len(node.outputs) < 2 or not node.outputs[1].consumers:
        return None
    data = inputs[0]
    shape = data.shape.to_shape()
    kernel, strides, dil, pb, _, out = common.geometry_of(shape, node.attrs)
    nbytes = pool.indices_scratch(shape, data.element_type.dtype, kernel, strides, dil, pb,
                                  out)
    return (nbytes, "the padded copy of a channel its indices are found in") if nbytes \
        else None


def _values_only(data, **attrs):
    kernel, strides, dil, pb, _, out = common.geometry(data, attrs)
    return pool.max_pool(data, kernel, strides, dil, pb, out), None


def _skip_unread(unread: frozenset):
    """Converted models leave MaxPool-8/14's indices unread: then only the values are
    computed."""
    return _values_only if unread == {1} else None


class _WithIndices(Op):
    @staticmethod
    def infer(ctx):
        shape = common.spatial_shape(ctx)
        common.index_axis(ctx)
        t0, t1 = ctx.output_element_types(2)
        return [TensorType(t0, shape), TensorType(t1, shape)]

    @staticmethod
    def kernel(data, **attrs):
        kernel, strides, dil, pb, _, out = common.geometry(data, attrs)
        return pool.max_pool_indexed(data, kernel, strides, dil, pb, out,
                                     attrs["axis"] % data.ndim,
                                     attrs["index_element_type"].dtype)


@register
class MaxPool1(Op):
    spec = OpSpec(
        type="MaxPool",
        numerics="exact",  # selects: the largest value of each window, as it is
        since=1,
        until=7,
        attrs=(
            windows.strides(),
            windows.pads("pads_begin", False, "before"),
            windows.pads("pads_end", False, "after"),
            common.KERNEL,
            windows.rounding_type(),
            windows.auto_pad(),
        ),
        inputs=(DATA,),
        outputs=(VALUES,),
        doc="The largest value of each window over the spatial axes.",
    )

    @staticmethod
    def infer(ctx):
        return [TensorType(ctx.output_element_types(1)[0], common.spatial_shape(ctx))]

    @staticmethod
    def kernel(data, **attrs):
        kernel, strides, dil, pb, _, out = common.geometry(data, attrs)
        return pool.max_pool(data, kernel, strides, dil, pb, out)


@register
class MaxPool8(_WithIndices):
    spec = OpSpec(
        type="MaxPool",
        numerics="exact",  # selects: the largest value of each window, as it is
        since=8,
        until=13,
        attrs=_attrs(("floor", "ceil")),
        inputs=(DATA,),
        outputs=(VALUES, INDICES),
        scratch=_indices_scratch,
        doc="The largest value of each window, and where it is.",
        skip_unread=_skip_unread,
    )


@register
class MaxPool14(_WithIndices):
    spec = OpSpec(
        type="MaxPool",
        numerics="exact",  # selects: the largest value of each window, as it is
        since=14,
        until=16,
        attrs=_attrs(("floor", "ceil", "ceil_torch")),
        inputs=(DATA,),
        outputs=(VALUES, INDICES),
        scratch=_indices_scratch,
        doc="The largest value of each window, and where it is (PyTorch's ceil_torch "
            "rounding too).",
        skip_unread=_skip_unread,
    )

