"""AdaptiveAvgPool-8 and AdaptiveMaxPool-8: pooling to a given output size, each output element
covering input elements floor(i*I/O) to ceil((i+1)*I/O) - 1 on every spatial axis."""

from irexec.ir.element_type import ElementType
from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.kernels import adaptive_pool
from irexec.ops import windows
from irexec.ops.domains import as_int64
from irexec.ops.spec import register
from irexec.ops.spec import (SHAPE_INDEX, VECTOR, Attr, Input, Op, OpSpec, Output, Rank, TensorType,
                             TypeVar)

T = TypeVar("T", windows.REAL)
DATA = Input("data", T, Rank(min=3, max=5), doc="[N, C, *spatial]: 1 to 3 spatial axes")
OUTPUT_SHAPE = Input("output_shape", SHAPE_INDEX, VECTOR,
                     doc="the output's spatial sizes, one per spatial axis, each at least 1")


def _sizes(values, count: int) -> list[int]:
    sizes = [int(v) for v in as_int64(values)]
    if len(sizes) != count:
        raise OpError(f"output_shape has {len(sizes)} values but the data has {count} spatial "
                      f"axes; give one size per spatial axis", code="IR345")
    if any(v < 1 for v in sizes):
        raise OpError(f"output_shape {sizes} has a size below 1", code="IR347")
    return sizes


def _shape(ctx) -> PartialShape:
    data, sizes = ctx.input_shape(0), ctx.input_shape(1)
    if not data.rank_is_static:
        return PartialShape.dynamic()
    nsp = len(data) - 2
    if sizes.rank_is_static and not sizes[0].contains(nsp):
        raise OpError(f"output_shape has {sizes[0]} values but the data {data} has {nsp} "
                      f"spatial axes; give one size per spatial axis", code="IR345")
    values = ctx.input_value(1)
    spatial = [Dimension.dynamic()] * nsp if values is None else \
        [Dimension.static(v) for v in _sizes(values, nsp)]
    return PartialShape([data[0], data[1], *spatial])


@register
class AdaptiveAvgPool(Op):
    spec = OpSpec(
        type="AdaptiveAvgPool",
        since=8,
        until=16,
        inputs=(DATA, OUTPUT_SHAPE),
        outputs=(Output("output", "[N, C, *output_shape]: the mean of each window", type=T),),
        doc="Average pooling with windows chosen to give an output of the given size.",
    )

    @staticmethod
    def infer(ctx):
        return [TensorType(ctx.output_element_types(1)[0], _shape(ctx))]

    @staticmethod
    def kernel(data, output_shape):
        return adaptive_pool.avg(data, tuple(_sizes(output_shape, data.ndim - 2)))


@register
class AdaptiveMaxPool(Op):
    spec = OpSpec(
        type="AdaptiveMaxPool",
        numerics="exact",  # selects: the largest value of each window, as it is
        since=8,
        until=16,
        attrs=(Attr("index_element_type", "element_type", default=ElementType.i64,
                    doc="the indices' element type: i32 or i64"),),
        inputs=(DATA, OUTPUT_SHAPE),
        outputs=(Output("output", "[N, C, *output_shape]: the largest value of each window",
                        type=T),
                 Output("indices", "where each largest value is, as a flat index into its "
                                   "channel's spatial elements (the first one in a tie)",
                        type="@index_element_type")),
        doc="Max pooling with windows chosen to give an output of the given size.",
    )

    @staticmethod
    def infer(ctx):
        if ctx.attrs["index_element_type"].name not in ("i32", "i64"):
            raise OpError(f"index_element_type is {ctx.attrs['index_element_type']}; the "
                          f"indices are i32 or i64", code="IR302")
        shape = _shape(ctx)
        t0, t1 = ctx.output_element_types(2)
        return [TensorType(t0, shape), TensorType(t1, shape)]

    @staticmethod
    def kernel(data, output_shape, *, index_element_type):
        return adaptive_pool.max_with_indices(data, tuple(_sizes(output_shape, data.ndim - 2)),
                                              index_element_type.dtype)
