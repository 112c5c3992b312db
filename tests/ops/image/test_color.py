"""Colour conversion: the specification's formulas per pixel (a loop, float64 where the formula
is not at a rounding edge), one-plane and several-plane inputs, shapes, errors, and OpenVINO
(bit for bit in u8) for the opset8 ops; RGBtoNV12/BGRtoNV12 (which OpenVINO's CPU plugin does
not run) against the reference kernel's formulas and a round trip."""

import numpy as np
import pytest

import irexec
from irexec.errors import IRError
from tests.ops.build import run_op
from tests.ops.shapeops_oracle import check, openvino


def rgb_of(y, u, v):
    """The specification's formulas for one pixel, clipped to [0, 255]."""
    c, d, e = y - 16.0, u - 128.0, v - 128.0
    r = 1.164 * c + 1.596 * e
    g = 1.164 * c - 0.813 * e - 0.391 * d
    b = 1.164 * c + 2.018 * d
    return [min(max(x, 0.0), 255.0) for x in (r, g, b)]


def planes(rng, n, h, w, dtype):
    y = rng.integers(0, 256, (n, h, w, 1)).astype(dtype)
    uv = rng.integers(0, 256, (n, h // 2, w // 2, 2)).astype(dtype)
    return y, uv


@pytest.mark.parametrize("bgr", [False, True])
def test_nv12_and_i420_follow_the_formulas(bgr):
    rng = np.random.default_rng(1)
    y, uv = planes(rng, 2, 4, 6, np.float32)
    order = "BGR" if bgr else "RGB"
    (two,), _ = run_op(f"NV12to{order}", y, uv, version="opset8")
    single = np.concatenate([y[..., 0], uv.reshape(2, 2, 6)], axis=1)[..., None]
    (one,), _ = run_op(f"NV12to{order}", single, version="opset8")
    u, v = uv[..., :1].copy(), uv[..., 1:].copy()
    (three,), _ = run_op(f"I420to{order}", y, u, v, version="opset8")
    i420 = np.concatenate([y[..., 0].reshape(2, -1), u.reshape(2, -1), v.reshape(2, -1)],
                          axis=1).reshape(2, 6, 6, 1)
    (packed,), _ = run_op(f"I420to{order}", i420, version="opset8")
    expected = np.zeros((2, 4, 6, 3))
    for b in range(2):
        for i in range(4):
            for j in range(6):
                px = rgb_of(float(y[b, i, j, 0]), float(uv[b, i // 2, j // 2, 0]),
                            float(uv[b, i // 2, j // 2, 1]))
                expected[b, i, j] = px[::-1] if bgr else px
    for got in (two, one, three, packed):
        assert got.shape == (2, 4, 6, 3) and got.dtype == np.float32
        np.testing.assert_allclose(got, expected, atol=2e-4)


@pytest.mark.parametrize("args, code", [
    ([np.zeros((1, 5, 4, 1), np.uint8)], "IR307"),                       # 5 rows: not 3/2 of even
    ([np.zeros((1, 4, 4, 1), np.uint8), np.zeros((1, 2, 3, 2), np.uint8)], "IR307"),
    ([np.zeros((1, 4, 4, 2), np.uint8), np.zeros((1, 2, 2, 2), np.uint8)], "IR307"),
    ([np.zeros((1, 4, 4, 1), np.int32)], "IR304"),
])
def test_bad_planes(args, code):
    with pytest.raises(IRError) as e:
        run_op("NV12toRGB", *args, version="opset8")
    assert e.value.code == code


def to_yuv_reference(rgb):
    """OpenVINO's reference kernel for u8 (float32 formulas, std::round), written as loops."""
    f = np.float32
    n, h, w, _ = rgb.shape
    y = np.zeros((n, h, w), np.uint8)
    uv = np.zeros((n, h // 2, w // 2, 2), np.uint8)

    def clip_round(a):
        return int(min(max(np.floor(float(a) + 0.5), 0), 255))
    for b in range(n):
        for i in range(0, h, 2):
            for j in range(0, w, 2):
                us = vs = f(0)
                for di in range(2):
                    for dj in range(2):
                        r, g, bl = (f(x) for x in rgb[b, i + di, j + dj])
                        y[b, i + di, j + dj] = clip_round(f(0.257) * r + f(0.504) * g
                                                          + f(0.098) * bl + f(16))
                        us = f(us + f(clip_round(f(-0.148) * r - f(0.291) * g + f(0.439) * bl
                                                 + f(128))))
                        vs = f(vs + f(clip_round(f(0.439) * r - f(0.368) * g - f(0.071) * bl
                                                 + f(128))))
                uv[b, i // 2, j // 2] = [clip_round(us / f(4)), clip_round(vs / f(4))]
    return y, uv


@pytest.mark.parametrize("bgr", [False, True])
def test_rgb_to_nv12_follows_the_reference_kernel(bgr):
    rng = np.random.default_rng(2)
    rgb = rng.integers(0, 256, (2, 4, 6, 3)).astype(np.uint8)
    name = "BGRtoNV12" if bgr else "RGBtoNV12"
    y, uv = run_op(name, rgb, version="opset17", single_plane=False, outputs=2)[0]
    want_y, want_uv = to_yuv_reference(rgb[..., ::-1] if bgr else rgb)
    assert np.array_equal(y[..., 0], want_y) and np.array_equal(uv, want_uv)
    (single,), _ = run_op(name, rgb, version="opset17", outputs=1)
    assert single.shape == (2, 6, 6, 1)
    assert np.array_equal(single[:, :4, :, 0], want_y)
    assert np.array_equal(single[:, 4:, :, 0].reshape(2, 2, 3, 2), want_uv)


def test_flat_colours_survive_a_round_trip():
    rgb = np.zeros((1, 4, 4, 3), np.float32)
    rgb[:, :2, :2] = [200, 30, 90]
    rgb[:, 2:, :] = [10, 240, 60]
    (nv12,), _ = run_op("RGBtoNV12", rgb, version="opset17", outputs=1)
    (back,), _ = run_op("NV12toRGB", nv12, version="opset8")
    np.testing.assert_allclose(back[:, :2, :2], rgb[:, :2, :2], atol=1.5)
    np.testing.assert_allclose(back[:, 2:], rgb[:, 2:], atol=1.5)


def test_rgb_to_nv12_needs_even_sizes_and_three_channels():
    for shape in ((1, 3, 4, 3), (1, 4, 4, 4)):
        with pytest.raises(IRError) as e:
            run_op("RGBtoNV12", np.zeros(shape, np.uint8), version="opset17", outputs=1)
        assert e.value.code == "IR307"


def _opset8_model(o, dtype, n, h, w):
    y = o.parameter([n, h, w, 1], dtype)
    uv = o.parameter([n, h // 2, w // 2, 2], dtype)
    u = o.parameter([n, h // 2, w // 2, 1], dtype)
    v = o.parameter([n, h // 2, w // 2, 1], dtype)
    one = o.parameter([n, h * 3 // 2, w, 1], dtype)
    outs = [o.nv12_to_rgb(y, uv).output(0), o.nv12_to_bgr(y, uv).output(0),
            o.i420_to_rgb(y, u, v).output(0), o.i420_to_bgr(y, u, v).output(0),
            o.nv12_to_rgb(one).output(0), o.i420_to_bgr(one).output(0)]
    return outs, [y, uv, u, v, one]


def _feeds(rng, dtype, n, h, w, count):
    shapes = [(n, h, w, 1), (n, h // 2, w // 2, 2), (n, h // 2, w // 2, 1),
              (n, h // 2, w // 2, 1), (n, h * 3 // 2, w, 1)]
    return [[rng.integers(0, 256, s).astype(dtype) for s in shapes] for _ in range(count)]


def test_openvino_conformance_float(tmp_path):
    openvino()
    import openvino.opset8 as o
    outs, params = _opset8_model(o, np.float32, 2, 6, 8)
    feeds = _feeds(np.random.default_rng(5), np.float32, 2, 6, 8, 3)
    check(tmp_path, outs, params, feeds, exact=False, rtol=1e-5, atol=1e-3)


def test_openvino_conformance_u8_away_from_halves(tmp_path):
    """u8 agrees bit for bit except where a channel is exactly halfway between two integers:
    OpenVINO's reference kernel (and irexec) round it away from zero, the CPU plugin to even
    (docs/compatibility.md)."""
    ov = openvino()
    import openvino.opset8 as o
    n, h, w = 2, 6, 8
    outs, params = _opset8_model(o, np.uint8, n, h, w)
    model = ov.Model(outs, params, "colour")
    xml = tmp_path / "colour.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    compiled = ov.Core().compile_model(str(xml), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    ours = irexec.compile_model(irexec.read_model(xml))
    names = [p.get_friendly_name() for p in params]
    f = np.float32
    ties = 0
    for y, uv, u, v, one in _feeds(np.random.default_rng(5), np.uint8, n, h, w, 6):
        theirs = compiled([y, uv, u, v, one])
        mine = list(ours(dict(zip(names, [y, uv, u, v, one]))).values())
        c = y[..., 0].astype(f) - f(16)
        d = np.repeat(np.repeat(uv[..., 0].astype(f) - f(128), 2, 1), 2, 2)
        e = np.repeat(np.repeat(uv[..., 1].astype(f) - f(128), 2, 1), 2, 2)
        raw = np.stack([f(1.164) * c + f(1.596) * e,
                        f(1.164) * c - f(0.391) * d - f(0.813) * e,
                        f(1.164) * c + f(2.018) * d], axis=-1)
        halfway = (raw - np.floor(raw) == 0.5) & (raw > 0) & (raw < 255)
        ties += int(halfway.sum())
        got, other = mine[0].astype(int), theirs[compiled.outputs[0]].astype(int)
        assert np.array_equal(got[~halfway], other[~halfway])
        assert np.array_equal(got[halfway], np.floor(raw[halfway]).astype(int) + 1)
        for k in range(1, 6):  # the other layouts give the same pixels where no tie is near
            assert np.abs(mine[k].astype(int) - theirs[compiled.outputs[k]].astype(int)).max() <= 1


def test_reads_openvino_rgb_to_nv12_ir(tmp_path):
    ov = openvino()
    import openvino.opset16 as o16
    from openvino.utils.node_factory import NodeFactory
    image = o16.parameter([1, 4, 6, 3], np.uint8)
    two = NodeFactory("opset17").create("RGBtoNV12", [image.output(0)], {"single_plane": False})
    one = NodeFactory("opset17").create("BGRtoNV12", [image.output(0)], {"single_plane": True})
    model = ov.Model([two.output(0), two.output(1), one.output(0)], [image], "to_nv12")
    xml = tmp_path / "m.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    ours = irexec.read_model(xml)
    assert [list(ours.output(i).shape) for i in range(3)] == \
        [list(model.output(i).get_shape()) for i in range(3)]
    rgb = np.random.default_rng(0).integers(0, 256, (1, 4, 6, 3)).astype(np.uint8)
    y, uv, single = irexec.compile_model(ours)({image.get_friendly_name(): rgb}).values()
    want_y, want_uv = to_yuv_reference(rgb)
    assert np.array_equal(y[..., 0], want_y) and np.array_equal(uv, want_uv)
    assert np.array_equal(single[:, :4, :, 0], to_yuv_reference(rgb[..., ::-1])[0])
