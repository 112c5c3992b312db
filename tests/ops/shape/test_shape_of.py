"""ShapeOf-1/3: spec example, element types, dynamic shapes, OpenVINO conformance."""

import numpy as np
import pytest

from irexec.errors import IRError
from irexec.ir.shape import PartialShape
from tests.ops.build import run_op
from tests.ops.shapeops_oracle import check, openvino


def test_spec_example():
    """ShapeOf of [2,3,224,224] is the 1-D tensor [2,3,224,224]."""
    (out,), model = run_op("ShapeOf", np.zeros((2, 3, 224, 224), np.float32), version="opset3")
    assert out.tolist() == [2, 3, 224, 224] and out.dtype == np.int64
    assert model.outputs[0].partial_shape == PartialShape([4])


@pytest.mark.parametrize("shape", [(), (0,), (5, 0, 2), (1, 1, 1, 1, 1, 1, 7)])
def test_any_rank_and_empty(shape):
    (out,), _ = run_op("ShapeOf", np.zeros(shape, np.uint8), version="opset1")
    assert out.tolist() == list(shape) and out.shape == (len(shape),)


def test_i32_output_and_strings():
    data = np.array([["a", "bc"]] * 3, dtype=object)
    (out,), _ = run_op("ShapeOf", data, version="opset3", output_type="i32")
    assert out.dtype == np.int32 and out.tolist() == [3, 2]


def test_dynamic_rank_gives_a_dynamic_length():
    (out,), model = run_op("ShapeOf", np.zeros((2, 5), np.float32), version="opset3",
                           shapes={0: None})
    assert model.outputs[0].partial_shape == PartialShape([-1])
    assert out.tolist() == [2, 5]


def test_output_type_must_be_an_index_type():
    with pytest.raises(IRError) as e:
        run_op("ShapeOf", np.zeros(2, np.float32), version="opset3", output_type="f32")
    assert e.value.code == "IR302"


@pytest.mark.parametrize("opset", ["opset1", "opset3"])
def test_openvino_conformance_with_dynamic_dims(tmp_path, opset):
    openvino()
    import importlib
    ops = importlib.import_module(f"openvino.{opset}")
    p = ops.parameter([-1, 3, -1], np.float32)
    outs = [ops.shape_of(p).output(0)]
    if opset == "opset3":
        outs.append(ops.shape_of(p, "i32").output(0))
    feeds = [[np.zeros(s, np.float32)] for s in [(1, 3, 4), (6, 3, 1), (2, 3, 2)]]
    check(tmp_path, outs, [p], feeds)
