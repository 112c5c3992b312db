"""The rules and kernel glue the four convolutions share: forward and backward data, plain and
grouped. Only the weights' layout differs:

=============================== =============================== ======================
op                              weights                         data channels
=============================== =============================== ======================
Convolution                     [C_OUT, C_IN, *K]               C_IN
GroupConvolution                [G, C_OUT/G, C_IN/G, *K]        C_IN
ConvolutionBackpropData         [C_IN, C_OUT, *K]               C_IN
GroupConvolutionBackpropData    [G, C_IN/G, C_OUT/G, *K]        C_IN
=============================== =============================== ======================
"""

from __future__ import annotations

import numpy as np

from irexec.errors import OpError
from irexec.ir import shape_rules
from irexec.ir.shape import Dimension, PartialShape
from irexec.kernels import conv, windows as kwin
from irexec.kernels.numeric import narrow
from irexec.ops import windows
from irexec.ops.domains import as_int64
from irexec.ops.spec import Attr, TensorType

WINDOW_ATTRS = ("strides", "dilations", "pads_begin", "pads_end")


def _product(*dims: Dimension) -> Dimension:
    lo, hi = 1, 1
    for d in dims:
        lo *= d.min
        hi = None if hi is None or d.max is None else hi * d.max
    return Dimension(lo, hi)


def _quotient(total: Dimension, part: Dimension) -> Dimension:
    """The dims ``total / part`` can be (for channel counts split into groups)."""
    if total.is_static and part.is_static and part.min:
        return Dimension.static(total.min // part.min)
    return Dimension.dynamic()


def _channels(data: PartialShape, weights: PartialShape, grouped: bool, backward: bool):
    """(the data's channel dim as the weights need it, the output's channel dim); OpError
    IR348 when the data's channels cannot be what the weights take."""
    if not weights.rank_is_static:
        return None, Dimension.dynamic()
    if grouped:
        g, a, b = weights[0], weights[1], weights[2]
        c_in, c_out = (a, b) if backward else (b, a)
        want, out = _product(g, c_in), _product(g, c_out)
        if data.rank_is_static and windows.channels_mismatch(data[1], want):
            raise OpError(f"the data has {data[1]} channels but the weights {weights} take "
                          f"{want} ({g} groups of {c_in})", code="IR348")
        return want, out
    c_in, c_out = (weights[0], weights[1]) if backward else (weights[1], weights[0])
    if data.rank_is_static and windows.channels_mismatch(data[1], c_in):
        where = "dim 0" if backward else "dim 1"
        raise OpError(f"the data has {data[1]} channels but the weights {weights} take {c_in} "
                      f"(their {where})", code="IR348")
    return c_in, c_out


def _ranks(data: PartialShape, weights: PartialShape, grouped: bool) -> int | None:
    """The number of spatial axes; OpError IR305 when the weights' rank does not go with the
    data's."""
    extra = 3 if grouped else 2
    if data.rank_is_static and weights.rank_is_static and len(weights) != len(data) + grouped:
        raise OpError(f"the weights have shape {weights} (rank {len(weights)}) but data of rank "
                      f"{len(data)} needs weights of rank {len(data) + grouped}", code="IR305")
    if weights.rank_is_static and len(weights) < extra + 1:
        raise OpError(f"the weights have shape {weights} (rank {len(weights)}); they need rank "
                      f"{extra + 1} to {extra + 3}", code="IR305")
    return windows.num_spatial((data, 2), (weights, extra))


def infer_forward(ctx, grouped: bool):
    data, weights = ctx.input_shape(0), ctx.input_shape(1)
    attrs = ctx.attrs
    nsp = _ranks(data, weights, grouped)
    windows.check_attrs(attrs, nsp, WINDOW_ATTRS)
    _, c_out = _channels(data, weights, grouped, backward=False)
    et = ctx.output_element_types(1)[0]
    if not data.rank_is_static:
        shape = PartialShape.dynamic() if nsp is None else \
            PartialShape([Dimension.dynamic(), c_out] + [Dimension.dynamic()] * nsp)
        return [TensorType(et, shape)]
    spatial = windows.spatial_dims(data, windows.kernel_sizes(weights, nsp), attrs["strides"],
                                   attrs["dilations"], attrs["pads_begin"], attrs["pads_end"],
                                   attrs["auto_pad"])
    return [TensorType(et, PartialShape([data[0], c_out, *spatial]))]


def run_forward(data, weights, strides, dilations, pads_begin, pads_end, auto_pad):
    """``weights`` in the grouped layout [G, C_OUT/G, C_IN/G, *K]."""
    pb, _, out = kwin.geometry(data.shape[2:], weights.shape[3:], strides, dilations,
                               pads_begin, pads_end, auto_pad)
    return narrow(conv.forward(data, weights, strides, dilations, pb, out), data.dtype)


def forward_scratch(grouped: bool):
    """The op spec's ``scratch``: the padded data and a band of columns (kernels/conv.py)."""
    def scratch(node, inputs, outputs):
        shape = inputs[0].shape.to_shape()
        w_shape = inputs[1].shape.to_shape()
        w_shape = w_shape if grouped else (1,) + w_shape
        pb, _, out = kwin.geometry(shape[2:], w_shape[3:], node.attrs["strides"],
                                   node.attrs["dilations"], node.attrs["pads_begin"],
                                   node.attrs["pads_end"], node.attrs["auto_pad"])
        dtype = inputs[0].element_type.dtype
        nbytes = conv.forward_scratch(shape, dtype, w_shape, node.attrs["strides"],
                                      node.attrs["dilations"], pb, out)
        return (nbytes, "the padded data and the columns of the windows") if nbytes else None
    return scratch


def backward_scratch(grouped: bool):
    """The op spec's ``scratch``: the whole transposed result before its padding is cut, and a
    band of columns (kernels/conv.py)."""
    def scratch(node, inputs, outputs):
        shape = inputs[0].shape.to_shape()
        w_shape = inputs[1].shape.to_shape()
        w_shape = w_shape if grouped else (1,) + w_shape
        out = outputs[0].shape.to_shape()[2:]
        wanted = list(out) if len(inputs) > 2 else None
        pb, _ = backward_pads(shape[2:], w_shape[3:], wanted, node.attrs)
        dtype = inputs[0].element_type.dtype
        nbytes = conv.backward_scratch(shape, dtype, w_shape, node.attrs["strides"],
                                       node.attrs["dilations"], pb, out)
        return (nbytes, "the transposed result before its padding is cut, and the columns "
                        "of the data") if nbytes else None
    return scratch


# --- backward data ------------------------------------------------------------------------------

def backward_pads(sizes, kernel, out_sizes, attrs) -> tuple[list[int], list[int]]:
    """The padding cut from the full transposed result on each axis. ``out_sizes`` None: no
    output_shape input (auto_pad other than explicit means no padding); else the wanted sizes
    (same_upper/same_lower split the surplus, ceil at the start for same_upper)."""
    auto = attrs["auto_pad"]
    nsp = len(kernel)
    if auto == "explicit":
        return list(attrs["pads_begin"]), list(attrs["pads_end"])
    if out_sizes is None or auto == "valid":
        return [0] * nsp, [0] * nsp
    begins, ends = [], []
    for i in range(nsp):
        full = (sizes[i] - 1) * attrs["strides"][i] + shape_rules.dilated(
            kernel[i], attrs["dilations"][i])
        total = max(full - out_sizes[i] + _output_padding(attrs, nsp)[i], 0)
        small = total // 2
        begins.append(total - small if auto == "same_upper" else small)
        ends.append(small if auto == "same_upper" else total - small)
    return begins, ends


def _output_padding(attrs, nsp: int) -> tuple[int, ...]:
    return tuple(attrs["output_padding"]) or (0,) * nsp


def _output_shape_values(ctx, nsp: int | None) -> list[int] | None:
    """The output_shape input's values when known before running; OpError IR345 when their
    count is not the number of spatial axes, IR347 for a negative size."""
    if ctx.num_inputs < 3:
        return None
    shape = ctx.input_shape(2)
    if nsp is not None and shape.rank_is_static and len(shape) == 1 \
            and not shape[0].contains(nsp):
        raise OpError(f"output_shape has {shape[0]} values but the data has {nsp} spatial "
                      f"axes; give one size per spatial axis", code="IR345")
    values = ctx.input_value(2)
    if values is None:
        return None
    sizes = [int(v) for v in as_int64(values)]
    if any(v < 0 for v in sizes):
        raise OpError(f"output_shape {sizes} has a negative size", code="IR347")
    return sizes


def infer_backward(ctx, grouped: bool):
    data, weights = ctx.input_shape(0), ctx.input_shape(1)
    attrs = ctx.attrs
    nsp = _ranks(data, weights, grouped)
    if nsp is None and ctx.num_inputs >= 3:
        s = ctx.input_shape(2)
        if s.rank_is_static and len(s) == 1 and s[0].is_static:
            nsp = s[0].min
    windows.check_attrs(attrs, nsp, WINDOW_ATTRS + (("output_padding",)
                                                    if attrs["output_padding"] else ()))
    _, c_out = _channels(data, weights, grouped, backward=True)
    wanted = _output_shape_values(ctx, nsp)
    et = ctx.output_element_types(1)[0]
    if nsp is None:
        return [TensorType(et, PartialShape.dynamic())]
    batch = data[0] if data.rank_is_static else Dimension.dynamic()
    if wanted is not None:
        spatial = [Dimension.static(v) for v in wanted]
    elif ctx.num_inputs >= 3 or not data.rank_is_static:
        spatial = [Dimension.dynamic()] * nsp
    else:
        kernel = windows.kernel_sizes(weights, nsp)
        pb, pe = backward_pads(None, kernel, None, attrs)
        spatial = [_backward_dim(d, k, s, dl, b, e, p, i) for i, (d, k, s, dl, b, e, p) in
                   enumerate(zip(data.dims[2:], kernel, attrs["strides"], attrs["dilations"],
                                 pb, pe, _output_padding(attrs, nsp)))]
    return [TensorType(et, PartialShape([batch, c_out, *spatial]))]


def _backward_dim(dim: Dimension, k, stride, dilation, pb, pe, op, axis) -> Dimension:
    if k is None:
        return Dimension.dynamic()

    def size(n: int) -> int:
        return (n - 1) * stride + shape_rules.dilated(k, dilation) - pb - pe + op

    hi = None if dim.max is None else size(dim.max)
    if hi is not None and hi < 1:
        raise OpError(f"spatial axis {axis}: the transposed result has {hi + pb + pe - op} "
                      f"elements, and pads_begin {pb} + pads_end {pe} - output_padding {op} "
                      f"leave none", code="IR347")
    return Dimension(max(size(max(dim.min, 1)), 1), hi)


def run_backward(data, weights, output_shape, strides, dilations, pads_begin, pads_end,
                 auto_pad, output_padding):
    """``weights`` in the grouped layout [G, C_IN/G, C_OUT/G, *K]."""
    spatial = data.shape[2:]
    kernel = weights.shape[3:]
    nsp = len(kernel)
    attrs = {"strides": strides, "dilations": dilations, "pads_begin": pads_begin,
             "pads_end": pads_end, "auto_pad": auto_pad, "output_padding": output_padding}
    wanted = None if output_shape is None else [int(v) for v in as_int64(output_shape)]
    if wanted is not None and (len(wanted) != nsp or any(v < 0 for v in wanted)):
        raise OpError(f"output_shape {wanted} must hold {nsp} sizes of at least 0",
                      code="IR347" if len(wanted) == nsp else "IR345")
    pb, pe = backward_pads(spatial, kernel, wanted, attrs)
    if wanted is None:
        op = _output_padding(attrs, nsp)
        wanted = [(n - 1) * s + shape_rules.dilated(k, d) - b - e + p for n, k, s, d, b, e, p
                  in zip(spatial, kernel, strides, dilations, pb, pe, op)]
    y = conv.backward(data, weights, strides, dilations, pb, wanted)
    return narrow(y, data.dtype)


def as_grouped(weights: np.ndarray) -> np.ndarray:
    """Plain weights as one group."""
    return weights[None]


OUTPUT_PADDING = Attr("output_padding", "int_list", default=(),
                      doc="elements added at the end of each spatial axis of the output (at "
                          "least 0; empty means none)")
