"""STFT-15 and ISTFT-16: the specification's examples, properties against a frame-by-frame
float64 reference (DFT matrices, no FFT), OpenVINO conformance, and one diagnostic per bad
input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.ir.shape import PartialShape
from tests.ops.compute_support import (assert_close, build_layer, layer_error,
                                       openvino_and_irexec, run_layer)
from tests.ops.support import dtype_of


def padded(window, fs):
    out = np.zeros(fs)
    left = (fs - len(window)) // 2
    out[left:left + len(window)] = window
    return out


def stft_reference(signal, window, fs, step, transpose):
    """(result, magnitude) in float64, one frame at a time."""
    x = np.atleast_2d(signal.astype(np.float64))
    w = padded(window.astype(np.float64), fs)
    frames = (x.shape[1] - fs) // step + 1
    bins = fs // 2 + 1
    m = np.exp(-2j * np.pi * np.outer(np.arange(bins), np.arange(fs)) / fs)
    out = np.zeros((x.shape[0], frames, bins, 2))
    mag = np.zeros((x.shape[0], frames, bins, 2))
    for b in range(x.shape[0]):
        for f in range(frames):
            piece = x[b, f * step:f * step + fs] * w
            y = m @ piece
            out[b, f, :, 0], out[b, f, :, 1] = y.real, y.imag
            mag[b, f] = np.abs(piece).sum()
    if transpose:
        out, mag = out.transpose(0, 2, 1, 3), mag.transpose(0, 2, 1, 3)
    if signal.ndim == 1:
        out, mag = out[0], mag[0]
    return out, mag


def istft_reference(data, window, fs, step, center, normalized, length=None):
    """(result, magnitude) in float64: each frame's inverse real DFT times the window
    overlap-added, divided by the sum of the squared window (OpenVINO's reference kernel)."""
    x = data.astype(np.float64)
    batched = x.ndim == 4
    if not batched:
        x = x[None]
    z = x[..., 0] + 1j * x[..., 1]  # [b, bins, frames]
    frames = z.shape[2]
    full = (frames - 1) * step + fs
    k = np.arange(fs // 2 + 1)
    weight = np.where((k == 0) | ((fs % 2 == 0) & (k == fs // 2)), 1.0, 2.0)
    m = np.exp(2j * np.pi * np.outer(np.arange(fs), k) / fs) * weight / fs
    w = padded(window.astype(np.float64), fs)
    out = np.zeros((z.shape[0], full))
    mag = np.zeros((z.shape[0], full))
    wsum = np.zeros(full)
    for f in range(frames):
        wsum[f * step:f * step + fs] += w * w
    for b in range(z.shape[0]):
        for f in range(frames):
            out[b, f * step:f * step + fs] += (m @ z[b, :, f]).real * w
            mag[b, f * step:f * step + fs] += (np.abs(m) @ np.abs(z[b, :, f])) * np.abs(w)
    scale = np.sqrt(fs) if normalized else 1.0
    safe = np.where(wsum != 0, wsum, 1)
    out = np.where(wsum != 0, out * scale / safe, 0)
    mag = np.where(wsum != 0, mag * scale / np.abs(safe), 0)
    if length is None:
        length = full - fs if center else full
    margin = fs // 2 if center else 0
    res, rmag = np.zeros((z.shape[0], length)), np.zeros((z.shape[0], length))
    stop = min(length, full - margin)
    res[:, :stop], rmag[:, :stop] = out[:, margin:margin + stop], mag[:, margin:margin + stop]
    return (res, rmag) if batched else (res[0], rmag[0])


def output_shape(model) -> PartialShape:
    return model.results[0].inputs[0].source.partial_shape


def scalar(v):
    return np.array(v, np.int64)


# --- the specification's examples ----------------------------------------------------------------

@pytest.mark.parametrize("signal, transpose, expected", [
    ([56], False, [16, 6, 2]), ([56], True, [6, 16, 2]),
    ([3, 56], False, [3, 16, 6, 2]), ([3, 56], True, [3, 6, 16, 2]),
])
def test_stft_spec_examples(signal, transpose, expected):
    model, _ = build_layer("STFT", np.zeros(1, np.float32), np.zeros(7, np.float32), scalar(11),
                           scalar(3), version="opset15", consts=(1, 2, 3),
                           shapes=[signal, None, None, None], transpose_frames=transpose)
    assert output_shape(model) == PartialShape(expected)


@pytest.mark.parametrize("data, center, length, expected", [
    ([6, 16, 2], False, None, [56]), ([4, 6, 16, 2], False, None, [4, 56]),
    ([6, 16, 2], True, None, [45]), ([4, 6, 16, 2], True, None, [4, 45]),
    ([6, 16, 2], False, 64, [64]),
])
def test_istft_spec_examples(data, center, length, expected):
    inputs = [np.zeros(1, np.float32), np.zeros(7, np.float32), scalar(11), scalar(3)]
    if length is not None:
        inputs.append(scalar(length))
    model, _ = build_layer("ISTFT", *inputs, version="opset16", consts=(1, 2, 3, 4),
                           shapes=[data, None, None, None, None], center=center,
                           normalized=False)
    assert output_shape(model) == PartialShape(expected)


# --- hand-checked values -------------------------------------------------------------------------

def test_stft_of_a_constant_signal_has_only_a_dc_bin():
    y = run_layer("STFT", np.ones(8, np.float32), np.ones(4, np.float32), scalar(4), scalar(2),
                  version="opset15", consts=(2, 3), transpose_frames=False)
    assert y.shape == (3, 3, 2)
    assert y[..., 0].tolist() == [[4.0, 0.0, 0.0]] * 3 and not y[..., 1].any()


def test_istft_restores_what_stft_made():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 40))
    window = np.hanning(12)[1:-1] + 0.1
    spec = run_layer("STFT", x, window, scalar(12), scalar(4), version="opset15",
                     consts=(1, 2, 3), transpose_frames=True)
    back = run_layer("ISTFT", spec, window, scalar(12), scalar(4), version="opset16",
                     consts=(1, 2, 3), center=False, normalized=False)
    # the window of 10 sits in the middle of frames of 12: the first and last samples are in
    # no window, and come back as 0
    np.testing.assert_allclose(back[:, 1:-1], x[:, 1:-1], rtol=1e-12, atol=1e-12)
    assert not back[:, [0, -1]].any()


# --- properties against the frame-by-frame reference ---------------------------------------------

@st.composite
def stft_cases(draw):
    fs = draw(st.integers(1, 9))
    wl = draw(st.integers(1, fs))
    step = draw(st.integers(1, 5))
    length = draw(st.integers(fs, fs + 12))
    batch = draw(st.sampled_from([None, 1, 3]))
    return fs, wl, step, length, batch, draw(st.booleans()), draw(st.integers(0, 2 ** 16))


@settings(max_examples=40, deadline=None)
@given(stft_cases(), st.sampled_from(["f32", "f64"]))
def test_property_stft_equals_the_reference(case, type_name):
    fs, wl, step, length, batch, transpose, seed = case
    dtype = dtype_of(type_name)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((length,) if batch is None else (batch, length)).astype(dtype)
    w = rng.standard_normal(wl).astype(dtype)
    y = run_layer("STFT", x, w, scalar(fs), scalar(step), version="opset15", consts=(2, 3),
                  transpose_frames=transpose)
    ref, mag = stft_reference(x, w, fs, step, transpose)
    assert_close(y, ref.astype(dtype), mag, str(case))


@settings(max_examples=40, deadline=None)
@given(stft_cases(), st.booleans(), st.booleans(), st.sampled_from([None, 0, 5, 30]),
       st.sampled_from(["f32", "f64"]))
def test_property_istft_equals_the_reference(case, center, normalized, length, type_name):
    fs, wl, step, _, batch, _, seed = case
    dtype = dtype_of(type_name)
    rng = np.random.default_rng(seed)
    frames = int(rng.integers(1, 5))
    shape = (fs // 2 + 1, frames, 2) if batch is None else (batch, fs // 2 + 1, frames, 2)
    x = rng.standard_normal(shape).astype(dtype)
    w = (rng.random(wl) + 0.5).astype(dtype)  # window sums away from 0
    inputs = [x, w, scalar(fs), scalar(step)] + ([scalar(length)] if length is not None else [])
    y = run_layer("ISTFT", *inputs, version="opset16", consts=(2, 3, 4), center=center,
                  normalized=normalized)
    ref, mag = istft_reference(x, w, fs, step, center, normalized, length)
    assert_close(y, ref.astype(dtype), mag, f"{case} {center} {normalized} {length}")


def test_samples_no_window_covers_are_zero():
    # window [1] in a frame of 3: only the middle sample of each frame is covered
    x = np.ones((2, 2, 2), np.float32)
    y = run_layer("ISTFT", x, np.ones(1, np.float32), scalar(3), scalar(3), version="opset16",
                  consts=(2, 3), center=False, normalized=False)
    assert y.shape == (6,) and y[[0, 2, 3, 5]].tolist() == [0.0] * 4


# --- OpenVINO conformance ------------------------------------------------------------------------

@pytest.mark.parametrize("type_name", ["f32", "f16"])
def test_openvino_conformance(tmp_path, type_name):
    ov = pytest.importorskip("openvino")
    import openvino.opset16 as o16
    dtype = dtype_of(type_name)
    rng = np.random.default_rng(5)
    params, outputs, inputs, refs = [], [], [], []
    for shape, wl, fs, step, transpose in [((30,), 5, 8, 3, False), ((2, 30), 8, 8, 2, True),
                                           ((3, 17), 3, 7, 4, False), ((1, 9), 1, 9, 1, True)]:
        x = rng.standard_normal(shape).astype(dtype)
        w = rng.standard_normal(wl).astype(dtype)
        p = o16.parameter(list(shape), getattr(ov.Type, type_name))
        node = o16.stft(p, o16.constant(w), o16.constant(scalar(fs)),
                        o16.constant(scalar(step)), transpose)
        params.append(p)
        outputs.append(node.output(0))
        inputs.append(x)
        refs.append(stft_reference(x, w, fs, step, transpose)[1])
    for shape, wl, fs, step, center, normalized, length in [
            ((5, 4, 2), 8, 8, 2, False, False, None), ((2, 5, 6, 2), 6, 8, 3, True, False, None),
            ((2, 4, 3, 2), 5, 7, 2, False, True, 20), ((3, 5, 2), 4, 4, 1, True, True, 3),
            ((4, 7, 2), 4, 6, 6, False, False, None)]:
        x = rng.standard_normal(shape).astype(dtype)
        w = (rng.random(wl) + 0.5).astype(dtype)
        p = o16.parameter(list(shape), getattr(ov.Type, type_name))
        extra = [o16.constant(scalar(length))] if length is not None else []
        node = o16.istft(p, o16.constant(w), o16.constant(scalar(fs)),
                         o16.constant(scalar(step)), center, normalized, *extra)
        params.append(p)
        outputs.append(node.output(0))
        inputs.append(x)
        refs.append(istft_reference(x, w, fs, step, center, normalized, length)[1])
    ours, theirs = openvino_and_irexec(ov, tmp_path, params, outputs, inputs)
    for i, (a, b, mag) in enumerate(zip(ours, theirs, refs)):
        assert_close(a, b, mag, f"case {i}")


# --- bad inputs -----------------------------------------------------------------------------------

F = np.zeros(1, np.float32)


@pytest.mark.parametrize("op, shapes, fs, step, code", [
    ("STFT", [[2, 10], [3]], 11, 2, "IR308"),  # a frame longer than the signal
    ("STFT", [[2, 10], [3]], 0, 2, "IR308"),
    ("STFT", [[2, 10], [3]], 4, 0, "IR308"),
    ("STFT", [[2, 10], [5]], 4, 2, "IR307"),  # a window longer than the frame
    ("STFT", [[2, 2, 10], [3]], 4, 2, "IR305"),
    ("ISTFT", [[3, 4, 2], [5]], 4, 2, "IR307"),
    ("ISTFT", [[3, 4, 2], [3]], 4, -1, "IR308"),
    ("ISTFT", [[4, 4, 2], [3]], 4, 2, "IR307"),  # 4 bins, but frame_size 4 gives 3
    ("ISTFT", [[3, 4, 3], [3]], 4, 2, "IR307"),  # not complex
    ("ISTFT", [[4, 2], [3]], 4, 2, "IR305"),
])
def test_bad_inputs_give_one_coded_error(op, shapes, fs, step, code):
    version = "opset15" if op == "STFT" else "opset16"
    extra = {"transpose_frames": False} if op == "STFT" else {"center": False,
                                                              "normalized": False}
    e = layer_error(op, F, F, scalar(fs), scalar(step), version=version, consts=(2, 3),
                    shapes=shapes + [None, None], **extra)
    assert [d.code for d in e.diagnostics] == [code], [str(d) for d in e.diagnostics]


def test_negative_signal_length_is_ir308():
    e = layer_error("ISTFT", F, F, scalar(4), scalar(2), scalar(-3), version="opset16",
                    consts=(2, 3, 4), shapes=[[3, 4, 2], [3], None, None, None], center=False,
                    normalized=False)
    assert [d.code for d in e.diagnostics] == ["IR308"]
