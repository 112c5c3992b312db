"""Eye-9: spec examples, np.eye, batches, computed sizes, codes, OpenVINO."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.errors import IRError
from irexec.ir.shape import PartialShape
from tests.ops.build import Const, run_op
from tests.ops.shapeops_oracle import check, openvino


def test_spec_examples():
    (out,), model = run_op("Eye", Const(np.int64(3)), Const(np.int64(4)), Const(np.int64(-1)),
                           version="opset9", output_type="i8")
    assert model.outputs[0].partial_shape == PartialShape([3, 4])
    np.testing.assert_array_equal(out, np.eye(3, 4, -1, dtype=np.int8))
    (out,), model = run_op("Eye", Const(np.int32(2)), Const(np.int32(2)), Const(np.int32(0)),
                           Const(np.array([2, 3], np.int32)), version="opset9",
                           output_type="f32")
    assert out.shape == (2, 3, 2, 2) and model.outputs[0].partial_shape == [2, 3, 2, 2]
    np.testing.assert_array_equal(out[1, 2], np.eye(2, dtype=np.float32))


@settings(max_examples=50, deadline=None)
@given(n=st.integers(0, 5), m=st.integers(0, 5), k=st.integers(-7, 7),
       t=st.sampled_from(["f32", "i64", "boolean", "u8", "f16"]))
def test_matches_numpy_eye(n, m, k, t):
    (out,), _ = run_op("Eye", np.int64(n), np.int64(m), np.int64(k), version="opset9",
                       output_type=t)
    assert out.dtype == np.eye(1, dtype=out.dtype).dtype
    np.testing.assert_array_equal(out, np.eye(n, m, k, dtype=out.dtype))


def test_negative_size_is_ir339():
    with pytest.raises(IRError) as e:
        run_op("Eye", Const(np.int64(-1)), Const(np.int64(2)), Const(np.int64(0)),
               version="opset9", output_type="f32")
    assert e.value.code == "IR339"
    with pytest.raises(IRError) as e:
        run_op("Eye", np.int64(2), np.int64(-2), np.int64(0), version="opset9",
               output_type="f32")
    assert e.value.code == "IR339"


def test_openvino_conformance(tmp_path):
    openvino()
    import openvino.opset9 as o
    ps = [o.parameter([], np.int64) for _ in range(3)]
    outs = [o.eye(*ps, "f32").output(0),
            o.eye(*ps, "i32", o.constant(np.array([2], np.int64))).output(0)]
    feeds = [[np.array(n, np.int64), np.array(m, np.int64), np.array(k, np.int64)]
             for n, m, k in [(3, 3, 0), (2, 5, 2), (4, 2, -1), (3, 3, 7)]]
    check(tmp_path, outs, ps, feeds)
