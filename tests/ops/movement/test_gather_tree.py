"""GatherTree-1: spec example, a loop reference, bad parents, OpenVINO."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.errors import IRError
from tests.ops.build import run_op
from tests.ops.shapeops_oracle import check, openvino


def reference(step_ids, parents, max_seq_len, end):
    """The spec's pseudo-code, loop by loop."""
    time, batch, beam = step_ids.shape
    out = np.full_like(step_ids, end)
    for b in range(batch):
        length = min(int(max_seq_len[b]), time)
        for k in range(beam):
            parent = k
            for t in range(length - 1, -1, -1):
                out[t, b, k] = step_ids[t, b, parent]
                parent = int(parents[t, b, parent])
            finished = False
            for t in range(length):
                if finished:
                    out[t, b, k] = end
                elif out[t, b, k] == end:
                    finished = True
    return out


def test_spec_example_shapes_and_values():
    step_ids = np.array([[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]],
                         [[13, 14, 15], [16, 17, 18]]], np.int32)
    parents = np.array([[[0, 0, 0], [0, 0, 0]], [[2, 1, 0], [1, 2, 0]],
                        [[0, 2, 1], [2, 1, 0]]], np.int32)
    lengths = np.array([3, 2], np.int32)
    (out,), _ = run_op("GatherTree", step_ids, parents, lengths, np.int32(11),
                       version="opset1")
    np.testing.assert_array_equal(out, reference(step_ids, parents, lengths, 11))


@settings(max_examples=50, deadline=None)
@given(time=st.integers(1, 5), batch=st.integers(1, 3), beam=st.integers(1, 4),
       seed=st.integers(0, 10_000))
def test_matches_the_loop_reference(time, batch, beam, seed):
    rng = np.random.default_rng(seed)
    step_ids = rng.integers(0, 6, size=(time, batch, beam)).astype(np.float32)
    parents = rng.integers(0, beam, size=(time, batch, beam)).astype(np.float32)
    lengths = rng.integers(0, time + 2, size=batch).astype(np.float32)
    (out,), _ = run_op("GatherTree", step_ids, parents, lengths, np.float32(3),
                       version="opset1")
    np.testing.assert_array_equal(out, reference(step_ids, parents, lengths, 3))


def test_parent_out_of_range_is_a_clear_error():
    ids = np.zeros((2, 1, 2), np.int32)
    parents = np.array([[[0, 5]], [[0, 1]]], np.int32)
    with pytest.raises(IRError) as e:
        run_op("GatherTree", ids, parents, np.array([2], np.int32), np.int32(9),
               version="opset1")
    assert e.value.code == "IR308" and "parent" in str(e.value)


def test_openvino_conformance(tmp_path):
    openvino()
    import openvino.opset1 as o
    shape = [4, 2, 3]
    ps = [o.parameter(shape, np.int32), o.parameter(shape, np.int32),
          o.parameter([2], np.int32), o.parameter([], np.int32)]
    rng = np.random.default_rng(4)
    feeds = [[rng.integers(0, 5, size=shape).astype(np.int32),
              rng.integers(0, 3, size=shape).astype(np.int32),
              rng.integers(1, 5, size=2).astype(np.int32), np.array(2, np.int32)]
             for _ in range(3)]
    check(tmp_path, [o.gather_tree(*ps).output(0)], ps, feeds)
