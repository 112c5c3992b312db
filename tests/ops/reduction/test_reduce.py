"""ReduceSum/Mean/Max/Min/Prod-1, ReduceL1/L2-4, ReduceLogicalAnd/Or-1: spec examples, properties
against numpy in float64, OpenVINO conformance for every op, keep_dims and element type, and the
diagnostics for bad axes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.ir.shape import PartialShape
from irexec.ops import registry
from tests.ops.compute_support import (assert_close, build_layer, layer_error,
                                       openvino_and_irexec, run_layer)
from tests.ops.support import dtype_of

NUMERIC_OPS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
               "ReduceL2"]
LOGICAL_OPS = ["ReduceLogicalAnd", "ReduceLogicalOr"]
VERSION = {"ReduceL1": "opset4", "ReduceL2": "opset4"}


def version(op):
    return VERSION.get(op, "opset1")


def reference(op, x, axes, keep):
    """(result, magnitude) in float64 with numpy; the empty-slice and NaN rules as OpenVINO."""
    xf = x.astype(np.float64)
    axes = tuple(sorted({a % x.ndim for a in axes}))
    if not axes:
        return xf, np.abs(xf)
    count = int(np.prod([x.shape[a] for a in axes]))
    mag = np.sum(np.abs(xf), axis=axes, keepdims=keep)
    if op == "ReduceSum":
        return np.sum(xf, axis=axes, keepdims=keep), mag
    if op == "ReduceMean":
        return (np.sum(xf, axis=axes, keepdims=keep) / count if count else
                np.zeros_like(mag)), mag / max(count, 1)
    if op in ("ReduceMax", "ReduceMin"):
        info = np.finfo(np.float64 if x.dtype == np.float64 else np.float32) \
            if x.dtype.kind == "f" else np.iinfo(x.dtype)
        start = info.min if op == "ReduceMax" else info.max
        fn = np.fmax if op == "ReduceMax" else np.fmin
        rest = tuple(n for i, n in enumerate(x.shape) if i not in axes)
        moved = np.moveaxis(xf, axes, range(len(axes))).reshape((count,) + rest)
        r = fn.reduce(moved, axis=0) if count else np.full(rest, start)
        r = np.where(r == (-np.inf if op == "ReduceMax" else np.inf), start, r)
        if keep:
            r = np.expand_dims(r, axes)
        return r, np.abs(r)
    if op == "ReduceProd":
        return np.prod(xf, axis=axes, keepdims=keep), np.prod(np.abs(xf), axis=axes,
                                                              keepdims=keep)
    if op == "ReduceL1":
        return mag, mag
    sq = np.sum(xf * xf, axis=axes, keepdims=keep)
    return np.sqrt(sq), np.sqrt(sq)


def to_type(values, dtype):
    """A float64 reference in the layer's type: integers truncate toward zero."""
    if np.dtype(dtype).kind in "iu":
        return np.trunc(values).astype(dtype)
    return values.astype(dtype)


# --- the specification's examples ---------------------------------------------------------------

@pytest.mark.parametrize("op", NUMERIC_OPS + LOGICAL_OPS)
@pytest.mark.parametrize("axes, keep, expected", [
    ([2, 3], True, [6, 12, 1, 1]),
    ([2, 3], False, [6, 12]),
    ([1], False, [6, 10, 24]),
    ([-2], False, [6, 12, 24]),
])
def test_spec_example_shapes(op, axes, keep, expected):
    data = np.zeros(1, bool if op in LOGICAL_OPS else np.float32)
    model, _ = build_layer(op, data, np.array(axes, np.int64), consts=(1,),
                           shapes=[[6, 12, 10, 24], None], version=version(op), keep_dims=keep)
    assert model.results[0].inputs[0].source.partial_shape == PartialShape(expected)


def test_hand_checked_values():
    x = np.array([[1.0, 2.0, 4.0], [-7.0, 5.0, 6.0]], np.float32)
    axes = np.array([1], np.int64)
    expected = {"ReduceSum": [7, 4], "ReduceMean": [7 / 3, 4 / 3], "ReduceMax": [4, 6],
                "ReduceMin": [1, -7], "ReduceProd": [8, -210], "ReduceL1": [7, 18],
                "ReduceL2": [np.sqrt(21), np.sqrt(110)]}
    for op, want in expected.items():
        got = run_layer(op, x, axes, consts=(1,), version=version(op))
        np.testing.assert_allclose(got, np.array(want, np.float32), rtol=1e-6, err_msg=op)
    b = np.array([[True, False], [True, True]])
    assert run_layer("ReduceLogicalAnd", b, axes, consts=(1,)).tolist() == [False, True]
    assert run_layer("ReduceLogicalOr", b, axes, consts=(1,)).tolist() == [True, True]


def test_integer_mean_and_l2_truncate():
    x = np.array([[1, 2, 4], [-7, 5, 6]], np.int32)
    axes = np.array([1], np.int64)
    assert run_layer("ReduceMean", x, axes, consts=(1,)).tolist() == [2, 1]
    assert run_layer("ReduceMean", -x, axes, consts=(1,)).tolist() == [-2, -1]
    assert run_layer("ReduceL2", x, axes, consts=(1,), version="opset4").tolist() == [4, 10]


def test_integers_wrap():
    x = np.array([100, 100, 100], np.int8)
    assert run_layer("ReduceSum", x, np.array([0]), consts=(1,)).tolist() == 300 - 256


def test_nan_and_infinity_rules():
    low, high = float(np.finfo(np.float32).min), float(np.finfo(np.float32).max)
    x = np.array([[1, np.nan, 3], [-np.inf, -np.inf, np.nan], [np.nan, np.nan, np.nan],
                  [np.inf, np.inf, 2]], np.float32)
    axes = np.array([1], np.int64)
    mx = run_layer("ReduceMax", x, axes, consts=(1,))
    mn = run_layer("ReduceMin", x, axes, consts=(1,))
    assert mx[0] == 3 and mx[1] == low and np.isnan(mx[2]) and mx[3] == np.inf
    assert mn[0] == 1 and mn[1] == -np.inf and np.isnan(mn[2]) and mn[3] == 2
    assert run_layer("ReduceMin", np.array([np.inf], np.float32), np.array([0]),
                     consts=(1,)) == high


def test_empty_slices():
    x = np.zeros((2, 0), np.float32)
    axes = np.array([1], np.int64)
    values = {op: run_layer(op, x, axes, consts=(1,), version=version(op)).tolist()
              for op in NUMERIC_OPS}
    low, high = float(np.finfo(np.float32).min), float(np.finfo(np.float32).max)
    assert values == {"ReduceSum": [0, 0], "ReduceMean": [0, 0], "ReduceMax": [low, low],
                      "ReduceMin": [high, high], "ReduceProd": [1, 1], "ReduceL1": [0, 0],
                      "ReduceL2": [0, 0]}


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
@pytest.mark.parametrize("op", ["ReduceMin", "ReduceMax"])
def test_an_empty_set_gives_the_cpu_plugins_extremes(op, dtype):
    """docs/compatibility.md: the type's finite extremes (f16: the f32 extremes rounded, so
    inf), as OpenVINO's CPU plugin gives them, not ONNX's infinities for f32."""
    x = np.zeros((2, 0, 3), dtype)
    got = run_layer(op, x, np.array([1], np.int64), consts=(1,))
    if dtype == np.int32:
        info = np.iinfo(np.int32)
        want = info.max if op == "ReduceMin" else info.min
    else:
        f32 = np.finfo(np.float32)
        with np.errstate(over="ignore"):  # f16: the f32 extremes round to infinities
            want = np.float32(f32.max if op == "ReduceMin" else f32.min).astype(dtype)
    assert got.dtype == dtype and got.shape == (2, 3)
    assert (got == want).all(), got
    ov = pytest.importorskip("openvino")
    import openvino.opset1 as ops

    p = ops.parameter([2, 0, 3], ov.Type(np.dtype(dtype)))
    fn = ops.reduce_min if op == "ReduceMin" else ops.reduce_max
    model = ov.Model([fn(p, ops.constant(np.array([1], np.int64)), False)], [p])
    theirs = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})({0: x})[0]
    assert got.tobytes() == theirs.tobytes(), theirs


@pytest.mark.parametrize("keep", [False, True])
def test_no_axes_leave_the_data_as_it_is(keep):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = run_layer("ReduceSum", x, np.zeros(0, np.int64), consts=(1,), keep_dims=keep)
    assert y.tolist() == x.tolist() and y is not x


def test_repeated_and_scalar_axes():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert run_layer("ReduceSum", x, np.array([1, -1, 1]), consts=(1,)).tolist() == [3, 12]
    assert run_layer("ReduceSum", x, np.array(0), consts=(1,)).tolist() == [3, 5, 7]


def test_axes_as_a_parameter():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert run_layer("ReduceMax", x, np.array([0], np.int32)).tolist() == [3, 4, 5]


def test_f16_rounds_once():
    x = np.array([2048.0] + [1.0] * 8, np.float16)
    y = run_layer("ReduceSum", x, np.array([0]), consts=(1,))
    assert y.dtype == np.float16 and float(y) == 2056.0


# --- properties ----------------------------------------------------------------------------------

@st.composite
def cases(draw):
    rank = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank)))
    axes = draw(st.lists(st.integers(-rank, rank - 1), min_size=0, max_size=rank + 1))
    return shape, axes, draw(st.booleans()), draw(st.integers(0, 2**16))


@settings(max_examples=50, deadline=None)
@given(cases(), st.sampled_from(NUMERIC_OPS), st.sampled_from(["f32", "f64", "f16", "i32"]))
def test_property_numeric_equals_numpy(case, op, type_name):
    shape, axes, keep, seed = case
    rng = np.random.default_rng(seed)
    dtype = dtype_of(type_name)
    x = rng.integers(-3, 4, shape).astype(dtype) if type_name == "i32" else \
        rng.standard_normal(shape).astype(dtype)
    y = run_layer(op, x, np.array(axes, np.int64).reshape(-1), consts=(1,), version=version(op),
                  keep_dims=keep)
    ref, mag = reference(op, x, axes, keep)
    assert_close(y, to_type(ref, dtype), mag, f"{op} {axes} keep={keep}")


@settings(max_examples=50, deadline=None)
@given(cases(), st.sampled_from(LOGICAL_OPS))
def test_property_logical_equals_numpy(case, op):
    shape, axes, keep, seed = case
    x = np.random.default_rng(seed).integers(0, 2, shape).astype(bool)
    y = run_layer(op, x, np.array(axes, np.int64).reshape(-1), consts=(1,), keep_dims=keep)
    norm = tuple(sorted({a % len(shape) for a in axes}))
    fn = np.all if op == "ReduceLogicalAnd" else np.any
    want = fn(x, axis=norm, keepdims=keep) if norm else x
    np.testing.assert_array_equal(y, want)


# --- OpenVINO conformance ------------------------------------------------------------------------

OV_CASES = [((3, 4, 5), [1], False), ((3, 4, 5), [-1, 0], True), ((2, 3), [0, 1], False),
            ((4,), [0], True), ((2, 3, 4), 0, False), ((2, 3, 2, 3), [1, 3], True)]


@pytest.mark.parametrize("type_name", ["f32", "f16", "f64", "i32", "i64", "i8", "u8"])
def test_openvino_conformance(tmp_path, type_name):
    ov = pytest.importorskip("openvino")
    import openvino.opset1 as o1
    import openvino.opset4 as o4
    fns = {"ReduceSum": o1.reduce_sum, "ReduceMean": o1.reduce_mean, "ReduceMax": o1.reduce_max,
           "ReduceMin": o1.reduce_min, "ReduceProd": o1.reduce_prod, "ReduceL1": o4.reduce_l1,
           "ReduceL2": o4.reduce_l2}
    dtype = dtype_of(type_name)
    rng = np.random.default_rng(5)
    params, outputs, inputs, labels, refs = [], [], [], [], []
    for shape, axes, keep in OV_CASES:
        for op, fn in fns.items():
            if type_name in ("f32", "f16", "f64"):
                x = rng.standard_normal(shape).astype(dtype)
            else:
                x = rng.integers(0 if type_name == "u8" else -3, 4, shape).astype(dtype)
            if op == "ReduceProd" and type_name in ("i8", "u8"):
                x = np.clip(x, -1, 1).astype(dtype)  # OpenVINO saturates i8 products
            p = o1.parameter(list(shape), dtype)
            node = fn(p, o1.constant(np.array(axes, np.int32)), keep)
            params.append(p)
            outputs.append(node.output(0))
            inputs.append(x)
            labels.append(f"{op} {shape} {axes} {keep}")
            refs.append(reference(op, x, np.atleast_1d(axes).tolist(), keep)[1])
    for op, fn in (("ReduceLogicalAnd", o1.reduce_logical_and),
                   ("ReduceLogicalOr", o1.reduce_logical_or)):
        for shape, axes, keep in OV_CASES:
            p = o1.parameter(list(shape), bool)
            outputs.append(fn(p, o1.constant(np.array(axes, np.int64)), keep).output(0))
            params.append(p)
            inputs.append(rng.integers(0, 2, shape).astype(bool))
            labels.append(op)
            refs.append(0)
    ours, theirs = openvino_and_irexec(ov, tmp_path, params, outputs, inputs)
    for label, a, b, mag in zip(labels, ours, theirs, refs):
        if type_name == "f64":  # OpenVINO's CPU plugin computes f64 in f32
            a, b = a.astype(np.float32), b.astype(np.float32)
        assert_close(a, b, mag, label)


# --- bad axes --------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", NUMERIC_OPS)
def test_axis_out_of_range_is_ir306(op):
    e = layer_error(op, np.zeros((2, 3), np.float32), np.array([2]), consts=(1,),
                    version=version(op))
    assert [d.code for d in e.diagnostics] == ["IR306"]


def test_axis_out_of_range_at_run_time_is_ir306():
    e = layer_error("ReduceSum", np.zeros((2, 3), np.float32), np.array([-3], np.int64))
    assert e.code == "IR306"


def test_axes_of_rank_2_are_ir305():
    e = layer_error("ReduceSum", np.zeros((2, 3), np.float32), np.array([[0]]), consts=(1,))
    assert [d.code for d in e.diagnostics] == ["IR305"]


def test_logical_ops_take_booleans_only():
    e = layer_error("ReduceLogicalOr", np.zeros((2, 3), np.float32), np.array([0]), consts=(1,))
    assert [d.code for d in e.diagnostics] == ["IR304"]


def test_boolean_sums_are_refused():
    e = layer_error("ReduceSum", np.zeros((2, 3), bool), np.array([0]), consts=(1,))
    assert [d.code for d in e.diagnostics] == ["IR304"]


def test_l1_and_l2_exist_from_opset4():
    for op in ("ReduceL1", "ReduceL2"):
        with pytest.raises(registry.LookupFailure):
            registry.lookup(op, "opset3")
        assert registry.lookup(op, "opset16").spec.since == 4
