"""Hand-written IR for the inference tests: one op fed by a data Parameter and a second input
(a Parameter, or a Const with values), feeding a Result."""

from __future__ import annotations

import numpy as np

from tests.helpers_ir import const, layer, net, parameter, precision_of, result

# element type name -> little-endian numpy dtype of its bytes in the .bin
LE = {"boolean": "u1", "i8": "<i1", "i32": "<i4", "i64": "<i8", "u8": "u1", "u64": "<u8",
      "f16": "<f2", "f32": "<f4", "f64": "<f8"}


def dims_of(shape: str):
    """Port dims for a shape string: static sizes as written, anything else -1; None for '...'."""
    if shape.strip() == "...":
        return None
    if shape.strip() == "":
        return []
    return [int(d) if d.strip().isdigit() else -1 for d in shape.split(",")]


def one_op(type_, data_shape, second_shape, attrs, *, second_type="i64", values=None,
           data_type="f32", out_dims="same", version="opset1"):
    """Layers: 0 data (Parameter), 1 second input (Parameter, or Const when ``values`` is given),
    2 the op named "op", 3 Result. ``out_dims``: the op's output <dim>s ("same" = the data's).
    Returns (xml, bin bytes)."""
    in_dims, second_dims = dims_of(data_shape), dims_of(second_shape)
    if values is None:
        second, weights = parameter(1, "second", second_shape, second_type, dims=second_dims), b""
    else:
        weights = np.asarray(values, LE[second_type]).tobytes()
        second = const(1, "second", second_type, second_shape, 0, len(weights), dims=second_dims)
    out = in_dims if out_dims == "same" else out_dims
    xml = net([parameter(0, "data", data_shape, data_type, dims=in_dims), second,
               layer(2, "op", type_, data=attrs, inputs=[in_dims, second_dims], outputs=[out],
                     version=version, precision=precision_of(data_type)),
               result(3, "out", out)],
              [(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 3, 0)])
    return xml, weights


def reverse(data_shape, axes_shape, mode="index", **kw):
    return one_op("Reverse", data_shape, axes_shape, {} if mode is None else {"mode": mode},
                  **kw)


def reverse_sequence(data_shape, lengths_shape, batch_axis=0, seq_axis=1, **kw):
    kw.setdefault("second_type", "i32")
    return one_op("ReverseSequence", data_shape, lengths_shape,
                  {"batch_axis": batch_axis, "seq_axis": seq_axis}, **kw)
