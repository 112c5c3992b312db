"""RegionYolo-1 and ReorgYolo: the specification's examples, properties against the loop
references of tests/ops/detection/reference.py, OpenVINO conformance (both RegionYolo modes, more
channels than the regions use, several element types for ReorgYolo) and coded errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.ir.element_type import from_name
from tests.ops.compute_support import assert_close, build_layer, layer_error, openvino_and_irexec, \
    run_layer
from tests.ops.detection import reference as ref
from tests.ops.support import random_values

F32 = np.float32
V3 = dict(anchors=(10., 14., 23., 27., 37., 58., 81., 82., 135., 169., 344., 319.), axis=1,
          classes=80, coords=4, do_softmax=False, end_axis=3, mask=(0, 1, 2), num=6)
V2 = dict(anchors=(1.08, 1.19, 3.42, 4.41, 6.63, 11.38, 9.42, 5.11, 16.62, 10.52), axis=1,
          classes=20, coords=4, do_softmax=True, end_axis=3, num=5)


def out_shape(model):
    return str(model.results[0].inputs[0].source.partial_shape)


@pytest.mark.parametrize("shape, at, want", [
    ([1, 255, 26, 26], V3, "[1,255,26,26]"),
    ([1, 125, 13, 13], V2, "[1,21125]"),
    ([-1, 125, 13, 13], V2, "[?,21125]"),
    ([1, 125, 13, 13], dict(V2, axis=2, end_axis=-1), "[1,125,169]"),
])
def test_region_yolo_spec_examples(shape, at, want):
    model, _ = build_layer("RegionYolo", np.zeros(1, F32), shapes=[shape], **at)
    assert out_shape(model) == want


def test_reorg_yolo_spec_example():
    model, _ = build_layer("ReorgYolo", np.zeros(1, F32), version="opset2",
                           shapes=[[1, 64, 26, 26]], stride=(2,))
    assert out_shape(model) == "[1,256,13,13]"


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), coords=st.integers(2, 4), classes=st.integers(0, 3),
       regions=st.integers(1, 3), softmax=st.booleans(), extra=st.integers(0, 2))
def test_region_yolo_matches_the_loop_reference(seed, coords, classes, regions, softmax, extra):
    rng = np.random.default_rng(seed)
    c = regions * (coords + classes + 1) + extra
    x = (rng.standard_normal((2, c, 2, 3)) * 4).astype(F32)
    at = dict(coords=coords, classes=classes, axis=1, end_axis=3, num=regions if softmax else 9,
              do_softmax=softmax, mask=() if softmax else tuple(range(regions)))
    got = run_layer("RegionYolo", x, **at)
    want = ref.region_yolo(x, coords, classes, regions, softmax)
    assert_close(got.reshape(-1), want.astype(F32), 4.0, str(at))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), s=st.integers(1, 3), k=st.integers(1, 2),
       hw=st.tuples(st.integers(1, 2), st.integers(1, 3)))
def test_reorg_yolo_matches_the_loop_reference(seed, s, k, hw):
    rng = np.random.default_rng(seed)
    x = rng.integers(-99, 99, (2, k * s * s, hw[0] * s, hw[1] * s)).astype(np.int32)
    got = run_layer("ReorgYolo", x, version="opset2", stride=(s,))
    np.testing.assert_array_equal(got, ref.reorg_yolo(x, s))


def test_openvino_conformance_region_yolo(tmp_path):
    ov = pytest.importorskip("openvino")
    import openvino.opset1 as o1
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((2, 30, 3, 4)) * 3).astype(F32)
    wide = (rng.standard_normal((2, 23, 3, 4)) * 3).astype(F32)
    params = [o1.parameter(list(a.shape), F32) for a in (x, wide)]
    px, pw = params
    layers = [o1.region_yolo(px, 4, 5, 3, True, [], 1, 3),
              o1.region_yolo(pw, 4, 5, 2, True, [], 1, 3),
              o1.region_yolo(px, 4, 5, 3, True, [], 2, 3),
              o1.region_yolo(px, 4, 5, 3, True, [], 0, 1),
              o1.region_yolo(px, 4, 5, 9, False, [0, 1, 2], 1, 3),
              o1.region_yolo(px, 4, 5, 9, False, [3, 4], 1, 3),
              o1.region_yolo(px, 2, 0, 9, False, [0, 1, 2, 3, 4], 1, 3)]
    ours, theirs = openvino_and_irexec(ov, tmp_path, params, [n.output(0) for n in layers],
                                       [x, wide])
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert_close(a, b, 4.0, f"layer {i}")


@pytest.mark.parametrize("type_name", ["f32", "f16", "i32", "u8", "i64"])
def test_openvino_conformance_reorg_yolo(tmp_path, type_name):
    ov = pytest.importorskip("openvino")
    import openvino.opset2 as o2
    x = random_values(type_name, (2, 8, 6, 4), np.random.default_rng(4))
    if x.dtype.kind in "iu":  # the plugin moves integers through f32 (see below)
        x = (x % 100).astype(x.dtype)
    p = o2.parameter(list(x.shape), x.dtype)
    layers = [o2.reorg_yolo(p, [2]), o2.reorg_yolo(p, [1])]
    ours, theirs = openvino_and_irexec(ov, tmp_path, [p], [n.output(0) for n in layers], [x])
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("op, version, shape, at, code", [
    ("RegionYolo", "opset1", [1, 20, 3, 3], dict(V2, num=1), "IR307"),
    ("RegionYolo", "opset1", [1, 255, 3, 3], dict(V3, mask=(0, 1, 2, 3)), "IR307"),
    ("RegionYolo", "opset1", [1, 255, 3, 3], dict(V3, coords=1), "IR302"),
    ("RegionYolo", "opset1", [1, 125, 3, 3], dict(V2, axis=4), "IR306"),
    ("RegionYolo", "opset1", [1, 125, 3], V2, "IR305"),
    ("ReorgYolo", "opset2", [1, 6, 4, 4], dict(stride=(2,)), "IR307"),
    ("ReorgYolo", "opset2", [1, 8, 5, 4], dict(stride=(2,)), "IR307"),
    ("ReorgYolo", "opset2", [1, 8, 4, 4], dict(stride=(0,)), "IR302"),
    ("ReorgYolo", "opset2", [1, 8, 4, 4], dict(stride=()), "IR302"),
])
def test_bad_attributes_and_shapes(op, version, shape, at, code):
    e = layer_error(op, np.zeros(1, F32), version=version, shapes=[shape], **at)
    assert [d.code for d in e.diagnostics] == [code], [str(d) for d in e.diagnostics]


def test_reorg_yolo_moves_any_element_type_exactly():
    x = np.arange(2 * 4 * 2 * 2).reshape(2, 4, 2, 2).astype(from_name("bf16").dtype)
    got = run_layer("ReorgYolo", x, version="opset2", stride=(2,))
    np.testing.assert_array_equal(got.view(np.uint16),
                                  ref.reorg_yolo(x, 2).view(np.uint16))


def test_cpu_plugin_rounds_large_integers_in_reorg_yolo(tmp_path):
    """OpenVINO's CPU plugin moves i32 through f32 here: values beyond 2**24 lose their low
    bits. irexec moves every element exactly."""
    ov = pytest.importorskip("openvino")
    import openvino.opset2 as o2
    x = np.full((1, 4, 2, 2), 2**24 + 1, np.int32)
    p = o2.parameter(list(x.shape), np.int32)
    ours, theirs = openvino_and_irexec(ov, tmp_path, [p], [o2.reorg_yolo(p, [2]).output(0)],
                                       [x])
    assert (ours[0] == 2**24 + 1).all()
    assert (theirs[0] == 2**24).all()


def test_empty_batches_give_empty_outputs():
    x = np.zeros((0, 10, 2, 2), F32)
    got = run_layer("RegionYolo", x, coords=4, classes=5, num=1, axis=1, end_axis=3)
    assert got.shape == (0, 40)
    got = run_layer("RegionYolo", x, coords=4, classes=5, num=9, mask=(0,), axis=1, end_axis=3,
                    do_softmax=False)
    assert got.shape == (0, 10, 2, 2)
    assert run_layer("ReorgYolo", x[:, :8], version="opset2", stride=(2,)).shape == (0, 32, 1, 1)
