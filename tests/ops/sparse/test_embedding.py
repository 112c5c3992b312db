"""The embedding bags: the specification's examples, its NumPy snippet as the reference (a plain
loop over bags), empty bags, integer means, errors, and OpenVINO."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.errors import IRError
from tests.ops.build import Const, run_op
from tests.ops.shapeops_oracle import check, openvino

TABLE = np.array([[-0.2, -0.6], [-0.1, -0.4], [-1.9, -1.8], [-1., 1.5], [0.8, -0.7]], np.float32)
IND = np.array([0, 2, 3, 4], np.int32)
OFF = np.array([0, 2, 2], np.int32)


def bags_reference(table, indices, offsets, default_index=None, weights=None, mean=False):
    """The specification's snippet, in float64: a loop over bags."""
    out = []
    bounds = list(offsets) + [len(indices)]
    for b in range(len(offsets)):
        lo, hi = bounds[b], bounds[b + 1]
        if hi == lo:
            if default_index is not None and default_index != -1:
                out.append(table[default_index].astype(np.float64))
            else:
                out.append(np.zeros(table.shape[1:]))
            continue
        rows = [table[indices[i]].astype(np.float64) * (1 if weights is None else weights[i])
                for i in range(lo, hi)]
        total = np.sum(rows, axis=0)
        out.append(total / (hi - lo) if mean else total)
    return np.array(out).reshape((len(offsets),) + table.shape[1:])


def test_spec_examples():
    got = run_op("EmbeddingBagOffsets", TABLE, IND, OFF, np.array(0, np.int32),
                 np.full(4, 0.5, np.float32), version="opset15")[0][0]
    np.testing.assert_allclose(got, [[-1.05, -1.2], [-0.2, -0.6], [-0.1, 0.4]], atol=1e-6)
    got = run_op("EmbeddingBagOffsets", TABLE, IND, OFF, np.array(-1, np.int32),
                 np.array([0.5, 0.2, -2, 1], np.float32), version="opset15")[0][0]
    np.testing.assert_allclose(got, [[-0.48, -0.66], [0, 0], [2.8, -3.7]], atol=1e-6)
    got = run_op("EmbeddingBagOffsets", TABLE, IND, OFF, version="opset15",
                 reduction="mean")[0][0]
    np.testing.assert_allclose(got, [[-1.05, -1.2], [0, 0], [-0.1, 0.4]], atol=1e-6)
    packed = np.array([[0, 2], [1, 2], [3, 4]], np.int32)
    got = run_op("EmbeddingBagPacked", TABLE, packed, version="opset15")[0][0]
    np.testing.assert_allclose(got, [[-2.1, -2.4], [-2., -2.2], [-0.2, 0.8]], atol=1e-6)
    got = run_op("EmbeddingBagPackedSum", TABLE, packed, np.full((3, 2), 0.5, np.float32),
                 version="opset3")[0][0]
    np.testing.assert_allclose(got, [[-1.05, -1.2], [-1., -1.1], [-0.1, 0.4]], atol=1e-6)
    got = run_op("EmbeddingSegmentsSum", TABLE, IND, np.array([0, 0, 2, 2], np.int32),
                 Const(np.array(3, np.int32)), np.array(0, np.int32),
                 np.full(4, 0.5, np.float32), version="opset3")[0][0]
    np.testing.assert_allclose(got, [[-1.05, -1.2], [-0.2, -0.6], [-0.1, 0.4]], atol=1e-6)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 10**6), bags=st.integers(1, 5), count=st.integers(0, 9),
       mean=st.booleans(), weighted=st.booleans(), default=st.sampled_from([None, -1, 0, 3]),
       legacy=st.booleans())
def test_offsets_match_the_specification_snippet(seed, bags, count, mean, weighted, default,
                                                 legacy):
    rng = np.random.default_rng(seed)
    table = rng.standard_normal((4, 2, 3)).astype(np.float32)
    indices = rng.integers(0, 4, count).astype(np.int64)
    offsets = np.sort(rng.integers(0, count + 1, bags)).astype(np.int64)
    weights = rng.standard_normal(count).astype(np.float32) if weighted and not mean else None
    args = [table, indices, offsets]
    if default is not None or weights is not None:
        args.append(np.array(-1 if default is None else default, np.int64))
    if weights is not None:
        args.append(weights)
    if legacy:
        (got,), _ = run_op("EmbeddingBagOffsetsSum", *args, version="opset3")
        mean = False
    else:
        (got,), _ = run_op("EmbeddingBagOffsets", *args, version="opset15",
                           reduction="mean" if mean else "sum")
    expected = bags_reference(table, indices, offsets, default, weights, mean)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), count=st.integers(0, 8), segments=st.integers(0, 5),
       default=st.sampled_from([None, 1]))
def test_segments_sum_matches_a_loop(seed, count, segments, default):
    rng = np.random.default_rng(seed)
    table = rng.standard_normal((3, 2)).astype(np.float32)
    indices = rng.integers(0, 3, count).astype(np.int32)
    ids = np.sort(rng.integers(0, max(segments, 1), count)).astype(np.int32) if segments \
        else np.zeros(0, np.int32)
    if segments == 0:
        indices = indices[:0]
    weights = rng.standard_normal(indices.size).astype(np.float32)
    args = [table, indices, ids, Const(np.array(segments, np.int32))]
    args += [np.array(default if default is not None else 0, np.int32), weights]
    (got,), _ = run_op("EmbeddingSegmentsSum", *args, version="opset3")
    expected = np.zeros((segments, 2))
    for s in range(segments):
        members = [i for i in range(indices.size) if ids[i] == s]
        if members:
            expected[s] = sum(table[indices[i]].astype(np.float64) * weights[i] for i in members)
        else:
            expected[s] = table[default if default is not None else 0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_integer_tables_wrap_and_means_truncate_toward_zero():
    table = np.array([[100], [-7], [27]], np.int8)
    got = run_op("EmbeddingBagPacked", table, np.array([[0, 0], [1, 2], [1, 1]], np.int32),
                 version="opset15", reduction="mean")[0][0]
    # 100 + 100 wraps to -56 in i8, then -56 / 2 = -28; (-7 + 27) / 2 = 10; -14 / 2 = -7
    assert got.dtype == np.int8 and got.reshape(-1).tolist() == [-28, 10, -7]
    got = run_op("EmbeddingBagOffsets", table, np.array([1, 1, 2], np.int32),
                 np.array([0], np.int32), version="opset15", reduction="mean")[0][0]
    assert got.reshape(-1).tolist() == [4]  # 13 / 3 truncates
    got = run_op("EmbeddingBagOffsets", np.array([[-7]], np.int32), np.array([0, 0], np.int32),
                 np.array([0], np.int32), version="opset15", reduction="mean")[0][0]
    assert got.reshape(-1).tolist() == [-7]


def test_empty_last_bag_follows_the_specification():
    got = run_op("EmbeddingBagOffsets", TABLE, IND, np.array([0, 4], np.int32),
                 np.array(1, np.int32), version="opset15")[0][0]
    np.testing.assert_allclose(got, [TABLE[IND].sum(0), TABLE[1]], atol=1e-6)


@pytest.mark.parametrize("type_name, args, version, attrs, code", [
    ("EmbeddingBagOffsets", [TABLE, np.array([0, 5], np.int32), np.array([0], np.int32)],
     "opset15", {}, "IR325"),
    ("EmbeddingBagOffsets", [TABLE, IND, np.array([0, 3, 1], np.int32)], "opset15", {},
     "IR308"),
    ("EmbeddingBagOffsets", [TABLE, IND, np.array([0, 5], np.int32)], "opset15", {}, "IR308"),
    ("EmbeddingBagOffsets", [TABLE, IND, OFF, np.array(-2, np.int32)], "opset15", {}, "IR325"),
    ("EmbeddingBagOffsets", [TABLE, IND, OFF, np.array(0, np.int32), np.ones(4, np.float32)],
     "opset15", {"reduction": "mean"}, "IR303"),
    ("EmbeddingBagOffsets", [TABLE, IND, OFF, np.array(0, np.int32), np.ones(3, np.float32)],
     "opset15", {}, "IR307"),
    ("EmbeddingBagOffsets", [TABLE, IND, OFF.astype(np.int64)], "opset15", {}, "IR304"),
    ("EmbeddingBagPacked", [TABLE, np.array([[0, -1]], np.int64)], "opset15", {}, "IR325"),
    ("EmbeddingSegmentsSum", [TABLE, IND, np.array([0, 0, 3, 3], np.int32),
                              Const(np.array(3, np.int32))], "opset3", {}, "IR325"),
    ("EmbeddingSegmentsSum", [TABLE, IND, np.array([0, 0, 1, 1], np.int32),
                              Const(np.array(3, np.int32)), np.array(-1, np.int32)], "opset3",
     {}, "IR325"),
])
def test_bad_inputs_get_one_code(type_name, args, version, attrs, code):
    with pytest.raises(IRError) as e:
        run_op(type_name, *args, version=version, **attrs)
    assert e.value.code == code


def test_openvino_conformance(tmp_path):
    openvino()
    import openvino.opset3 as o3
    import openvino.opset15 as o
    table = o.parameter([6, 3], np.float32)
    idx = o.parameter([7], np.int32)
    off = o.parameter([4], np.int32)
    default = o.parameter([], np.int32)
    weights = o.parameter([7], np.float32)
    packed = o.parameter([3, 2], np.int64)
    segs = o.parameter([7], np.int32)
    outs = [o.embedding_bag_offsets(table, idx, off, default, weights).output(0),
            o.embedding_bag_offsets(table, idx, off, reduction="mean").output(0),
            o3.embedding_bag_offsets_sum(table, idx, off, default, weights).output(0),
            o.embedding_bag_packed(table, packed, reduction="mean").output(0),
            o3.embedding_bag_packed_sum(table, packed).output(0),
            o3.embedding_segments_sum(table, idx, segs, np.array(5, np.int32), default,
                                      weights).output(0)]
    rng = np.random.default_rng(3)
    feeds = []
    for offsets in ([0, 2, 2, 5], [0, 0, 3, 6], [1, 1, 1, 4]):  # empty bags, no empty last bag
        feeds.append([rng.standard_normal((6, 3)).astype(np.float32),
                      rng.integers(0, 6, 7).astype(np.int32), np.array(offsets, np.int32),
                      np.array(rng.integers(0, 6), np.int32),
                      rng.standard_normal(7).astype(np.float32),
                      rng.integers(0, 6, (3, 2)).astype(np.int64),
                      np.sort(rng.integers(0, 5, 7)).astype(np.int32)])
    check(tmp_path, outs, [table, idx, off, default, weights, packed, segs], feeds, exact=False)


def test_integer_mean_of_a_bag_longer_than_the_type_holds():
    table = np.array([[1]], np.int8)
    (got,), _ = run_op("EmbeddingBagOffsets", table, np.zeros(200, np.int32),
                       np.array([0], np.int32), version="opset15", reduction="mean")
    # the sum 200 wraps to -56 in i8; divided by the bag's 200 indices (not by 200 cast to i8,
    # which is -56 again) it truncates to 0
    assert got.reshape(-1).tolist() == [0]
