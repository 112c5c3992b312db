"""Conformance: random ONNX ReverseSequence models run by irexec and by ONNX Runtime (CPU) give
the same bits, over every ONNX data type both support, string included (object arrays of str in
both); complex and bfloat16 ORT cannot run (complex: "MLDataType for tensor(complex64) is not
currently registered"), so complex is checked against a plain numpy loop. Skipped without
onnxruntime; CI installs it."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto  # noqa: E402

import irexec  # noqa: E402
from tests.onnx.models import reverse_sequence_model  # noqa: E402

# The ONNX data types both ONNX Runtime's ReverseSequence and irexec support.
TYPES = {
    TensorProto.BOOL: np.bool_, TensorProto.INT8: np.int8, TensorProto.INT16: np.int16,
    TensorProto.INT32: np.int32, TensorProto.INT64: np.int64, TensorProto.UINT8: np.uint8,
    TensorProto.UINT16: np.uint16, TensorProto.UINT32: np.uint32, TensorProto.UINT64: np.uint64,
    TensorProto.FLOAT16: np.float16, TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64,
}
CASES_PER_TYPE = 12


def ort_run(model, inputs):
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    return session.run(None, inputs)[0]


def irexec_run(model, inputs):
    return irexec.compile_model(irexec.read_model(model))(inputs)["y"]


def random_values(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    # Any bit pattern: NaN payloads, -0.0, infinities and subnormals for the floats.
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * dtype.itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def bits(a):
    a = np.ascontiguousarray(a)
    return a if a.dtype == np.bool_ else a.view(f"u{a.dtype.itemsize}")


def random_case(rng):
    rank = int(rng.integers(2, 6))
    shape = [int(d) for d in rng.integers(1, 6, size=rank)]
    if rng.random() < 0.1:
        shape[int(rng.integers(0, rank))] = 0  # empty tensors
    batch_axis = int(rng.integers(0, 2))
    attrs = {} if rng.random() < 0.25 else {"batch_axis": batch_axis,
                                             "time_axis": 1 - batch_axis}
    b, t = attrs.get("batch_axis", 1), attrs.get("time_axis", 0)
    lens = rng.integers(0, shape[t] + 1, size=shape[b]).astype(np.int64)
    return shape, attrs, lens


@pytest.mark.parametrize("onnx_type", list(TYPES), ids=TensorProto.DataType.Name)
def test_random_models_bit_for_bit(onnx_type):
    rng = np.random.default_rng(onnx_type)
    for _ in range(CASES_PER_TYPE):
        shape, attrs, lens = random_case(rng)
        model = reverse_sequence_model(shape, onnx_type, opset=int(rng.integers(10, 22)), **attrs)
        inputs = {"x": random_values(rng, TYPES[onnx_type], shape), "lens": lens}
        want, got = ort_run(model, inputs), irexec_run(model, inputs)
        assert got.dtype == want.dtype and got.shape == want.shape, (shape, attrs)
        np.testing.assert_array_equal(bits(got), bits(want), err_msg=f"{shape} {attrs} {lens}")


@pytest.mark.parametrize("bad", [-2, 5, 2**31, 2**32 + 2])
def test_out_of_range_lengths_fail_in_both(bad):
    model = reverse_sequence_model([4, 2])
    inputs = {"x": np.zeros((4, 2), np.float32), "lens": np.array([1, bad], np.int64)}
    with pytest.raises(Exception, match="Invalid sequence length"):
        ort_run(model, inputs)
    with pytest.raises(irexec.IRError, match="is not in \\[0, 4\\]"):
        irexec_run(model, inputs)


def test_constant_lengths_bit_for_bit():
    model = reverse_sequence_model([3, 4, 2], TensorProto.INT16, lens=[0, 3, 1, 2])
    x = np.arange(24, dtype=np.int16).reshape(3, 4, 2)
    np.testing.assert_array_equal(irexec_run(model, {"x": x}), ort_run(model, {"x": x}))


def random_strings(rng, shape):
    alphabet = list("abc\u00e9\u4e2d\U0001f600 ")
    out = np.empty(shape, dtype=object)
    out.reshape(-1)[:] = ["".join(rng.choice(alphabet, size=int(n)))
                          for n in rng.integers(0, 5, size=out.size)]
    return out


def loop_reference(x, lens, batch_axis, time_axis):
    """ReverseSequence as ONNX's spec says it, one (batch, time) element at a time."""
    y = x.copy()
    for b, n in enumerate(lens):
        for t in range(n):
            src, dst = [slice(None)] * x.ndim, [slice(None)] * x.ndim
            src[batch_axis] = dst[batch_axis] = b
            src[time_axis], dst[time_axis] = n - 1 - t, t
            y[tuple(dst)] = x[tuple(src)]
    return y


def test_random_string_models_equal_onnxruntime():
    rng = np.random.default_rng(2024)
    for _ in range(CASES_PER_TYPE):
        shape, attrs, lens = random_case(rng)
        model = reverse_sequence_model(shape, TensorProto.STRING,
                                       opset=int(rng.integers(10, 22)), **attrs)
        inputs = {"x": random_strings(rng, shape), "lens": lens}
        want, got = ort_run(model, inputs), irexec_run(model, inputs)
        assert got.dtype == want.dtype == object and got.shape == want.shape
        assert got.tolist() == want.tolist(), (shape, attrs, lens)
        assert all(type(v) is str for v in got.reshape(-1))


@pytest.mark.parametrize("onnx_type, dtype", [(TensorProto.COMPLEX64, np.complex64),
                                              (TensorProto.COMPLEX128, np.complex128)])
def test_random_complex_models_equal_a_loop(onnx_type, dtype):
    rng = np.random.default_rng(onnx_type)
    for _ in range(CASES_PER_TYPE):
        shape, attrs, lens = random_case(rng)
        model = reverse_sequence_model(shape, onnx_type, opset=int(rng.integers(10, 22)), **attrs)
        x = random_values(rng, dtype, shape)  # any bit pattern of both parts
        got = irexec_run(model, {"x": x, "lens": lens})
        want = loop_reference(x, lens, attrs.get("batch_axis", 1), attrs.get("time_axis", 0))
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.view(f"u{dtype().itemsize // 2}"),
                                      want.view(f"u{dtype().itemsize // 2}"))
