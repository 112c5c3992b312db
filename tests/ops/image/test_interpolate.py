"""Interpolate-1/4/11: the specification's example, hand-checked values, properties against a
direct-loop reference written from the specification's formulas (every output element summed over
all its taps at once), OpenVINO conformance for every mode, coordinate mode and nearest mode, and
the diagnostics for bad axes, sizes and scales."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.ir.shape import PartialShape
from tests.ops.compute_support import (assert_close, build_layer, layer_error,
                                       openvino_and_irexec, run_layer)

COORDINATE_MODES = ["half_pixel", "pytorch_half_pixel", "asymmetric", "tf_half_pixel_for_nn",
                    "align_corners"]
NEAREST_MODES = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple"]


def attrs_of(mode, how="sizes", ctm="half_pixel", nm="round_prefer_floor", antialias=False,
             pads_begin=(0,), pads_end=(0,), cube_coeff=-0.75):
    return dict(mode=mode, shape_calculation_mode=how, coordinate_transformation_mode=ctm,
                nearest_mode=nm, antialias=antialias, pads_begin=tuple(pads_begin),
                pads_end=tuple(pads_end), cube_coeff=cube_coeff)


# --- a reference from the specification's formulas --------------------------------------------

def coordinate(x, scale, out_len, in_len, mode):
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if out_len > 1 else 0.0
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) / scale
    return 0.0 if out_len == 1 else x * (in_len - 1) / (out_len - 1)


def cpp_round(v):
    return math.floor(v + 0.5) if v >= 0 else -math.floor(-v + 0.5)


def nearest_pixel(v, mode, downsample):
    if mode == "round_prefer_floor":
        return math.floor(v) if v == math.floor(v) + 0.5 else cpp_round(v)
    if mode == "round_prefer_ceil":
        return cpp_round(v)
    if mode == "floor":
        return math.floor(v)
    if mode == "ceil":
        return math.ceil(v)
    return math.ceil(v) if downsample else int(v)


def taps_of(mode, o, scale, out_len, in_len, at, a):
    """[(input index, weight)] of output position ``o`` on one axis (not normalized)."""
    c = coordinate(o, scale, out_len, in_len, at["coordinate_transformation_mode"])
    if mode == "linear_onnx":
        c = max(0.0, min(c, in_len - 1))
        i1 = min(int(c), in_len - 1)
        i2 = min(i1 + 1, in_len - 1)
        if i1 == i2:
            return [(i1, 0.5), (i2, 0.5)]
        return [(i1, abs(c - i2)), (i2, abs(c - i1))]
    if mode == "cubic":
        f = math.floor(c)
        s = abs(c - f)
        k = at["cube_coeff"]
        w = [k * (s - 1) * (s - 1) * s, ((k + 2) * s - (k + 3)) * s * s + 1,
             (((-k - 2) * s + (2 * k + 3)) * s - k) * s, -k * s * s * (s - 1)]
        return [(max(0, min(f + j - 1, in_len - 1)), w[j]) for j in range(4)]
    # linear (triangle, stretched when antialiasing)
    r = 2 if scale > 1 else math.ceil(2 / a)
    centre = round(c)
    out = []
    for j in range(-r, r + 1):
        i = centre + j
        if 0 <= i < in_len:
            out.append((i, a * max(0.0, 1 - abs(a * (c - i)))))
    return out


def reference(x, out_shape, axes, scales, at):
    """Output element by element; each element sums the product of its axes' weights over every
    combination of taps."""
    x = x.astype(np.float64)
    mode = at["mode"]
    y = np.zeros(out_shape)
    if mode == "nearest":
        full = {a: s for a, s in zip(axes, scales)}
        for o in np.ndindex(*out_shape):
            idx = []
            for axis, oi in enumerate(o):
                s = full.get(axis, 1.0)
                c = coordinate(oi, s, out_shape[axis], x.shape[axis],
                               at["coordinate_transformation_mode"])
                p = nearest_pixel(c, at["nearest_mode"], s < 1)
                idx.append(max(0, min(p, x.shape[axis] - 1)))
            y[o] = x[tuple(idx)]
        return y
    antialias = at["antialias"] and any(s < 1 for s in scales)
    for o in np.ndindex(*out_shape):
        per_axis = [taps_of(mode, o[a], s, out_shape[a], x.shape[a], at,
                            s if antialias else 1.0) for a, s in zip(axes, scales)]
        total, wsum = 0.0, 0.0
        for combo in itertools.product(*per_axis):
            idx = list(o)
            w = 1.0
            for a, (i, wi) in zip(axes, combo):
                idx[a] = i
                w *= wi
            total += w * x[tuple(idx)]
            wsum += w
        y[o] = total / wsum if mode == "linear" and wsum else (total if mode != "linear"
                                                                else 0.0)
    return y


# --- the specification's example ---------------------------------------------------------------

def test_spec_example_shape():
    model, _ = build_layer("Interpolate", np.zeros(1, np.float32), np.array([24, 160]),
                           np.array([0.5, 2.0], np.float32), np.array([2, 3]), consts=(1, 2, 3),
                           shapes=[[1, 2, 48, 80], None, None, None], version="opset4",
                           **attrs_of("linear", "scales"))
    assert model.results[0].inputs[0].source.partial_shape == PartialShape([1, 2, 24, 160])


def test_scales_are_multiplied_as_openvino_does():
    # float32, the scale plus 1e-6, truncated: 3 * 0.333333 -> 1, 3 * 0.33333 -> 0
    for scale, expected in ((0.333333, 1), (0.33333, 0), (1.4999, 10)):
        dim = 7 if scale > 1 else 3
        model, _ = build_layer("Interpolate", np.zeros(1, np.float32),
                               np.array([scale], np.float32), np.array([2]), consts=(1, 2),
                               shapes=[[1, 1, dim], None, None], version="opset11",
                               **attrs_of("nearest", "scales"))
        assert model.results[0].inputs[0].source.partial_shape[2].min == expected


# --- hand-checked values -----------------------------------------------------------------------

def v11(x, values, axes, **at):
    return run_layer("Interpolate", x, np.asarray(values), np.array(axes), consts=(1, 2),
                     version="opset11", **attrs_of(**at))


def test_nearest_upsampling_repeats():
    x = np.array([[1.0, 2.0]], np.float32)
    y = v11(x, [4], [1], mode="nearest", ctm="asymmetric", nm="floor")
    assert y.tolist() == [[1.0, 1.0, 2.0, 2.0]]


def test_linear_onnx_half_pixel():
    x = np.array([[0.0, 4.0]], np.float32)
    y = v11(x, [4], [1], mode="linear_onnx")
    assert y.tolist() == [[0.0, 1.0, 3.0, 4.0]]


def test_align_corners_keeps_the_ends():
    x = np.array([[0.0, 3.0, 6.0]], np.float32)
    y = v11(x, [5], [1], mode="linear_onnx", ctm="align_corners")
    assert y.tolist() == [[0.0, 1.5, 3.0, 4.5, 6.0]]


def test_pads_are_zeros_added_first():
    x = np.array([[1.0, 1.0]], np.float32)
    y = v11(x, [4], [1], mode="nearest", ctm="asymmetric", nm="floor", pads_begin=(0, 2))
    assert y.tolist() == [[0.0, 0.0, 1.0, 1.0]]


def test_interpolate1_runs_as_openvino_translates_it():
    x = np.array([[[[0.0, 4.0]]]], np.float32)
    at = dict(mode="linear", align_corners=False, antialias=False, pads_begin=(0,),
              pads_end=(0,))
    y = run_layer("Interpolate", x, np.array([4]), consts=(1,), axes=(3,), **at)
    assert y.tolist() == [[[[0.0, 1.0, 3.0, 4.0]]]]  # half_pixel
    y = run_layer("Interpolate", x, np.array([1, 4]), consts=(1,), axes=(2, 3), **at)
    assert y.tolist() == [[[[0.0, 2.0, 4.0, 4.0]]]]  # 4-D on axes 2 and 3: asymmetric


def test_integers_round_half_away_from_zero():
    x = np.array([[0, 3]], np.int32)
    y = v11(x, [3], [1], mode="linear_onnx", ctm="align_corners")
    assert y.dtype == np.int32 and y.tolist() == [[0, 2, 3]]  # 1.5 -> 2


# --- properties ----------------------------------------------------------------------------------

@st.composite
def cases(draw):
    rank = draw(st.integers(1, 4))
    shape = [draw(st.integers(1, 4)) for _ in range(rank)]
    axes = draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=min(rank, 2),
                         unique=True))
    mode = draw(st.sampled_from(["nearest", "linear", "linear_onnx", "cubic"]))
    how = draw(st.sampled_from(["sizes", "scales"]))
    at = attrs_of(mode, how, draw(st.sampled_from(COORDINATE_MODES)),
                  draw(st.sampled_from(NEAREST_MODES)), draw(st.booleans()),
                  [draw(st.integers(0, 1)) for _ in range(rank)],
                  [draw(st.integers(0, 1)) for _ in range(rank)],
                  draw(st.sampled_from([-0.75, -0.5])))
    if how == "sizes":
        values = [draw(st.integers(1, 6)) for _ in axes]
    else:
        values = [draw(st.sampled_from([0.5, 0.75, 1.0, 1.5, 2.0, 3.0])) for _ in axes]
    return shape, axes, values, at, draw(st.integers(0, 2**16))


@settings(max_examples=60, deadline=None)
@given(cases())
def test_property_equals_the_direct_loop(case):
    shape, axes, values, at, seed = case
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    padded = [n + b + e for n, b, e in zip(shape, at["pads_begin"], at["pads_end"])]
    out = list(padded)
    if at["shape_calculation_mode"] == "sizes":
        for a, v in zip(axes, values):
            out[a] = v
        scales = [out[a] / padded[a] for a in axes]
    else:
        for a, v in zip(axes, values):
            out[a] = int(np.float32(padded[a]) * (np.float32(v) + np.float32(1e-6))) \
                if v != 1 else padded[a]
        scales = values
    sizes_or_scales = np.array(values, np.int64 if at["shape_calculation_mode"] == "sizes"
                               else np.float32)
    y = run_layer("Interpolate", x, sizes_or_scales, np.array(axes), consts=(1, 2),
                  version="opset11", **at)
    if 0 in out:
        assert y.shape == tuple(out)
        return
    xp = np.pad(x, list(zip(at["pads_begin"], at["pads_end"])))
    ref = reference(xp, out, axes, scales, at)
    assert_close(y, ref.astype(np.float32), np.abs(xp).max() * 4 + 1, f"{at} {values}")


# --- OpenVINO conformance ------------------------------------------------------------------------

def _openvino_cases():
    cases = []
    for mode in ("nearest", "linear", "linear_onnx", "cubic"):
        for ctm in COORDINATE_MODES:
            for nm in (NEAREST_MODES if mode == "nearest" else ["round_prefer_floor"]):
                if mode == "nearest" and ctm == "tf_half_pixel_for_nn" \
                        and nm in ("round_prefer_ceil", "ceil"):
                    continue  # test_compatibility.py: the CPU plugin leaves other axes alone
                if mode == "nearest" and ctm == "align_corners" and nm in ("floor", "ceil",
                                                                           "simple"):
                    continue  # the CPU plugin's float32 coordinates (test_compatibility.py)
                # scales that are powers of two, or exact halves: OpenVINO's float32
                # coordinates agree with the specification's float64 ones
                for sizes in ([8, 4], [2, 16], [1, 1], [4, 8]):
                    cases.append(("sizes", mode, ctm, nm, sizes))
                for scales in ([0.5, 2.0], [1.5, 0.75]):
                    cases.append(("scales", mode, ctm, nm, scales))
    for mode in ("bilinear_pillow", "bicubic_pillow"):
        for sizes in ([9, 4], [3, 14], [2, 3], [5, 7]):
            cases.append(("sizes", mode, "half_pixel", "round_prefer_floor", sizes))
    return cases


@pytest.mark.parametrize("type_name", ["f32", "f16", "u8"])
def test_openvino_conformance_interpolate_11_and_4(tmp_path, type_name):
    ov = pytest.importorskip("openvino")
    import openvino.opset1 as o1
    import openvino.opset10 as o10
    import openvino.opset11 as o11
    from tests.ops.support import dtype_of
    dtype = dtype_of(type_name)
    rng = np.random.default_rng(21)
    params, outputs, inputs, labels = [], [], [], []
    shape = (1, 2, 3, 6)  # padded below to [1, 2, 4, 8]
    for how, mode, ctm, nm, values in _openvino_cases():
        if type_name == "u8" and mode != "nearest":
            continue  # integer linear and cubic modes: the CPU plugin rounds differently
        if ctm == "tf_half_pixel_for_nn" and how == "sizes" and values == [4, 8]:
            continue  # an unchanged size: the CPU plugin leaves the axis alone (compatibility)
        x = (rng.integers(0, 255, shape) if type_name == "u8"
             else rng.standard_normal(shape)).astype(dtype)
        axes = o1.constant(np.array([2, 3], np.int64))
        v = o1.constant(np.array(values, np.int64 if how == "sizes" else np.float32))
        p = o1.parameter(list(shape), dtype)
        node = o11.interpolate(p, v, mode, how, [0, 0, 1, 0], [0, 0, 0, 2], ctm, nm, False,
                               -0.75, axes)
        params.append(p)
        inputs.append(x)
        outputs.append(node.output(0))
        labels.append(f"v11 {how} {mode} {ctm} {nm} {values}")
        if "pillow" not in mode:
            sizes = values if how == "sizes" else [1, 1]
            scales = values if how == "scales" else [1.0, 1.0]
            p4 = o1.parameter(list(shape), dtype)
            node = o10.interpolate(p4, o1.constant(np.array(sizes, np.int64)),
                                   o1.constant(np.array(scales, np.float32)), mode, how,
                                   [0], [0], ctm, nm, False, -0.5, axes)
            params.append(p4)
            inputs.append(x)
            outputs.append(node.output(0))
            labels.append(f"v4 {how} {mode} {ctm} {nm} {values}")
    ours, theirs = openvino_and_irexec(ov, tmp_path, params, outputs, inputs)
    for label, a, b in zip(labels, ours, theirs):
        assert_close(a, b, 8.0 if type_name != "u8" else 0, label)


def test_openvino_conformance_interpolate_1(tmp_path):
    ov = pytest.importorskip("openvino")
    import openvino.opset1 as o1
    rng = np.random.default_rng(22)
    params, outputs, inputs = [], [], []
    for shape, axes, target in (((1, 2, 5, 7), [2, 3], [8, 3]), ((1, 2, 5, 7), [3], [11]),
                                ((2, 6, 4), [1, 2], [3, 9]), ((1, 1, 3, 4, 5), [2, 3, 4],
                                                              [5, 2, 7])):
        for mode in ("nearest", "linear", "cubic"):
            for align in (False, True):
                for pads in ((0,),):  # see kernels: Interpolate-1 leaves pads out
                    p = o1.parameter(list(shape), np.float32)
                    node = o1.interpolate(p, o1.constant(np.array(target, np.int64)), {
                        "axes": axes, "mode": mode, "align_corners": align,
                        "antialias": False, "pads_begin": list(pads), "pads_end": [0]})
                    params.append(p)
                    outputs.append(node.output(0))
                    inputs.append(rng.standard_normal(shape).astype(np.float32))
    ours, theirs = openvino_and_irexec(ov, tmp_path, params, outputs, inputs)
    for a, b in zip(ours, theirs):
        assert_close(a, b, 8.0, "Interpolate-1")


# --- bad axes, sizes and scales -------------------------------------------------------------------

F = np.zeros(1, np.float32)


@pytest.mark.parametrize("values, axes, how, code", [
    ([4, 4], [2, 4], "sizes", "IR306"),
    ([4, 4], [2, 2], "sizes", "IR308"),
    ([4], [2, 3], "sizes", "IR307"),
    ([-1, 4], [2, 3], "sizes", "IR308"),
    ([0.5, -2.0], [2, 3], "scales", "IR308"),
    ([np.inf, 1.0], [2, 3], "scales", "IR308"),
    ([np.nan, 1.0], [2, 3], "scales", "IR308"),
    ([3e38, 1.0], [2, 3], "scales", "IR308"),
])
def test_bad_axes_sizes_scales(values, axes, how, code):
    dtype = np.int64 if how == "sizes" else np.float32
    e = layer_error("Interpolate", F, np.array(values, dtype), np.array(axes), consts=(1, 2),
                    shapes=[[1, 2, 5, 7], None, None], version="opset11",
                    **attrs_of("nearest", how))
    assert [d.code for d in e.diagnostics] == [code], [str(d) for d in e.diagnostics]


def test_pillow_modes_are_interpolate_11_only():
    e = layer_error("Interpolate", F, np.array([4]), np.array([1.0], np.float32),
                    np.array([2]), consts=(1, 2, 3), shapes=[[1, 2, 5], None, None, None],
                    version="opset4", **attrs_of("bilinear_pillow"))
    assert e.code == "IR302"


@pytest.mark.parametrize("scale", [np.inf, 3e38])
@pytest.mark.parametrize("command", ["validate", "info", "run"])
def test_an_infinite_or_overflowing_scale_is_one_clean_line(tmp_path, command, scale):
    """scales [inf, 1] (or a scale whose product with the size passes float32's range) was an
    OverflowError in the shape rule: exit 3 in all three commands."""
    from irexec.builder import ModelBuilder
    from irexec.io.ir_writer import write_ir
    from tests.cli.inproc import irexec_cli

    b = ModelBuilder()
    x = b.parameter("x", "f32", [2, 3])
    placeholder = np.float32(1.75)
    y = b.op("Interpolate", x, b.constant(np.array([1, 1], np.int64)),
             b.constant(np.array([placeholder, 1], np.float32)),
             b.constant(np.array([0, 1], np.int64)), version="opset4",
             **attrs_of("nearest", "scales"))
    b.result(y, "out")
    xml = tmp_path / "model.xml"
    write_ir(b.build(), xml)
    weights = xml.with_suffix(".bin")
    data = weights.read_bytes()
    assert data.count(placeholder.tobytes()) == 1
    weights.write_bytes(data.replace(placeholder.tobytes(), np.float32(scale).tobytes()))
    code, out, err = irexec_cli(command, xml)
    assert code == 1, (out, err)
    text = out + err
    assert "IR308" in text if command == "validate" else "scale" in err, text
