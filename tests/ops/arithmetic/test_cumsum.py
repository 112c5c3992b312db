"""CumSum-3: spec examples, np.cumsum, integer wrapping, OpenVINO."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from irexec.errors import IRError
from tests.ops.build import Const, run_op
from tests.ops.shapeops_oracle import check, openvino


@pytest.mark.parametrize("exclusive, reverse, expected", [
    (False, False, [1, 3, 6, 10, 15]), (True, False, [0, 1, 3, 6, 10]),
    (False, True, [15, 14, 12, 9, 5]), (True, True, [14, 12, 9, 5, 0])])
def test_spec_examples(exclusive, reverse, expected):
    (out,), _ = run_op("CumSum", np.array([1, 2, 3, 4, 5], np.float32), Const(np.int64(0)),
                       version="opset3", exclusive=exclusive, reverse=reverse)
    assert out.tolist() == expected


def test_axis_defaults_to_zero_and_integers_wrap():
    (out,), _ = run_op("CumSum", np.array([[100, 1], [100, 2]], np.int8), version="opset3")
    assert out.tolist() == [[100, 1], [-56, 3]]


@settings(max_examples=50, deadline=None)
@given(data=hnp.arrays(st.sampled_from([np.int32, np.int64, np.float64]),
                       hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
                       elements=st.integers(-100, 100)),
       pick=st.integers(0, 5), exclusive=st.booleans(), reverse=st.booleans())
def test_matches_numpy_cumsum(data, pick, exclusive, reverse):
    axis = pick % data.ndim
    (out,), _ = run_op("CumSum", data, Const(np.int32(axis - data.ndim)), version="opset3",
                       exclusive=exclusive, reverse=reverse)
    x = np.flip(data, axis) if reverse else data
    sums = np.cumsum(x, axis=axis) - (x if exclusive else 0)
    np.testing.assert_array_equal(out, np.flip(sums, axis) if reverse else sums)


def test_f16_accumulates_in_f32():
    data = np.array([2048, 1, 1, 1, 1], np.float16)
    (out,), _ = run_op("CumSum", data, version="opset3")
    # f16 steps of 2 above 2048: f16 partial sums would stay at 2048
    assert out.tolist() == [2048, 2048, 2050, 2052, 2052]


def test_bad_axis_is_ir306():
    with pytest.raises(IRError) as e:
        run_op("CumSum", np.zeros((2, 3), np.float32), Const(np.int64(2)), version="opset3")
    assert e.value.code == "IR306"


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.float16])
def test_openvino_conformance(tmp_path, dtype):
    openvino()
    import openvino.opset3 as o
    p = o.parameter([3, 4, 2], dtype)
    outs = [o.cumsum(p, o.constant(np.int64(a)), e, r).output(0)
            for a, e, r in [(0, False, False), (1, True, False), (-1, False, True),
                            (2, True, True)]]
    rng = np.random.default_rng(6)
    feeds = [[rng.integers(-50, 50, size=(3, 4, 2)).astype(dtype)] for _ in range(2)]
    if dtype == np.float16:  # sums that f16 rounds: accumulated in f32, rounded once
        feeds = [[(rng.standard_normal((3, 4, 2)) * 100).astype(dtype)] for _ in range(2)]
    check(tmp_path, outs, [p], feeds)
