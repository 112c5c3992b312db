"""DeformableConvolution-1 and -8: the specification's example, properties against a direct-loop
float64 reference (both sampling modes, masks, groups, deformable groups), OpenVINO
conformance, and one diagnostic per bad shape or attribute."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.ir.shape import PartialShape
from tests.ops.compute_support import (assert_close, build_layer, layer_error,
                                       openvino_and_irexec, run_layer)
from tests.ops.convolution.reference import pads_for
from tests.ops.support import dtype_of


def _sample(img, y, x, pad):
    """Bilinear sample of one channel in float64, as the specification's reference kernel."""
    h, w = img.shape
    if pad:
        if not (-1 < y < h and -1 < x < w):
            return 0.0, 0.0
        y1, x1 = math.floor(y), math.floor(x)
        y2, x2 = y1 + 1, x1 + 1
    else:
        if not (0 <= y < h and 0 <= x < w):
            return 0.0, 0.0
        y1, x1 = max(math.floor(y), 0), max(math.floor(x), 0)
        y2, x2 = min(math.ceil(y), h - 1), min(math.ceil(x), w - 1)
    dy, dx = y - y1, x - x1
    total = mag = 0.0
    for yy, xx, wt in ((y1, x1, (1 - dx) * (1 - dy)), (y2, x1, (1 - dx) * dy),
                       (y1, x2, dx * (1 - dy)), (y2, x2, dx * dy)):
        if 0 <= yy < h and 0 <= xx < w:
            total += wt * img[yy, xx]
            mag += abs(wt * img[yy, xx]) + abs(img[yy, xx]) * (2 + abs(y) + abs(x))
    return total, mag


def reference(x, off, f, mask, strides, pads_begin, dilations, group, dgroup, pad, out):
    """(result, magnitude) by direct loops in float64."""
    x, off, f = (a.astype(np.float64) for a in (x, off, f))
    n, c, _, _ = x.shape
    co, cg, kh, kw = f.shape
    ho, wo = out
    y = np.zeros((n, co, ho, wo))
    mag = np.zeros_like(y)
    per_dg = c // dgroup
    for b in range(n):
        for o in range(co):
            g = o // (co // group)
            for i in range(ho):
                for j in range(wo):
                    for ci in range(cg):
                        ch = g * cg + ci
                        d = ch // per_dg
                        for p in range(kh):
                            for q in range(kw):
                                k = p * kw + q
                                yy = i * strides[0] - pads_begin[0] + p * dilations[0] \
                                    + off[b, d * 2 * kh * kw + 2 * k, i, j]
                                xx = j * strides[1] - pads_begin[1] + q * dilations[1] \
                                    + off[b, d * 2 * kh * kw + 2 * k + 1, i, j]
                                v, m = _sample(x[b, ch], yy, xx, pad)
                                mk = 1.0 if mask is None else float(mask[b, d * kh * kw + k, i, j])
                                y[b, o, i, j] += v * f[o, ci, p, q] * mk
                                mag[b, o, i, j] += m * abs(f[o, ci, p, q] * mk)
    return y, mag


def attrs(strides=(1, 1), pads_begin=(0, 0), pads_end=(0, 0), dilations=(1, 1),
          auto_pad="explicit", group=1, deformable_group=1, **more):
    return dict(strides=strides, pads_begin=pads_begin, pads_end=pads_end, dilations=dilations,
                auto_pad=auto_pad, group=group, deformable_group=deformable_group, **more)


F = np.zeros(1, np.float32)


def test_spec_example_shape():
    model, _ = build_layer("DeformableConvolution", F, F, F, version="opset1",
                           shapes=[[1, 4, 224, 224], [1, 50, 220, 220], [64, 4, 5, 5]],
                           **attrs(dilations=(1, 1)))
    assert model.results[0].inputs[0].source.partial_shape == PartialShape([1, 64, 220, 220])
    model, _ = build_layer("DeformableConvolution", F, F, F, F, version="opset8",
                           shapes=[[1, 4, 224, 224], [1, 50, 220, 220], [64, 4, 5, 5],
                                   [1, 25, 220, 220]], **attrs(bilinear_interpolation_pad=True))
    assert model.results[0].inputs[0].source.partial_shape == PartialShape([1, 64, 220, 220])


def test_zero_offsets_make_a_plain_convolution():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    f = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    off = np.zeros((1, 18, 5, 5), np.float32)
    at = attrs(pads_begin=(1, 1), pads_end=(1, 1))
    y = run_layer("DeformableConvolution", x, off, f, version="opset1", **at)
    plain = run_layer("Convolution", x, f, version="opset1",
                      **{k: v for k, v in at.items() if "group" not in k})
    np.testing.assert_allclose(y, plain, rtol=1e-5, atol=1e-5)


def test_an_offset_of_one_pixel_shifts_the_window():
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    f = np.ones((1, 1, 1, 1), np.float32)
    off = np.zeros((1, 2, 4, 4), np.float32)
    off[0, 1] = 1.0  # dx = 1: every output reads its right neighbour
    y = run_layer("DeformableConvolution", x, off, f, version="opset1", **attrs())
    expected = np.concatenate([x[0, 0, :, 1:], np.zeros((4, 1), np.float32)], axis=1)
    assert y[0, 0].tolist() == expected.tolist()
    # half a pixel past the last column: clamped by default, half zero with the pad
    off[0, 1] = 0.5
    y = run_layer("DeformableConvolution", x, off, f, version="opset8", **attrs())
    y_pad = run_layer("DeformableConvolution", x, off, f, version="opset8",
                      **attrs(bilinear_interpolation_pad=True))
    assert y[0, 0, :, 3].tolist() == x[0, 0, :, 3].tolist()
    assert y_pad[0, 0, :, 3].tolist() == (x[0, 0, :, 3] / 2).tolist()


@st.composite
def cases(draw):
    group = draw(st.sampled_from([1, 2]))
    dgroup = draw(st.sampled_from([1, 2]))
    c = 2 * draw(st.integers(1, 2))
    co = group * draw(st.integers(1, 2))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    strides = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    dilations = (draw(st.integers(1, 2)), 1)
    pb = (draw(st.integers(0, 1)), draw(st.integers(0, 1)))
    pe = (draw(st.integers(0, 1)), draw(st.integers(0, 1)))
    h = draw(st.integers((kh - 1) * dilations[0] + 1, 5))
    w = draw(st.integers(kw, 5))
    return (c, co, kh, kw, h, w, group, dgroup, strides, dilations, pb, pe,
            draw(st.booleans()), draw(st.booleans()), draw(st.integers(0, 2 ** 16)))


@settings(max_examples=30, deadline=None)
@given(cases(), st.sampled_from(["f32", "f64", "f16"]))
def test_property_equals_direct_loops(case, type_name):
    c, co, kh, kw, h, w, group, dgroup, strides, dilations, pb, pe, pad, masked, seed = case
    dtype = dtype_of(type_name)
    rng = np.random.default_rng(seed)
    ho = (h + pb[0] + pe[0] - (kh - 1) * dilations[0] - 1) // strides[0] + 1
    wo = (w + pb[1] + pe[1] - (kw - 1) * dilations[1] - 1) // strides[1] + 1
    x = rng.standard_normal((2, c, h, w)).astype(dtype)
    f = rng.standard_normal((co, c // group, kh, kw)).astype(dtype)
    off = (rng.standard_normal((2, dgroup * 2 * kh * kw, ho, wo)) * 1.5).astype(dtype)
    mask = rng.random((2, dgroup * kh * kw, ho, wo)).astype(dtype) if masked else None
    at = attrs(strides, pb, pe, dilations, group=group, deformable_group=dgroup,
               bilinear_interpolation_pad=pad)
    inputs = [x, off, f] + ([mask] if masked else [])
    y = run_layer("DeformableConvolution", *inputs, version="opset8", consts=(2,), **at)
    ref, mag = reference(x, off, f, mask, strides, pb, dilations, group, dgroup, pad, (ho, wo))
    assert_close(y, ref.astype(dtype), mag, str(case))


@pytest.mark.parametrize("type_name", ["f32", "f16"])
def test_openvino_conformance(tmp_path, type_name):
    ov = pytest.importorskip("openvino")
    import openvino.opset1 as o1
    import openvino.opset8 as o8
    dtype = dtype_of(type_name)
    rng = np.random.default_rng(4)
    params, outputs, inputs, refs = [], [], [], []
    for version, pad, masked, g, dg, s, d, pb, pe, auto in [
            (1, False, False, 1, 1, (1, 1), (1, 1), (0, 0), (0, 0), "explicit"),
            (1, False, False, 2, 2, (2, 1), (1, 2), (1, 0), (0, 1), "explicit"),
            (8, False, False, 1, 1, (1, 1), (1, 1), (1, 1), (1, 1), "explicit"),
            (8, True, False, 1, 2, (1, 2), (1, 1), (0, 0), (0, 0), "explicit"),
            (8, True, True, 2, 4, (2, 1), (1, 2), (1, 0), (0, 1), "explicit"),
            (8, False, True, 2, 1, (1, 1), (2, 1), (0, 0), (0, 0), "same_upper"),
            (8, True, True, 1, 1, (2, 2), (1, 1), (0, 0), (0, 0), "valid")]:
        x = rng.standard_normal((2, 4, 6, 5)).astype(dtype)
        f = rng.standard_normal((6, 4 // g, 3, 2)).astype(dtype)
        pads, ends = pads_for([6, 5], [3, 2], s, d, pb, pe, auto)
        ho, wo = ((n + b + e - (k - 1) * dd - 1) // st_ + 1
                  for n, b, e, k, dd, st_ in zip((6, 5), pads, ends, (3, 2), d, s))
        off = (rng.standard_normal((2, dg * 12, ho, wo)) * 2).astype(dtype)
        mask = rng.random((2, dg * 6, ho, wo)).astype(dtype)
        p = o8.parameter(list(x.shape), getattr(ov.Type, type_name))
        q = o8.parameter(list(off.shape), getattr(ov.Type, type_name))
        kw_ = dict(strides=list(s), pads_begin=list(pb), pads_end=list(pe), dilations=list(d),
                   auto_pad=auto, group=g, deformable_group=dg)
        these = [p, q]
        if version == 1:
            node = o1.deformable_convolution(p, q, o1.constant(f), **kw_)
        else:
            r = None
            if masked:
                r = o8.parameter(list(mask.shape), getattr(ov.Type, type_name))
                these.append(r)
            node = o8.deformable_convolution(p, q, o8.constant(f), mask=r,
                                             bilinear_interpolation_pad=pad, **kw_)
        params += these
        outputs.append(node.output(0))
        inputs += [x, off] + ([mask] if version == 8 and masked else [])
        refs.append((x, off, f, mask if version == 8 and masked else None, s, pads, d, g, dg,
                     pad, (ho, wo)))
    ours, theirs = openvino_and_irexec(ov, tmp_path, params, outputs, inputs)
    for a, b, ref in zip(ours, theirs, refs):
        _, mag = reference(*ref)
        assert_close(a, b, mag, str(ref[4:]))


@pytest.mark.parametrize("version, shapes, at, code", [
    ("opset1", [[1, 4, 6, 6], [1, 16, 4, 4], [2, 4, 3, 3]], attrs(), "IR307"),  # 16 != 2*9
    ("opset1", [[1, 4, 6, 6], [1, 18, 5, 4], [2, 4, 3, 3]], attrs(deformable_group=1), "IR307"),
    ("opset1", [[1, 4, 6, 6], [2, 18, 4, 4], [2, 4, 3, 3]], attrs(), "IR307"),
    ("opset1", [[1, 4, 6, 6], [1, 18, 4, 4], [2, 3, 3, 3]], attrs(), "IR348"),
    ("opset1", [[1, 4, 6, 6], [1, 18, 4, 4], [3, 2, 3, 3]], attrs(group=2), "IR348"),
    ("opset1", [[1, 3, 6, 6], [1, 36, 4, 4], [2, 3, 3, 3]], attrs(deformable_group=2),
     "IR348"),
    ("opset1", [[1, 4, 6, 6], [1, 18, 4, 4], [2, 4, 3, 3]], attrs(group=0), "IR302"),
    ("opset1", [[1, 4, 6, 6], [1, 18, 4, 4], [2, 4, 3, 3]], attrs(strides=(1,)), "IR345"),
    ("opset1", [[1, 4, 2, 2], [1, 18, 1, 1], [2, 4, 3, 3]], attrs(), "IR346"),
    ("opset1", [[1, 4, 6], [1, 18, 4, 4], [2, 4, 3, 3]], attrs(), "IR305"),
    ("opset8", [[1, 4, 6, 6], [1, 18, 4, 4], [2, 4, 3, 3], [1, 18, 4, 4]], attrs(), "IR307"),
])
def test_bad_shapes_and_attributes_give_one_coded_error(version, shapes, at, code):
    inputs = [F] * len(shapes)
    e = layer_error("DeformableConvolution", *inputs, version=version, shapes=shapes, **at)
    assert [d.code for d in e.diagnostics] == [code], [str(d) for d in e.diagnostics]


def test_large_sampled_matrices_are_built_in_bands(monkeypatch):
    from irexec.kernels import windows
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 4, 7, 5)).astype(np.float32)
    f = rng.standard_normal((6, 2, 3, 2)).astype(np.float32)
    off = (rng.standard_normal((2, 2 * 12, 7, 5)) * 2).astype(np.float32)
    mask = rng.random((2, 12, 7, 5)).astype(np.float32)
    at = attrs(pads_begin=(1, 0), pads_end=(1, 1), group=2, deformable_group=2,
               bilinear_interpolation_pad=True)
    whole = run_layer("DeformableConvolution", x, off, f, mask, version="opset8", **at)
    monkeypatch.setattr(windows, "tile_bytes", lambda: 1024)
    assert len(windows.bands(7, 3 * 6 * 5 * 4 * 4)) > 1
    banded = run_layer("DeformableConvolution", x, off, f, mask, version="opset8", **at)
    np.testing.assert_array_equal(banded, whole)
    ref, mag = reference(x, off, f, mask, (1, 1), (1, 0), (1, 1), 2, 2, True, (7, 5))
    assert_close(banded, ref.astype(np.float32), mag, "banded")
