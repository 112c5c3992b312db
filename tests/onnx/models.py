"""Small ONNX models for the tests, made with onnx.helper."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper


def reverse_sequence_model(shape, dtype=TensorProto.FLOAT, *, opset=13, lens_type=TensorProto.INT64,
                           lens=None, batch_size=None, node_name="rs", **attrs) -> onnx.ModelProto:
    """x -> ReverseSequence(x, lens) -> y; ``lens`` given becomes an initializer."""
    b = attrs.get("batch_axis", 1)
    n = batch_size if batch_size is not None else shape[b]
    node = helper.make_node("ReverseSequence", ["x", "lens"], ["y"], name=node_name, **attrs)
    inputs = [helper.make_tensor_value_info("x", dtype, list(shape))]
    inits = []
    if lens is None:
        inputs.append(helper.make_tensor_value_info("lens", lens_type, [n]))
    else:
        inits.append(helper.make_tensor("lens", lens_type, [len(lens)], list(lens)))
    graph = helper.make_graph([node], "rs", inputs,
                              [helper.make_tensor_value_info("y", dtype, list(shape))], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def chain_model(opset=13) -> onnx.ModelProto:
    """x, lens -> ReverseSequence -> Identity -> Cast(int32) = out_i32; also y (float)."""
    nodes = [helper.make_node("ReverseSequence", ["x", "lens"], ["y"], name="rs", time_axis=1,
                              batch_axis=0),
             helper.make_node("Identity", ["y"], ["y_copy"], name="same"),
             helper.make_node("Cast", ["y_copy"], ["out_i32"], name="to_int", to=TensorProto.INT32)]
    graph = helper.make_graph(
        nodes, "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5, 2]),
         helper.make_tensor_value_info("lens", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info("out_i32", TensorProto.INT32, [3, 5, 2]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 5, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def chain_inputs(seed=0):
    rng = np.random.default_rng(seed)
    return {"x": (rng.standard_normal((3, 5, 2)) * 50).astype(np.float32),
            "lens": np.array([0, 5, 3], np.int64)}
