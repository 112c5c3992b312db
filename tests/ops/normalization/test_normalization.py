"""MVN-1/6, NormalizeL2-1, BatchNormInference-1/5, GroupNormalization-12, LRN-1, GRN-1: spec
examples, properties against float64 numpy references, OpenVINO conformance per mode and
element type, and the diagnostics for bad attributes and shapes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.ir.shape import PartialShape
from tests.ops.compute_support import (assert_close, build_layer, layer_error,
                                       openvino_and_irexec, run_layer)
from tests.ops.support import dtype_of

F = np.zeros(1, np.float32)


def axes_of(axes, rank):
    return tuple(sorted({a % rank for a in axes}))


# --- float64 references (value, magnitude of the terms) --------------------------------------

def mvn_ref(x, axes, normalize_variance, eps, inside=True):
    x = x.astype(np.float64)
    c = x - x.mean(axis=axes, keepdims=True)
    if normalize_variance:
        v = (c * c).mean(axis=axes, keepdims=True)
        c = c / (np.sqrt(v + eps) if inside else np.sqrt(v) + eps)
    return c


def normalize_l2_ref(x, axes, eps, mode):
    x = x.astype(np.float64)
    s = (x * x).sum(axis=axes, keepdims=True) if axes else x * x
    return x / (np.sqrt(s + eps) if mode == "add" else np.sqrt(np.maximum(s, eps)))


def batch_norm_ref(x, gamma, beta, mean, var, eps):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    g, b, m, v = (p.astype(np.float64).reshape(shape) for p in (gamma, beta, mean, var))
    return g * (x.astype(np.float64) - m) / np.sqrt(v + eps) + b


def group_norm_ref(x, scale, bias, groups, eps):
    n, c = x.shape[:2]
    y = mvn_ref(x.reshape(n, groups, -1), (2,), True, eps).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return y * scale.astype(np.float64).reshape(shape) + bias.astype(np.float64).reshape(shape)


def lrn_ref(x, axes, alpha, beta, bias, size):
    """Each element's window: (size-1)//2 before and after along each axis (OpenVINO's window;
    for an even size the specification's formula would reach one further)."""
    x = x.astype(np.float64)
    half = (size - 1) // 2
    sq = x * x
    sums = np.zeros_like(x)
    for index in np.ndindex(*x.shape):
        box = tuple(slice(max(0, i - half), i + half + 1) if d in axes else slice(i, i + 1)
                    for d, i in enumerate(index))
        sums[index] = sq[box].sum()
    return x / (bias + alpha / size ** len(axes) * sums) ** beta


def grn_ref(x, bias):
    x = x.astype(np.float64)
    return x / np.sqrt((x * x).sum(axis=1, keepdims=True) + bias)


def close(y, ref, what):
    """Normalized outputs are O(1): the tolerance is relative to the reference's magnitude plus
    one (the statistics sum O(1) terms many times)."""
    n = max(ref.size, 1)
    assert_close(y, ref.astype(y.dtype), (np.abs(ref) + 1) * np.log2(n + 1), what)


# --- the specification's examples ----------------------------------------------------------------

@pytest.mark.parametrize("op, version, extra, attrs", [
    ("MVN", "opset2", [], dict(across_channels=True, eps=1e-9, normalize_variance=True)),
    ("MVN", "opset2", [], dict(reduction_axes=(2, 3), eps=1e-9, normalize_variance=True)),
    ("MVN", "opset6", [np.array([0, 2, 3])], dict(eps=1e-9, eps_mode="inside_sqrt",
                                                   normalize_variance=True)),
    ("NormalizeL2", "opset1", [np.array([1])], dict(eps=1e-8, eps_mode="add")),
    ("NormalizeL2", "opset1", [np.array([1, 2, 3])], dict(eps=1e-8, eps_mode="add")),
    ("LRN", "opset1", [np.array([1])], dict(alpha=1e-4, beta=0.75, size=5, bias=1.0)),
])
def test_spec_examples_keep_the_shape(op, version, extra, attrs):
    model, _ = build_layer(op, F, *extra, shapes=[[6, 12, 10, 24]] + [None] * len(extra),
                           consts=tuple(range(1, len(extra) + 1)), version=version, **attrs)
    assert model.results[0].inputs[0].source.partial_shape == PartialShape([6, 12, 10, 24])


def test_group_normalization_spec_example():
    model, _ = build_layer("GroupNormalization", F, F, F,
                           shapes=[[3, 12, 100, 100], [12], [12]], version="opset12",
                           num_groups=4, epsilon=1e-5)
    assert model.results[0].inputs[0].source.partial_shape == PartialShape([3, 12, 100, 100])


# --- hand-checked values ------------------------------------------------------------------------

def test_mvn_hand_checked():
    x = np.array([[[1.0, 3.0]], [[2.0, 6.0]]], np.float32)  # [2, 1, 2]
    y = run_layer("MVN", x, eps=0.0, normalize_variance=True, across_channels=False)
    assert y.tolist() == [[[-1.0, 1.0]], [[-1.0, 1.0]]]
    y = run_layer("MVN", x, np.array([2]), consts=(1,), version="opset6", eps=1.0,
                  normalize_variance=True, eps_mode="outside_sqrt")
    # std 1 and 2, plus eps 1 outside the square root
    np.testing.assert_allclose(y, [[[-0.5, 0.5]], [[-2 / 3, 2 / 3]]], rtol=1e-6)


def test_normalize_l2_eps_modes_and_no_axes():
    x = np.array([[3.0, 4.0], [0.0, 0.0]], np.float32)
    add = run_layer("NormalizeL2", x, np.array([1]), consts=(1,), eps=11.0, eps_mode="add")
    mx = run_layer("NormalizeL2", x, np.array([1]), consts=(1,), eps=4.0, eps_mode="max")
    np.testing.assert_allclose(add, [[0.5, 2 / 3], [0.0, 0.0]], rtol=1e-6)  # sqrt(25 + 11)
    np.testing.assert_allclose(mx, [[0.6, 0.8], [0.0, 0.0]], rtol=1e-6)
    none = run_layer("NormalizeL2", x, np.zeros(0, np.int64), consts=(1,), eps=1e-12,
                     eps_mode="max")
    assert none.tolist() == [[1.0, 1.0], [0.0, 0.0]]


def test_batch_norm_versions_take_their_inputs_in_their_order():
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)  # [N=2, C=2]
    g, b = np.array([2.0, 1.0], np.float32), np.array([0.0, 10.0], np.float32)
    m, v = np.array([1.0, 0.0], np.float32), np.array([4.0, 1.0], np.float32)
    y5 = run_layer("BatchNormInference", x, g, b, m, v, version="opset5", epsilon=0.0)
    y1 = run_layer("BatchNormInference", g, b, x, m, v, version="opset1", epsilon=0.0)
    assert y5.tolist() == y1.tolist() == [[0.0, 12.0], [2.0, 14.0]]


def test_lrn_even_size_spans_one_element_less():
    x = np.array([1, 2, 3, 4, 5], np.float32).reshape(1, 5, 1, 1)
    y = run_layer("LRN", x, np.array([1]), consts=(1,), alpha=1.0, beta=1.0, bias=1.0, size=4)
    sums = np.array([5, 14, 29, 50, 41], np.float64)  # neighbours 1 each side
    assert np.allclose(y.ravel(), x.ravel() / (1 + sums / 4))


def test_grn_hand_checked():
    x = np.array([[3.0, 4.0]], np.float32)
    np.testing.assert_allclose(run_layer("GRN", x, bias=0.0), [[0.6, 0.8]], rtol=1e-6)


def test_f16_is_computed_in_f32():
    x = (np.arange(64, dtype=np.float32).reshape(1, 1, 64) * 1000).astype(np.float16)
    y = run_layer("MVN", x, np.array([2]), consts=(1,), version="opset6", eps=1e-5,
                  normalize_variance=True, eps_mode="inside_sqrt")
    assert np.isfinite(y).all()  # the sum of squares overflows f16 (65504) but not f32
    close(y, mvn_ref(x, (2,), True, 1e-5), "f16 MVN")


# --- properties ------------------------------------------------------------------------------------

@st.composite
def data(draw, min_rank=2, max_rank=4):
    rank = draw(st.integers(min_rank, max_rank))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(rank))
    seed = draw(st.integers(0, 2**16))
    type_name = draw(st.sampled_from(["f32", "f64", "f16"]))
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype_of(type_name))
    return x


@settings(max_examples=50, deadline=None)
@given(data(), st.data())
def test_property_mvn(x, draw):
    rank = x.ndim
    axes = draw.draw(st.lists(st.integers(-rank, rank - 1), min_size=1, max_size=rank))
    nv = draw.draw(st.booleans())
    inside = draw.draw(st.booleans())
    y = run_layer("MVN", x, np.array(axes), consts=(1,), version="opset6", eps=1e-2,
                  normalize_variance=nv, eps_mode="inside_sqrt" if inside else "outside_sqrt")
    close(y, mvn_ref(x, axes_of(axes, rank), nv, 1e-2, inside), f"MVN-6 {axes}")
    across = draw.draw(st.booleans())
    y1 = run_layer("MVN", x, eps=1e-2, normalize_variance=nv, across_channels=across)
    close(y1, mvn_ref(x, tuple(range(1 if across else 2, rank)), nv, 1e-2), "MVN-1")


@settings(max_examples=50, deadline=None)
@given(data(1), st.data())
def test_property_normalize_l2(x, draw):
    rank = x.ndim
    axes = draw.draw(st.lists(st.integers(-rank, rank - 1), max_size=rank))
    mode = draw.draw(st.sampled_from(["add", "max"]))
    y = run_layer("NormalizeL2", x, np.array(axes, np.int64), consts=(1,), eps=1e-3,
                  eps_mode=mode)
    close(y, normalize_l2_ref(x, axes_of(axes, rank), 1e-3, mode), f"NormalizeL2 {axes}")


@settings(max_examples=50, deadline=None)
@given(data(), st.integers(0, 2**16))
def test_property_batch_and_group_norm(x, seed):
    rng = np.random.default_rng(seed)
    c = x.shape[1]
    g, b, m = (rng.standard_normal(c).astype(x.dtype) for _ in range(3))
    v = (rng.random(c) + 0.1).astype(x.dtype)
    y = run_layer("BatchNormInference", x, g, b, m, v, version="opset5", epsilon=1e-3)
    close(y, batch_norm_ref(x, g, b, m, v, 1e-3), "BatchNormInference")
    groups = int(rng.choice([d for d in range(1, c + 1) if c % d == 0]))
    y = run_layer("GroupNormalization", x, g, b, version="opset12", num_groups=groups,
                  epsilon=1e-3)
    close(y, group_norm_ref(x, g, b, groups, 1e-3), f"GroupNormalization {groups}")


@settings(max_examples=40, deadline=None)
@given(data(2, 4), st.data())
def test_property_lrn_and_grn(x, draw):
    rank = x.ndim
    axes = draw.draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=2, unique=True))
    size = draw.draw(st.integers(1, 5))
    y = run_layer("LRN", x, np.array(axes), consts=(1,), alpha=0.5, beta=0.75, bias=1.5,
                  size=size)
    close(y, lrn_ref(x, set(axes), 0.5, 0.75, 1.5, size), f"LRN {axes} {size}")
    close(run_layer("GRN", x, bias=0.5), grn_ref(x, 0.5), "GRN")


# --- OpenVINO conformance ------------------------------------------------------------------------

@pytest.mark.parametrize("type_name", ["f32", "f16", "f64"])
def test_openvino_conformance(tmp_path, type_name):
    ov = pytest.importorskip("openvino")
    import openvino.opset1 as o1
    import openvino.opset2 as o2
    import openvino.opset5 as o5
    import openvino.opset6 as o6
    import openvino.opset12 as o12
    dtype = dtype_of(type_name)
    rng = np.random.default_rng(13)
    params, outputs, inputs, refs = [], [], [], []

    def const(a):
        return o1.constant(np.asarray(a))

    def ch(c):
        return (rng.random(c) + 0.5).astype(dtype)

    def add(shape, make, ref):
        p = o1.parameter(list(shape), dtype)
        x = rng.standard_normal(shape).astype(dtype)
        params.append(p)
        outputs.append(make(p).output(0))
        inputs.append(x)
        refs.append(ref(x))

    for shape in ((2, 6, 5, 4), (3, 4, 7), (2, 4, 3, 2, 3)):
        r = len(shape)
        c = shape[1]
        for across in (True, False):
            for nv in (True, False):
                add(shape, lambda p: o2.mvn(p, across, nv, 1e-3),
                    lambda x: mvn_ref(x, tuple(range(1 if across else 2, r)), nv, 1e-3))
        for axes in ([2, r - 1], list(range(1, r)), [-1], [0]):
            for mode in ("inside_sqrt", "outside_sqrt"):
                add(shape, lambda p: o6.mvn(p, const(np.array(axes, np.int64)), True, 1e-3,
                                            mode),
                    lambda x: mvn_ref(x, axes_of(axes, r), True, 1e-3,
                                      mode == "inside_sqrt"))
        for axes in ([1], list(range(1, r)), [-1, 0]):
            for mode in ("add", "max"):
                add(shape, lambda p: o1.normalize_l2(p, const(np.array(axes, np.int64)), 1e-2,
                                                     mode),
                    lambda x: normalize_l2_ref(x, axes_of(axes, r), 1e-2, mode))
        params5 = [ch(c) for _ in range(4)]
        add(shape, lambda p: o5.batch_norm_inference(p, *map(const, params5), 1e-3),
            lambda x: batch_norm_ref(x, *params5, 1e-3))
        params1 = [ch(c) for _ in range(4)]
        add(shape, lambda p: o1.batch_norm_inference(p, *map(const, params1), 1e-3),
            lambda x: batch_norm_ref(x, *params1, 1e-3))
        for groups in (1, 2, c):
            sb = [ch(c), ch(c)]
            add(shape, lambda p: o12.group_normalization(p, *map(const, sb), groups, 1e-3),
                lambda x: group_norm_ref(x, *sb, groups, 1e-3))
        for axes in ([1], list(range(2, r))):
            for size in (1, 2, 3, 4, 5):
                add(shape, lambda p: o1.lrn(p, const(np.array(axes, np.int64)), 0.5, 0.75, 2.0,
                                            size),
                    lambda x: lrn_ref(x, set(axes), 0.5, 0.75, 2.0, size))
        if r <= 4:
            add(shape, lambda p: o1.grn(p, 0.5), lambda x: grn_ref(x, 0.5))
    ours, theirs = openvino_and_irexec(ov, tmp_path, params, outputs, inputs)
    for i, (a, b, ref) in enumerate(zip(ours, theirs, refs)):
        if type_name == "f64":  # OpenVINO's CPU plugin computes f64 in f32
            a, b = a.astype(np.float32), b.astype(np.float32)
        magnitude = (np.abs(ref) + 1) * np.log2(ref.size + 1)
        assert_close(a, b, magnitude, f"case {i}: {outputs[i].get_node().get_type_name()}")


# --- bad attributes and shapes ---------------------------------------------------------------

def test_batch_norm_negative_epsilon_is_ir351():
    e = layer_error("BatchNormInference", F, F, F, F, F, version="opset5",
                    shapes=[[2, 3, 4], [3], [3], [3], [3]], epsilon=-1.0)
    assert [d.code for d in e.diagnostics] == ["IR351"]


def test_batch_norm_channel_mismatch_is_ir348():
    e = layer_error("BatchNormInference", F, F, F, F, F, version="opset5",
                    shapes=[[2, 3, 4], [3], [4], [3], [3]], epsilon=1e-5)
    assert [d.code for d in e.diagnostics] == ["IR348"]
    e = layer_error("BatchNormInference", F, F, F, F, F, version="opset1",
                    shapes=[[4], [4], [2, 3, 4], [4], [4]], epsilon=1e-5)
    assert [d.code for d in e.diagnostics] == ["IR348"]


@pytest.mark.parametrize("groups, scale, code", [(4, 6, "IR350"), (0, 6, "IR350"),
                                                 (3, 5, "IR348")])
def test_group_normalization_errors(groups, scale, code):
    e = layer_error("GroupNormalization", F, F, F, version="opset12",
                    shapes=[[2, 6, 4], [scale], [6]], num_groups=groups, epsilon=1e-5)
    assert [d.code for d in e.diagnostics] == [code]


@pytest.mark.parametrize("op, version, attrs", [
    ("MVN", "opset6", dict(eps=1e-5, normalize_variance=True, eps_mode="inside_sqrt")),
    ("NormalizeL2", "opset1", dict(eps=1e-5, eps_mode="add")),
    ("LRN", "opset1", dict(alpha=1.0, beta=0.75, bias=1.0, size=3)),
])
def test_axis_out_of_range_is_ir306(op, version, attrs):
    e = layer_error(op, F, np.array([3]), consts=(1,), shapes=[[2, 3, 4], None],
                    version=version, **attrs)
    assert [d.code for d in e.diagnostics] == ["IR306"]


def test_mvn1_reduction_axes_out_of_range_is_ir306():
    e = layer_error("MVN", F, shapes=[[2, 3]], reduction_axes=(2,), eps=1e-5,
                    normalize_variance=True)
    assert [d.code for d in e.diagnostics] == ["IR306"]


def test_lrn_size_below_one_is_ir347():
    e = layer_error("LRN", F, np.array([1]), consts=(1,), shapes=[[2, 3, 4], None], alpha=1.0,
                    beta=0.75, bias=1.0, size=0)
    assert [d.code for d in e.diagnostics] == ["IR347"]


@pytest.mark.parametrize("shape", [[4], [1, 2, 3, 4, 5]])
def test_grn_rank_is_ir305(shape):
    e = layer_error("GRN", F, shapes=[shape], bias=1.0)
    assert [d.code for d in e.diagnostics] == ["IR305"]


def test_integer_data_is_refused():
    e = layer_error("GRN", np.zeros((2, 3), np.int32), bias=1.0)
    assert [d.code for d in e.diagnostics] == ["IR304"]
