"""``irexec.preprocess.PrePostProcessor``: the steps become layers of the model.

Each case is written once against an API (irexec's, or OpenVINO's with the oracle installed):
the same model, the same steps. irexec's built model is checked against a numpy computation of
the steps; with OpenVINO, against OpenVINO's PrePostProcessor on the same model, and the file
irexec saves is run by OpenVINO too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import irexec
from tests.opsets.saving import save_exact
from irexec.preprocess import ColorFormat, PaddingMode, PrePostProcessor, ResizeAlgorithm
from irexec.preprocess.processor import PreprocessError

ROOT = Path(__file__).resolve().parents[2]
OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"}


class IrexecApi:
    import irexec.opset13 as ops
    Model = irexec.Model
    PrePostProcessor, ColorFormat, ResizeAlgorithm = PrePostProcessor, ColorFormat, \
        ResizeAlgorithm
    PaddingMode = PaddingMode

    @staticmethod
    def type(name):
        return name

    @staticmethod
    def layout(text):
        return text


def openvino_api():
    ov = pytest.importorskip("openvino")
    from openvino import opset13
    from openvino import preprocess

    class Api:
        ops = opset13
        Model = ov.Model
        PrePostProcessor = preprocess.PrePostProcessor
        ColorFormat = preprocess.ColorFormat
        ResizeAlgorithm = preprocess.ResizeAlgorithm
        PaddingMode = preprocess.PaddingMode

        @staticmethod
        def type(name):
            return getattr(ov.Type, name)

        @staticmethod
        def layout(text):
            return ov.Layout(text)

    return ov, Api


def relu_model(api, shape=(1, 3, 8, 10)):
    x = api.ops.parameter(list(shape), np.float32, name="img")
    return api.Model([api.ops.relu(x)], [x], "m")


# --- the cases: (build the steps, the inputs, the numpy expectation) -----------------------------

def u8_nhwc_mean_scale(api, ppp):
    i = ppp.input()
    i.tensor().set_element_type(api.type("u8")).set_layout(api.layout("NHWC"))
    i.model().set_layout(api.layout("NCHW"))
    i.preprocess().convert_element_type(api.type("f32")).mean([100.0, 120.0, 140.0]) \
        .scale([50.0, 60.0, 70.0])


def u8_nhwc_expected(x):
    y = x.transpose(0, 3, 1, 2).astype(np.float32)
    y = (y - np.array([100, 120, 140], np.float32).reshape(1, 3, 1, 1)) / \
        np.array([50, 60, 70], np.float32).reshape(1, 3, 1, 1)
    return np.maximum(y, 0)


def scalar_mean_scale(api, ppp):
    ppp.input().preprocess().mean(0.25).scale(2.0)


def resize_nearest(api, ppp):
    i = ppp.input()
    i.tensor().set_layout(api.layout("NCHW")).set_spatial_static_shape(16, 20)
    i.model().set_layout(api.layout("NCHW"))
    i.preprocess().resize(api.ResizeAlgorithm.RESIZE_NEAREST)


def resize_linear(api, ppp):
    i = ppp.input()
    i.tensor().set_layout(api.layout("NCHW")).set_spatial_static_shape(4, 5)
    i.model().set_layout(api.layout("NCHW"))
    i.preprocess().resize(api.ResizeAlgorithm.RESIZE_LINEAR)


def linear_half_pixel(x, out_h, out_w):
    """Bilinear resize of the last two axes, half-pixel centres, edges clamped."""
    def weights(n_in, n_out):
        pos = (np.arange(n_out) + 0.5) * n_in / n_out - 0.5
        pos = np.clip(pos, 0, n_in - 1)
        lo = np.floor(pos).astype(int)
        hi = np.minimum(lo + 1, n_in - 1)
        m = np.zeros((n_out, n_in))
        m[np.arange(n_out), lo] += 1 - (pos - lo)
        m[np.arange(n_out), hi] += pos - lo
        return m
    wh, ww = weights(x.shape[2], out_h), weights(x.shape[3], out_w)
    return np.einsum("oh,nchw,pw->ncop", wh, x.astype(np.float64), ww)


def resize_cubic_dynamic(api, ppp):
    i = ppp.input()
    i.tensor().set_layout(api.layout("NCHW")).set_spatial_dynamic_shape()
    i.model().set_layout(api.layout("NCHW"))
    i.preprocess().resize(api.ResizeAlgorithm.RESIZE_CUBIC)


def reverse_channels(api, ppp):
    ppp.input().tensor().set_layout(api.layout("NCHW"))
    ppp.input().preprocess().reverse_channels()


def bgr_to_rgb_nhwc(api, ppp):
    i = ppp.input()
    i.tensor().set_layout(api.layout("NHWC")).set_color_format(api.ColorFormat.BGR)
    i.model().set_layout(api.layout("NCHW"))
    i.preprocess().convert_color(api.ColorFormat.RGB)


def nv12_two_planes(api, ppp):
    i = ppp.input()
    i.tensor().set_element_type(api.type("u8")) \
        .set_color_format(api.ColorFormat.NV12_TWO_PLANES, ["y", "uv"])
    i.model().set_layout(api.layout("NCHW"))
    i.preprocess().convert_color(api.ColorFormat.BGR)


def nv12_single_plane(api, ppp):
    i = ppp.input()
    i.tensor().set_element_type(api.type("u8")) \
        .set_color_format(api.ColorFormat.NV12_SINGLE_PLANE)
    i.model().set_layout(api.layout("NCHW"))
    i.preprocess().convert_color(api.ColorFormat.RGB).convert_element_type(api.type("f32"))


def i420_three_planes(api, ppp):
    i = ppp.input()
    i.tensor().set_element_type(api.type("u8")) \
        .set_color_format(api.ColorFormat.I420_THREE_PLANES, ["y", "u", "v"])
    i.model().set_layout(api.layout("NCHW"))
    i.preprocess().convert_color(api.ColorFormat.RGB)


def i420_single_plane(api, ppp):
    i = ppp.input()
    i.tensor().set_element_type(api.type("u8")) \
        .set_color_format(api.ColorFormat.I420_SINGLE_PLANE)
    i.model().set_layout(api.layout("NCHW"))
    i.preprocess().convert_color(api.ColorFormat.BGR)


def layout_by_order_and_output_steps(api, ppp):
    i = ppp.input()
    i.preprocess().convert_layout([0, 3, 1, 2])
    o = ppp.output()
    o.model().set_layout(api.layout("NCHW"))
    o.tensor().set_layout(api.layout("NHWC")).set_element_type(api.type("f16"))


def output_convert_steps(api, ppp):
    o = ppp.output()
    o.postprocess().convert_element_type(api.type("f16")).convert_layout([0, 2, 3, 1])


def resize_bilinear_pillow(api, ppp):
    i = ppp.input()
    i.tensor().set_layout(api.layout("NCHW")).set_spatial_static_shape(20, 13)
    i.model().set_layout(api.layout("NCHW"))
    i.preprocess().resize(api.ResizeAlgorithm.RESIZE_BILINEAR_PILLOW)


def crop(api, ppp):
    ppp.input().tensor().set_shape([1, 3, 12, 14])
    ppp.input().preprocess().crop([0, 0, 2, 3], [1, 3, 10, 13])


def gray_model(api):
    x = api.ops.parameter([1, 1, 8, 10], np.float32, name="img")
    return api.Model([api.ops.relu(x)], [x], "m")


def color_case(source: str, target: str, u8: bool):
    """A case converting an NCHW model's input from the colour format ``source`` (an element
    type u8 tensor if ``u8``, else f32) to ``target``."""
    def case(api, ppp):
        tensor = ppp.input().tensor()
        if u8:
            tensor.set_element_type(api.type("u8"))
        tensor.set_color_format(getattr(api.ColorFormat, source))
        ppp.input().model().set_layout(api.layout("NCHW"))
        ppp.input().preprocess().convert_color(getattr(api.ColorFormat, target))
    return case


rgb_u8_to_gray = color_case("RGB", "GRAY", u8=True)
bgr_f32_to_gray = color_case("BGR", "GRAY", u8=False)
nv12_to_gray = color_case("NV12_SINGLE_PLANE", "GRAY", u8=True)
i420_planes_to_gray = color_case("I420_THREE_PLANES", "GRAY", u8=True)
bgrx_to_rgb = color_case("BGRX", "RGB", u8=False)


def pad_constant(api, ppp):
    ppp.input().tensor().set_shape([1, 3, 6, 8])
    ppp.input().preprocess().pad([0, 0, 1, 0], [0, 0, 1, 2], 0.5, api.PaddingMode.CONSTANT)


def pad_reflect(api, ppp):
    ppp.input().tensor().set_shape([1, 3, 6, 8])
    ppp.input().preprocess().pad([0, 0, 1, 1], [0, 0, 1, 1], [0.0], api.PaddingMode.REFLECT)


GRAY_CASES = {"rgb_u8_to_gray", "bgr_f32_to_gray", "nv12_to_gray", "i420_planes_to_gray"}

CASES = {
    "u8_nhwc_mean_scale": u8_nhwc_mean_scale, "scalar_mean_scale": scalar_mean_scale,
    "resize_nearest": resize_nearest, "resize_linear": resize_linear,
    "resize_cubic_dynamic": resize_cubic_dynamic, "reverse_channels": reverse_channels,
    "bgr_to_rgb_nhwc": bgr_to_rgb_nhwc, "nv12_two_planes": nv12_two_planes,
    "nv12_single_plane": nv12_single_plane, "i420_three_planes": i420_three_planes,
    "i420_single_plane": i420_single_plane,
    "layout_by_order_and_output_steps": layout_by_order_and_output_steps,
    "output_convert_steps": output_convert_steps,
    "resize_bilinear_pillow": resize_bilinear_pillow, "crop": crop,
    "rgb_u8_to_gray": rgb_u8_to_gray, "bgr_f32_to_gray": bgr_f32_to_gray,
    "nv12_to_gray": nv12_to_gray, "i420_planes_to_gray": i420_planes_to_gray,
    "bgrx_to_rgb": bgrx_to_rgb, "pad_constant": pad_constant, "pad_reflect": pad_reflect,
}


def build(api, case):
    model = gray_model(api) if case in GRAY_CASES else relu_model(api)
    ppp = api.PrePostProcessor(model)
    CASES[case](api, ppp)
    return ppp.build()


def feeds_for(model, seed=0, spatial=None):
    rng = np.random.default_rng(seed)
    out = []
    for p in model.parameters:
        dims = [d.min if d.is_static else spatial.pop(0) for d in p.outputs[0].partial_shape.dims]
        dtype = p.outputs[0].element_type.dtype
        if np.dtype(dtype).kind == "u":
            out.append(rng.integers(0, 256, size=dims).astype(dtype))
        else:
            out.append(rng.uniform(-1, 1, size=dims).astype(dtype))
    return out


def run(model, feeds):
    return list(irexec.compile_model(model)(
        {p.name: f for p, f in zip(model.parameters, feeds)}).values())[0]


# --- irexec against numpy ------------------------------------------------------------------------

def test_element_type_layout_mean_and_scale_per_channel():
    model = build(IrexecApi, "u8_nhwc_mean_scale")
    (param,) = model.parameters
    assert param.name == "img" and str(param.outputs[0].partial_shape) == "[1,8,10,3]"
    assert param.outputs[0].element_type.name == "u8"
    x = feeds_for(model)
    np.testing.assert_allclose(run(model, x), u8_nhwc_expected(x[0]), rtol=1e-6, atol=1e-6)


def test_scalar_mean_and_scale():
    model = build(IrexecApi, "scalar_mean_scale")
    x = feeds_for(model)
    np.testing.assert_allclose(run(model, x), np.maximum((x[0] - 0.25) / 2.0, 0), rtol=1e-6)


def test_resize_nearest_from_a_static_spatial_shape():
    model = build(IrexecApi, "resize_nearest")
    assert str(model.parameters[0].outputs[0].partial_shape) == "[1,3,16,20]"
    x = feeds_for(model)
    # Halving with half-pixel centres: output i reads input 2i + 0.5, rounded down on ties.
    np.testing.assert_array_equal(run(model, x), np.maximum(x[0][:, :, ::2, ::2], 0))


def test_resize_linear_up():
    model = build(IrexecApi, "resize_linear")
    x = feeds_for(model)
    np.testing.assert_allclose(run(model, x), np.maximum(linear_half_pixel(x[0], 8, 10), 0),
                               rtol=1e-5, atol=1e-6)


def test_resize_to_the_model_from_any_spatial_size():
    model = build(IrexecApi, "resize_cubic_dynamic")
    shape = model.parameters[0].outputs[0].partial_shape
    assert shape.dims[2].is_dynamic and shape.dims[3].is_dynamic
    for size in ([8, 10], [13, 7]):
        out = run(model, feeds_for(model, spatial=list(size)))
        assert out.shape == (1, 3, 8, 10)
    same = feeds_for(model, spatial=[8, 10])  # cubic at the same size is the identity
    np.testing.assert_allclose(run(model, same), np.maximum(same[0], 0), atol=1e-5)


def test_crop():
    model = build(IrexecApi, "crop")
    assert str(model.parameters[0].outputs[0].partial_shape) == "[1,3,12,14]"
    x = feeds_for(model)
    np.testing.assert_array_equal(run(model, x), np.maximum(x[0][:, :, 2:10, 3:13], 0))


def test_pad():
    model = build(IrexecApi, "pad_constant")
    x = feeds_for(model)
    expected = np.pad(x[0], [(0, 0), (0, 0), (1, 1), (0, 2)], constant_values=0.5)
    np.testing.assert_array_equal(run(model, x), np.maximum(expected, 0))
    model = build(IrexecApi, "pad_reflect")
    x = feeds_for(model)
    expected = np.pad(x[0], [(0, 0), (0, 0), (1, 1), (1, 1)], mode="reflect")
    np.testing.assert_array_equal(run(model, x), np.maximum(expected, 0))


def test_reverse_channels_and_bgr_to_rgb():
    model = build(IrexecApi, "reverse_channels")
    x = feeds_for(model)
    np.testing.assert_array_equal(run(model, x), np.maximum(x[0][:, ::-1], 0))
    model = build(IrexecApi, "bgr_to_rgb_nhwc")
    x = feeds_for(model)
    np.testing.assert_array_equal(run(model, x),
                                  np.maximum(x[0][..., ::-1].transpose(0, 3, 1, 2), 0))


def yuv_to_rgb(y, u, v):
    """BT.601 (video range), as OpenVINO's NV12/I420 conversion specs give it, in float64."""
    y, u, v = (a.astype(np.float64) for a in (y, u, v))
    c, d, e = 1.164 * (y - 16), u - 128, v - 128
    rgb = np.stack([c + 1.596 * e, c - 0.391 * d - 0.813 * e, c + 2.018 * d], -1)
    return np.clip(rgb, 0, 255)


def test_nv12_and_i420_planes_become_rgb_or_bgr():
    for case, order in (("nv12_two_planes", "bgr"), ("nv12_single_plane", "rgb"),
                        ("i420_three_planes", "rgb"), ("i420_single_plane", "bgr")):
        model = build(IrexecApi, case)
        planes = feeds_for(model, seed=3)
        if case == "nv12_two_planes":
            assert [p.name for p in model.parameters] == ["img/y", "img/uv"]
            y, uv = planes[0][0, :, :, 0], planes[1][0]
            u, v = uv[..., 0], uv[..., 1]
        elif case == "i420_three_planes":
            assert [p.name for p in model.parameters] == ["img/y", "img/u", "img/v"]
            y, u, v = (p[0, :, :, 0] for p in planes)
        else:
            flat = planes[0][0, :, :, 0]
            assert flat.shape == (12, 10)
            y = flat[:8]
            if case.startswith("nv12"):
                uv = flat[8:].reshape(4, 5, 2)
                u, v = uv[..., 0], uv[..., 1]
            else:
                u, v = flat[8:10].reshape(4, 5), flat[10:12].reshape(4, 5)
        up = lambda a: a.repeat(2, 0).repeat(2, 1)  # noqa: E731  (one chroma sample per 2x2)
        rgb = yuv_to_rgb(y, up(u), up(v))
        if order == "bgr":
            rgb = rgb[..., ::-1]
        got = run(model, planes)
        assert got.shape == (1, 3, 8, 10) and got.dtype == np.float32, case
        np.testing.assert_allclose(got[0].transpose(1, 2, 0), rgb, atol=1.01, err_msg=case)


def test_colour_to_gray_and_rgbx_to_rgb():
    weights = np.array([0.299, 0.587, 0.114])
    model = build(IrexecApi, "rgb_u8_to_gray")
    assert str(model.parameters[0].outputs[0].partial_shape) == "[1,8,10,3]"
    x = feeds_for(model)
    gray = np.round((x[0].astype(np.float64) * weights).sum(-1))  # half to even, as np.round
    np.testing.assert_allclose(run(model, x)[0, 0], gray[0], atol=1)  # f32 sums near .5
    model = build(IrexecApi, "bgr_f32_to_gray")
    x = feeds_for(model)
    np.testing.assert_allclose(run(model, x)[0, 0],
                               np.maximum((x[0] * weights[::-1]).sum(-1), 0)[0], atol=1e-6)
    model = build(IrexecApi, "nv12_to_gray")
    x = feeds_for(model)
    np.testing.assert_array_equal(run(model, x)[0, 0], x[0][0, :8, :, 0])
    model = build(IrexecApi, "i420_planes_to_gray")
    x = feeds_for(model)
    np.testing.assert_array_equal(run(model, x)[0, 0], x[0][0, :, :, 0])
    model = build(IrexecApi, "bgrx_to_rgb")
    assert str(model.parameters[0].outputs[0].partial_shape) == "[1,8,10,4]"
    x = feeds_for(model)
    np.testing.assert_array_equal(run(model, x),
                                  np.maximum(x[0][..., 2::-1].transpose(0, 3, 1, 2), 0))


def test_output_steps_convert_type_and_layout():
    model = build(IrexecApi, "output_convert_steps")
    x = feeds_for(model)
    out = run(model, x)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, np.maximum(x[0], 0).astype(np.float16)
                                  .transpose(0, 2, 3, 1))
    model = build(IrexecApi, "layout_by_order_and_output_steps")
    assert str(model.parameters[0].outputs[0].partial_shape) == "[1,8,10,3]"
    x = feeds_for(model)
    out = run(model, x)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, np.maximum(x[0], 0).astype(np.float16))


def test_the_output_keeps_its_name_and_the_input_its_names():
    x = irexec.opset13.parameter([1, 3, 4, 4], np.float32, name="img")
    x.outputs[0].names = ["pixels"]
    y = irexec.opset13.relu(x)
    y.outputs[0].names = ["scores"]
    model = irexec.Model([y], [x])
    ppp = PrePostProcessor(model)
    ppp.input().tensor().set_element_type("u8")
    ppp.output().tensor().set_element_type("f16")
    model = ppp.build()
    assert model.parameters[0].outputs[0].names == ["pixels"]
    compiled = irexec.compile_model(model)
    out = compiled({"pixels": np.full((1, 3, 4, 4), 7, np.uint8)})
    assert out["scores"].dtype == np.float16 and out["scores"].max() == 7


def test_saved_with_the_steps_validates_and_keeps_the_layouts(tmp_path):
    model = build(IrexecApi, "u8_nhwc_mean_scale")
    xml = tmp_path / "ppp.xml"
    save_exact(model, xml)
    run_ = subprocess.run([sys.executable, "-m", "irexec", "validate", str(xml)],
                          capture_output=True, text=True, cwd=ROOT)
    assert run_.returncode == 0 and "0 errors, 0 warnings" in run_.stdout, run_.stdout
    assert 'layout="[N,H,W,C]"' in xml.read_text()
    again = irexec.read_model(xml)
    x = feeds_for(again)
    np.testing.assert_allclose(run(again, x), u8_nhwc_expected(x[0]), rtol=1e-6, atol=1e-6)


def test_steps_that_do_not_fit_are_one_clear_error():
    def failing(steps):
        model = relu_model(IrexecApi)
        ppp = PrePostProcessor(model)
        steps(ppp)
        with pytest.raises(PreprocessError) as e:
            ppp.build()
        x = np.random.default_rng(0).uniform(-1, 1, (1, 3, 8, 10)).astype(np.float32)
        np.testing.assert_array_equal(run(model, [x]), np.maximum(x, 0))  # left as it was
        assert [n.type for n in model.nodes] == ["Parameter", "Relu", "Result"]
        return str(e.value)

    assert "floating-point" in failing(
        lambda p: (p.input().tensor().set_element_type("u8"), p.input().preprocess().mean(1.0)))
    assert "3 channels" in failing(lambda p: (p.input().tensor().set_layout("NCHW"),
                                              p.input().preprocess().mean([1.0, 2.0])))
    assert "'H' axis" in failing(lambda p: p.input().preprocess().resize(
        ResizeAlgorithm.RESIZE_LINEAR))
    assert "convert_color" in failing(lambda p: (p.input().tensor().set_color_format(
        ColorFormat.NV12_TWO_PLANES), p.input().model().set_layout("NCHW")))
    assert issubclass(PreprocessError, RuntimeError)


# --- against OpenVINO ----------------------------------------------------------------------------

@pytest.mark.parametrize("case", sorted(CASES))
def test_openvino_builds_the_same_model(case, tmp_path):
    ov, api = openvino_api()
    ours = build(IrexecApi, case)
    theirs = build(api, case)
    assert [str(p.outputs[0].partial_shape) for p in ours.parameters] == \
        [str(i.get_partial_shape()) for i in theirs.inputs]
    assert [p.outputs[0].element_type.name for p in ours.parameters] == \
        [i.get_element_type().get_type_name() for i in theirs.inputs]
    spatial = [11, 9] if "dynamic" in case else None
    feeds = feeds_for(ours, seed=5, spatial=spatial)
    core = ov.Core()
    expected = core.compile_model(theirs, "CPU", OV_CONFIG)(feeds)[0]
    got = run(ours, feeds)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    tolerance = 1e-5 if got.dtype == np.float32 else 1e-3
    np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                               rtol=tolerance, atol=tolerance)
    xml = tmp_path / "ppp.xml"
    save_exact(ours, xml)
    from_file = core.compile_model(core.read_model(str(xml)), "CPU", OV_CONFIG)(feeds)[0]
    np.testing.assert_array_equal(from_file, expected)


def test_a_model_read_from_a_file_takes_the_steps(tmp_path):
    """The dims the file declares on the ports the steps change no longer hold, and ids may
    meet the new layers' (both handled); names stay."""
    x = irexec.opset13.parameter([1, 3, 8, 10], np.float32, name="img")
    x.output(0).set_names({"img"})
    w = np.random.default_rng(0).standard_normal((4, 3, 3, 3)).astype(np.float32)
    y = irexec.opset13.relu(irexec.opset13.convolution(x, w, [1, 1], [1, 1], [1, 1], [1, 1]))
    y.output(0).set_names({"feat"})
    save_exact(irexec.Model([y], [x]), tmp_path / "base.xml")
    model = irexec.read_model(tmp_path / "base.xml")
    ppp = PrePostProcessor(model)
    ppp.input().tensor().set_element_type("u8").set_layout("NHWC")
    ppp.input().model().set_layout("NCHW")
    ppp.input().preprocess().convert_element_type("f32").scale(255.0)
    ppp.output().model().set_layout("NCHW")
    ppp.output().tensor().set_layout("NHWC")
    model = ppp.build()
    assert len({n.id for n in model.nodes}) == len(model.nodes)
    image = np.random.default_rng(1).integers(0, 256, (1, 8, 10, 3)).astype(np.uint8)
    got = irexec.compile_model(model)({"img": image})["feat"]
    plain = irexec.compile_model(irexec.read_model(tmp_path / "base.xml"))(
        {"img": image.transpose(0, 3, 1, 2).astype(np.float32) / 255})["feat"]
    np.testing.assert_allclose(got, plain.transpose(0, 2, 3, 1), rtol=1e-6, atol=1e-6)
    save_exact(model, tmp_path / "ppp.xml")
    assert irexec.read_model(tmp_path / "ppp.xml").diagnostics == []


@pytest.mark.parametrize("source, target, rank, expected", [
    ("NCHW", "NHWC", 4, [0, 2, 3, 1]),
    ("N...C", "NC...", 4, [0, 3, 1, 2]),   # the unnamed axes keep their order
    ("...C", "C...", 3, [2, 0, 1]),
    ("[N,C,?,?]", "[N,?,?,C]", 4, [0, 2, 3, 1]),
    ("NCHW", "[n,c,h,w]", 4, None),        # the same layout: no transpose
])
def test_the_transpose_between_two_layouts(source, target, rank, expected):
    from irexec.ir.layout import Layout, axis_names, axis_of, permutation, permuted

    order = permutation(Layout(source), Layout(target), rank)
    assert order == expected
    # a tensor whose every axis has its own size shows the order took each axis where asked
    dims = np.arange(2, 2 + rank)
    moved = np.empty(tuple(dims)).transpose(order or range(rank)).shape
    for name in "NCHW":
        if Layout(source).has_name(name):
            assert moved[axis_of(Layout(target), name, rank)] == \
                dims[axis_of(Layout(source), name, rank)]
    # the transposed tensor's layout names its axes as the target does
    after = permuted(Layout(source), order or list(range(rank)), rank)
    assert axis_names(after, rank) == axis_names(Layout(target), rank)


def test_layouts_of_other_axes_do_not_convert():
    from irexec.ir.layout import Layout, permutation

    with pytest.raises(ValueError, match="different axes"):
        permutation(Layout("NCHW"), Layout("NCDW"), 4)
    with pytest.raises(ValueError, match="rank 3"):
        permutation(Layout("NCHW"), Layout("NHWC"), 3)
