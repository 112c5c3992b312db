"""Unique-10: spec examples, np.unique, first-occurrence order, axis slices, OpenVINO."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from irexec.ir.shape import Dimension, PartialShape
from tests.ops.build import Const, run_op
from tests.ops.shapeops_oracle import check, openvino


def test_spec_example_sorted_and_not():
    data = np.array([-1, 2, 1, -1, 2, 3], np.float32)
    (u, i, r, c), model = run_op("Unique", data, version="opset10")
    assert u.tolist() == [-1, 1, 2, 3] and i.tolist() == [0, 2, 1, 5]
    assert r.tolist() == [0, 2, 1, 0, 2, 3] and c.tolist() == [2, 1, 2, 1]
    assert [o.partial_shape for o in model.outputs] == [
        PartialShape([Dimension(1, 6)])] * 2 + [PartialShape([6]), PartialShape([(1, 6)])]
    (u, i, r, c), _ = run_op("Unique", data, version="opset10", sorted=False,
                             index_element_type="i32", count_element_type="i32")
    assert u.tolist() == [-1, 2, 1, 3] and i.tolist() == [0, 1, 2, 5]
    assert r.tolist() == [0, 1, 2, 0, 1, 3] and c.tolist() == [2, 2, 1, 1]
    assert i.dtype == r.dtype == c.dtype == np.int32


def test_slices_along_an_axis():
    data = np.array([[1, 2, 1], [3, 4, 3]], np.int32)
    (u, i, r, c), model = run_op("Unique", data, Const(np.int64(1)), version="opset10")
    assert u.tolist() == [[1, 2], [3, 4]] and i.tolist() == [0, 1]
    assert r.tolist() == [0, 1, 0] and c.tolist() == [2, 1]
    assert model.outputs[0].partial_shape == PartialShape([2, Dimension(1, 3)])


@settings(max_examples=50, deadline=None)
@given(data=hnp.arrays(st.sampled_from([np.int8, np.int64, np.float32]),
                       hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5),
                       elements=st.integers(-3, 3)),
       sort=st.booleans(), axis=st.none() | st.integers(-3, 2))
def test_outputs_rebuild_the_data(data, sort, axis):
    if axis is not None and not -data.ndim <= axis < data.ndim:
        axis = 0
    inputs = (data,) if axis is None else (data, Const(np.int64(axis)))
    (u, first, rev, counts), _ = run_op("Unique", *inputs, version="opset10", sorted=sort)
    a = 0 if axis is None else axis % data.ndim
    flat = data.reshape(-1) if axis is None else data
    np.testing.assert_array_equal(np.take(u, rev, axis=a), flat)  # rev maps back
    np.testing.assert_array_equal(np.take(flat, first, axis=a), u)  # first occurrences
    np.testing.assert_array_equal(counts, np.bincount(rev, minlength=counts.size))
    expected = np.unique(flat, axis=None if axis is None else a)
    if sort:
        np.testing.assert_array_equal(u, expected)
    else:
        assert list(first) == sorted(first)  # order of first occurrence
    assert len(set(first.tolist())) == len(first)
    for j, f in enumerate(first):  # each is the first occurrence
        assert (rev[:f] != j).all()


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
def test_openvino_conformance(tmp_path, dtype):
    openvino()
    import openvino.opset10 as o
    p = o.parameter([-1], dtype)
    q = o.parameter([4, 3], dtype)
    outs = list(o.unique(p, None, True, "i64", "i64").outputs()) + \
        list(o.unique(p, None, False, "i32", "i32").outputs()) + \
        list(o.unique(q, o.constant(np.int64(0)), True).outputs())
    rng = np.random.default_rng(2)
    rows = rng.integers(0, 3, size=(4, 3)).astype(dtype)
    rows[2] = rows[0]
    feeds = [[rng.integers(-4, 4, size=n).astype(dtype), rows] for n in (5, 9, 1)]
    check(tmp_path, outs, [p, q], feeds)
