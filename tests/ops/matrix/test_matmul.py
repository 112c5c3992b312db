"""MatMul-1: the specification's shape examples, properties against numpy in float64, OpenVINO
conformance for transposes, vectors, batch broadcasting and element types, and shape errors."""

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


def reference(a, b, ta, tb):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if ta and a.ndim > 1:
        a64 = np.swapaxes(a64, -1, -2)
    if tb and b.ndim > 1:
        b64 = np.swapaxes(b64, -1, -2)
    return np.asarray(np.matmul(a64, b64)), np.asarray(np.matmul(np.abs(a64), np.abs(b64)))


@pytest.mark.parametrize("a, b, ta, tb, expected", [
    ([2, 2, 3], [3, 1], False, False, [2, 2, 1]),  # the specification's examples
    ([1, 3], [2, 3], False, True, [1, 2]),
    ([3], [3], False, False, []),
    ([3], [3, 4], False, False, [4]),
    ([2, 3], [3], False, False, [2]),
    ([7, 1, 2, 3], [5, 3, 4], False, False, [7, 5, 2, 4]),
    ([3], [5, 3, 4], True, False, [5, 4]),  # transpose ignored for a vector
    ([-1, 2, 3], [3, 4], False, False, [-1, 2, 4]),
])
def test_output_shapes(a, b, ta, tb, expected):
    model, _ = build_layer("MatMul", F, F, shapes=[a, b], transpose_a=ta, transpose_b=tb)
    assert model.results[0].inputs[0].source.partial_shape == PartialShape(expected)


def test_hand_checked_product():
    a = np.array([[1, 2], [3, 4]], np.float32)
    b = np.array([[5, 6], [7, 8]], np.float32)
    assert run_layer("MatMul", a, b).tolist() == [[19, 22], [43, 50]]
    assert run_layer("MatMul", a, b, transpose_a=True).tolist() == [[26, 30], [38, 44]]
    assert run_layer("MatMul", a, b, transpose_b=True).tolist() == [[17, 23], [39, 53]]


def test_two_vectors_give_a_scalar():
    y = run_layer("MatMul", np.array([1, 2, 3], np.float32), np.array([4, 5, 6], np.float32))
    assert y.shape == () and y == 32


def test_integers_wrap():
    a = np.full((1, 3), 100, np.int8)
    y = run_layer("MatMul", a, np.ones((3, 1), np.int8))
    assert y.dtype == np.int8 and y.tolist() == [[300 - 256]]


def test_f16_is_computed_in_f32_and_rounded_once():
    a = np.array([[2048.0] + [1.0] * 8], np.float16)
    y = run_layer("MatMul", a, np.ones((9, 1), np.float16))
    assert y.dtype == np.float16 and float(y[0, 0]) == 2056.0


@st.composite
def cases(draw):
    m, k, n = (draw(st.integers(1, 5)) for _ in range(3))
    ra, rb = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    batch = [draw(st.integers(1, 3)) for _ in range(max(ra, rb) - 2)] if max(ra, rb) > 2 else []
    ta, tb = draw(st.booleans()), draw(st.booleans())

    def shape(rank, rows, cols, transpose):
        if rank == 1:
            return [k]
        lead = [b if draw(st.booleans()) else 1 for b in batch[len(batch) - (rank - 2):]] \
            if rank > 2 else []
        return lead + ([cols, rows] if transpose else [rows, cols])
    return (shape(ra, m, k, ta), shape(rb, k, n, tb), ta, tb, draw(st.integers(0, 2**16)))


@settings(max_examples=60, deadline=None)
@given(cases(), st.sampled_from(["f32", "f64", "f16", "bf16", "i32", "i64"]))
def test_property_equals_numpy(case, type_name):
    sa, sb, ta, tb, seed = case
    rng = np.random.default_rng(seed)
    dtype = dtype_of(type_name)
    if type_name.startswith("i"):
        a, b = rng.integers(-5, 6, sa).astype(dtype), rng.integers(-5, 6, sb).astype(dtype)
    else:
        a, b = rng.standard_normal(sa).astype(dtype), rng.standard_normal(sb).astype(dtype)
    y = run_layer("MatMul", a, b, transpose_a=ta, transpose_b=tb)
    ref, mag = reference(a, b, ta, tb)
    assert_close(y, ref.astype(dtype), mag, f"{sa} {sb} {ta} {tb}")


@pytest.mark.parametrize("type_name", ["f32", "f16", "bf16", "f64", "i32", "i64"])
def test_openvino_conformance(tmp_path, type_name):
    ov = pytest.importorskip("openvino")
    import openvino.opset1 as o1
    dtype = dtype_of(type_name)
    rng = np.random.default_rng(9)
    params, outputs, inputs, mags = [], [], [], []
    shapes = [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)),
              ((4,), (4,)), ((2, 1, 3, 4), (3, 4, 6)), ((5,), (2, 5, 3)), ((1, 4), (2, 4, 3)),
              ((2, 16, 33), (2, 33, 17))]
    for sa, sb in shapes:
        for ta in (False, True):
            for tb in (False, True):
                xa = sa[:-2] + sa[-2:][::-1] if ta and len(sa) > 1 else sa
                xb = sb[:-2] + sb[-2:][::-1] if tb and len(sb) > 1 else sb
                if type_name.startswith("i"):
                    a = rng.integers(-5, 6, xa).astype(dtype)
                    b = rng.integers(-5, 6, xb).astype(dtype)
                else:
                    a = rng.standard_normal(xa).astype(dtype)
                    b = rng.standard_normal(xb).astype(dtype)
                pa = o1.parameter(list(xa), getattr(ov.Type, type_name))
                pb = o1.parameter(list(xb), getattr(ov.Type, type_name))
                outputs.append(o1.matmul(pa, pb, ta, tb).output(0))
                params += [pa, pb]
                inputs += [a, b]
                mags.append(reference(a, b, ta, tb)[1])
    ours, theirs = openvino_and_irexec(ov, tmp_path, params, outputs, inputs)
    for a, b, mag in zip(ours, theirs, mags):
        if type_name == "f64":  # OpenVINO's CPU plugin computes f64 in f32
            a, b = a.astype(np.float32), b.astype(np.float32)
        assert_close(a, b, mag, "MatMul")


@pytest.mark.parametrize("a, b, ta, tb, code", [
    ([2, 3], [4, 5], False, False, "IR307"),
    ([2, 3], [2, 5], True, True, "IR307"),
    ([2, 2, 3], [3, 3, 4], False, False, "IR307"),  # batch dims 2 and 3 do not broadcast
    ([], [3], False, False, "IR305"),
])
def test_shape_errors(a, b, ta, tb, code):
    e = layer_error("MatMul", F, F, shapes=[a, b], transpose_a=ta, transpose_b=tb)
    assert [d.code for d in e.diagnostics] == [code], [str(d) for d in e.diagnostics]


def test_inner_dims_checked_at_run_time():
    e = layer_error("MatMul", np.zeros((2, 3), np.float32), np.zeros((4, 2), np.float32),
                    shapes=[[2, -1], [-1, 2]])
    assert e.code == "IR307" and "inner dims" in str(e)


def test_mixed_element_types_are_refused():
    e = layer_error("MatMul", np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float16))
    assert e.code == "IR304"
