"""The shape, sort and generation ops write back: irexec.save_model, then irexec and OpenVINO
read the file, and irexec's results are unchanged."""

import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder

C = np.int64


def _model():
    b = ModelBuilder("shapeops")
    x = b.parameter("x", "f32", [-1, 4])
    i = b.parameter("i", "i64", [3])
    outs = [
        b.op("ShapeOf", x, version="opset3", output_type="i32"),
        b.op("ShapeOf", x, version="opset1"),
        b.op("Range", b.constant(C(0)), b.constant(C(5)), b.constant(C(2)), version="opset4",
             output_type="f32"),
        b.op("Range", b.constant(np.int32(1)), b.constant(np.int32(4)),
             b.constant(np.int32(1)), version="opset1"),
        *b.op("TopK", x, b.constant(C(2)), version="opset11", axis=1, mode="min",
              sort="index", index_element_type="i64", stable=True),
        *b.op("TopK", x, b.constant(C(1)), version="opset1", axis=-1, mode="max",
              sort="value"),
        b.op("NonZero", x, version="opset3", output_type="i32"),
        *b.op("Unique", i, version="opset10", sorted=False, index_element_type="i32"),
        b.op("Bucketize", x, b.constant(np.array([0.0, 1.0], np.float32)), version="opset3",
             with_right_bound=False),
        b.op("SearchSorted", b.constant(np.array([0.0, 1.0, 2.0], np.float32)), x,
             version="opset15", right_mode=True),
        b.op("CumSum", x, b.constant(C(1)), version="opset3", exclusive=True, reverse=True),
        b.op("OneHot", i, b.constant(C(4)), b.constant(np.float32(1)),
             b.constant(np.float32(0)), version="opset16", axis=0,
             negative_indices_mode="normalize"),
        b.op("OneHot", i, b.constant(C(4)), b.constant(np.float32(1)),
             b.constant(np.float32(0)), version="opset1", axis=-1),
        b.op("Eye", b.constant(C(2)), b.constant(C(3)), b.constant(C(1)),
             b.constant(np.array([2], C)), version="opset9", output_type="f32"),
        b.op("Identity", x, version="opset16"),
        b.op("Einsum", x, x, version="opset7", equation="ij,kj->ik"),
        b.op("GatherTree", b.constant(np.ones((2, 1, 2), np.int32)),
             b.constant(np.zeros((2, 1, 2), np.int32)), b.constant(np.array([2], np.int32)),
             b.constant(np.int32(0)), version="opset1"),
    ]
    for k, o in enumerate(outs):
        b.result(o, f"out{k}")
    return b.build()


FEED = {"x": np.array([[0.5, -1, 2, 0], [3, 0, 0, 1.5]], np.float32),
        "i": np.array([2, -1, 2], np.int64)}


def test_saved_model_reads_back_and_gives_the_same_results(tmp_path):
    model = _model()
    before = irexec.compile_model(model)(FEED)
    path = tmp_path / "shapeops.xml"
    irexec.save_model(model, path)
    again = irexec.read_model(path)
    assert [str(d) for d in again.diagnostics] == []
    after = irexec.compile_model(again)(FEED)
    assert list(before) == list(after)
    for key in before:
        assert before[key].dtype == after[key].dtype
        np.testing.assert_array_equal(before[key], after[key])


def test_openvino_reads_the_saved_model(tmp_path):
    ov = pytest.importorskip("openvino")
    path = tmp_path / "shapeops.xml"
    ours = _model()
    irexec.save_model(ours, path)
    model = ov.Core().read_model(str(path))
    assert len(model.outputs) == len(ours.outputs) == 22
