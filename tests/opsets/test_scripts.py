"""Scripts written for OpenVINO's Python API that build models (``ov.opset13``,
``ov.preprocess``) run unchanged with ``ov`` being irexec, and give OpenVINO's results.

Each script is one function of ``ov`` (the module) and numpy inputs; it runs with irexec always
(against numpy where the expected value is plain), and with OpenVINO where it is installed. The
scripts use ``ov.Type`` and ``ov.Layout``, which the rest of the API work brings: until irexec
has them, these tests skip.
"""

from __future__ import annotations

import numpy as np
import pytest

import irexec

pytestmark = pytest.mark.skipif(not (hasattr(irexec, "Type") and hasattr(irexec, "Layout")),
                                reason="irexec.Type and irexec.Layout come with the API work")

CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}


def classifier(ov, image):
    ops = ov.opset13
    rng = np.random.default_rng(0)
    data = ops.parameter([1, 3, 16, 16], ov.Type.f32, name="data")
    w1 = ops.constant(rng.standard_normal((8, 3, 3, 3)).astype(np.float32))
    conv = ops.convolution(data, w1, [2, 2], [1, 1], [1, 1], [1, 1])
    act = ops.relu(ops.add(conv, ops.constant(np.full((1, 8, 1, 1), 0.1, np.float32))))
    pool = ops.reduce_mean(act, ops.constant(np.array([2, 3], np.int64)), keep_dims=False)
    logits = ops.matmul(pool, ops.constant(rng.standard_normal((8, 5)).astype(np.float32)),
                        False, False)
    probs = ops.softmax(logits, 1)
    model = ov.Model([probs], [data], "classifier")
    compiled = ov.Core().compile_model(model, "CPU", CONFIG)
    return compiled({"data": image})[compiled.output(0)]


def with_preprocessing(ov, image):
    from_openvino = ov.preprocess
    ops = ov.opset13
    data = ops.parameter([1, 3, 8, 8], np.float32, name="data")
    model = ov.Model([ops.sigmoid(data)], [data], "m")
    ppp = from_openvino.PrePostProcessor(model)
    ppp.input().tensor().set_element_type(ov.Type.u8).set_layout(ov.Layout("NHWC")) \
        .set_spatial_static_shape(16, 16)
    ppp.input().model().set_layout(ov.Layout("NCHW"))
    ppp.input().preprocess().convert_element_type(ov.Type.f32) \
        .resize(from_openvino.ResizeAlgorithm.RESIZE_LINEAR).mean([127.0, 127.0, 127.0]) \
        .scale(64.0)
    ppp.output().tensor().set_element_type(ov.Type.f16)
    model = ppp.build()
    compiled = ov.compile_model(model, "CPU", CONFIG)
    return compiled(image)[0]


def saved_and_read_back(ov, values, tmp_path):
    ops = ov.opset8
    x = ops.parameter([2, 6], ov.Type.f32, name="x")
    parts = ops.split(x, 1, 2)
    joined = ops.concat([parts.output(1), parts.output(0)], 1)
    top = ops.topk(joined, 3, 1, "max", "value")
    model = ov.Model(top.outputs(), [x], "saved")
    ov.save_model(model, str(tmp_path / "saved.xml"), compress_to_fp16=False)
    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(tmp_path / "saved.xml")), "CPU")
    request = compiled.create_infer_request()
    request.infer({0: values})
    return [request.get_output_tensor(i).data.copy() for i in range(2)]


def _image(shape, dtype=np.float32, seed=1):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.uint8:
        return rng.integers(0, 256, size=shape).astype(np.uint8)
    return rng.standard_normal(shape).astype(dtype)


def test_classifier():
    image = _image((1, 3, 16, 16))
    ours = classifier(irexec, image)
    assert ours.shape == (1, 5) and np.isclose(ours.sum(), 1, atol=1e-6)
    openvino = pytest.importorskip("openvino")
    np.testing.assert_allclose(ours, classifier(openvino, image), rtol=1e-5, atol=1e-6)


def test_with_preprocessing():
    image = _image((1, 16, 16, 3), np.uint8)
    ours = with_preprocessing(irexec, image)
    assert ours.dtype == np.float16 and ours.shape == (1, 3, 8, 8)
    openvino = pytest.importorskip("openvino")
    np.testing.assert_allclose(ours.astype(np.float32),
                               with_preprocessing(openvino, image).astype(np.float32),
                               atol=1e-3)


def test_saved_and_read_back(tmp_path):
    values = _image((2, 6))
    ours = saved_and_read_back(irexec, values, tmp_path)
    expected = np.sort(np.concatenate([values[:, 3:], values[:, :3]], 1), 1)[:, ::-1][:, :3]
    np.testing.assert_array_equal(ours[0], expected)
    openvino = pytest.importorskip("openvino")
    theirs = saved_and_read_back(openvino, values, tmp_path)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])
