"""GroupedMatMul-17: both input combinations of OpenVINO 2026.4 against per-group numpy products
(mat_b is [G, N, K], as OpenVINO's shape inference and reference kernel read it), errors, and
OpenVINO's own shapes for IR it writes (its CPU plugin does not run the op)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec.errors import IRError
from tests.ops.build import run_op
from tests.ops.shapeops_oracle import openvino


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), sizes=st.lists(st.integers(0, 4), min_size=1, max_size=4),
       k=st.integers(1, 4), n=st.integers(1, 4), batched=st.booleans(), integer=st.booleans(),
       spare=st.integers(0, 2))
def test_matches_per_group_products(seed, sizes, k, n, batched, integer, spare):
    rng = np.random.default_rng(seed)
    dt = np.int32 if integer else np.float32
    g = len(sizes)
    b = rng.integers(-5, 5, (g, n, k)).astype(dt)
    if batched:
        a = rng.integers(-5, 5, (g, 2, k)).astype(dt)
        (got,), _ = run_op("GroupedMatMul", a, b, version="opset17")
        expected = np.stack([a[i].astype(np.float64) @ b[i].T.astype(np.float64)
                             for i in range(g)])
    else:
        offsets = np.cumsum(sizes).astype(np.int32)
        a = rng.integers(-5, 5, (int(offsets[-1]) + spare, k)).astype(dt)
        (got,), _ = run_op("GroupedMatMul", a, b, offsets, version="opset17")
        expected = np.zeros((a.shape[0], n))
        start = 0
        for i, end in enumerate(offsets):
            for row in range(start, end):
                expected[row] = [sum(float(a[row, j]) * float(b[i, col, j]) for j in range(k))
                                 for col in range(n)]
            start = end
    assert got.dtype == dt
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("a, b, offsets, code", [
    ((6, 2), (3, 5, 2), None, "IR303"),         # 2-D x 3-D needs offsets
    ((6, 2), (3, 5, 4), [1, 2, 6], "IR307"),    # K differs
    ((6, 2), (2, 5, 2), [1, 2, 6], "IR307"),    # group counts differ
    ((3, 4, 2), (2, 5, 2), None, "IR307"),      # group counts differ
    ((4, 6), (6, 5), [2, 6], "IR305"),          # 2-D x 2-D: not in OpenVINO 2026.4
    ((6, 2), (3, 5, 2), [4, 2, 6], "IR308"),    # offsets decrease
    ((6, 2), (3, 5, 2), [1, 2, 7], "IR308"),    # past the tokens
])
def test_bad_inputs(a, b, offsets, code):
    args = [np.zeros(a, np.float32), np.zeros(b, np.float32)]
    if offsets is not None:
        args.append(np.array(offsets, np.int32))
    with pytest.raises(IRError) as e:
        run_op("GroupedMatMul", *args, version="opset17")
    assert e.value.code == code


def test_reads_openvino_ir_with_openvino_shapes(tmp_path):
    ov = openvino()
    import openvino.opset16 as o16
    import openvino.opset17 as o
    a2, b3, off = o16.parameter([10, 4], np.float32), o16.parameter([3, 5, 4], np.float32), \
        o16.parameter([3], np.int32)
    a3 = o16.parameter([3, 2, 4], np.float32)
    outs = [o.grouped_matmul(a2, b3, off).output(0), o.grouped_matmul(a3, b3).output(0)]
    model = ov.Model(outs, [a2, b3, off, a3], "gmm")
    xml = tmp_path / "gmm.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    ours = irexec.read_model(xml)
    assert [list(ours.output(i).shape) for i in range(2)] == \
        [list(out.get_shape()) for out in outs] == [[10, 5], [3, 2, 5]]
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(p.get_shape()).astype(np.float32)
              for p in model.get_parameters()]
    arrays[2] = np.array([3, 8, 10], np.int32)
    names = [p.get_friendly_name() for p in model.get_parameters()]
    first, second = irexec.compile_model(ours)(dict(zip(names, arrays))).values()
    np.testing.assert_allclose(first[3:8], arrays[0][3:8] @ arrays[1][1].T, rtol=1e-5)
    np.testing.assert_allclose(second, arrays[3] @ arrays[1].transpose(0, 2, 1), rtol=1e-5)
