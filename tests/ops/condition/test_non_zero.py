"""NonZero-3: spec example, np.nonzero, dynamic output resolved per call, OpenVINO."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from irexec.ir.shape import Dimension, PartialShape
from tests.ops.build import Const, run_op
from tests.ops.shapeops_oracle import check, openvino


def test_spec_example():
    data = np.array([[0, 1, 0], [2, 0, 3]], np.float32)
    (out,), model = run_op("NonZero", data, version="opset3")
    assert out.tolist() == [[0, 1, 1], [1, 0, 2]] and out.dtype == np.int64
    assert model.outputs[0].partial_shape == PartialShape([2, Dimension(0, 6)])


def test_scalar_counts_as_rank_one_and_nan_is_non_zero():
    (out,), _ = run_op("NonZero", np.float32(5), version="opset3", output_type="i32")
    assert out.shape == (1, 1) and out.dtype == np.int32
    (out,), _ = run_op("NonZero", np.float32(0), version="opset3")
    assert out.shape == (1, 0)
    (out,), _ = run_op("NonZero", np.array([np.nan, -0.0, 0.0, 1], np.float32), version="opset3")
    assert out.tolist() == [[0, 3]]


def test_a_constant_input_is_folded_to_a_static_shape():
    (out,), model = run_op("NonZero", Const(np.array([0, 4, 0, 7], np.int8)), version="opset3")
    assert model.outputs[0].partial_shape == PartialShape([1, 2]) and out.tolist() == [[1, 3]]


@settings(max_examples=50, deadline=None)
@given(hnp.arrays(st.sampled_from([np.bool_, np.int16, np.float32, np.uint64]),
                  hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=4),
                  elements=st.integers(0, 2).map(lambda v: v % 2 if v else 0)))
def test_matches_numpy_nonzero(data):
    (out,), _ = run_op("NonZero", data, version="opset3")
    np.testing.assert_array_equal(out, np.array(np.nonzero(data)).reshape(data.ndim, -1))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_, np.int64])
def test_openvino_conformance(tmp_path, dtype):
    openvino()
    import openvino.opset3 as o
    p = o.parameter([-1, 3], dtype)
    outs = [o.non_zero(p, "i64").output(0), o.non_zero(p, "i32").output(0)]
    rng = np.random.default_rng(1)
    feeds = [[(rng.integers(0, 3, size=(n, 3)) % 2).astype(dtype)] for n in (1, 4, 0, 7)]
    check(tmp_path, outs, [p], feeds[:2] + feeds[3:])
