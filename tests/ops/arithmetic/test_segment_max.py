"""SegmentMax-16: the specification's examples, a loop reference, fill modes, errors, OpenVINO."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.errors import IRError
from tests.ops.build import Const, run_op
from tests.ops.shapeops_oracle import check, openvino


def test_spec_examples():
    data = np.array([1, 5, 2, 3, 4], np.float32)
    ids = np.array([0, 0, 2, 3, 3], np.int32)
    (got,), _ = run_op("SegmentMax", data, ids, Const(np.array(2, np.int64)), version="opset16",
                       fill_mode="ZERO")
    assert got.tolist() == [5, 0]
    (got,), _ = run_op("SegmentMax", data, ids, Const(np.array(8, np.int64)), version="opset16",
                       fill_mode="ZERO")
    assert got.tolist() == [5, 0, 2, 4, 0, 0, 0, 0]
    data = np.arange(12, dtype=np.int32).reshape(3, 4)
    (got,), _ = run_op("SegmentMax", data, Const(np.array([0, 1, 1], np.int64)),
                       version="opset16", fill_mode="LOWEST")
    assert got.tolist() == [[0, 1, 2, 3], [8, 9, 10, 11]]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), rows=st.integers(0, 6), num=st.integers(0, 6),
       lowest=st.booleans(), dtype=st.sampled_from(["f32", "i64", "f16", "u8"]))
def test_matches_a_loop(seed, rows, num, lowest, dtype):
    rng = np.random.default_rng(seed)
    dt = {"f32": np.float32, "i64": np.int64, "f16": np.float16, "u8": np.uint8}[dtype]
    data = rng.integers(0, 50, (rows, 2)).astype(dt)
    ids = np.sort(rng.integers(0, 5, rows)).astype(np.int64)
    (got,), _ = run_op("SegmentMax", data, ids, np.array(num, np.int32), version="opset16",
                       fill_mode="lowest" if lowest else "zero")
    fill = (np.finfo(dt).min if dt in (np.float32, np.float16) else np.iinfo(dt).min) \
        if lowest else 0
    expected = np.full((num, 2), fill, dt)
    for s in range(num):
        members = data[ids == s]
        if len(members):
            expected[s] = members.max(axis=0)
    assert got.dtype == dt and np.array_equal(got, expected)


def test_all_minus_infinity_segment_is_minus_infinity():
    (got,), _ = run_op("SegmentMax", np.array([-np.inf, -np.inf, 1], np.float32),
                       np.array([0, 0, 1], np.int32), version="opset16", fill_mode="lowest")
    assert got.tolist() == [-np.inf, 1]


@pytest.mark.parametrize("ids, code", [([0, 2, 1], "IR308"), ([-1, 0, 0], "IR308")])
def test_unsorted_or_negative_ids_are_errors(ids, code):
    with pytest.raises(IRError) as e:
        run_op("SegmentMax", np.ones(3, np.float32), np.array(ids, np.int32), version="opset16",
               fill_mode="zero")
    assert e.value.code == code


def test_ids_must_match_rows():
    with pytest.raises(IRError) as e:
        run_op("SegmentMax", np.ones(3, np.float32), np.array([0, 1], np.int32),
               version="opset16", fill_mode="zero")
    assert e.value.code == "IR307"


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_openvino_conformance(tmp_path, dtype):
    openvino()
    import openvino.opset16 as o
    data = o.parameter([6, 3], dtype)
    ids = o.parameter([6], np.int32)
    num = o.parameter([], np.int64)
    outs = [o.segment_max(data, ids, num, fill_mode="ZERO").output(0),
            o.segment_max(data, ids, num, fill_mode="LOWEST").output(0),
            o.segment_max(data, ids, fill_mode="ZERO").output(0)]
    rng = np.random.default_rng(4)
    feeds = [[rng.integers(-50, 50, (6, 3)).astype(dtype),
              np.sort(rng.integers(0, 4, 6)).astype(np.int32), np.array(n, np.int64)]
             for n in (2, 6, 0)]
    check(tmp_path, outs, [data, ids, num], feeds)


def test_negative_num_segments_given_at_run_time_is_an_error():
    with pytest.raises(IRError) as e:
        run_op("SegmentMax", np.ones(2, np.float32), np.array([0, 1], np.int32),
               np.array(-1, np.int32), version="opset16", fill_mode="zero")
    assert e.value.code == "IR308"
