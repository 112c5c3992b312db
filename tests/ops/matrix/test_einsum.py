"""Einsum-7: spec examples, np.einsum, shape inference, bad equations, OpenVINO."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.errors import IRError
from irexec.ir.shape import Dimension, PartialShape
from tests.ops.build import run_op
from tests.ops.shapeops_oracle import check, openvino

CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),     # matrix product
    ("ii->i", [(3, 3)]),                 # diagonal
    ("ii", [(3, 3)]),                    # trace, implicit
    ("ij->ji", [(2, 5)]),                # transpose
    ("i,i->", [(4,), (4,)]),             # dot
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (5, 3, 2)]),  # batched, broadcast ellipsis
    ("bij,bjk", [(2, 2, 3), (2, 3, 2)]),  # implicit output "bik"
    ("abC,Cd->abd", [(2, 2, 3), (3, 2)]),  # upper and lower case are different labels
]


@pytest.mark.parametrize("equation, shapes", CASES)
def test_matches_numpy_einsum_on_integers(equation, shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.integers(-9, 9, size=s).astype(np.int32) for s in shapes]
    (out,), model = run_op("Einsum", *arrays, version="opset7", equation=equation)
    expected = np.einsum(equation, *arrays)
    np.testing.assert_array_equal(out, expected)
    assert model.outputs[0].partial_shape == PartialShape(expected.shape)


@settings(max_examples=30, deadline=None)
@given(i=st.integers(1, 4), j=st.integers(1, 4), k=st.integers(1, 4), seed=st.integers(0, 99))
def test_float_matrix_products_within_rounding(i, j, k, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((i, j)), rng.standard_normal((j, k))
    (out,), _ = run_op("Einsum", a.astype(np.float32), b.astype(np.float32), version="opset7",
                       equation="ij,jk->ik")
    np.testing.assert_allclose(out, a.astype(np.float32).astype(np.float64) @
                               b.astype(np.float32).astype(np.float64), rtol=1e-5, atol=1e-5)


def test_dynamic_dims_flow_through_labels():
    (out,), model = run_op("Einsum", np.zeros((2, 3), np.float32), np.zeros((3, 4), np.float32),
                           version="opset7", equation="ij,jk->ki", shapes={0: [-1, 3]})
    assert model.outputs[0].partial_shape == PartialShape([4, Dimension.dynamic()])
    assert out.shape == (4, 2)


@pytest.mark.parametrize("equation", ["ij,jk->ikk", "ij->iz", "i.j->i", "ij,jk,kl->il"])
def test_bad_equations_are_ir338(equation):
    with pytest.raises(IRError) as e:
        run_op("Einsum", np.zeros((2, 3), np.float32), np.zeros((3, 4), np.float32),
               version="opset7", equation=equation)
    assert e.value.code == "IR338"


def test_label_dims_must_agree():
    with pytest.raises(IRError) as e:
        run_op("Einsum", np.zeros((2, 3), np.float32), np.zeros((4, 4), np.float32),
               version="opset7", equation="ij,jk->ik")
    assert e.value.code == "IR307"


def test_openvino_conformance(tmp_path):
    openvino()
    import openvino.opset7 as o
    rng = np.random.default_rng(3)
    params, outs, feed = [], [], []
    for equation, shapes in CASES:
        if equation.startswith("ii"):
            continue  # OpenVINO's CPU plugin refuses a diagonal (EinsumDecomposition throws)
        ps = [o.parameter(list(s), np.float32) for s in shapes]
        params += ps
        outs.append(o.einsum(ps, equation).output(0))
        feed += [rng.standard_normal(s).astype(np.float32) for s in shapes]
    check(tmp_path, outs, params, [feed], exact=False)
