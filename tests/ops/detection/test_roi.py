"""ROIAlign-3/9, ROIAlignRotated-15, ROIPooling, PSROIPooling, DeformablePSROIPooling: the
specification's examples, properties against the loop references of tests/ops/detection/
reference.py, OpenVINO conformance (f32 and f16, every mode), empty ROI lists, and one coded
diagnostic per bad attribute, shape or batch index."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irexec
from irexec.builder import ModelBuilder
from irexec.ir.element_type import from_name
from tests.ops.compute_support import (assert_close, build_layer, layer_error,
                                       openvino_and_irexec, run_layer)
from tests.ops.detection import reference as ref

F32 = np.float32


def out_shape(model):
    return model.results[0].inputs[0].source.partial_shape


def corner_boxes(rng, count, top_w, top_h, low=-0.2):
    a = rng.uniform(low, 1, size=(count, 2)) * [top_w, top_h]
    b = rng.uniform(low, 1, size=(count, 2)) * [top_w, top_h]
    return np.concatenate([np.minimum(a, b), np.maximum(a, b)], axis=1).astype(F32)


def batched(rng, boxes, n):
    ids = rng.integers(0, n, size=(len(boxes), 1)).astype(F32)
    return np.concatenate([ids, boxes], axis=1).astype(F32)


# --- the specification's examples ---------------------------------------------------------------

@pytest.mark.parametrize("op, version, extra", [
    ("ROIAlign", "opset3", {}),
    ("ROIAlign", "opset9", {"aligned_mode": "half_pixel"}),
])
def test_roi_align_spec_example_shape(op, version, extra):
    model, _ = build_layer(op, np.zeros(1, F32), np.zeros(1, F32), np.zeros(1, np.int64),
                           version=version, shapes=[[7, 256, 200, 200], [1000, 4], [1000]],
                           pooled_h=6, pooled_w=6, spatial_scale=16.0, sampling_ratio=2,
                           mode="avg", **extra)
    assert str(out_shape(model)) == "[1000,256,6,6]"


def test_roi_align_rotated_spec_example_shape():
    model, _ = build_layer("ROIAlignRotated", np.zeros(1, F32), np.zeros(1, F32),
                           np.zeros(1, np.int64), version="opset15",
                           shapes=[[7, 256, 200, 200], [1000, 5], [1000]], pooled_h=6,
                           pooled_w=6, spatial_scale=16.0, sampling_ratio=2, clockwise_mode=True)
    assert str(out_shape(model)) == "[1000,256,6,6]"


def test_psroi_pooling_spec_example_shape():
    model, _ = build_layer("PSROIPooling", np.zeros(1, F32), np.zeros(1, F32),
                           shapes=[[1, 3240, 38, 38], [100, 5]], group_size=6, mode="bilinear",
                           output_dim=360, spatial_bins_x=3, spatial_bins_y=3, spatial_scale=1.0)
    assert str(out_shape(model)) == "[100,360,6,6]"


@pytest.mark.parametrize("shapes, at", [
    ([[1, 7938, 63, 38], [300, 5]], dict(spatial_scale=0.0625, output_dim=882, group_size=3,
                                         spatial_bins_x=4, spatial_bins_y=4, trans_std=0.0,
                                         part_size=3)),
    ([[1, 392, 38, 63], [300, 5], [300, 2, 7, 7]],
     dict(group_size=7, output_dim=8, part_size=7, spatial_bins_x=4, spatial_bins_y=4,
          spatial_scale=0.0625, trans_std=0.1)),
])
def test_deformable_psroi_pooling_spec_example_shapes(shapes, at):
    arrays = [np.zeros(1, F32)] * len(shapes)
    model, _ = build_layer("DeformablePSROIPooling", *arrays, shapes=shapes, **at)
    g = at["group_size"]
    assert str(out_shape(model)) == f"[300,{at['output_dim']},{g},{g}]"


def test_roi_pooling_spec_example_shape():
    model, _ = build_layer("ROIPooling", np.zeros(1, F32), np.zeros(1, F32), version="opset2",
                           shapes=[[1, 256, 14, 14], [50, 5]], pooled_h=6, pooled_w=6,
                           spatial_scale=0.0625)
    assert str(out_shape(model)) == "[50,256,6,6]"


# --- properties against the loop references ------------------------------------------------------

CASE = dict(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings(**CASE)
@given(seed=st.integers(0, 2**31), sr=st.sampled_from([0, 1, 2]),
       mode=st.sampled_from(["avg", "max"]),
       aligned=st.sampled_from(["asymmetric", "half_pixel_for_nn", "half_pixel"]),
       ph=st.integers(1, 3), pw=st.integers(1, 3), scale=st.sampled_from([0.5, 1.0, 1.7]))
def test_roi_align_matches_the_loop_reference(seed, sr, mode, aligned, ph, pw, scale):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 3, 5, 6)).astype(F32)
    rois = corner_boxes(rng, 3, 6 / scale, 5 / scale)
    bidx = rng.integers(0, 2, 3).astype(np.int32)
    got = run_layer("ROIAlign", x, rois, bidx, version="opset9", pooled_h=ph, pooled_w=pw,
                    sampling_ratio=sr, spatial_scale=scale, mode=mode, aligned_mode=aligned)
    want = ref.roi_align(x, rois, bidx, ph, pw, sr, scale, mode, aligned)
    assert_close(got, want, 4 * np.abs(x).max(), f"{mode} {aligned}")


@settings(**CASE)
@given(seed=st.integers(0, 2**31), sr=st.sampled_from([0, 2]), clockwise=st.booleans(),
       ph=st.integers(1, 3), pw=st.integers(1, 3))
def test_roi_align_rotated_matches_the_loop_reference(seed, sr, clockwise, ph, pw):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 3, 6, 5)).astype(F32)
    rois = np.concatenate([rng.uniform(0, 5, (3, 2)), rng.uniform(0.5, 4, (3, 2)),
                           rng.uniform(-3.2, 3.2, (3, 1))], axis=1).astype(F32)
    bidx = rng.integers(0, 2, 3).astype(np.int64)
    got = run_layer("ROIAlignRotated", x, rois, bidx, version="opset15", pooled_h=ph,
                    pooled_w=pw, sampling_ratio=sr, spatial_scale=0.9, clockwise_mode=clockwise)
    want = ref.roi_align(x, rois, bidx, ph, pw, sr, 0.9, "avg", rotated=True,
                         clockwise=clockwise)
    assert_close(got, want, 4 * np.abs(x).max(), "rotated")


@settings(**CASE)
@given(seed=st.integers(0, 2**31), method=st.sampled_from(["max", "bilinear"]),
       ph=st.integers(1, 4), pw=st.integers(1, 4))
def test_roi_pooling_matches_the_loop_reference(seed, method, ph, pw):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 3, 5, 7)).astype(F32)
    top = (1.2, 1.2) if method == "bilinear" else (7 / 0.5, 5 / 0.5)
    rois = batched(rng, corner_boxes(rng, 4, *top), 2)
    got = run_layer("ROIPooling", x, rois, version="opset2", pooled_h=ph, pooled_w=pw,
                    spatial_scale=0.5, method=method)
    want = ref.roi_pooling(x, rois, ph, pw, 0.5, method)
    assert_close(got, want, 2 * np.abs(x).max(), method)


@settings(**CASE)
@given(seed=st.integers(0, 2**31), g=st.integers(1, 3), k=st.integers(1, 2),
       bins=st.sampled_from([(1, 1), (2, 1), (2, 3)]))
def test_psroi_pooling_matches_the_loop_reference(seed, g, k, bins):
    rng = np.random.default_rng(seed)
    xa = rng.standard_normal((2, k * g * g, 6, 5)).astype(F32)
    ra = batched(rng, corner_boxes(rng, 3, 5 / 0.6, 6 / 0.6), 2)
    got = run_layer("PSROIPooling", xa, ra, output_dim=k, group_size=g, spatial_scale=0.6,
                    mode="average")
    assert_close(got, ref.psroi_pooling(xa, ra, k, g, 0.6, "average"), np.abs(xa).max() * 4,
                 "average")
    sbx, sby = bins
    xb = rng.standard_normal((2, k * sbx * sby, 6, 5)).astype(F32)
    rb = batched(rng, corner_boxes(rng, 3, 1.1, 1.1, low=-0.05), 2)
    got = run_layer("PSROIPooling", xb, rb, output_dim=k, group_size=g, spatial_scale=1.0,
                    mode="bilinear", spatial_bins_x=sbx, spatial_bins_y=sby)
    assert_close(got, ref.psroi_pooling(xb, rb, k, g, 1.0, "bilinear", sbx, sby),
                 np.abs(xb).max() * 4, "bilinear")


@settings(**CASE)
@given(seed=st.integers(0, 2**31), g=st.integers(1, 3), classes=st.sampled_from([1, 2]),
       part=st.integers(1, 3), bins=st.sampled_from([(1, 1), (2, 2), (3, 1)]),
       with_offsets=st.booleans())
def test_deformable_psroi_pooling_matches_the_loop_reference(seed, g, classes, part, bins,
                                                               with_offsets):
    rng = np.random.default_rng(seed)
    k = 2
    x = rng.standard_normal((2, k * g * g, 6, 7)).astype(F32)
    rois = batched(rng, corner_boxes(rng, 3, 7 / 0.5, 6 / 0.5), 2)
    offsets = rng.uniform(-0.4, 0.4, (3, 2 * classes, part, part)).astype(F32)
    sbx, sby = bins
    at = dict(output_dim=k, group_size=g, spatial_scale=0.5, spatial_bins_x=sbx,
              spatial_bins_y=sby, trans_std=0.6, part_size=part)
    inputs = (x, rois, offsets) if with_offsets else (x, rois)
    got = run_layer("DeformablePSROIPooling", *inputs, **at)
    want = ref.deformable_psroi_pooling(x, rois, offsets if with_offsets else None, k, g, 0.5,
                                        sbx, sby, 0.6, part)
    assert_close(got, want, np.abs(x).max() * 4, "deformable")


def test_roi_align_max_mode_never_goes_below_zero():
    x = -np.ones((1, 2, 4, 4), F32)
    got = run_layer("ROIAlign", x, np.array([[0, 0, 3, 3]], F32), np.array([0], np.int32),
                    version="opset3", pooled_h=2, pooled_w=2, sampling_ratio=2,
                    spatial_scale=1.0, mode="max")
    np.testing.assert_array_equal(got, np.zeros((1, 2, 2, 2), F32))


def test_a_batch_index_of_minus_one_ends_the_psroi_list():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 4, 5, 5)).astype(F32)
    rois = np.array([[0, 0, 0, 4, 4], [-1, 0, 0, 4, 4], [0, 1, 1, 3, 3]], F32)
    got = run_layer("PSROIPooling", x, rois, output_dim=1, group_size=2, spatial_scale=1.0)
    assert np.abs(got[0]).sum() > 0
    np.testing.assert_array_equal(got[1:], 0)


@pytest.mark.parametrize("op, version, extra, width", [
    ("ROIAlign", "opset3", dict(mode="avg"), 4),
    ("ROIAlign", "opset9", dict(mode="max", aligned_mode="half_pixel"), 4),
    ("ROIAlignRotated", "opset15", {}, 5),
])
def test_no_rois_give_an_empty_output(op, version, extra, width):
    x = np.ones((1, 3, 4, 4), F32)
    got = run_layer(op, x, np.zeros((0, width), F32), np.zeros(0, np.int64), version=version,
                    pooled_h=2, pooled_w=3, sampling_ratio=0, spatial_scale=1.0, **extra)
    assert got.shape == (0, 3, 2, 3) and got.dtype == F32


@pytest.mark.parametrize("op, version, at", [
    ("ROIPooling", "opset2", dict(pooled_h=2, pooled_w=2, spatial_scale=1.0)),
    ("PSROIPooling", "opset1", dict(output_dim=3, group_size=1, spatial_scale=1.0)),
    ("DeformablePSROIPooling", "opset1", dict(output_dim=3, group_size=1, spatial_scale=1.0)),
])
def test_no_rois_give_an_empty_output_for_the_pooling_ops(op, version, at):
    got = run_layer(op, np.ones((1, 3, 4, 4), F32), np.zeros((0, 5), F32), version=version,
                    **at)
    assert got.shape[0] == 0 and got.shape[1] == 3


# --- OpenVINO conformance -------------------------------------------------------------------------

def _roi_layers(ov_types, o1, o2, o3, o9, o15, x, boxes, bidx, rot, rois_abs, rois_norm, xb,
                offsets):
    """(label, output) of every ROI op and mode over the same inputs."""
    layers = []
    for sr in (0, 2):
        for mode in ("avg", "max"):
            layers.append((f"ROIAlign-3 {sr} {mode}",
                           o3.roi_align(x, boxes, bidx, 3, 2, sr, 0.7, mode)))
            for am in ("asymmetric", "half_pixel_for_nn", "half_pixel"):
                layers.append((f"ROIAlign-9 {sr} {mode} {am}",
                               o9.roi_align(x, boxes, bidx, 2, 3, sr, 1.3, mode, am)))
        for cw in (True, False):
            layers.append((f"ROIAlignRotated {sr} {cw}",
                           o15.roi_align_rotated(x, rot, bidx, 2, 3, sr, 0.8, cw)))
    layers += [
        ("ROIPooling max", o2.roi_pooling(x, rois_abs, [3, 4], 0.5, "max")),
        ("ROIPooling bilinear", o2.roi_pooling(x, rois_norm, [3, 4], 1.0, "bilinear")),
        ("ROIPooling bilinear 1x1", o2.roi_pooling(x, rois_norm, [1, 1], 1.0, "bilinear")),
        ("PSROIPooling average", o1.psroi_pooling(x, rois_abs, 2, 2, 0.5, 1, 1, "average")),
        ("PSROIPooling bilinear", o1.psroi_pooling(xb, rois_norm, 2, 3, 1.0, 2, 2,
                                                   "bilinear")),
        ("PSROIPooling bilinear g1", o1.psroi_pooling(xb, rois_norm, 2, 1, 1.0, 2, 2,
                                                      "bilinear")),
        ("Deformable", o1.deformable_psroi_pooling(x, rois_abs, 2, 0.5, 2, "bilinear_deformable",
                                                   2, 3, 1.0, 1)),
        ("Deformable offsets", o1.deformable_psroi_pooling(
            x, rois_abs, 2, 0.5, 2, "bilinear_deformable", 2, 2, 0.7, 2, offsets)),
    ]
    return layers


@pytest.mark.parametrize("type_name", ["f32", "f16"])
def test_openvino_conformance(tmp_path, type_name):
    ov = pytest.importorskip("openvino")
    import openvino.opset1 as o1
    import openvino.opset2 as o2
    import openvino.opset3 as o3
    import openvino.opset9 as o9
    import openvino.opset15 as o15
    dt = np.dtype(from_name(type_name).dtype)
    rng = np.random.default_rng(21)
    n, h, w, count = 2, 7, 9, 7
    x = rng.standard_normal((n, 8, h, w)).astype(dt)
    xb = rng.standard_normal((n, 8, h, w)).astype(dt)
    boxes = corner_boxes(rng, count, 11, 9, low=-0.3).astype(dt)
    bidx = rng.integers(0, n, count).astype(np.int32)
    rot = np.concatenate([rng.uniform(0, 9, (count, 2)), rng.uniform(1, 6, (count, 2)),
                          rng.uniform(-3, 3, (count, 1))], axis=1).astype(dt)
    rois_abs = batched(rng, corner_boxes(rng, count, w * 2.2, h * 2.2), n)
    rois_abs[-1, 0] = -1  # ends the PS ROI lists there
    rois_abs = rois_abs.astype(dt)
    rois_norm = batched(rng, corner_boxes(rng, count, 1.2, 1.2, low=-0.1), n).astype(dt)
    offsets = rng.uniform(-0.3, 0.3, (count, 2, 2, 2)).astype(dt)
    arrays = [x, xb, boxes, bidx, rot, rois_abs, rois_norm, offsets]
    params = [o1.parameter(list(a.shape), a.dtype) for a in arrays]
    px, pxb, pboxes, pbidx, prot, pabs, pnorm, poff = params
    layers = _roi_layers(None, o1, o2, o3, o9, o15, px, pboxes, pbidx, prot, pabs, pnorm, pxb,
                         poff)
    # ROIPooling cannot take the -1 row (its batch index must be valid)
    pooling_rois = rois_abs.copy()
    pooling_rois[-1, 0] = 0
    arrays[5] = rois_abs
    params.append(o1.parameter(list(pooling_rois.shape), pooling_rois.dtype))
    arrays.append(pooling_rois)
    layers = [(label, o2.roi_pooling(px, params[-1], [3, 4], 0.5, "max"))
              if label == "ROIPooling max" else (label, node) for label, node in layers]
    ours, theirs = openvino_and_irexec(ov, tmp_path, params, [n.output(0) for _, n in layers],
                                       arrays)
    magnitude = 4 * max(float(np.abs(x.astype(np.float64)).max()),
                        float(np.abs(xb.astype(np.float64)).max()))
    for (label, _), a, b in zip(layers, ours, theirs):
        assert_close(a, b, magnitude, label)


def test_roi_pooling_written_by_irexec_reads_in_openvino(tmp_path):
    """irexec writes no empty output_size (OpenVINO crashes reading one)."""
    ov = pytest.importorskip("openvino")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 2, 6, 6)).astype(F32)
    rois = np.array([[0, 1, 1, 9, 7], [0, 0, 0, 11, 11]], F32)
    b = ModelBuilder("rp")
    y = b.op("ROIPooling", b.parameter("x", from_name("f32"), [1, 2, 6, 6]), b.constant(rois),
             version="opset2", pooled_h=2, pooled_w=3, spatial_scale=0.5)
    y.names[:] = ["y"]
    b.result(y, "r")
    irexec.save_model(b.build(), tmp_path / "m.xml")
    assert "output_size" not in (tmp_path / "m.xml").read_text()
    ours = irexec.compile_model(irexec.read_model(tmp_path / "m.xml"))({"x": x})["y"]
    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(tmp_path / "m.xml")), "CPU",
                                  {"INFERENCE_PRECISION_HINT": "f32"})
    np.testing.assert_array_equal(ours, compiled({"x": x})[0])
    np.testing.assert_array_equal(ours, ref.roi_pooling(x, rois, 2, 3, 0.5, "max"))


@pytest.mark.parametrize("op, at", [
    ("PSROIPooling", dict(output_dim=2, group_size=2, spatial_scale=1.0)),
    ("DeformablePSROIPooling", dict(output_dim=2, group_size=2, spatial_scale=1.0)),
])
def test_psroi_ops_with_dynamic_shapes_run_where_openvino_refuses_them(tmp_path, op, at):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 8, 5, 6)).astype(F32)
    rois = np.array([[0, 0, 0, 5, 4], [0, 2, 1, 4, 4]], F32)
    model, feed = build_layer(op, x, rois, shapes=[[1, 8, -1, -1], [-1, 5]], **at)
    node = next(n for n in model.nodes if n.type == op)
    assert "refuses" in node.op.openvino_refuses(node)
    got = irexec.compile_model(model)(feed)["y0"]
    static, _ = build_layer(op, x, rois, **at)
    np.testing.assert_array_equal(got, irexec.compile_model(static)(feed)["y0"])
    node = next(n for n in static.nodes if n.type == op)
    assert node.op.openvino_refuses(node) is None
    ov = pytest.importorskip("openvino")
    irexec.save_model(model, tmp_path / "m.xml")
    core = ov.Core()
    with pytest.raises(RuntimeError, match=op):
        core.compile_model(core.read_model(str(tmp_path / "m.xml")), "CPU")


# --- bad attributes, shapes and values ------------------------------------------------------------

ALIGN = dict(pooled_h=2, pooled_w=2, sampling_ratio=2, spatial_scale=1.0, mode="avg")
Z = np.zeros(1, F32)
IDX = np.zeros(1, np.int64)


@pytest.mark.parametrize("op, version, shapes, at, code", [
    ("ROIAlign", "opset3", [[1, 2, 4, 4], [3, 5], [3]], ALIGN, "IR307"),
    ("ROIAlign", "opset3", [[1, 2, 4, 4], [3, 4], [2]], ALIGN, "IR307"),
    ("ROIAlign", "opset3", [[1, 2, 4], [3, 4], [3]], ALIGN, "IR305"),
    ("ROIAlign", "opset3", [[1, 2, 4, 4], [3, 4], [3]], dict(ALIGN, pooled_h=0), "IR302"),
    ("ROIAlign", "opset9", [[1, 2, 4, 4], [3, 4], [3]], dict(ALIGN, sampling_ratio=-1),
     "IR302"),
    ("ROIAlign", "opset9", [[1, 2, 4, 4], [3, 4], [3]], dict(ALIGN, spatial_scale=0.0),
     "IR302"),
    ("ROIAlignRotated", "opset15", [[1, 2, 4, 4], [3, 4], [3]],
     dict(pooled_h=2, pooled_w=2, sampling_ratio=2, spatial_scale=1.0), "IR307"),
])
def test_roi_align_bad_attributes_and_shapes(op, version, shapes, at, code):
    e = layer_error(op, Z, Z, IDX, version=version, shapes=shapes, **at)
    assert [d.code for d in e.diagnostics] == [code], [str(d) for d in e.diagnostics]


def test_roi_align_bad_mode_is_refused():
    e = layer_error("ROIAlign", Z, Z, IDX, version="opset9", shapes=[[1, 2, 4, 4], [3, 4], [3]],
                    **dict(ALIGN, aligned_mode="half"))
    assert e.code in ("IR302",)


def test_roi_align_batch_index_out_of_range_at_run_time():
    e = layer_error("ROIAlign", np.zeros((2, 1, 4, 4), F32), np.zeros((2, 4), F32),
                    np.array([0, 2], np.int32), version="opset3", **ALIGN)
    assert e.code == "IR308" and "[0, 1]" in str(e)


@pytest.mark.parametrize("op, version, at", [
    ("ROIPooling", "opset2", dict(pooled_h=2, pooled_w=2, spatial_scale=1.0)),
    ("PSROIPooling", "opset1", dict(output_dim=1, group_size=1, spatial_scale=1.0)),
])
def test_roi_table_batch_index_out_of_range_at_run_time(op, version, at):
    e = layer_error(op, np.zeros((2, 1, 4, 4), F32), np.array([[3, 0, 0, 2, 2]], F32),
                    version=version, **at)
    assert e.code == "IR308"


@pytest.mark.parametrize("op, shapes, at, code", [
    ("PSROIPooling", [[1, 8, 4, 4], [3, 5]], dict(output_dim=3, group_size=2,
                                                  spatial_scale=1.0), "IR307"),
    ("PSROIPooling", [[1, 8, 4, 4], [3, 5]], dict(output_dim=2, group_size=2, spatial_scale=1.0,
                                                  mode="bilinear", spatial_bins_x=3), "IR307"),
    ("PSROIPooling", [[1, 8, 4, 4], [3, 4]], dict(output_dim=2, group_size=2,
                                                  spatial_scale=1.0), "IR307"),
    ("PSROIPooling", [[1, 8, 4, 4], [3, 5]], dict(output_dim=0, group_size=2,
                                                  spatial_scale=1.0), "IR302"),
    ("DeformablePSROIPooling", [[1, 7, 4, 4], [3, 5]], dict(output_dim=2, group_size=2,
                                                            spatial_scale=1.0), "IR307"),
    ("DeformablePSROIPooling", [[1, 8, 4, 4], [3, 5], [3, 3, 1, 1]],
     dict(output_dim=2, group_size=2, spatial_scale=1.0), "IR307"),
    ("DeformablePSROIPooling", [[1, 8, 4, 4], [3, 5], [3, 2, 2, 2]],
     dict(output_dim=2, group_size=2, spatial_scale=1.0, part_size=1), "IR307"),
    ("DeformablePSROIPooling", [[1, 8, 4, 4], [3, 5], [4, 2, 1, 1]],
     dict(output_dim=2, group_size=2, spatial_scale=1.0), "IR307"),
    ("ROIPooling", [[1, 8, 4, 4], [3, 5]], dict(pooled_h=-1, pooled_w=2, spatial_scale=1.0),
     "IR302"),
])
def test_pooling_bad_attributes_and_shapes(op, shapes, at, code):
    version = "opset2" if op == "ROIPooling" else "opset1"
    e = layer_error(op, *([Z] * len(shapes)), version=version, shapes=shapes, **at)
    assert [d.code for d in e.diagnostics] == [code], [str(d) for d in e.diagnostics]


@pytest.mark.parametrize("op, version, at, normalized", [
    ("ROIPooling", "opset2", dict(pooled_h=2, pooled_w=2, spatial_scale=0.5), False),
    ("ROIPooling", "opset2", dict(pooled_h=2, pooled_w=2, spatial_scale=0.5, method="bilinear"),
     True),
    ("PSROIPooling", "opset1", dict(output_dim=2, group_size=2, spatial_scale=0.5), False),
    ("PSROIPooling", "opset1", dict(output_dim=2, group_size=2, spatial_scale=0.5,
                                    mode="bilinear", spatial_bins_x=2, spatial_bins_y=2), True),
    ("DeformablePSROIPooling", "opset1", dict(output_dim=2, group_size=2, spatial_scale=0.5),
     False),
])
def test_generated_roi_tables_are_valid(op, version, at, normalized):
    """`irexec run` makes ROI tables whose batch ids index the data and whose corners lie in
    the image (in [0, 1] where the mode asks for normalized ones)."""
    from irexec.runtime.inputs import make_inputs
    model, _ = build_layer(op, np.zeros((2, 8, 5, 6), F32), np.zeros((4, 5), F32),
                           version=version, **at)
    feed = make_inputs(model, {}, seed=3)
    rois = feed["in1"]
    assert rois.shape == (4, 5)
    assert set(rois[:, 0]) <= {0.0, 1.0}
    top = (1.0, 1.0) if normalized else (6 / 0.5, 5 / 0.5)
    assert (rois[:, 1:3] <= rois[:, 3:5]).all() and (rois[:, 1:] >= 0).all()
    assert (rois[:, [1, 3]] <= top[0]).all() and (rois[:, [2, 4]] <= top[1]).all()
    irexec.compile_model(model)(feed)


def test_a_roi_with_too_many_samples_is_refused_before_allocating():
    e = layer_error("ROIAlign", np.zeros((1, 4, 4, 4), F32), np.array([[0, 0, 1e9, 1e9]], F32),
                    np.array([0], np.int32), version="opset3", pooled_h=2, pooled_w=2,
                    sampling_ratio=0, spatial_scale=1.0, mode="avg")
    assert e.code == "IR109"
