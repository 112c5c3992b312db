"""Convolution-1, GroupConvolution-1, ConvolutionBackpropData-1, GroupConvolutionBackpropData-1:
the specification's examples, properties against a direct-loop float64 convolution, OpenVINO
conformance for every attribute mode and element type, and one diagnostic per bad attribute or
shape."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.ir.shape import PartialShape
from irexec.kernels import windows
from tests.ops.compute_support import (assert_close, build_layer, layer_error,
                                       openvino_and_irexec, run_layer)
from tests.ops.convolution.reference import (backprop, backprop_by_taps, conv, conv_by_taps,
                                              pads_for)
from tests.ops.support import dtype_of

AUTO_PADS = ("explicit", "valid", "same_upper", "same_lower")


def attrs(nsp, strides=1, dilations=1, pads_begin=0, pads_end=0, auto_pad="explicit"):
    def spread(v):
        return tuple(v) if isinstance(v, (tuple, list)) else (v,) * nsp
    return dict(strides=spread(strides), dilations=spread(dilations),
                pads_begin=spread(pads_begin), pads_end=spread(pads_end), auto_pad=auto_pad)


def output_shape(model) -> PartialShape:
    return model.results[0].inputs[0].source.partial_shape


def rand(shape, dtype="f32", seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(dtype_of(dtype))


# --- the specification's examples ---------------------------------------------------------------

@pytest.mark.parametrize("op, data, weights, at, expected", [
    ("Convolution", [1, 5, 128], [16, 5, 4], attrs(1, strides=2, auto_pad="valid"), [1, 16, 63]),
    ("Convolution", [1, 3, 224, 224], [64, 3, 5, 5], attrs(2, pads_begin=2, pads_end=2),
     [1, 64, 224, 224]),
    ("Convolution", [1, 7, 320, 320, 320], [32, 7, 3, 3, 3],
     attrs(3, strides=3, dilations=2), [1, 32, 106, 106, 106]),
    ("GroupConvolution", [1, 12, 224], [4, 1, 3, 5], attrs(1, pads_begin=2, pads_end=2),
     [1, 4, 224]),
    ("GroupConvolution", [1, 12, 224, 224], [4, 1, 3, 5, 5], attrs(2, pads_begin=2, pads_end=2),
     [1, 4, 224, 224]),
    ("GroupConvolution", [1, 12, 224, 224, 224], [4, 1, 3, 5, 5, 5],
     attrs(3, pads_begin=2, pads_end=2), [1, 4, 224, 224, 224]),
    ("ConvolutionBackpropData", [1, 20, 224, 224], [20, 10, 3, 3],
     dict(attrs(2, strides=2, pads_begin=1, pads_end=1), output_padding=(0, 0)),
     [1, 10, 447, 447]),
    ("ConvolutionBackpropData", [1, 20, 2, 2], [20, 10, 3, 3],
     dict(attrs(2, strides=3), output_padding=(2, 2)), [1, 10, 8, 8]),
])
def test_spec_example_shapes(op, data, weights, at, expected):
    model, _ = build_layer(op, np.zeros(1, np.float32), np.zeros(1, np.float32),
                           shapes=[data, weights], **at)
    assert output_shape(model) == PartialShape(expected)


def test_spec_example_backprop_with_output_shape():
    model, _ = build_layer("ConvolutionBackpropData", np.zeros(1, np.float32),
                           np.zeros(1, np.float32), np.array([450, 450], np.int64),
                           shapes=[[1, 20, 224, 224], [20, 10, 3, 3], None], consts=(2,),
                           **dict(attrs(2, pads_begin=1, pads_end=1, auto_pad="valid"),
                                  output_padding=(0, 0)))
    assert output_shape(model) == PartialShape([1, 10, 450, 450])


def test_spec_example_1d_runs():
    x, w = rand((1, 5, 128)), rand((16, 5, 4), seed=1)
    at = attrs(1, strides=2, auto_pad="valid")
    y = run_layer("Convolution", x, w, consts=(1,), **at)
    ref, mag = conv(x, w[None], **at)
    assert_close(y, ref.astype(np.float32), mag, "1-D example")


# --- hand-checked values -------------------------------------------------------------------------

def test_a_3x3_box_filter_sums_each_window():
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    y = run_layer("Convolution", x, np.ones((1, 1, 3, 3), np.float32), **attrs(2))
    assert y.tolist() == [[[[45.0, 54.0], [81.0, 90.0]]]]


def test_same_upper_pads_the_end_more_and_same_lower_the_start():
    x = np.arange(1, 5, dtype=np.float32).reshape(1, 1, 4)
    w = np.ones((1, 1, 2), np.float32)
    upper = run_layer("Convolution", x, w, **attrs(1, auto_pad="same_upper"))
    lower = run_layer("Convolution", x, w, **attrs(1, auto_pad="same_lower"))
    assert upper.tolist() == [[[3.0, 5.0, 7.0, 4.0]]]
    assert lower.tolist() == [[[1.0, 3.0, 5.0, 7.0]]]


def test_pads_are_ignored_unless_explicit():
    x, w = rand((1, 2, 6)), rand((3, 2, 3), seed=1)
    valid = run_layer("Convolution", x, w, **attrs(1, pads_begin=2, pads_end=2, auto_pad="valid"))
    assert valid.shape == (1, 3, 4)


def test_depthwise_uses_one_weight_per_channel():
    x = np.arange(8, dtype=np.float32).reshape(1, 2, 4)
    w = np.array([1.0, 10.0], np.float32).reshape(2, 1, 1, 1)
    y = run_layer("GroupConvolution", x, w, **attrs(1))
    assert y.tolist() == [[[0.0, 1.0, 2.0, 3.0], [40.0, 50.0, 60.0, 70.0]]]


def test_backprop_spreads_each_element_over_its_window():
    x = np.array([[[1.0, 2.0]]], np.float32)
    w = np.array([[[1.0, 10.0, 100.0]]], np.float32)
    y = run_layer("ConvolutionBackpropData", x, w, **attrs(1, strides=2))
    assert y.tolist() == [[[1.0, 10.0, 102.0, 20.0, 200.0]]]


def test_integers_wrap_as_cpp_does():
    x = np.full((1, 1, 2), 100, np.int8)
    w = np.full((1, 1, 2), 2, np.int8)
    y = run_layer("Convolution", x, w, **attrs(1))
    assert y.dtype == np.int8 and y.tolist() == [[[np.int8(400 - 512)]]]


def test_f16_rounds_once():
    # 2049 is not an f16 value: added in f16 one term at a time, 2048 + 1 + ... loses every 1
    x = np.array([[[2048.0] + [1.0] * 8]], np.float16)
    w = np.ones((1, 1, 9), np.float16)
    y = run_layer("Convolution", x, w, **attrs(1))
    assert y.dtype == np.float16 and float(y[0, 0, 0]) == 2056.0


def test_large_im2col_is_built_in_bands(monkeypatch):
    monkeypatch.setattr(windows, "tile_bytes", lambda: 256)
    assert len(windows.bands(6, 100)) == 3
    x, w = rand((2, 3, 9, 7)), rand((4, 3, 3, 2), seed=1)
    at = attrs(2, strides=(2, 1), dilations=(1, 2), pads_begin=1, pads_end=(0, 1))
    y = run_layer("Convolution", x, w, **at)
    ref, mag = conv(x, w[None], **at)
    assert_close(y, ref.astype(np.float32), mag, "banded")
    xb = rand((2, 4, 5, 3), seed=2)
    wb = rand((2, 2, 3, 2, 2), seed=3)
    yb = run_layer("GroupConvolutionBackpropData", xb, wb, **dict(attrs(2, strides=2),
                                                                 output_padding=()))
    refb, magb = backprop(xb, wb, (2, 2), (1, 1), (0, 0), yb.shape[2:])
    assert_close(yb, refb.astype(np.float32), magb, "banded backprop")


# --- properties against the direct loop --------------------------------------------------------

@st.composite
def forward_cases(draw):
    nsp = draw(st.integers(1, 3))
    groups = draw(st.sampled_from([1, 1, 2, 3]))
    depthwise = groups > 1 and draw(st.booleans())
    ci = 1 if depthwise else draw(st.integers(1, 3))
    co = draw(st.integers(1, 3))
    kernel = [draw(st.integers(1, 3)) for _ in range(nsp)]
    strides = [draw(st.integers(1, 3)) for _ in range(nsp)]
    dilations = [draw(st.integers(1, 2)) for _ in range(nsp)]
    pb = [draw(st.integers(0, 2)) for _ in range(nsp)]
    pe = [draw(st.integers(0, 2)) for _ in range(nsp)]
    auto_pad = draw(st.sampled_from(AUTO_PADS))
    spatial = [draw(st.integers((k - 1) * d + 1, (k - 1) * d + 5))
               for k, d in zip(kernel, dilations)]
    n = draw(st.integers(1, 2))
    return (n, groups, ci, co, spatial, kernel,
            attrs(nsp, strides, dilations, pb, pe, auto_pad), draw(st.integers(0, 2**16)))


@settings(max_examples=50, deadline=None)
@given(forward_cases(), st.sampled_from(["f32", "f64", "f16", "i32"]))
def test_property_forward_equals_direct_loop(case, type_name):
    n, groups, ci, co, spatial, kernel, at, seed = case
    rng = np.random.default_rng(seed)
    dtype = dtype_of(type_name)
    x = rng.integers(-4, 5, (n, groups * ci, *spatial)).astype(dtype) if type_name == "i32" \
        else rng.standard_normal((n, groups * ci, *spatial)).astype(dtype)
    w = rng.integers(-4, 5, (groups, co, ci, *kernel)).astype(dtype) if type_name == "i32" \
        else rng.standard_normal((groups, co, ci, *kernel)).astype(dtype)
    if groups == 1 and rng.integers(2):
        y = run_layer("Convolution", x, w[0], consts=(1,), **at)
    else:
        y = run_layer("GroupConvolution", x, w, **at)
    ref, mag = conv(x, w, **at)
    assert_close(y, ref.astype(dtype), mag, f"{type_name} {at}")


@st.composite
def backward_cases(draw):
    n, groups, ci, co, spatial, kernel, at, seed = draw(forward_cases())
    nsp = len(kernel)
    with_shape = draw(st.booleans())
    op = [draw(st.integers(0, s - 1)) for s in at["strides"]] if draw(st.booleans()) else []
    if with_shape:
        full = [(s - 1) * st_ + (k - 1) * d + 1 for s, st_, k, d in
                zip(spatial, at["strides"], kernel, at["dilations"])]
        out = [max(1, f + draw(st.integers(-2, 2))) for f in full]
    else:
        out = None
        if at["auto_pad"] == "explicit":  # keep at least one output element
            full = [(s - 1) * st_ + (k - 1) * d + 1 + p for s, st_, k, d, p in
                    zip(spatial, at["strides"], kernel, at["dilations"], op or [0] * nsp)]
            at["pads_end"] = tuple(min(e, f - b - 1) for e, b, f in
                                   zip(at["pads_end"], at["pads_begin"], full))
            at["pads_begin"] = tuple(max(b, 0) for b in at["pads_begin"])
            if any(e < 0 for e in at["pads_end"]):
                at["pads_begin"], at["pads_end"] = (0,) * nsp, (0,) * nsp
    return n, groups, ci, co, spatial, kernel, at, tuple(op), out, seed


def backward_pads(spatial, kernel, at, op, out):
    """OpenVINO's rule (docs/compatibility.md): explicit pads always; with output_shape,
    same_upper/same_lower split the surplus, ceil at the start for same_upper."""
    nsp = len(kernel)
    if at["auto_pad"] == "explicit":
        return list(at["pads_begin"]), list(at["pads_end"])
    if out is None or at["auto_pad"] == "valid":
        return [0] * nsp, [0] * nsp
    begins, ends = [], []
    for i in range(nsp):
        full = (spatial[i] - 1) * at["strides"][i] + (kernel[i] - 1) * at["dilations"][i] + 1
        total = max(full - out[i] + (op[i] if op else 0), 0)
        small = total // 2
        upper = at["auto_pad"] == "same_upper"
        begins.append(total - small if upper else small)
        ends.append(small if upper else total - small)
    return begins, ends


@settings(max_examples=50, deadline=None)
@given(backward_cases(), st.sampled_from(["f32", "f16", "i32"]))
def test_property_backward_equals_direct_loop(case, type_name):
    n, groups, ci, co, spatial, kernel, at, op, out, seed = case
    rng = np.random.default_rng(seed)
    dtype = dtype_of(type_name)
    x = rng.integers(-4, 5, (n, groups * ci, *spatial)).astype(dtype) if type_name == "i32" \
        else rng.standard_normal((n, groups * ci, *spatial)).astype(dtype)
    w = rng.integers(-4, 5, (groups, ci, co, *kernel)).astype(dtype) if type_name == "i32" \
        else rng.standard_normal((groups, ci, co, *kernel)).astype(dtype)
    full_attrs = dict(at, output_padding=op)
    inputs = [x, w[0] if groups == 1 else w]
    if out is not None:
        inputs.append(np.array(out, np.int64))
    op_type = "ConvolutionBackpropData" if groups == 1 else "GroupConvolutionBackpropData"
    y = run_layer(op_type, *inputs, consts=(1, 2), **full_attrs)
    pb, pe = backward_pads(spatial, kernel, at, op, out)
    if out is None:
        out = [(s - 1) * st_ + (k - 1) * d + 1 - b - e + p for s, st_, k, d, b, e, p in
               zip(spatial, at["strides"], kernel, at["dilations"], pb, pe,
                   op or [0] * len(kernel))]
    ref, mag = backprop(x, w, at["strides"], at["dilations"], pb, out)
    assert_close(y, ref.astype(dtype), mag, f"{type_name} {full_attrs} {out}")


@settings(max_examples=30, deadline=None)
@given(forward_cases(), backward_cases())
def test_property_the_two_references_agree(fwd, bwd):
    """The per-tap references (used for the conformance tolerances) against the direct loops."""
    n, groups, ci, co, spatial, kernel, at, seed = fwd
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, groups * ci, *spatial))
    w = rng.standard_normal((groups, co, ci, *kernel))
    for a, b in zip(conv(x, w, **at), conv_by_taps(x, w, **at)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    n, groups, ci, co, spatial, kernel, at, op, out, seed = bwd
    x = rng.standard_normal((n, groups * ci, *spatial))
    w = rng.standard_normal((groups, ci, co, *kernel))
    out = out or [3] * len(kernel)
    for a, b in zip(backprop(x, w, at["strides"], at["dilations"], at["pads_begin"], out),
                    backprop_by_taps(x, w, at["strides"], at["dilations"], at["pads_begin"],
                                     out)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


# --- OpenVINO conformance ------------------------------------------------------------------------

def _ov_cases():
    """(op, version-module name, data shape, weights shape, attrs, extra) for every mode."""
    cases = []
    for nsp in (1, 2, 3):
        shape = (2, 4) + (7, 6, 5)[:nsp]
        for auto_pad in AUTO_PADS:
            for strides, dilations in ((1, 1), (2, 1), (1, 2), (2, 2)):
                at = attrs(nsp, strides, dilations, 1, (0, 2, 1)[:nsp], auto_pad)
                k = (3, 2, 3)[:nsp]
                cases.append(("Convolution", shape, (3, 4) + k, at, None))
                cases.append(("GroupConvolution", shape, (2, 3, 2) + k, at, None))
                cases.append(("GroupConvolution", shape, (4, 2, 1) + k, at, None))  # depthwise
                bat = dict(at, output_padding=tuple(s - 1 for s in at["strides"]))
                if auto_pad == "explicit" or strides == 1:
                    cases.append(("ConvolutionBackpropData", shape, (4, 3) + k, bat, None))
                full = tuple((n - 1) * s + (kk - 1) * d + 1 for n, s, kk, d in
                             zip(shape[2:], at["strides"], k, at["dilations"]))
                cases.append(("ConvolutionBackpropData", shape, (4, 3) + k, at,
                              tuple(f - 1 for f in full)))
                if auto_pad == "explicit" and dilations == 1:
                    # OpenVINO's CPU plugin refuses groups of more than one channel here
                    cases.append(("GroupConvolutionBackpropData", shape, (4, 1, 2) + k, bat,
                                  None))
    cases.append(("Convolution", (1, 8, 5, 5), (6, 8, 1, 1), attrs(2), None))  # 1x1
    cases.append(("Convolution", (1, 8, 9, 9), (6, 8, 1, 1), attrs(2, strides=2), None))
    return cases


def _ov_node(ops, op, data, weights, at, extra):
    import openvino.opset1 as o1
    args = [data, weights, list(at["strides"])]
    if op in ("Convolution", "GroupConvolution"):
        fn = o1.convolution if op == "Convolution" else o1.group_convolution
        return fn(*args, list(at["pads_begin"]), list(at["pads_end"]), list(at["dilations"]),
                  at["auto_pad"])
    fn = o1.convolution_backprop_data if op == "ConvolutionBackpropData" \
        else o1.group_convolution_backprop_data
    kw = dict(pads_begin=list(at["pads_begin"]), pads_end=list(at["pads_end"]),
              dilations=list(at["dilations"]), auto_pad=at["auto_pad"],
              output_padding=list(at.get("output_padding", (0,) * len(at["strides"]))))
    if extra is not None:
        kw["output_shape"] = ops.constant(np.array(extra, np.int64))
    return fn(*args, **kw)


@pytest.mark.parametrize("type_name", ["f32", "f16", "bf16", "f64"])
def test_openvino_conformance_float(tmp_path, type_name):
    ov = pytest.importorskip("openvino")
    import openvino.opset1 as o1
    dtype = dtype_of(type_name)
    rng = np.random.default_rng(7)
    params, outputs, inputs, magnitudes, labels = [], [], [], [], []
    for op, shape, wshape, at, extra in _ov_cases():
        if type_name == "bf16" and op == "GroupConvolution" and wshape[1:3] == (2, 1) \
                and max(at["dilations"]) > 1:
            continue  # OpenVINO's CPU plugin crashes (docs/compatibility.md)
        x = rng.standard_normal(shape).astype(dtype)
        w = rng.standard_normal(wshape).astype(dtype)
        p = o1.parameter(list(shape), getattr(ov.Type, type_name))
        node = _ov_node(o1, op, p, o1.constant(w) if type_name != "bf16" else
                        o1.convert(o1.constant(w.astype(np.float32)), "bf16"), at, extra)
        params.append(p)
        outputs.append(node.output(0))
        inputs.append(x)
        labels.append(f"{op} {shape} {wshape} {at} {extra}")
        magnitudes.append((op, x, w, at, extra))
    ours, theirs = openvino_and_irexec(ov, tmp_path, params, outputs, inputs)
    for label, a, b, (op, x, w, at, extra) in zip(labels, ours, theirs, magnitudes):
        mag = _magnitude(op, x, w, at, extra, a.shape)
        if type_name == "f64":  # OpenVINO's CPU plugin computes f64 in f32
            a, b = a.astype(np.float32), b.astype(np.float32)
        assert_close(a, b, mag, label)


def _magnitude(op, x, w, at, extra, out_shape):
    """The sum of magnitudes of each output's terms (the same shape of computation in float64
    over absolute values), from the dims irexec gave the output."""
    ax, aw = np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64))
    if op == "Convolution":
        return conv_by_taps(ax, aw[None], **at)[0]
    if op == "GroupConvolution":
        return conv_by_taps(ax, aw, **at)[0]
    grouped = aw[None] if op == "ConvolutionBackpropData" else aw
    out = out_shape[2:]
    spatial = x.shape[2:]
    kernel = w.shape[2:] if op == "ConvolutionBackpropData" else w.shape[3:]
    pb, _ = backward_pads(spatial, kernel, at, at.get("output_padding", ()),
                          None if extra is None else list(extra))
    return backprop_by_taps(ax, grouped, at["strides"], at["dilations"], pb, out)[0]


@pytest.mark.parametrize("type_name", ["i32", "i64", "u8"])
def test_openvino_conformance_integers(tmp_path, type_name):
    ov = pytest.importorskip("openvino")
    import openvino.opset1 as o1
    dtype = dtype_of(type_name)
    rng = np.random.default_rng(8)
    params, outputs, inputs = [], [], []
    for op, shape, wshape, at, extra in _ov_cases()[::5]:
        low = 0 if type_name == "u8" else -3
        x = rng.integers(low, 4, shape).astype(dtype)
        w = rng.integers(low, 3, wshape).astype(dtype)
        p = o1.parameter(list(shape), dtype)
        params.append(p)
        outputs.append(_ov_node(o1, op, p, o1.constant(w), at, extra).output(0))
        inputs.append(x)
    ours, theirs = openvino_and_irexec(ov, tmp_path, params, outputs, inputs)
    for a, b in zip(ours, theirs):
        if type_name == "u8":  # sums past 255 wrap in irexec; OpenVINO's plugin saturates
            keep = b < 255
            a, b = a[keep], b[keep]
        np.testing.assert_array_equal(a, b)


# --- bad attributes and shapes ---------------------------------------------------------------

F = np.zeros(1, np.float32)


@pytest.mark.parametrize("op, shapes, at, code", [
    ("Convolution", [[1, 3, 8, 8], [4, 3, 3, 3]], attrs(2, strides=(1,)), "IR345"),
    ("Convolution", [[1, 3, 8, 8], [4, 3, 3, 3]], attrs(2, pads_end=(0, 0, 0)), "IR345"),
    ("Convolution", [[1, 3, 8, 8], [4, 3, 3, 3]], attrs(2, dilations=(1, 0)), "IR347"),
    ("Convolution", [[1, 3, 8, 8], [4, 3, 3, 3]], attrs(2, strides=(0, 1)), "IR347"),
    ("Convolution", [[1, 3, 8, 8], [4, 3, 3, 3]], attrs(2, pads_begin=(-1, 0)), "IR347"),
    ("Convolution", [[1, 3, 8, 8], [4, 2, 3, 3]], attrs(2), "IR348"),
    ("Convolution", [[1, 3, 4, 4], [4, 3, 5, 5]], attrs(2), "IR346"),
    ("Convolution", [[1, 3, 4, 4], [4, 3, 3, 3]], attrs(2, dilations=2), "IR346"),
    ("Convolution", [[3, 8], [4, 3, 3]], attrs(0), "IR305"),
    ("Convolution", [[1, 3, 8, 8], [4, 3, 3]], attrs(2), "IR305"),
    ("GroupConvolution", [[1, 6, 8, 8], [2, 4, 2, 3, 3]], attrs(2), "IR348"),
    ("GroupConvolution", [[1, 6, 8, 8], [2, 4, 3, 3]], attrs(2), "IR305"),
    ("ConvolutionBackpropData", [[1, 3, 4, 4], [2, 5, 3, 3]],
     dict(attrs(2), output_padding=()), "IR348"),
    ("ConvolutionBackpropData", [[1, 3, 4, 4], [3, 5, 3, 3]],
     dict(attrs(2), output_padding=(1,)), "IR345"),
    ("ConvolutionBackpropData", [[1, 3, 2], [3, 5, 1]],
     dict(attrs(1, pads_begin=1, pads_end=1), output_padding=()), "IR347"),
    ("GroupConvolutionBackpropData", [[1, 6, 4, 4], [3, 3, 5, 3, 3]],
     dict(attrs(2), output_padding=()), "IR348"),
])
def test_bad_attributes_and_shapes_give_one_coded_error(op, shapes, at, code):
    e = layer_error(op, F, F, shapes=shapes, **at)
    assert [d.code for d in e.diagnostics] == [code], [str(d) for d in e.diagnostics]


def test_output_shape_of_the_wrong_length_is_ir345():
    e = layer_error("ConvolutionBackpropData", F, F, np.array([5, 5], np.int64), consts=(2,),
                    shapes=[[1, 3, 4], [3, 2, 3], None], **dict(attrs(1), output_padding=()))
    assert [d.code for d in e.diagnostics] == ["IR345"]


def test_boolean_data_is_refused():
    e = layer_error("Convolution", np.zeros(1, bool), np.zeros(1, np.float32),
                    shapes=[[1, 1, 4], [1, 1, 2]], **attrs(1))
    assert [d.code for d in e.diagnostics] == ["IR304"]


def test_channel_mismatch_at_run_time_names_the_counts():
    e = layer_error("Convolution", rand((1, 2, 5)), rand((3, 3, 2)),
                    shapes=[[1, -1, 5], [3, 3, 2]], **attrs(1))
    assert e.code == "IR348" and "2 channels" in str(e)


def test_dynamic_spatial_dims_infer_intervals():
    model, _ = build_layer("Convolution", F, F, shapes=[[1, 3, (5, 9), -1], [4, 3, 3, 3]],
                           **attrs(2, strides=2))
    assert str(output_shape(model)) == "[1,4,2..4,1..]"  # a window must fit
    model, _ = build_layer("Convolution", F, F, shapes=[[1, 3, (5, 9), 6], [4, 3, 3, 3]],
                           **attrs(2, strides=2, auto_pad="same_upper"))
    assert str(output_shape(model)) == "[1,4,3..5,3]"


def test_pads_for_matches_the_kernels_geometry():
    # the reference's padding and the kernel's are the same rule
    for size in range(1, 9):
        for k, s, d in ((3, 2, 1), (2, 3, 2), (1, 1, 1)):
            for mode in AUTO_PADS:
                pb, pe = pads_for([size], [k], [s], [d], [1], [2], mode)
                got = windows.geometry([size], [k], [s], [d], [1], [2], mode)
                assert (tuple(pb), tuple(pe)) == got[:2]


def test_temporaries_follow_the_memory_budget():
    from irexec import budget
    with budget.limit(8 << 20):
        assert windows.tile_bytes() == 1 << 20
        x, w = rand((1, 4, 40, 40)), rand((3, 4, 3, 3), seed=1)
        y = run_layer("Convolution", x, w, **attrs(2, pads_begin=1, pads_end=1))
    ref, mag = conv(x, w[None], **attrs(2, pads_begin=1, pads_end=1))
    assert_close(y, ref.astype(np.float32), mag, "small budget")
