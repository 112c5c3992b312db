"""SparseFillEmptyRows-16: the specification's examples, a dense reference, shapes, errors and
OpenVINO."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.errors import IRError
from tests.ops.build import Const, run_op
from tests.ops.shapeops_oracle import check, openvino


def test_spec_examples():
    idx, vals, empty = run_op(
        "SparseFillEmptyRows", np.array([1, 2, 3, 4], np.float32), np.array([5, 6], np.int64),
        np.array([[0, 1], [0, 3], [2, 0], [3, 1]], np.int64), np.array(9, np.float32),
        version="opset16")[0]
    assert idx.tolist() == [[0, 1], [0, 3], [1, 0], [2, 0], [3, 1], [4, 0]]
    assert vals.tolist() == [1, 2, 9, 3, 4, 9]
    assert empty.tolist() == [False, True, False, False, True]
    idx, vals, empty = run_op(
        "SparseFillEmptyRows", np.array([1, 3], np.float32), np.array([3, 3], np.int32),
        np.array([[0, 0], [2, 2]], np.int32), np.array(42, np.float32), version="opset16")[0]
    assert idx.tolist() == [[0, 0], [1, 0], [2, 2]] and vals.tolist() == [1, 42, 3]
    assert idx.dtype == np.int32 and empty.tolist() == [False, True, False]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), rows=st.integers(0, 5), cols=st.integers(1, 4),
       count=st.integers(0, 6))
def test_the_dense_picture_matches(seed, rows, cols, count):
    rng = np.random.default_rng(seed)
    if rows == 0:
        count = 0
    cells = rng.permutation(rows * cols)[:count]
    indices = np.stack([cells // cols, cells % cols], axis=1).astype(np.int64).reshape(-1, 2)
    values = rng.integers(1, 100, len(cells)).astype(np.int32)
    idx, vals, empty = run_op("SparseFillEmptyRows", values, np.array([rows, cols], np.int64),
                              indices, np.array(-5, np.int32), version="opset16")[0]
    dense = np.zeros((rows, cols), np.int64)
    dense[indices[:, 0], indices[:, 1]] = values
    had = np.zeros(rows, bool)
    had[indices[:, 0]] = True
    dense[~had, 0] = -5
    got = np.zeros((rows, cols), np.int64)
    got[idx[:, 0], idx[:, 1]] = vals
    assert np.array_equal(got, dense) and empty.tolist() == (~had).tolist()
    order = idx[:, 0] * cols + idx[:, 1]
    assert np.all(np.diff(order) > 0)  # row-major


def test_count_is_an_interval_until_values_are_known():
    _, model = run_op("SparseFillEmptyRows", np.zeros(3, np.float32), Const(np.array([4, 4])),
                      np.zeros((3, 2), np.int64), np.array(0, np.float32), version="opset16")
    layer = next(n for n in model.nodes if n.type == "SparseFillEmptyRows")
    assert str(layer.outputs[0].partial_shape) == "[3..7,2]"
    assert str(layer.outputs[2].partial_shape) == "[4]"


@pytest.mark.parametrize("dense, indices, code", [
    ([2, 2], [[2, 0]], "IR325"), ([2, 2], [[0, 2]], "IR325"), ([2, 2, 2], [[0, 0]], "IR307")])
def test_bad_values(dense, indices, code):
    with pytest.raises(IRError) as e:
        run_op("SparseFillEmptyRows", np.ones(1, np.float32), np.array(dense, np.int64),
               np.array(indices, np.int64), np.array(0, np.float32), version="opset16")
    assert e.value.code == code


def test_openvino_conformance(tmp_path):
    openvino()
    import openvino.opset16 as o
    values = o.parameter([4], np.float32)
    dense = o.parameter([2], np.int64)
    indices = o.parameter([4, 2], np.int64)
    default = o.parameter([], np.float32)
    node = o.sparse_fill_empty_rows(values, dense, indices, default)
    feeds = [[np.array([1, 2, 3, 4], np.float32), np.array([6, 5], np.int64),
              np.array([[0, 1], [0, 3], [2, 0], [4, 1]], np.int64), np.array(9, np.float32)],
             [np.array([5, 6, 7, 8], np.float32), np.array([3, 4], np.int64),
              np.array([[2, 3], [0, 0], [2, 1], [0, 2]], np.int64), np.array(-1, np.float32)]]
    check(tmp_path, [node.output(i) for i in range(3)], [values, dense, indices, default], feeds)
