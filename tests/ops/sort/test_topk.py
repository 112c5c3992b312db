"""TopK-1/3/11: spec example, properties against a plain sort, OpenVINO conformance, k rules."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import irexec
from irexec.errors import IRError
from irexec.builder import ModelBuilder
from irexec.ir.shape import Dimension, PartialShape
from tests.ops.shapeops_oracle import check, openvino


def run_topk(data, k, *, axis, mode, sort, version="opset11", k_input=False, index="i32",
             data_shape=None, **attrs):
    b = ModelBuilder()
    from irexec.ir.element_type import from_dtype
    x = b.parameter("x", from_dtype(data.dtype), data_shape or list(data.shape))
    feed = {"x": data}
    if k_input:
        kk = b.parameter("k", "i64", [])
        feed["k"] = np.array(k, np.int64)
    else:
        kk = b.constant(np.int64(k))
    values, indices = b.op("TopK", x, kk, axis=axis, mode=mode, sort=sort, version=version,
                           index_element_type=index, name="top", **attrs)
    b.result(values, "values")
    b.result(indices, "indices")
    model = b.build()
    out = irexec.compile_model(model)(feed)
    return out["top"], out["indices"], model


def reference(data, k, axis, mode, sort):
    """Per row: Python's stable sort on (key, index) pairs."""
    moved = np.moveaxis(data, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    vals, idxs = [], []
    for row in rows:
        key = (lambda i: (-float(row[i]), i)) if mode == "max" else (lambda i: (float(row[i]), i))
        chosen = sorted(range(len(row)), key=key)[:k]
        if sort == "index":
            chosen = sorted(chosen)
        vals.append([row[i] for i in chosen])
        idxs.append(chosen)
    shape = moved.shape[:-1] + (k,)
    v = np.array(vals, data.dtype).reshape(shape)
    i = np.array(idxs, np.int64).reshape(shape)
    return np.moveaxis(v, -1, axis), np.moveaxis(i, -1, axis)


def test_spec_example_shapes():
    """The spec's example: data [1,3,224,224] f32, k=10, axis 3 -> [1,3,224,10] twice."""
    data = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    values, indices, model = run_topk(data, 10, axis=3, mode="max", sort="value")
    assert values.shape == indices.shape == (1, 3, 224, 10)
    assert [o.partial_shape for o in model.outputs] == [PartialShape([1, 3, 224, 10])] * 2
    rv, ri = reference(data, 10, 3, "max", "value")
    np.testing.assert_array_equal(values, rv)
    np.testing.assert_array_equal(indices, ri)


def test_ties_go_to_the_smaller_index():
    data = np.array([[2, 5, 5, 1, 5, 2]], np.int32)
    v, i, _ = run_topk(data, 3, axis=1, mode="max", sort="value")
    assert v.tolist() == [[5, 5, 5]] and i.tolist() == [[1, 2, 4]]
    v, i, _ = run_topk(data, 3, axis=1, mode="min", sort="index")
    assert v.tolist() == [[2, 1, 2]] and i.tolist() == [[0, 3, 5]]


@settings(max_examples=50, deadline=None)
@given(data=hnp.arrays(st.sampled_from([np.int8, np.int32, np.float32, np.uint16]),
                       hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6),
                       elements=st.integers(-5, 5).map(abs)),
       mode=st.sampled_from(["max", "min"]), sort=st.sampled_from(["value", "index"]),
       pick=st.integers(0, 10), axis_pick=st.integers(0, 5), negative=st.booleans())
def test_topk_matches_a_plain_stable_sort(data, mode, sort, pick, axis_pick, negative):
    axis = axis_pick % data.ndim
    k = pick % (data.shape[axis] + 1)
    v, i, _ = run_topk(data, k, axis=axis - data.ndim if negative else axis, mode=mode,
                       sort=sort, index="i64")
    rv, ri = reference(data, k, axis, mode, sort)
    np.testing.assert_array_equal(v, rv)
    np.testing.assert_array_equal(i, ri)
    assert v.dtype == data.dtype


def test_k_from_a_parameter_is_resolved_per_call():
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = ModelBuilder()
    x = b.parameter("x", "f32", [3, 4])
    k = b.parameter("k", "i64", [])
    values, _ = b.op("TopK", x, k, axis=1, mode="max", sort="value", version="opset3",
                     name="top")
    b.result(values, "v")
    model = b.build()
    assert model.outputs[0].partial_shape == PartialShape([3, Dimension(0, 4)])
    compiled = irexec.compile_model(model)
    for kk in (1, 4, 0, 2):
        out = compiled({"x": data, "k": np.array(kk, np.int64)})["top"]
        np.testing.assert_array_equal(out, data[:, ::-1][:, :kk])


@pytest.mark.parametrize("k, wanted", [(-1, "negative"), (5, "exceed")])
def test_bad_k_is_ir336_at_read_and_run_time(k, wanted):
    data = np.zeros((2, 4), np.float32)
    with pytest.raises(IRError) as e:
        run_topk(data, k, axis=1, mode="max", sort="value")
    assert e.value.code == "IR336" and wanted in str(e.value)
    with pytest.raises(IRError) as e:
        run_topk(data, k, axis=1, mode="max", sort="value", k_input=True)
    assert e.value.code == "IR336" and wanted in str(e.value)


def test_bad_axis_and_index_type():
    with pytest.raises(IRError) as e:
        run_topk(np.zeros((2, 4), np.float32), 1, axis=2, mode="max", sort="value")
    assert e.value.code == "IR306"
    with pytest.raises(IRError) as e:
        run_topk(np.zeros((2, 4), np.float32), 1, axis=1, mode="max", sort="value", index="f32")
    assert e.value.code == "IR302"


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.float16, np.int8])
@pytest.mark.parametrize("opset", ["opset1", "opset3", "opset11"])
def test_openvino_conformance(tmp_path, dtype, opset):
    openvino()
    import importlib
    ops = importlib.import_module(f"openvino.{opset}")
    rng = np.random.default_rng(7)
    shape = (3, 7, 4)
    p = ops.parameter(list(shape), dtype)
    outs = []
    for axis, mode, sort, k in [(1, "max", "value", 3), (-1, "min", "value", 4),
                                (0, "max", "index", 2), (1, "min", "index", 7)]:
        node = ops.topk(p, k, axis, mode, sort) if opset != "opset11" else \
            ops.topk(p, k, axis, mode, sort, "i64", True)
        outs += [node.output(0), node.output(1)]
    # distinct values: OpenVINO's CPU plugin breaks ties at the k-th place differently
    # for sort=index (docs/compatibility.md)
    count = int(np.prod(shape))
    if dtype in (np.uint8, np.int8):
        feeds = [[rng.permutation(np.arange(count) % 100).reshape(shape).astype(dtype)]
                 for _ in range(2)]
    else:
        feeds = [[rng.permutation(count).reshape(shape).astype(dtype)] for _ in range(2)]
    check(tmp_path, outs, [p], feeds)
