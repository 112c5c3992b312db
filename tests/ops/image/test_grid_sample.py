"""GridSample-9: the specification's example, hand-checked values, properties against a
point-by-point float64 reference, OpenVINO conformance for every mode, padding and
align_corners, and one diagnostic per bad shape."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.ir.shape import PartialShape
from tests.ops.compute_support import (assert_close, build_layer, layer_error,
                                       openvino_and_irexec, run_layer)
from tests.ops.support import dtype_of

MODES = ("bilinear", "bicubic", "nearest")
PADDINGS = ("zeros", "border", "reflection")


def _padded(img, yi, xi, padding, align):
    h, w = img.shape
    if padding == "zeros":
        return img[yi, xi] if 0 <= yi < h and 0 <= xi < w else 0.0
    if padding == "border":
        return img[min(max(yi, 0), h - 1), min(max(xi, 0), w - 1)]

    def reflect(i, size):
        if align:
            period = 1 if size == 1 else 2 * (size - 1)
            i = abs(i) % period
            return period - i if i >= size else i
        i = i % (2 * size)
        return 2 * size - 1 - i if i >= size else i
    return img[reflect(yi, h), reflect(xi, w)]


def _cubic(r, a=-0.75):
    def k(t):
        t = abs(t)
        if t <= 1:
            return (a + 2) * t ** 3 - (a + 3) * t ** 2 + 1
        if t < 2:
            return a * t ** 3 - 5 * a * t ** 2 + 8 * a * t - 4 * a
        return 0.0
    return [k(r + 1), k(r), k(1 - r), k(2 - r)]


def reference(data, grid, align, mode, padding):
    """(result, magnitude): one output point at a time, in float64."""
    x = data.astype(np.float64)
    g = grid.astype(np.float64)
    n, c, h, w = x.shape
    out = np.zeros((n, c) + g.shape[1:3])
    mag = np.zeros_like(out)
    for b in range(n):
        for i in range(g.shape[1]):
            for j in range(g.shape[2]):
                gx, gy = g[b, i, j]
                if align:
                    px, py = (gx + 1) * (w - 1) / 2, (gy + 1) * (h - 1) / 2
                else:
                    px, py = ((gx + 1) * w - 1) / 2, ((gy + 1) * h - 1) / 2
                for ch in range(c):
                    img = x[b, ch]
                    if mode == "nearest":
                        v = _padded(img, int(np.rint(py)), int(np.rint(px)), padding, align)
                        out[b, ch, i, j], mag[b, ch, i, j] = v, abs(v)
                        continue
                    fy, fx = math.floor(py), math.floor(px)
                    dy, dx = py - fy, px - fx
                    if mode == "bilinear":
                        taps = [(fy, fx, (1 - dy) * (1 - dx)), (fy, fx + 1, (1 - dy) * dx),
                                (fy + 1, fx, dy * (1 - dx)), (fy + 1, fx + 1, dy * dx)]
                    else:
                        cy, cx = _cubic(dy), _cubic(dx)
                        taps = [(fy + a - 1, fx + b_ - 1, cy[a] * cx[b_])
                                for a in range(4) for b_ in range(4)]
                    vals = [(wt, _padded(img, yy, xx, padding, align)) for yy, xx, wt in taps]
                    out[b, ch, i, j] = sum(wt * v for wt, v in vals)
                    # the weights carry the rounding error of the coordinates
                    mag[b, ch, i, j] = sum(abs(wt * v) + abs(v) * (2 + abs(px) + abs(py))
                                           for wt, v in vals) * 4
    return out, mag


def test_spec_example_shape():
    model, _ = build_layer("GridSample", np.zeros(1, np.float32), np.zeros(1, np.float32),
                           version="opset9", shapes=[[1, 3, 200, 300], [1, 100, 100, 2]],
                           align_corners=False, mode="bilinear", padding_mode="zeros")
    assert model.results[0].inputs[0].source.partial_shape == PartialShape([1, 3, 100, 100])


def test_dynamic_batch_comes_from_the_grid():
    model, _ = build_layer("GridSample", np.zeros(1, np.float32), np.zeros(1, np.float32),
                           version="opset9", shapes=[[-1, 3, 8, 8], [2, 4, -1, 2]])
    assert model.results[0].inputs[0].source.partial_shape == PartialShape([2, 3, 4, -1])


def test_hand_checked_values():
    data = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)  # [[0, 1], [2, 3]]
    # the corners, the centre, and a point half a pixel left of the data (x = -0.5, y = 0.5):
    # half the mean of the first column, half a padded zero
    grid = np.array([[[[-1, -1], [1, 1], [0, 0], [-2, 0]]]], np.float32)
    aligned = run_layer("GridSample", data, grid, version="opset9", align_corners=True,
                        mode="bilinear", padding_mode="zeros")
    assert aligned.tolist() == [[[[0.0, 3.0, 1.5, 0.5]]]]
    border = run_layer("GridSample", data, grid, version="opset9", align_corners=True,
                       mode="bilinear", padding_mode="border")
    assert border.tolist() == [[[[0.0, 3.0, 1.5, 1.0]]]]
    # without align_corners, -1 is the outer edge: half a pixel of zeros mixes in
    edge = run_layer("GridSample", data, grid[:, :, :1], version="opset9",
                     align_corners=False, mode="bilinear", padding_mode="zeros")
    assert edge.tolist() == [[[[0.0]]]]
    nearest = run_layer("GridSample", data, np.array([[[[0.2, 0.9]]]], np.float32),
                        version="opset9", align_corners=True, mode="nearest",
                        padding_mode="zeros")
    assert nearest.tolist() == [[[[3.0]]]]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(MODES), st.sampled_from(PADDINGS), st.booleans(),
       st.integers(1, 4), st.integers(1, 4), st.sampled_from(["f32", "f64", "f16"]),
       st.integers(0, 2 ** 16))
def test_property_equals_point_by_point(mode, padding, align, h, w, type_name, seed):
    rng = np.random.default_rng(seed)
    dtype = dtype_of(type_name)
    data = rng.standard_normal((2, 2, h, w)).astype(dtype)
    grid = (rng.random((2, 3, 2, 2)) * 4 - 2).astype(dtype)
    y = run_layer("GridSample", data, grid, version="opset9", align_corners=align, mode=mode,
                  padding_mode=padding)
    ref, mag = reference(data, grid, align, mode, padding)
    if mode == "nearest":  # a point halfway between pixels may round either way in f16/f32
        g = grid.astype(np.float64)
        px = ((g[..., 0] + 1) * (w - 1) / 2) if align else (((g[..., 0] + 1) * w - 1) / 2)
        py = ((g[..., 1] + 1) * (h - 1) / 2) if align else (((g[..., 1] + 1) * h - 1) / 2)
        tie = (np.abs(px % 1 - 0.5) < 1e-3) | (np.abs(py % 1 - 0.5) < 1e-3)
        keep = ~np.broadcast_to(tie[:, None], y.shape)
        y, ref, mag = y[keep], ref[keep], mag[keep]
    assert_close(y, ref.astype(dtype), mag, f"{mode} {padding} {align}")


def test_integer_data_truncates_the_interpolated_value():
    data = np.array([[[[0, 3]]]], np.int32)
    y = run_layer("GridSample", data, np.array([[[[0.0, 0.0]]]], np.float32), version="opset9",
                  align_corners=True, mode="bilinear", padding_mode="zeros")
    assert y.dtype == np.int32 and y.tolist() == [[[[1]]]]


@pytest.mark.parametrize("type_name", ["f32", "f16"])
def test_openvino_conformance(tmp_path, type_name):
    ov = pytest.importorskip("openvino")
    import openvino.opset9 as o9
    dtype = dtype_of(type_name)
    rng = np.random.default_rng(11)
    params, outputs, inputs, refs = [], [], [], []
    for mode in MODES:
        for padding in PADDINGS:
            for align in (False, True):
                data = rng.standard_normal((2, 3, 5, 4)).astype(dtype)
                grid = (rng.random((2, 3, 6, 2)) * 3 - 1.5).astype(dtype)
                p, q = (o9.parameter(list(a.shape), getattr(ov.Type, type_name))
                        for a in (data, grid))
                node = o9.grid_sample(p, q, {"align_corners": align, "mode": mode,
                                             "padding_mode": padding})
                params += [p, q]
                outputs.append(node.output(0))
                inputs += [data, grid]
                refs.append((mode, padding, align, data, grid))
    ours, theirs = openvino_and_irexec(ov, tmp_path, params, outputs, inputs)
    for a, b, (mode, padding, align, data, grid) in zip(ours, theirs, refs):
        _, mag = reference(data, grid, align, mode, padding)
        assert_close(a, b, mag, f"{mode} {padding} {align}")


F = np.zeros(1, np.float32)


@pytest.mark.parametrize("shapes, code", [
    ([[1, 3, 4, 4], [1, 2, 2, 3]], "IR307"),  # points of 3 values
    ([[2, 3, 4, 4], [1, 2, 2, 2]], "IR307"),  # batches differ
    ([[3, 4, 4], [1, 2, 2, 2]], "IR305"),
    ([[1, 3, 4, 4], [1, 2, 2]], "IR305"),
])
def test_bad_shapes_give_one_coded_error(shapes, code):
    e = layer_error("GridSample", F, F, version="opset9", shapes=shapes)
    assert [d.code for d in e.diagnostics] == [code], [str(d) for d in e.diagnostics]


def test_bad_mode_is_ir302():
    e = layer_error("GridSample", F, F, version="opset9", shapes=[[1, 1, 2, 2], [1, 1, 1, 2]],
                    mode="linear")
    assert [d.code for d in e.diagnostics] == ["IR302"]
