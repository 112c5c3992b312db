"""Bucketize-3: spec example, np.digitize, boundary sides, OpenVINO."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ops.build import Const, run_op
from tests.ops.shapeops_oracle import check, openvino


def test_spec_example():
    data = np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], np.float32)
    buckets = np.array([1, 4, 10, 20], np.float32)
    (right,), _ = run_op("Bucketize", data, Const(buckets), version="opset3")
    assert right.tolist() == [0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 2]
    (left,), _ = run_op("Bucketize", data, Const(buckets), version="opset3",
                        with_right_bound=False, output_type="i32")
    assert left.tolist() == [0, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3] and left.dtype == np.int32


@settings(max_examples=50, deadline=None)
@given(data=st.lists(st.integers(-20, 20), min_size=1, max_size=12),
       buckets=st.lists(st.integers(-20, 20), max_size=6), right=st.booleans())
def test_matches_numpy_digitize(data, buckets, right):
    b = np.array(sorted(buckets), np.int32)
    x = np.array(data, np.int64)
    (out,), _ = run_op("Bucketize", x, b, version="opset3", with_right_bound=right)
    np.testing.assert_array_equal(out, np.digitize(x, b, right=right))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
def test_openvino_conformance(tmp_path, dtype):
    openvino()
    import openvino.opset3 as o
    p = o.parameter([2, 5], dtype)
    buckets = o.parameter([4], dtype)
    outs = [o.bucketize(p, buckets, "i64", True).output(0),
            o.bucketize(p, buckets, "i32", False).output(0)]
    rng = np.random.default_rng(3)
    feeds = [[rng.integers(-6, 6, size=(2, 5)).astype(dtype),
              np.sort(rng.integers(-5, 5, size=4)).astype(dtype)] for _ in range(3)]
    check(tmp_path, outs, [p, buckets], feeds)


def test_scalar_data_gives_a_scalar():
    (out,), _ = run_op("Bucketize", np.float32(1.5), Const(np.array([1, 2], np.float32)),
                       version="opset3")
    assert out.shape == () and out.dtype == np.int64 and int(out) == 1
