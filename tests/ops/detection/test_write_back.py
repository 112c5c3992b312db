"""Every detection op version written by irexec: read back by irexec with the same attributes
and results, and read and run by OpenVINO with the same results (the attribute spellings
OpenVINO expects, no empty list it cannot read)."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder
from irexec.ir.element_type import from_dtype
from tests.ops.compute_support import assert_close

F32 = np.float32
RNG = np.random.default_rng(17)
X = RNG.standard_normal((2, 8, 6, 6)).astype(F32)
BOXES = np.array([[0.5, 1, 4, 5], [2, 0, 5.5, 3], [1, 1, 2, 2]], F32)
ROT = np.array([[3, 3, 2, 4, 0.5], [2, 4, 3, 1, -1.0], [1, 1, 2, 2, 3.0]], F32)
BIDX = np.array([0, 1, 1], np.int32)
ROIS = np.array([[0, 1, 1, 9, 7], [1, 0, 2, 11, 11], [0, 3, 3, 4, 4]], F32)
NORM = np.array([[0, 0.1, 0.2, 0.8, 0.9], [1, 0.0, 0.3, 0.5, 1.0], [0, 0.4, 0.4, 0.6, 0.6]], F32)
OFFSETS = RNG.uniform(-0.2, 0.2, (3, 2, 2, 2)).astype(F32)
GRID, IMAGE = np.array([3, 2], np.int64), np.array([30, 20], np.int64)

LAYERS = [
    ("ROIAlign", "opset3", (X, BOXES, BIDX), dict(pooled_h=2, pooled_w=3, sampling_ratio=2,
                                                   spatial_scale=0.5, mode="max")),
    ("ROIAlign", "opset9", (X, BOXES, BIDX), dict(pooled_h=2, pooled_w=3, sampling_ratio=0,
                                                   spatial_scale=1.5, mode="avg",
                                                   aligned_mode="half_pixel_for_nn")),
    ("ROIAlignRotated", "opset15", (X, ROT, BIDX), dict(pooled_h=2, pooled_w=2, sampling_ratio=2,
                                                         spatial_scale=1.0, clockwise_mode=True)),
    ("ROIPooling", "opset2", (X, ROIS), dict(pooled_h=2, pooled_w=2, spatial_scale=0.5)),
    ("ROIPooling", "opset2", (X, NORM), dict(pooled_h=3, pooled_w=2, spatial_scale=1.0,
                                             method="bilinear")),
    ("PSROIPooling", "opset1", (X, ROIS), dict(output_dim=2, group_size=2, spatial_scale=0.5)),
    ("PSROIPooling", "opset1", (X, NORM), dict(output_dim=2, group_size=3, spatial_scale=1.0,
                                               mode="bilinear", spatial_bins_x=2,
                                               spatial_bins_y=2)),
    ("DeformablePSROIPooling", "opset1", (X, ROIS, OFFSETS),
     dict(output_dim=2, group_size=2, spatial_scale=0.5, spatial_bins_x=2, spatial_bins_y=2,
          trans_std=0.5, part_size=2)),
    ("PriorBox", "opset1", (GRID, IMAGE), dict(min_size=(4.0,), max_size=(9.0,),
                                               aspect_ratio=(2.0,), flip=True, offset=0.5)),
    ("PriorBox", "opset8", (GRID, IMAGE), dict(min_size=(4.0,), max_size=(9.0,),
                                               aspect_ratio=(2.0,), flip=True, clip=True,
                                               offset=0.5, step=6.0, variance=(0.1, 0.2, 0.1,
                                                                               0.2),
                                               min_max_aspect_ratios_order=False)),
    ("PriorBoxClustered", "opset1", (GRID, IMAGE), dict(width=(3.0, 5.0), height=(4.0, 2.0),
                                                        offset=0.5, variance=(0.2,))),
    ("RegionYolo", "opset1", (X,), dict(coords=4, classes=3, num=1, axis=1, end_axis=3,
                                        anchors=(1.0, 2.0))),
    ("RegionYolo", "opset1", (X,), dict(coords=2, classes=1, num=6, axis=1, end_axis=3,
                                        do_softmax=False, mask=(0, 1))),
    ("ReorgYolo", "opset2", (X,), dict(stride=(2,))),
]


def _model():
    b = ModelBuilder("detection")
    x = b.parameter("x", from_dtype(X.dtype), list(X.shape))
    for i, (op, version, inputs, at) in enumerate(LAYERS):
        ports = [x] + [b.constant(a) for a in inputs[1:]] if inputs[0] is X else \
            [b.constant(a) for a in inputs]
        y = b.op(op, *ports, version=version, name=f"layer{i}", **at)
        y.names[:] = [f"y{i}"]
        b.result(y, f"r{i}")
    return b.build()


def test_written_models_read_back_the_same(tmp_path):
    model = _model()
    irexec.save_model(model, tmp_path / "m.xml")
    again = irexec.read_model(tmp_path / "m.xml")
    for a, b in zip((n for n in model.nodes if n.name.startswith("layer")),
                    (n for n in again.nodes if n.name.startswith("layer"))):
        assert (a.type, a.version, a.attrs) == (b.type, b.version, b.attrs)
    ours = irexec.compile_model(model)({"x": X})
    back = irexec.compile_model(again)({"x": X})
    for name in ours:
        np.testing.assert_array_equal(ours[name], back[name])


def test_openvino_reads_and_runs_what_irexec_writes(tmp_path):
    ov = pytest.importorskip("openvino")
    irexec.save_model(_model(), tmp_path / "m.xml")
    ours = irexec.compile_model(irexec.read_model(tmp_path / "m.xml"))({"x": X})
    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(tmp_path / "m.xml")), "CPU",
                                  {"INFERENCE_PRECISION_HINT": "f32"})
    theirs = compiled({"x": X})
    for i, (op, version, _, _) in enumerate(LAYERS):
        other = next(v for k, v in theirs.items() if f"y{i}" in k.get_names())
        assert_close(ours[f"y{i}"], other, 4 * float(np.abs(X).max()), f"{op} {version}")
