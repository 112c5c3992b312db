"""SearchSorted-15: spec example, np.searchsorted per row, shape rules, OpenVINO."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.errors import IRError
from tests.ops.build import run_op
from tests.ops.shapeops_oracle import check, openvino


def test_example():
    seq = np.array([[1, 3, 5, 7, 9], [2, 4, 6, 8, 10]], np.float32)
    values = np.array([[3, 6, 9], [3, 6, 9]], np.float32)
    (left,), _ = run_op("SearchSorted", seq, values, version="opset15")
    assert left.tolist() == [[1, 3, 4], [1, 2, 4]]
    (right,), _ = run_op("SearchSorted", seq, values, version="opset15", right_mode=True)
    assert right.tolist() == [[2, 3, 5], [1, 3, 4]]


@settings(max_examples=50, deadline=None)
@given(rows=st.integers(1, 3), width=st.integers(1, 6), count=st.integers(1, 4),
       right=st.booleans(), seed=st.integers(0, 1000))
def test_matches_numpy_per_row(rows, width, count, right, seed):
    rng = np.random.default_rng(seed)
    seq = np.sort(rng.integers(-5, 5, size=(rows, width)), axis=1).astype(np.int32)
    values = rng.integers(-6, 6, size=(rows, count)).astype(np.int32)
    (out,), _ = run_op("SearchSorted", seq, values, version="opset15", right_mode=right)
    side = "right" if right else "left"
    expected = [np.searchsorted(s, v, side=side) for s, v in zip(seq, values)]
    np.testing.assert_array_equal(out, expected)


def test_one_dim_sequence_takes_values_of_any_shape():
    (out,), _ = run_op("SearchSorted", np.array([1, 2, 3], np.int64),
                       np.array([[[0, 4]], [[2, 2]]], np.int64), version="opset15")
    assert out.tolist() == [[[0, 3]], [[1, 1]]]


def test_leading_dims_must_agree():
    with pytest.raises(IRError) as e:
        run_op("SearchSorted", np.zeros((2, 3), np.float32), np.zeros((3, 1), np.float32),
               version="opset15")
    assert e.value.code == "IR307"


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_openvino_conformance(tmp_path, dtype):
    openvino()
    import openvino.opset15 as o
    seq = o.parameter([2, 3, 6], dtype)
    values = o.parameter([2, 3, 4], dtype)
    outs = [o.search_sorted(seq, values, False).output(0),
            o.search_sorted(seq, values, True).output(0)]
    rng = np.random.default_rng(5)
    feeds = [[np.sort(rng.integers(-5, 5, size=(2, 3, 6)), axis=-1).astype(dtype),
              rng.integers(-6, 6, size=(2, 3, 4)).astype(dtype)] for _ in range(3)]
    check(tmp_path, outs, [seq, values], feeds)
