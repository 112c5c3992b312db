"""The ops of issue 18's last part and issue 22's signal ops write back: a model built with the
builder, saved by ``irexec.save_model`` and read again validates cleanly and computes the same
bits; OpenVINO reads the files irexec writes (and, where its CPU plugin runs the op, agrees
within tolerance)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import irexec
from irexec.api import validate_file
from tests.ops.compute_support import build_layer

rng = np.random.default_rng(1)
F32 = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
I64 = lambda *v: np.array(v, np.int64)  # noqa: E731

CONV = dict(strides=(1, 1), pads_begin=(1, 1), pads_end=(1, 1), dilations=(1, 1),
            auto_pad="explicit")
CASES = [
    ("DFT", "opset7", [F32(3, 4, 2), I64(0, 1)], (1,), {}),
    ("IDFT", "opset7", [F32(3, 4, 2), I64(1), I64(6)], (1, 2), {}),
    ("RDFT", "opset9", [F32(3, 4), I64(1)], (1,), {}),
    ("IRDFT", "opset9", [F32(3, 4, 2), I64(1)], (1,), {}),
    ("STFT", "opset15", [F32(2, 20), F32(5), I64(8)[0], I64(3)[0]], (1, 2, 3),
     dict(transpose_frames=True)),
    ("ISTFT", "opset16", [F32(5, 4, 2), F32(8), I64(8)[0], I64(2)[0]], (1, 2, 3),
     dict(center=False, normalized=True)),
    ("Inverse", "opset14", [F32(2, 3, 3) + 4 * np.eye(3, dtype=np.float32)], (),
     dict(adjoint=True)),
    ("GridSample", "opset9", [F32(1, 2, 4, 5), F32(1, 3, 3, 2)], (),
     dict(align_corners=True, mode="bicubic", padding_mode="reflection")),
    ("DeformableConvolution", "opset8", [F32(1, 2, 4, 4), F32(1, 18, 4, 4), F32(3, 2, 3, 3),
                                         F32(1, 9, 4, 4)], (2,),
     dict(CONV, group=1, deformable_group=1, bilinear_interpolation_pad=True)),
    ("DeformableConvolution", "opset1", [F32(1, 2, 4, 4), F32(1, 18, 4, 4), F32(3, 2, 3, 3)],
     (2,), dict(CONV, group=1, deformable_group=1)),
    ("BinaryConvolution", "opset1",
     [rng.integers(0, 2, (1, 2, 4, 4)).astype(np.float32),
      rng.integers(0, 2, (3, 2, 3, 3)).astype(np.uint8).astype(ml_dtypes.uint1)], (1,),
     dict(CONV, mode="xnor-popcount", pad_value=1.0)),
    ("ExtractImagePatches", "opset3", [F32(1, 2, 5, 5)], (),
     dict(sizes=(2, 2), strides=(2, 1), rates=(1, 2), auto_pad="same_lower")),
    ("Col2Im", "opset15", [F32(2, 8, 9), I64(4, 4), I64(2, 2)], (1, 2),
     dict(strides=(1, 1), dilations=(1, 1), pads_begin=(0, 0), pads_end=(0, 0))),
    ("Interpolate", "opset1", [F32(1, 1, 4, 6), I64(3, 4)], (1,), dict(axes=(2, 3),
                                                                      mode="area")),
]
OV_RUNS = {"DFT", "IDFT", "RDFT", "IRDFT", "STFT", "ISTFT", "Inverse", "GridSample",
           "DeformableConvolution", "ExtractImagePatches", "Col2Im"}


@pytest.mark.parametrize("op, version, inputs, consts, attrs", CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_written_back_the_same(tmp_path, op, version, inputs, consts, attrs):
    model, feed = build_layer(op, *inputs, version=version, consts=consts, **attrs)
    before = irexec.compile_model(model)(feed)["y0"]
    xml = tmp_path / "m.xml"
    irexec.save_model(model, xml)
    assert [d.code for d in validate_file(str(xml))] == []
    after = irexec.compile_model(irexec.read_model(xml))(feed)["y0"]
    np.testing.assert_array_equal(after, before)
    try:
        import openvino as ov
    except ImportError:
        return
    core = ov.Core()
    theirs_model = core.read_model(str(xml))
    if op not in OV_RUNS:
        return
    compiled = core.compile_model(theirs_model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    ordered = [feed[p.get_friendly_name()] for p in theirs_model.get_parameters()]
    theirs = compiled(ordered)[0]
    np.testing.assert_allclose(theirs, before, rtol=1e-4, atol=1e-4)
