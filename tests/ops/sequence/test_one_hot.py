"""OneHot-1/16: spec examples, a comparison reference, negative indices, codes, OpenVINO."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from irexec.errors import IRError
from irexec.ir.shape import PartialShape
from tests.ops.build import Const, run_op
from tests.ops.shapeops_oracle import check, openvino


def one_hot(indices, depth, on, off, axis, normalize=False):
    out = np.full(indices.shape + (depth,), off)
    for where in np.ndindex(*indices.shape):
        i = int(indices[where])
        if normalize and -depth <= i < 0:
            i += depth
        if 0 <= i < depth:
            out[where + (i,)] = on
    return np.moveaxis(out, -1, axis % (indices.ndim + 1))


def test_spec_example():
    indices = np.array([0, 3, 1, 2], np.int64)
    (out,), model = run_op("OneHot", indices, Const(np.int64(3)), Const(np.float32(2)),
                           Const(np.float32(-1)), version="opset1", axis=-1)
    assert model.outputs[0].partial_shape == PartialShape([4, 3])
    assert out.tolist() == [[2, -1, -1], [-1, -1, -1], [-1, 2, -1], [-1, -1, 2]]


def test_negative_indices_modes():
    indices = np.array([-1, -4, 1], np.int32)
    args = (indices, Const(np.int32(3)), Const(np.int8(1)), Const(np.int8(0)))
    (ignored,), _ = run_op("OneHot", *args, version="opset16", axis=1)
    assert ignored.tolist() == [[0, 0, 0], [0, 0, 0], [0, 1, 0]]
    (normal,), _ = run_op("OneHot", *args, version="opset16", axis=1,
                          negative_indices_mode="normalize")
    assert normal.tolist() == [[0, 0, 1], [0, 0, 0], [0, 1, 0]]


@settings(max_examples=50, deadline=None)
@given(indices=hnp.arrays(np.int64, hnp.array_shapes(max_dims=3, max_side=4),
                          elements=st.integers(-5, 5)),
       depth=st.integers(0, 5), pick=st.integers(0, 10), normalize=st.booleans())
def test_matches_the_reference(indices, depth, pick, normalize):
    axis = pick % (indices.ndim + 1) - (indices.ndim + 1) * (pick % 2)
    (out,), _ = run_op("OneHot", indices, np.int64(depth), np.float32(7), np.float32(0.5),
                       version="opset16", axis=axis,
                       negative_indices_mode="normalize" if normalize else "ignore_negative")
    np.testing.assert_array_equal(out, one_hot(indices, depth, np.float32(7), np.float32(0.5),
                                               axis, normalize))


def test_negative_depth_is_ir337_and_a_bad_axis_ir306():
    with pytest.raises(IRError) as e:
        run_op("OneHot", np.array([1], np.int32), Const(np.int32(-2)), Const(np.float32(1)),
               Const(np.float32(0)), version="opset1", axis=0)
    assert e.value.code == "IR337"
    with pytest.raises(IRError) as e:
        run_op("OneHot", np.array([1], np.int32), Const(np.int32(2)), Const(np.float32(1)),
               Const(np.float32(0)), version="opset1", axis=3)
    assert e.value.code == "IR306"


def test_openvino_conformance(tmp_path):
    openvino()
    import openvino.opset16 as o
    import openvino.opset1 as o1
    p = o.parameter([2, 3], np.int64)
    outs = [o1.one_hot(p, o.constant(np.int64(4)), o.constant(np.float32(1)),
                       o.constant(np.float32(0)), 1).output(0),
            o.one_hot(p, o.constant(np.int64(4)), o.constant(np.int32(5)),
                      o.constant(np.int32(-5)), -1, "normalize").output(0),
            o.one_hot(p, o.constant(np.int64(3)), o.constant(np.int32(5)),
                      o.constant(np.int32(-5)), 0, "ignore_negative").output(0)]
    rng = np.random.default_rng(8)
    feeds = [[rng.integers(-5, 5, size=(2, 3)).astype(np.int64)] for _ in range(3)]
    check(tmp_path, outs, [p], feeds)
