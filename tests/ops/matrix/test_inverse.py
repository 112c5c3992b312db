"""Inverse-14: the specification's examples, properties against a Gauss-Jordan elimination in
float64, OpenVINO conformance, singular matrices, and one diagnostic per bad shape."""

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


def gauss_jordan(a):
    """The inverse of each matrix of ``a`` [..., n, n] in float64 (partial pivoting), and per
    element a magnitude for the tolerance (row sums of |inverse| times n)."""
    a = a.astype(np.float64)
    n = a.shape[-1]
    m = np.concatenate([a, np.broadcast_to(np.eye(n), a.shape)], axis=-1).copy()
    for idx in np.ndindex(*a.shape[:-2]):
        mat = m[idx]
        for c in range(n):
            p = c + int(np.argmax(np.abs(mat[c:, c])))
            mat[[c, p]] = mat[[p, c]]
            mat[c] /= mat[c, c]
            for r in range(n):
                if r != c:
                    mat[r] -= mat[r, c] * mat[c]
    inv = m[..., n:]
    return inv, np.abs(inv).sum(axis=-1, keepdims=True) * n * 4


def well_conditioned(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    n = shape[-1]
    return (rng.standard_normal(shape) + 2 * n * np.eye(n) * rng.choice([-1, 1], shape[:-1])
            [..., None]).astype(dtype)


@pytest.mark.parametrize("shape", [[3, 3], [2, 4, 4], [5, 4, 3, 2, 2], [-1, 3, 3]])
def test_spec_example_shapes(shape):
    model, _ = build_layer("Inverse", F, version="opset14", shapes=[shape], adjoint=False)
    assert model.results[0].inputs[0].source.partial_shape == PartialShape(shape)


def test_a_square_dim_from_the_other():
    model, _ = build_layer("Inverse", F, version="opset14", shapes=[[2, -1, 3]], adjoint=True)
    assert model.results[0].inputs[0].source.partial_shape == PartialShape([2, 3, 3])


def test_hand_checked_inverse_and_adjoint():
    a = np.array([[4.0, 7.0], [2.0, 6.0]], np.float32)
    y = run_layer("Inverse", a, version="opset14", adjoint=False)
    np.testing.assert_allclose(y, [[0.6, -0.7], [-0.2, 0.4]], rtol=1e-6)
    t = run_layer("Inverse", a, version="opset14", adjoint=True)
    np.testing.assert_allclose(t, [[0.6, -0.2], [-0.7, 0.4]], rtol=1e-6)


def test_a_singular_matrix_gives_nan_and_leaves_the_others():
    a = well_conditioned((3, 3, 3), np.float32, 1)
    a[1] = [[1, 2, 3], [2, 4, 6], [0, 0, 1]]
    y = run_layer("Inverse", a, version="opset14", adjoint=False)
    assert np.isnan(y[1]).all() and np.isfinite(y[[0, 2]]).all()
    ref, mag = gauss_jordan(a[[0, 2]])
    assert_close(y[[0, 2]], ref.astype(np.float32), mag, "the invertible ones")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 3), max_size=2), st.integers(1, 5), st.booleans(),
       st.sampled_from(["f32", "f64", "f16", "bf16"]), st.integers(0, 2 ** 16))
def test_property_equals_gauss_jordan(batch, n, adjoint, type_name, seed):
    dtype = dtype_of(type_name)
    a = well_conditioned(batch + [n, n], dtype, seed)
    y = run_layer("Inverse", a, version="opset14", adjoint=adjoint)
    ref, mag = gauss_jordan(a)
    if adjoint:
        ref, mag = np.swapaxes(ref, -1, -2), np.swapaxes(np.broadcast_to(mag, ref.shape), -1, -2)
    assert_close(y, ref.astype(dtype), mag, f"{batch} {n} {adjoint}")


@pytest.mark.parametrize("type_name", ["f32", "f16", "bf16"])
def test_openvino_conformance(tmp_path, type_name):
    ov = pytest.importorskip("openvino")
    import openvino.opset14 as o14
    dtype = dtype_of(type_name)
    params, outputs, inputs = [], [], []
    for i, (shape, adjoint) in enumerate([((3, 3), False), ((2, 4, 4), True),
                                          ((2, 3, 2, 2), False), ((1, 1), True),
                                          ((3, 6, 6), False)]):
        a = well_conditioned(shape, dtype, i)
        p = o14.parameter(list(shape), getattr(ov.Type, type_name))
        params.append(p)
        outputs.append(o14.inverse(p, adjoint).output(0))
        inputs.append(a)
    ours, theirs = openvino_and_irexec(ov, tmp_path, params, outputs, inputs)
    for a, b, x in zip(ours, theirs, inputs):
        _, mag = gauss_jordan(x)
        assert_close(a, b, np.maximum(mag, np.swapaxes(np.broadcast_to(mag, x.shape), -1, -2)),
                     str(x.shape))


@pytest.mark.parametrize("shape, code", [([3, 4], "IR307"), ([2, 2, 3], "IR307"), ([3], "IR305")])
def test_bad_shapes_give_one_coded_error(shape, code):
    e = layer_error("Inverse", F, version="opset14", shapes=[shape], adjoint=False)
    assert [d.code for d in e.diagnostics] == [code], [str(d) for d in e.diagnostics]


def test_integer_matrices_are_refused():
    e = layer_error("Inverse", np.eye(2, dtype=np.int32), version="opset14", adjoint=False)
    assert [d.code for d in e.diagnostics] == ["IR304"]
