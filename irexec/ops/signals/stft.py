"""STFT-15 and ISTFT-16: the short-time Fourier transform of real signals and its inverse.

STFT cuts a signal [L] or [batch, L] into frames of ``frame_size`` samples, ``frame_step`` apart
(only whole frames: (L - frame_size) // frame_step + 1 of them), multiplies each by the window
(zero-padded to frame_size, the padding split with the smaller half on the left) and keeps the
frame_size//2+1 values of its real DFT: [batch, frames, bins, 2], or [batch, bins, frames, 2]
with ``transpose_frames``.

ISTFT takes [batch, bins, frames, 2] (or no batch axis) back to a signal, as OpenVINO's reference
kernel (and PyTorch's istft) does: every frame's inverse real DFT (frame_size samples) times the
padded window is added at its place, the sum is divided by the sum of the squared window over
the frames covering each sample (0 where that sum is 0), and times sqrt(frame_size) when
``normalized``. ``center`` drops frame_size//2 samples
at the start; the output has ``signal_length`` samples when given (zeros past the frames' end),
else (frames-1)*frame_step, plus frame_size without ``center``.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.kernels.numeric import compute_dtype, narrow
from irexec.ops import windows
from irexec.ops.domains import as_int64
from irexec.ops.spec import register
from irexec.ops.spec import (SCALAR, SCALAR_OR_VECTOR, SHAPE_INDEX, VECTOR, Attr, Input, Op,
                             OpSpec, Output, Rank, TensorType, TypeVar)

T = TypeVar("T", windows.REAL)


def _scalar(ctx, i: int) -> int | None:
    value = ctx.input_value(i)
    return None if value is None else int(as_int64(np.asarray(value)).reshape(-1)[0])


def _check_frame(ctx, frame_size: int | None, frame_step: int | None, length=None) -> None:
    """IR308 for a frame size below 1 (or above the signal's ``length``) or a step below 1;
    IR307 for a window longer than the frame."""
    if frame_size is not None:
        top = f", {length.max}" if length is not None and length.max is not None else ""
        if frame_size < 1 or length is not None and length.max is not None \
                and frame_size > length.max:
            raise OpError(f"frame_size is {frame_size}; it must be in [1{top or ', ...'}]"
                          + (f" (the signal has {length} samples)" if top else ""),
                          code="IR308")
        window = ctx.input_shape(1)
        if window.rank_is_static and len(window) == 1 and window[0].min > frame_size:
            raise OpError(f"the window has {window[0]} values but frame_size is {frame_size}; "
                          f"a window holds 1 to frame_size values", code="IR307")
    if frame_step is not None and frame_step < 1:
        raise OpError(f"frame_step is {frame_step}; frames are at least 1 sample apart",
                      code="IR308")


def _padded_window(window: np.ndarray, frame_size: int, dtype) -> np.ndarray:
    out = np.zeros(frame_size, dtype)
    left = (frame_size - window.shape[0]) // 2
    out[left:left + window.shape[0]] = window
    return out


@register
class STFT(Op):
    spec = OpSpec(
        type="STFT",
        numerics="accumulating",
        since=15,
        until=16,
        attrs=(Attr("transpose_frames", "bool",
                    doc="false: [batch, frames, bins, 2]; true: [batch, bins, frames, 2]"),),
        inputs=(
            Input("signal", T, Rank(min=1, max=2), doc="[signal_size] or [batch, signal_size]"),
            Input("window", T, VECTOR, doc="[window_length], 1 to frame_size values, "
                                           "zero-padded on both sides to frame_size"),
            Input("frame_size", SHAPE_INDEX, SCALAR,
                  doc="the samples per frame, in [1, signal_size]"),
            Input("frame_step", SHAPE_INDEX, SCALAR, doc="the samples between frame starts "
                                                         "(at least 1)"),
        ),
        outputs=(Output("output", "the frames' real DFTs, complex [..., 2]: bins = "
                                  "frame_size//2+1, frames = (signal_size - frame_size) // "
                                  "frame_step + 1", type=T),),
        doc="Short-time Fourier transform of a real signal: the real DFT of each windowed "
            "frame.",
    )

    @staticmethod
    def infer(ctx):
        signal = ctx.input_shape(0)
        et = ctx.output_element_types(1)[0]
        frame_size, frame_step = _scalar(ctx, 2), _scalar(ctx, 3)
        length = signal[len(signal) - 1] if signal.rank_is_static else None
        _check_frame(ctx, frame_size, frame_step, length)
        if not signal.rank_is_static:
            return [TensorType(et, PartialShape.dynamic())]
        batch = list(signal.dims[:-1])
        if frame_size is None or frame_step is None:
            bins = frames = Dimension.dynamic()
        else:
            bins = Dimension.static(frame_size // 2 + 1)
            frames = Dimension((max(length.min - frame_size, 0)) // frame_step + 1,
                               None if length.max is None else
                               (length.max - frame_size) // frame_step + 1)
        pair = [bins, frames] if ctx.attrs["transpose_frames"] else [frames, bins]
        return [TensorType(et, PartialShape(batch + pair + [Dimension.static(2)]))]

    @staticmethod
    def kernel(signal, window, frame_size, frame_step, *, transpose_frames):
        ct = compute_dtype(signal.dtype)
        fs, step = int(frame_size), int(frame_step)
        frames = sliding_window_view(signal.astype(ct, copy=False), fs, axis=-1)[..., ::step, :]
        spectrum = np.fft.rfft(frames * _padded_window(window.astype(ct), fs, ct), axis=-1)
        y = np.stack([spectrum.real, spectrum.imag], axis=-1)  # [..., frames, bins, 2]
        if transpose_frames:
            y = np.swapaxes(y, -3, -2)
        return narrow(np.ascontiguousarray(y, dtype=ct), signal.dtype)


@register
class ISTFT(Op):
    spec = OpSpec(
        type="ISTFT",
        numerics="accumulating",
        since=16,
        until=16,
        attrs=(
            Attr("center", "bool", doc="the signal was padded by frame_size//2 on both sides "
                                       "before STFT: drop that much at the start"),
            Attr("normalized", "bool", doc="the STFT was divided by sqrt(frame_size): multiply "
                                           "back"),
        ),
        inputs=(
            Input("data", T, Rank(min=3, max=4),
                  doc="[bins, frames, 2] or [batch, bins, frames, 2], bins = frame_size//2+1"),
            Input("window", T, VECTOR, doc="[window_length], 1 to frame_size values, "
                                           "zero-padded on both sides to frame_size"),
            Input("frame_size", SHAPE_INDEX, SCALAR, doc="the samples per frame (at least 1)"),
            Input("frame_step", SHAPE_INDEX, SCALAR, doc="the samples between frame starts "
                                                         "(at least 1)"),
            Input("signal_length", SHAPE_INDEX, SCALAR_OR_VECTOR, optional=True,
                  doc="the output's length (a scalar or one value); default (frames-1) * "
                      "frame_step, + frame_size without center"),
        ),
        outputs=(Output("output", "the signal, [signal_length] or [batch, signal_length]",
                        type=T),),
        doc="Inverse short-time Fourier transform: overlap-adds the windowed inverse real DFTs "
            "of the frames and divides by the overlapping sum of the squared window.",
    )

    @staticmethod
    def infer(ctx):
        data = ctx.input_shape(0)
        et = ctx.output_element_types(1)[0]
        frame_size, frame_step = _scalar(ctx, 2), _scalar(ctx, 3)
        _check_frame(ctx, frame_size, frame_step)
        if ctx.num_inputs > 4:
            ls = ctx.input_shape(4)
            if ls.rank_is_static and len(ls) == 1 and not ls[0].contains(1):
                raise OpError(f"signal_length has shape {ls}; it is a scalar or holds one "
                              f"value", code="IR307")
        if not data.rank_is_static:
            return [TensorType(et, PartialShape.dynamic())]
        rank = len(data)
        if not data[rank - 1].contains(2):
            raise OpError(f"the data {data} is complex, with a last axis of 2 values (real, "
                          f"imaginary), not {data[rank - 1]}", code="IR307")
        bins, frames = data[rank - 3], data[rank - 2]
        if frame_size is not None and not bins.contains(frame_size // 2 + 1):
            raise OpError(f"the data has {bins} frequency bins (axis {rank - 3}) but "
                          f"frame_size {frame_size} gives {frame_size // 2 + 1}", code="IR307")
        if ctx.num_inputs > 4:
            given = _scalar(ctx, 4)
            if given is not None and given < 0:
                raise OpError(f"signal_length is {given}; a length is at least 0",
                              code="IR308")
            length = Dimension.dynamic() if given is None else Dimension.static(given)
        elif frame_size is None or frame_step is None:
            length = Dimension.dynamic()
        else:
            extra = 0 if ctx.attrs["center"] else frame_size
            length = Dimension(max(frames.min - 1, 0) * frame_step + extra,
                               None if frames.max is None else
                               max(frames.max - 1, 0) * frame_step + extra)
        return [TensorType(et, PartialShape(list(data.dims[:rank - 3]) + [length]))]

    @staticmethod
    def kernel(data, window, frame_size, frame_step, signal_length=None, *, center,
               normalized):
        ct = compute_dtype(data.dtype)
        fs, step = int(frame_size), int(frame_step)
        x = data.astype(ct, copy=False)
        lead = x.shape[:-3]
        frames = x.shape[-2]
        z = np.empty(x.shape[:-1], np.complex64 if ct == np.float32 else np.complex128)
        z.real, z.imag = x[..., 0], x[..., 1]
        full = (frames - 1) * step + fs
        if signal_length is not None:
            final = int(as_int64(np.asarray(signal_length)).reshape(-1)[0])
        else:
            final = full - fs if center else full
        rows = int(np.prod(lead, dtype=np.int64))
        out = np.zeros((rows, final), ct)
        if frames and rows and final:
            window = _padded_window(window.astype(ct), fs, ct)
            pieces = np.fft.irfft(z, n=fs, axis=-2).astype(ct, copy=False)  # [..., fs, frames]
            pieces = (np.swapaxes(pieces, -1, -2) * window).reshape(rows, frames * fs)
            where = (np.arange(frames)[:, None] * step + np.arange(fs)).reshape(-1)
            flat = (np.arange(rows)[:, None] * full + where).reshape(-1)
            summed = np.bincount(flat, weights=pieces.reshape(-1).astype(np.float64),
                                 minlength=rows * full).reshape(rows, full).astype(ct)
            wsum = np.bincount(where, weights=np.tile(window * window,
                                                      frames).astype(np.float64),
                               minlength=full).astype(ct)
            if normalized:
                summed = summed * ct.type(np.sqrt(fs))
            with np.errstate(divide="ignore", invalid="ignore"):
                signal = np.where(wsum != 0, summed / np.where(wsum != 0, wsum, 1), 0)
            margin = fs // 2 if center else 0
            stop = min(final, full - margin)
            out[:, :stop] = signal[:, margin:margin + stop]
        return narrow(out.reshape(lead + (final,)), data.dtype)
