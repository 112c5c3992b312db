"""ExtractImagePatches-3 and Col2Im-15: the specification's examples, properties against direct
loops, OpenVINO conformance (one model each), and one diagnostic per bad attribute or shape."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.ir.shape import PartialShape
from tests.ops.compute_support import (assert_close, build_layer, layer_error,
                                       openvino_and_irexec, run_layer)
from tests.ops.support import assert_same_bits, dtype_of

PADS = ("valid", "same_upper", "same_lower")


def output_shape(model) -> PartialShape:
    return model.results[0].inputs[0].source.partial_shape


# --- ExtractImagePatches -------------------------------------------------------------------------

def patches_reference(x, sizes, strides, rates, auto_pad):
    """Direct loops over every output element; the padding rule is OpenVINO's."""
    n, c, h, w = x.shape
    outs, starts = [], []
    for size, k, s, r in zip((h, w), sizes, strides, rates):
        step = (k - 1) * r + 1
        if auto_pad == "valid":
            outs.append(max((size - step) // s + 1, 0))
            starts.append(0)
            continue
        out = -(-size // s)
        total = (out - 1) * s + step - size
        start = 0
        if 0 < total < step:
            start = total // 2 if total % 2 == 0 else \
                ((total + 1) // 2 if auto_pad == "same_lower" else (total - 1) // 2)
        outs.append(out)
        starts.append(start)
    y = np.zeros((n, sizes[0] * sizes[1] * c, outs[0], outs[1]), x.dtype)
    for b in range(n):
        for i in range(outs[0]):
            for j in range(outs[1]):
                for kh in range(sizes[0]):
                    for kw in range(sizes[1]):
                        for ch in range(c):
                            r_ = i * strides[0] - starts[0] + kh * rates[0]
                            c_ = j * strides[1] - starts[1] + kw * rates[1]
                            if 0 <= r_ < h and 0 <= c_ < w:
                                y[b, (kh * sizes[1] + kw) * c + ch, i, j] = x[b, ch, r_, c_]
    return y


@pytest.mark.parametrize("sizes, strides, rates, pad, expected", [
    ((3, 3), (5, 5), (1, 1), "valid", [64, 27, 2, 2]),
    ((4, 4), (8, 8), (1, 1), "valid", [64, 48, 1, 1]),
    ((4, 4), (9, 9), (1, 1), "same_upper", [64, 48, 2, 2]),
    ((3, 3), (5, 5), (2, 2), "valid", [64, 27, 2, 2]),
    ((2, 2), (3, 3), (1, 1), "valid", [64, 12, 3, 3]),
])
def test_extract_image_patches_spec_examples(sizes, strides, rates, pad, expected):
    model, _ = build_layer("ExtractImagePatches", np.zeros(1, np.float32), version="opset3",
                           shapes=[[64, 3, 10, 10]], sizes=sizes, strides=strides, rates=rates,
                           auto_pad=pad)
    assert output_shape(model) == PartialShape(expected)


def test_extract_image_patches_channel_order_is_pixel_major():
    x = np.arange(8, dtype=np.int32).reshape(1, 2, 2, 2)
    y = run_layer("ExtractImagePatches", x, version="opset3", sizes=(2, 2), strides=(1, 1),
                  rates=(1, 1), auto_pad="valid")
    # pixel (0,0) of channels 0 and 1, then pixel (0,1) ...
    assert y.reshape(-1).tolist() == [0, 4, 1, 5, 2, 6, 3, 7]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.tuples(st.integers(1, 3), st.integers(1, 3)),
       st.tuples(st.integers(1, 3), st.integers(1, 3)),
       st.tuples(st.integers(1, 2), st.integers(1, 2)), st.sampled_from(PADS),
       st.sampled_from(["f32", "i8", "boolean"]), st.integers(0, 2 ** 16))
def test_property_extract_image_patches_equals_loops(h, w, sizes, strides, rates, pad,
                                                     type_name, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-100, 100, (2, 2, h, w)).astype(dtype_of(type_name))
    y = run_layer("ExtractImagePatches", x, version="opset3", sizes=sizes, strides=strides,
                  rates=rates, auto_pad=pad)
    assert_same_bits(y, patches_reference(x, sizes, strides, rates, pad))


def test_extract_image_patches_openvino_conformance(tmp_path):
    ov = pytest.importorskip("openvino")
    import openvino.opset3 as o3
    rng = np.random.default_rng(6)
    params, outputs, inputs = [], [], []
    for h, w in ((5, 6), (7, 4), (2, 5)):
        for sizes, strides, rates in (((2, 2), (1, 1), (1, 1)), ((3, 1), (2, 3), (1, 2)),
                                      ((3, 3), (3, 2), (2, 1))):
            for pad in PADS:
                x = rng.standard_normal((2, 3, h, w)).astype(np.float32)
                p = o3.parameter([2, 3, h, w], ov.Type.f32)
                params.append(p)
                outputs.append(o3.extract_image_patches(p, list(sizes), list(strides),
                                                        list(rates), pad).output(0))
                inputs.append(x)
    ours, theirs = openvino_and_irexec(ov, tmp_path, params, outputs, inputs)
    for a, b in zip(ours, theirs):
        assert_same_bits(a, b)


@pytest.mark.parametrize("at, code", [
    (dict(sizes=(2,), strides=(1, 1), rates=(1, 1), auto_pad="valid"), "IR345"),
    (dict(sizes=(2, 2), strides=(0, 1), rates=(1, 1), auto_pad="valid"), "IR347"),
    (dict(sizes=(2, 2), strides=(1, 1), rates=(1, 0), auto_pad="valid"), "IR347"),
    (dict(sizes=(2, 2), strides=(1, 1), rates=(1, 1), auto_pad="explicit"), "IR302"),
])
def test_extract_image_patches_bad_attributes(at, code):
    e = layer_error("ExtractImagePatches", np.zeros(1, np.float32), version="opset3",
                    shapes=[[1, 2, 4, 4]], **at)
    assert [d.code for d in e.diagnostics] == [code], [str(d) for d in e.diagnostics]


def test_extract_image_patches_needs_rank_4():
    e = layer_error("ExtractImagePatches", np.zeros(1, np.float32), version="opset3",
                    shapes=[[2, 4, 4]], sizes=(2, 2), strides=(1, 1), rates=(1, 1),
                    auto_pad="valid")
    assert [d.code for d in e.diagnostics] == ["IR305"]


# --- Col2Im --------------------------------------------------------------------------------------

def col2im_reference(x, size, kernel, strides, dilations, pb, pe):
    """(result, magnitude): each block value added at its pixel, in float64 (or int64)."""
    batched = x.ndim == 3
    x = x if batched else x[None]
    wide = np.int64 if x.dtype.kind in "iu" else np.float64
    n, ck, _ = x.shape
    c = ck // (kernel[0] * kernel[1])
    counts = [(o + b + e - d * (k - 1) - 1) // s + 1 for o, k, s, d, b, e in
              zip(size, kernel, strides, dilations, pb, pe)]
    y = np.zeros((n, c, size[0], size[1]), wide)
    mag = np.zeros_like(y, dtype=np.float64)
    for b in range(n):
        for ch in range(c):
            for kh in range(kernel[0]):
                for kw in range(kernel[1]):
                    for i in range(counts[0]):
                        for j in range(counts[1]):
                            r = i * strides[0] - pb[0] + kh * dilations[0]
                            q = j * strides[1] - pb[1] + kw * dilations[1]
                            if 0 <= r < size[0] and 0 <= q < size[1]:
                                v = x[b, (ch * kernel[0] + kh) * kernel[1] + kw,
                                      i * counts[1] + j]
                                y[b, ch, r, q] += v
                                mag[b, ch, r, q] += abs(float(v))
    return (y, mag) if batched else (y[0], mag[0])


@pytest.mark.parametrize("data, size, kernel, at, expected", [
    ([3, 12, 225], (16, 16), (2, 2), {}, [3, 3, 16, 16]),
    ([1, 27, 49], (16, 16), (3, 3),  # the specification says 25 blocks; 7x7 fit
     dict(dilations=(2, 2), pads_begin=(1, 1), pads_end=(1, 1), strides=(2, 2)), [1, 3, 16, 16]),
    ([12, 12, 1296], (32, 32), (2, 2), dict(dilations=(2, 2), pads_begin=(3, 3),
                                            pads_end=(3, 3)), [12, 3, 32, 32]),
    ([12, 225], (16, 16), (2, 2), {}, [3, 16, 16]),
])
def test_col2im_spec_examples(data, size, kernel, at, expected):
    model, _ = build_layer("Col2Im", np.zeros(1, np.int32), np.array(size, np.int64),
                           np.array(kernel, np.int64), version="opset15", consts=(1, 2),
                           shapes=[data, None, None], **at)
    assert output_shape(model) == PartialShape(expected)


@settings(max_examples=40, deadline=None)
@given(st.tuples(st.integers(1, 6), st.integers(1, 6)),
       st.tuples(st.integers(1, 3), st.integers(1, 3)),
       st.tuples(st.integers(1, 3), st.integers(1, 3)),
       st.tuples(st.integers(1, 2), st.integers(1, 2)),
       st.tuples(st.integers(0, 2), st.integers(0, 2)),
       st.tuples(st.integers(0, 2), st.integers(0, 2)), st.booleans(),
       st.sampled_from(["f32", "f64", "i32", "f16"]), st.integers(0, 2 ** 16))
def test_property_col2im_equals_loops(size, kernel, strides, dilations, pb, pe, batched,
                                      type_name, seed):
    counts = [(o + b + e - d * (k - 1) - 1) // s + 1 for o, k, s, d, b, e in
              zip(size, kernel, strides, dilations, pb, pe)]
    if min(counts) < 1:
        return
    rng = np.random.default_rng(seed)
    dtype = dtype_of(type_name)
    shape = (2, 2 * kernel[0] * kernel[1], counts[0] * counts[1])
    x = rng.integers(-50, 50, shape).astype(dtype) if type_name == "i32" \
        else rng.standard_normal(shape).astype(dtype)
    x = x if batched else x[0]
    y = run_layer("Col2Im", x, np.array(size, np.int64), np.array(kernel, np.int64),
                  version="opset15", consts=(1, 2), strides=strides, dilations=dilations,
                  pads_begin=pb, pads_end=pe)
    ref, mag = col2im_reference(x, size, kernel, strides, dilations, pb, pe)
    assert_close(y, ref.astype(dtype), mag, f"{size} {kernel} {strides}")


@pytest.mark.parametrize("type_name", ["f32", "i32", "f16"])
def test_col2im_openvino_conformance(tmp_path, type_name):
    ov = pytest.importorskip("openvino")
    import openvino.opset15 as o15
    dtype = dtype_of(type_name)
    rng = np.random.default_rng(8)
    params, outputs, inputs, refs = [], [], [], []
    for size, kernel, s, d, pb, pe in [((4, 5), (2, 2), (1, 1), (1, 1), (0, 0), (0, 0)),
                                       ((6, 6), (3, 3), (2, 2), (1, 1), (1, 1), (1, 1)),
                                       ((3, 7), (3, 1), (2, 3), (2, 1), (1, 0), (2, 1)),
                                       ((5, 4), (1, 2), (1, 2), (1, 2), (0, 1), (0, 1))]:
        counts = [(o + b + e - dd * (k - 1) - 1) // st_ + 1 for o, k, st_, dd, b, e in
                  zip(size, kernel, s, d, pb, pe)]
        shape = (2, 3 * kernel[0] * kernel[1], counts[0] * counts[1])
        x = (rng.standard_normal(shape) * 10).astype(dtype)
        p = o15.parameter(list(shape), getattr(ov.Type, type_name))
        node = o15.col2im(p, o15.constant(np.array(size, np.int64)),
                          o15.constant(np.array(kernel, np.int64)), list(s), list(d), list(pb),
                          list(pe))
        params.append(p)
        outputs.append(node.output(0))
        inputs.append(x)
        refs.append(col2im_reference(x, size, kernel, s, d, pb, pe)[1])
    ours, theirs = openvino_and_irexec(ov, tmp_path, params, outputs, inputs)
    for a, b, mag in zip(ours, theirs, refs):
        assert_close(a, b, mag, type_name)


@pytest.mark.parametrize("data, size, kernel, at, code", [
    ([1, 12, 224], (16, 16), (2, 2), {}, "IR307"),  # 225 blocks
    ([1, 10, 225], (16, 16), (2, 2), {}, "IR307"),  # 10 values per block of 4
    ([1, 12, 225], (16, 16, 1), (2, 2), {}, "IR307"),
    ([1, 12, 1], (1, 1), (2, 2), {}, "IR346"),
    ([1, 12, 225], (16, 16), (2, 2), dict(strides=(1,)), "IR345"),
    ([1, 12, 225], (16, 16), (2, 2), dict(dilations=(0, 1)), "IR347"),
    ([1, 12, 225], (16, 16), (0, 2), {}, "IR347"),
    ([1, 1, 12, 225], (16, 16), (2, 2), {}, "IR305"),
])
def test_col2im_bad_inputs(data, size, kernel, at, code):
    e = layer_error("Col2Im", np.zeros(1, np.float32), np.array(size, np.int64),
                    np.array(kernel, np.int64), version="opset15", consts=(1, 2),
                    shapes=[data, None, None], **at)
    assert [d.code for d in e.diagnostics] == [code], [str(d) for d in e.diagnostics]
