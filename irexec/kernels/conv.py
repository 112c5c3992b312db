"""Convolutions as BLAS matrix products over strided windows (Convolution, GroupConvolution and
their BackpropData forms share these).

Forward, grouped: data [N, G*Ci, *S], weights [G, Co, Ci, *K]. The windows of the padded data
are a view (kernels/windows.py); one copy lays them out as the columns [N, G, Ci*K, *out] of an
im2col matrix (converted to the compute type on the way), and one ``np.matmul`` multiplies every
group's [Co, Ci*K] weights with them: BLAS does the work, and the product comes out already in
[N, G*Co, *out] order. Special cases skip the copy or the product:

* 1x1 kernels: the (strided) data is the column matrix already;
* depthwise (Ci = 1 per group): no dense weight; a block of channels at a time, the K taps'
  data is laid out as K columns (at most ``COLS_BYTES`` of them) and one batched product per
  block sums them per channel. With stride 1 and output rows as long as the input's (the
  usual "same" layer), every tap is one stretch of the channel's flat zero-padded data, in
  the output's order, so the product goes straight into the output; otherwise the taps are
  stretches of the stride phases, and the product's rows are a little wider than the
  output's. The temporaries are views of a per-thread scratch block kept between calls.

The output is drawn from the run's pool of memory nobody can reach any more
(kernels/buffers.py), under the shape the layer returns, and the products write into it: a
convolution's output reuses what earlier layers freed (of its shape) instead of new pages.

The column matrix grows with the output times the kernel size; it is built a batch item and a
band of output rows at a time when it would pass ``windows.tile_bytes()``.

Backward data (transposed convolution): the product [G, Co*K, Ci] x [Ci, S] gives, for every
input position, what it adds to each output tap; each of the K taps is then added into the
(strided, dilated) output positions it reaches, and the padding is cut off.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided

from irexec.kernels import blas, buffers, scratch, windows
from irexec.kernels.numeric import compute_dtype

# The most a depthwise convolution's column block may take: it holds K (9 for 3x3) copies of
# its block of channels, so blocks of windows.BLOCK_BYTES made it 4.5 MiB, the largest
# temporary of a MobileNet. Measured on MobileNet-V2's 3x3 depthwise layers: blocks of 1 to
# 4 MiB of columns ran at the same speed, 256 KiB 2x slower (per-call costs); since the
# stride-1 path (_depthwise_rows) writes its product straight into the output, 2 MiB (16
# channels of [56, 56] a block) beats 1 MiB (8) by about 10% on [1,64,56,56].
COLS_BYTES = 2 << 20
# The depthwise temporaries (column block, padded data, product) come from this thread's
# scratch arena (kernels/scratch.py), kept between calls up to SCRATCH_BYTES: fresh arrays of
# that size page-fault on every call (measured: 1.4 instead of 0.45 ms for a 3x3 over
# [1,64,56,56]), and the run's pool (kernels/buffers.py) is no place for them: its few slots
# are for layers' outputs.
SCRATCH_BYTES = 4 << 20


def _temporaries(*specs) -> list[np.ndarray]:
    """Uninitialised arrays of the (shape, dtype) ``specs`` from the scratch arena "conv" (valid
    until the next call: a kernel uses them and lets them go before it returns)."""
    return scratch.temporaries("conv", SCRATCH_BYTES, *specs)


def forward(x: np.ndarray, w: np.ndarray, strides: Sequence[int], dilations: Sequence[int],
            pads_begin: Sequence[int], out: Sequence[int]) -> np.ndarray:
    """Grouped convolution. ``x`` [N, G*Ci, *S], ``w`` [G, Co, Ci, *K] of one dtype; ``out``
    the output's spatial sizes. Returns [N, G*Co, *out] in the compute dtype."""
    ct = compute_dtype(x.dtype)
    n, c = x.shape[:2]
    g, co, ci = w.shape[:3]
    kernel = w.shape[3:]
    wc = w.astype(ct, copy=False)
    y = buffers.empty((n, g * co) + tuple(out), ct)
    if y.size == 0 or x.size == 0 or wc.size == 0:  # an empty output, or sums of no terms
        y[...] = 0
        return y
    if max(kernel) == 1 and max(strides) == 1 and not any(pads_begin) \
            and tuple(out) == x.shape[2:]:
        # 1x1, stride 1, no padding (most of a MobileNet's layers): the data is the column
        # matrix as it is (a few microseconds of window arithmetic saved per layer)
        blas.matmul(wc.reshape(g, co, ci), _as(x, ct).reshape(n, g, ci, -1),
                    out=y.reshape(n, g, co, -1))
        return y
    if g == 1 and tuple(kernel) == tuple(strides) and max(dilations) == 1 \
            and not any(pads_begin) and x.shape[2:] == tuple(o * k for o, k in zip(out, kernel)) \
            and _within_tile(x.size * np.dtype(ct).itemsize):
        _patches(x, wc, out, ct, y)
        return y
    ends = windows.reach(out, kernel, strides, dilations)
    if ci == 1 and g > 1 and (_wide_depthwise(kernel, out, ct)
                              or _small_strided(kernel, out, strides)):
        # a block of channels at a time, its row of columns within a tile
        xp = windows.pad(x, pads_begin, ends)
        per_channel = math.prod(kernel) * math.prod(out[1:]) * np.dtype(ct).itemsize
        step = max(1, windows.tile_bytes() // per_channel)
        rows = y.reshape((n, g, co, out[0], -1))
        for g0 in range(0, g, step):
            _im2col(xp[:, g0:g0 + step], wc[g0:g0 + step], out, strides, dilations, ct,
                    rows[:, g0:g0 + step])
    elif ci == 1 and g > 1 and _few_positions(g, co, out):
        _depthwise_channels_last(x, wc, out, strides, dilations, pads_begin, ct, y)
    elif ci == 1 and g > 1:
        _depthwise(x, wc, out, strides, dilations, pads_begin, ct,
                   y.reshape((n * g, co) + tuple(out)))
    elif all(k == 1 for k in kernel):
        xp = windows.pad(x, pads_begin, ends)
        xs = windows.tap_view(xp, (0,) * len(kernel), out, strides, dilations)
        cols = _as(xs.reshape(n, g, ci, -1) if xs.flags.c_contiguous else xs, ct)
        blas.matmul(wc.reshape(g, co, ci), cols.reshape(n, g, ci, -1),
                    out=y.reshape(n, g, co, -1))
    else:
        xp = windows.pad(x, pads_begin, ends)
        _im2col(xp, wc, out, strides, dilations, ct, y.reshape((n, g, co, out[0], -1)))
    return y


def _within_tile(nbytes: int) -> bool:
    """Whether temporaries of ``nbytes`` fit windows.tile_bytes() (never less than
    MIN_TILE_BYTES: small ones are known to without reading the budget)."""
    return nbytes <= windows.MIN_TILE_BYTES or nbytes <= windows.tile_bytes()


def _patches(x, wc, out, ct, y) -> None:
    """A kernel the size of its stride over data it tiles exactly, unpadded (a ViT's patch
    embedding): each window is a block of the data, so the im2col columns [N, Ci, *K, *out] are
    the data's axes split and reordered (a reshape and one copy, no window view); the same
    columns element for element as _im2col's, so the same product."""
    n, ci = x.shape[:2]
    co = wc.shape[1]
    kernel = wc.shape[3:]
    nsp = len(kernel)
    split = x.reshape((n, ci) + tuple(d for o, k in zip(out, kernel) for d in (o, k)))
    order = (0, 1) + tuple(3 + 2 * i for i in range(nsp)) + tuple(2 + 2 * i for i in range(nsp))
    cols = _as(split.transpose(order), ct)
    blas.matmul(wc.reshape(1, co, -1), cols.reshape(n, 1, ci * math.prod(kernel), -1),
                out=y.reshape(n, 1, co, -1))


def _band(rows: int, row_bytes: int) -> int:
    """The bytes of the columns built at once for ``rows`` output rows (all of them when they
    fit ``windows.tile_bytes()``, else bands of at least one row)."""
    whole = rows * row_bytes
    return whole if whole <= windows.tile_bytes() else max(row_bytes, min(
        whole, windows.tile_bytes()))


def forward_scratch(shape, dtype, w_shape, strides, dilations, pads_begin, out) -> int:
    """The bytes of the temporaries :func:`forward` makes for data of ``shape`` and ``dtype``
    and weights of the grouped ``w_shape`` besides its output: the padded data and the columns
    of a band of output rows (the memory rule holds them to the budget: a wide kernel's
    columns grow with the output times the kernel)."""
    dtype = np.dtype(dtype)
    ct = compute_dtype(dtype)
    n, c = shape[:2]
    g, _, ci = w_shape[:3]
    kernel = tuple(w_shape[3:])
    if not (math.prod(out) and math.prod(shape) and math.prod(w_shape)):
        return 0
    ends = windows.reach(out, kernel, strides, dilations)
    same = not any(pads_begin) and tuple(ends) == tuple(shape[2:])
    if ci == 1 and g > 1 and _small_strided(kernel, out, strides):  # padded data, columns
        return n * c * math.prod(ends) * dtype.itemsize + \
            n * c * math.prod(kernel) * math.prod(out) * ct.itemsize
    if ci == 1 and g > 1:  # depthwise: blocks of at least one padded channel
        return 0 if same else math.prod(ends) * ct.itemsize
    padded = 0 if same else n * c * math.prod(ends) * dtype.itemsize
    if all(k == 1 for k in kernel):
        return padded + n * c * math.prod(out) * ct.itemsize
    row_bytes = g * ci * math.prod(kernel) * math.prod(out[1:]) * ct.itemsize
    if n * out[0] * row_bytes <= windows.tile_bytes():
        phases = 0  # _phase_columns' copy of the padded data, split into the stride's phases
        if _phase_columns_apply(kernel, strides):
            s = strides[-1]
            phases = n * c * math.prod(ends[:-1]) * s * -(-ends[-1] // s) * dtype.itemsize
        return padded + phases + n * out[0] * row_bytes
    return padded + _band(out[0], row_bytes)


def backward_scratch(shape, dtype, w_shape, strides, dilations, pads_begin, out) -> int:
    """The bytes :func:`backward` takes for data of ``shape`` and grouped weights ``w_shape``:
    the whole transposed result before ``pads_begin`` is cut from it (the output is part of
    it) and the columns of a band of data rows."""
    ct = compute_dtype(np.dtype(dtype))
    n, spatial = shape[0], tuple(shape[2:])
    g, _, co = w_shape[:3]
    kernel = tuple(w_shape[3:])
    full = windows.reach(spatial, kernel, strides, dilations)
    ends = tuple(max(f, b + o) for f, b, o in zip(full, pads_begin, out))
    whole = n * g * co * math.prod(ends) * ct.itemsize
    if not (math.prod(shape) and math.prod(w_shape)):
        return whole
    row_bytes = g * co * math.prod(kernel) * math.prod(spatial[1:]) * ct.itemsize
    return whole + (n * spatial[0] * row_bytes if n * spatial[0] * row_bytes
                    <= windows.tile_bytes() else _band(spatial[0], row_bytes))


_DEPTHWISE_TAPS = 4096  # kernels of more taps (64 x 64) may take the column matrix instead


def _wide_depthwise(kernel, out, ct) -> bool:
    """A depthwise kernel of so many taps that the depthwise path's passes, a few per tap,
    cost more than the columns, when one channel's row of them fits a tile (a [1, 4e6] kernel
    over two outputs: 4e6 x 2 columns per channel and one product, instead of passes per
    tap: 43 s). No model's layer comes near: the depthwise path stays theirs."""
    taps = math.prod(kernel)
    return taps > _DEPTHWISE_TAPS and \
        taps * math.prod(out[1:]) * np.dtype(ct).itemsize <= windows.tile_bytes()


# A strided depthwise layer with at most this many taps x output positions per channel runs as
# im2col columns (a channel block at a time) and one batched product: the same products, so
# the same sums bit for bit. Measured against the phase path (in turn, loaded 2-core VM):
# [1,96,32,32] 3x3/2 377 -> 249 us, [1,192,8,8] 3x3/2 137 -> 80, [1,144,16,16] 5x5/2 328 ->
# 243, [1,240,28,28] 3x3/2 425 -> 391; with more ([1,144,56,56] 3x3/2: 784 x 9) the phases
# win (1051 against 1137 us).
SMALL_STRIDED_COLUMNS = 2304


def _small_strided(kernel, out, strides) -> bool:
    """A strided depthwise layer of few columns per channel (SMALL_STRIDED_COLUMNS)."""
    return any(s > 1 for s in strides) and \
        math.prod(kernel) * math.prod(out) <= SMALL_STRIDED_COLUMNS


# A 2-D depthwise layer (one output channel per group) with at most this many output positions
# and at least CHANNELS_LAST_GROUPS channels runs channels-last, tap by tap (see
# _depthwise_channels_last). Measured against the per-channel products, in turn (loaded 2-core
# VM): [1,1152,2,2] 5x5 321 -> 106 us, 3x3 154 -> 39 us, [1,672,4,4] 5x5 278 -> 161 us,
# [1,384,4,4] 3x3 68 -> 41 us; at [1,240,8,8] (64 positions) the products win (176 against 190),
# and with [1,96,4,4] 3x3 (31.6 against 35.1 us).
CHANNELS_LAST_POSITIONS = 16
CHANNELS_LAST_GROUPS = 128


def _few_positions(g, co, out) -> bool:
    """Whether :func:`_depthwise_channels_last` computes this depthwise layer."""
    return len(out) == 2 and co == 1 and g >= CHANNELS_LAST_GROUPS and \
        math.prod(out) <= CHANNELS_LAST_POSITIONS


def _depthwise_channels_last(x, wc, out, strides, dilations, pads_begin, ct, y) -> None:
    """A depthwise 2-D layer of few output positions and many channels into ``y`` [N, G, *out]:
    the per-channel products would be one BLAS call per channel for a handful of positions
    each. Instead the padded data is laid out channels-last [N, H, W, G] and each kernel tap
    adds its weight row times one strided view of it, G channels long in the inner loop:
    2K passes over [N, *out, G]. The taps are summed in order, one rounding a product and one
    a sum (the products' BLAS sums them in its own order: within the accumulating family's
    tolerance, tests/ops/convolution/test_depthwise_channels_last.py)."""
    n, g = x.shape[:2]
    kh, kw = wc.shape[3:]
    sh, sw = strides
    dh, dw = dilations
    ho, wo = out
    ends = windows.reach(out, (kh, kw), strides, dilations)
    top, left = pads_begin
    padded = np.zeros((n, ends[0], ends[1], g), ct)
    h, w = x.shape[2:]
    rows = slice(max(top, 0), min(top + h, ends[0]))
    cols = slice(max(left, 0), min(left + w, ends[1]))
    padded[:, rows, cols] = x[:, :, rows.start - top:rows.stop - top,
                              cols.start - left:cols.stop - left].transpose(0, 2, 3, 1)
    taps = np.ascontiguousarray(wc.reshape(g, kh * kw).T)  # [K, G], each row contiguous
    acc = np.empty((n, ho, wo, g), ct)
    term = np.empty_like(acc)
    for a in range(kh):
        for b in range(kw):
            view = padded[:, a * dh:a * dh + sh * (ho - 1) + 1:sh,
                          b * dw:b * dw + sw * (wo - 1) + 1:sw]
            if a == 0 and b == 0:
                np.multiply(view, taps[0], out=acc)
            else:
                np.multiply(view, taps[a * kw + b], out=term)
                acc += term
    y[...] = acc.transpose(0, 3, 1, 2)


def _as(a: np.ndarray, dtype) -> np.ndarray:
    """``a`` as a C-contiguous array of ``dtype`` (one copy at most)."""
    return np.ascontiguousarray(a, dtype=dtype)


def _im2col(xp, wc, out, strides, dilations, ct, y) -> None:
    """Into ``y`` [N, G, Co, out[0], rest]."""
    n = xp.shape[0]
    g, co, ci = wc.shape[:3]
    kernel = wc.shape[3:]
    nsp = len(kernel)
    kp = math.prod(kernel)
    rest = math.prod(out[1:])
    view = windows.window_view(xp, out, kernel, strides, dilations)  # [N, C, *out, *K]
    view = view.reshape((n, g, ci) + tuple(out) + tuple(kernel))
    # columns [N, G, Ci, *K, *out]: axes 0-2, then the kernel's, then the output's
    order = (0, 1, 2) + tuple(range(3 + nsp, 3 + 2 * nsp)) + tuple(range(3, 3 + nsp))
    cols_t = view.transpose(order)
    w2 = wc.reshape(g, co, ci * kp)
    row_bytes = g * ci * kp * rest * ct.itemsize
    if n * out[0] * row_bytes <= windows.tile_bytes():
        if _phase_columns_apply(kernel, strides):
            cols = _phase_columns(xp, g, ci, out, kernel, strides, dilations, ct)
        else:
            cols = _as(cols_t, ct)
        blas.matmul(w2, cols.reshape(n, g, ci * kp, -1), out=y.reshape(n, g, co, -1))
        return
    for b in range(n):
        for r0, r1 in windows.bands(out[0], row_bytes):
            part = cols_t[b:b + 1, ..., r0:r1, *(slice(None),) * (nsp - 1)]
            cols = _as(part, ct).reshape(1, g, ci * kp, -1)
            y[b:b + 1, :, :, r0:r1] = blas.matmul(w2, cols) \
                .reshape(1, g, co, r1 - r0, rest)


# A kernel of more than this many taps per stride on the last axis (a ResNet's 7x7/2 stem) has
# its columns copied from the stride phases of the last axis (_phase_columns). Measured on
# [1,3,224,224] 7x7/2 with 16 outputs: the columns 670 -> 385 us, the layer 1541 -> 1233 us;
# smaller kernels gain nothing or lose (3x3/2 on the same data: 112 against 120 us for the
# columns; 5x5/2 [1,16,56,56] -> 32: 385 against 406 us for the layer).
PHASE_TAPS_PER_STRIDE = 3


def _phase_columns_apply(kernel, strides) -> bool:
    """Whether :func:`_phase_columns` lays out this layer's columns."""
    return strides[-1] > 1 and kernel[-1] > PHASE_TAPS_PER_STRIDE * strides[-1]


def _phase_columns(xp, g, ci, out, kernel, strides, dilations, ct) -> np.ndarray:
    """The im2col columns [N, G, Ci, *K, *out] of padded data ``xp`` [N, C, *padded] (the
    values ``_as`` copies from the window view), for a stride s > 1 on the last axis.

    The window view's innermost run (an output row) steps s elements through the data, a
    gather at every element. Split the last axis into its s phases first (phase r, element j:
    padded element j*s + r; one pass over the data): tap b of the last axis then reads phase
    (b*d) % s from element (b*d) // s on, one element apart, and each tap's columns are copied
    with contiguous rows."""
    n = xp.shape[0]
    nsp = len(kernel)
    s, d = strides[-1], dilations[-1]
    wp = xp.shape[-1]
    wq = -(-wp // s)
    phases = np.empty(xp.shape[:-1] + (s, wq), xp.dtype)
    for r in range(s):
        m = len(range(r, wp, s))
        phases[..., r, :m] = xp[..., r::s]  # (elements past m are never read)
    cols = np.empty((n, g, ci) + tuple(kernel) + tuple(out), ct)
    st = phases.strides
    lead = (n, xp.shape[1])
    shape = lead + tuple(out) + tuple(kernel[:-1])
    steps = st[:2] + tuple(st[2 + i] * strides[i] for i in range(nsp - 1)) + (st[-1],) \
        + tuple(st[2 + i] * dilations[i] for i in range(nsp - 1))
    # [N, G, Ci, *out, *K[:-1]] -> [N, G, Ci, *K[:-1], *out]
    order = (0, 1, 2) + tuple(range(3 + nsp, 2 + 2 * nsp)) + tuple(range(3, 3 + nsp))
    for b in range(kernel[-1]):
        start = phases[..., (b * d) % s, (b * d) // s:]
        taps = as_strided(start, shape, steps, writeable=False)
        taps = taps.reshape((n, g, ci) + shape[2:]).transpose(order)
        np.copyto(cols[(Ellipsis, b) + (slice(None),) * nsp], taps, casting="unsafe")
    return cols


def _depthwise(x, wc, out, strides, dilations, pads_begin, ct, y) -> None:
    """One input channel per group. Into ``y`` [N*G, C_OUT, *out]: by :func:`_depthwise_rows`
    where it applies, else by :func:`_depthwise_phases`."""
    if _rows_apply(x.shape[2:], wc.shape[3:], out, strides, dilations, pads_begin):
        if x.ndim == 3:  # one spatial axis: one row
            x, wc, y = x[:, :, None], wc[..., None, :], y[:, :, None]
            out, dilations, pads_begin = (1,) + tuple(out), (1,) + tuple(dilations), \
                (0,) + tuple(pads_begin)
        _depthwise_rows(x, wc, out, dilations, pads_begin, ct, y)
    else:
        _depthwise_phases(x, wc, out, strides, dilations, pads_begin, ct, y)


def _rows_apply(spatial, kernel, out, strides, dilations, pads_begin) -> bool:
    """Whether :func:`_depthwise_rows` computes this convolution: one or two spatial axes,
    stride 1, output rows as long as the input's, no negative padding."""
    if len(spatial) not in (1, 2) or any(s != 1 for s in strides) or out[-1] != spatial[-1]:
        return False
    if any(b < 0 for b in pads_begin) or pads_begin[-1] > (kernel[-1] - 1) * dilations[-1]:
        return False  # the last pads_end = the reach - pads_begin would be negative
    return len(spatial) == 1 or \
        out[0] + (kernel[0] - 1) * dilations[0] >= spatial[0] + pads_begin[0]  # pads_end >= 0


def _depthwise_rows(x, wc, out, dilations, pads_begin, ct, y) -> None:
    """Stride 1 on [N, G, H, W] whose output rows are W long, as the input's (pads_begin +
    pads_end on the last axis = the kernel's reach - 1: the usual "same" depthwise layer).

    A block of channels at a time, each channel's data is copied flat into a row of zeros
    (the padding above, below and at the two ends); an output position (i, j) then reads
    tap (a, b) at flat index i*W + j + a*dh*W + b*dw, so every tap's data for the whole
    output is ONE contiguous stretch of that row, already in the output's order. One strided
    copy lays the taps out as columns [channels, K, Ho*W] (long contiguous runs, no per-row
    copies); the positions where a tap falls in the left or right padding read the end of
    the neighbouring row instead, and are zeroed; one batched ``np.matmul`` of each
    channel's [C_OUT, K] weights with its columns writes straight into ``y`` [N*G, C_OUT,
    Ho, W] (no cut, no extra copy). The column block stays under ``COLS_BYTES``."""
    n, g = x.shape[:2]
    h, width = x.shape[2:]
    co = wc.shape[1]
    kh, kw = wc.shape[3:]
    dh, dw = dilations
    top, left = pads_begin
    k = kh * kw
    span = out[0] * width
    rows_all = n * g
    length = (out[0] + (kh - 1) * dh) * width + (kw - 1) * dw  # a channel's flat padded row
    start = top * width + left  # where its data begins
    count = max(1, min(rows_all, COLS_BYTES // (k * span * ct.itemsize)))
    count = -(-rows_all // -(-rows_all // count))  # as many blocks, of even sizes
    flat, cols = _temporaries(((count, length), ct), ((count, k, span), ct))
    flat[:, :start] = 0  # the padding (the scratch holds whatever the last kernel left)
    flat[:, start + h * width:] = 0
    w_rows = wc.reshape(1, g, co, k)
    if n > 1:
        w_rows = np.broadcast_to(w_rows, (n, g, co, k))
    w_rows = np.ascontiguousarray(w_rows).reshape(rows_all, co, k)
    _rows_blocks(x.reshape(rows_all, h * width), w_rows, flat, cols, start, (kh, kw),
                 dilations, left, (out[0], width), y.reshape(rows_all, co, span))


def _rows_blocks(data, w_rows, flat, cols, start, kernel, dilations, left, out, y) -> None:
    """The block loop of :func:`_depthwise_rows`: ``data`` [R, H*W] through the flat rows
    ``flat`` and the column block ``cols`` into ``y`` [R, C_OUT, Ho*W]."""
    count = flat.shape[0]
    kh, kw = kernel
    dh, dw = dilations
    height, width = out
    span = height * width
    item = flat.itemsize
    taps = np.ndarray((count, kh, kw, span), flat.dtype, flat,
                      strides=(flat.strides[0], dh * width * item, dw * item, item))
    cols4 = cols.reshape(count, kh, kw, span)
    grid = cols.reshape(count, kh, kw, height, width)
    edges = []  # per kernel column: the output columns whose tap lies in the side padding
    for b in range(kw):
        shift = b * dw - left
        if shift < 0:
            edges.append(grid[:, :, b, :, :min(width, -shift)])
        elif shift > 0:
            edges.append(grid[:, :, b, :, max(0, width - shift):])
    inner = flat[:, start:start + data.shape[1]]
    rows_all = data.shape[0]
    for r0 in range(0, rows_all, count):
        r1 = min(r0 + count, rows_all)
        rows = r1 - r0
        inner[:rows] = data[r0:r1]
        np.copyto(cols4[:rows], taps[:rows])
        for edge in edges:
            edge[:rows] = 0
        blas.matmul(w_rows[r0:r1], cols[:rows], out=y[r0:r1])


def _depthwise_phases(x, wc, out, strides, dilations, pads_begin, ct, y) -> None:
    """One input channel per group: for a block of channels at a time (windows.padded_blocks,
    sized for the caches), the K kernel taps' data is copied into a small column block [rows,
    K, positions] and one batched ``np.matmul`` of each channel's [C_OUT, K] weights with its
    columns sums the taps -- K copies and one product instead of K multiplies and K adds.

    Each tap's data is one contiguous stretch of a flattened *phase* of the padded block: on an
    axis of stride s, tap t reads padded positions o*s + t*d, that is, phase (t*d) % s (every
    s-th position from there) shifted by (t*d) // s. The phases are copied straight from the
    data (:func:`_phase_blocks`: one strided pass, instead of a padded copy and K strided
    copies); with stride 1 the one phase is the padded block itself.
    A phase's rows are a little wider than the output's (by the largest shift): the columns
    past the output's width are computed and dropped. Into ``y`` [N*G, C_OUT, *out]."""
    n, g = x.shape[:2]
    co = wc.shape[1]
    kernel = wc.shape[3:]
    taps = list(windows.taps(kernel))
    most = [(k - 1) * d // s for k, d, s in zip(kernel, dilations, strides)]  # largest shifts
    lengths = [o + m for o, m in zip(out, most)]  # a phase's extent on each axis
    if any(most[1:]):
        lengths[0] += 1  # the last tap's stretch runs past the last row by less than a row
    span = out[0] * math.prod(lengths[1:])
    phases: dict[tuple[int, ...], int] = {}
    offsets = []
    for tap in taps:
        phase = tuple(t * d % s for t, d, s in zip(tap, dilations, strides))
        phases.setdefault(phase, len(phases))
        offsets.append(sum(t * d // s * math.prod(lengths[i + 1:])
                           for i, (t, d, s) in enumerate(zip(tap, dilations, strides))))
    direct = all(s == 1 for s in strides)  # the one phase is the padded block itself
    w_rows = np.ascontiguousarray(np.broadcast_to(wc.reshape(1, g, co, len(taps)),
                                                  (n, g, co, len(taps))).reshape(n * g, co,
                                                                                   len(taps)))
    # channels per block: their padded data (or its phases) under BLOCK_BYTES (measured:
    # smaller blocks lose to per-call costs, larger ones gain nothing), their columns under
    # COLS_BYTES
    per_row = math.prod(lengths) * len(phases) * ct.itemsize
    count = max(1, min(n * g, windows.BLOCK_BYTES // per_row,
                       COLS_BYTES // (len(taps) * span * ct.itemsize)))
    cols, product, planes = _temporaries(
        ((count, len(taps), span), ct), ((count, co, span), ct),
        ((0,) if direct else (count, len(phases)) + tuple(lengths), ct))
    planes = None if direct else planes
    _phase_loop(x.reshape((n * g,) + x.shape[2:]), w_rows, cols, product, planes, out, kernel,
                strides, dilations, pads_begin, lengths, list(phases), offsets, ct, y)


def _phase_loop(data, w_rows, cols, product, planes, out, kernel, strides, dilations,
                pads_begin, lengths, phases, offsets, ct, y) -> None:
    """The block loop of :func:`_depthwise_phases`: the phases (``planes``; None with stride
    1, whose one phase is the padded block) or padded blocks of ``data``, their taps into
    ``cols``, the product into ``product``, cut into ``y``."""
    count, _, span = cols.shape
    co = product.shape[1]
    if planes is None:  # stride 1: the one phase is the padded block itself
        blocks = windows.padded_blocks(data, pads_begin, lengths, 0, ct,
                                       count * math.prod(lengths) * ct.itemsize)
        grouped = None
    else:
        blocks = _phase_blocks(data, pads_begin, strides, lengths, phases, planes)
        grouped = _phase_taps(planes, cols, kernel, phases, strides, dilations, lengths)
    for r0, r1, sources in blocks:
        rows = r1 - r0
        c = cols[:rows]
        if grouped is not None:  # one copy per phase
            for dst, src in grouped:
                np.copyto(dst[:rows], src[:rows])
        else:
            for k, o in enumerate(offsets):
                c[:, k] = sources.reshape(rows, -1)[:, o:o + span]
        p = product[:rows]
        blas.matmul(w_rows[r0:r1], c, out=p)  # [rows, co, span]
        shaped = p.reshape((rows, co, out[0]) + tuple(lengths[1:]))
        y[r0:r1] = shaped[(Ellipsis, *(slice(0, o) for o in out[1:]))]


def _phase_taps(planes, cols, kernel, phases, strides, dilations, lengths):
    """Per phase, (destination, source): views [count, *its taps per axis, span] of ``cols``
    [count, K, span] and of that phase in ``planes`` [count, phases, *lengths], one copy
    between which lays out every tap reading the phase. On each axis the taps t of a phase
    (t*d % s fixed) step by s / gcd(d, s), and their shifts t*d // s by d / gcd(d, s): both
    grids are regular, so one strided view holds each."""
    count, nphase = planes.shape[:2]
    k, span = cols.shape[1:]
    item = planes.itemsize
    plane = math.prod(lengths)
    pairs = []
    for i, phase in enumerate(phases):
        shape, src_strides, dst_strides = [], [], []
        src_at, dst_at = i * plane, 0
        for ax, (q, s, d, size) in enumerate(zip(phase, strides, dilations, kernel)):
            ts = [t for t in range(size) if t * d % s == q]
            src_unit = math.prod(lengths[ax + 1:])
            dst_unit = math.prod(kernel[ax + 1:]) * span
            src_at += ts[0] * d // s * src_unit
            dst_at += ts[0] * dst_unit
            step = ts[1] - ts[0] if len(ts) > 1 else 0
            shape.append(len(ts))
            src_strides.append(step * d // s * src_unit * item)
            dst_strides.append(step * dst_unit * item)
        dst = np.ndarray((count, *shape, span), cols.dtype, cols, dst_at * item,
                         (k * span * item, *dst_strides, item))
        src = np.ndarray((count, *shape, span), planes.dtype, planes, src_at * item,
                         (nphase * plane * item, *src_strides, item))
        pairs.append((dst, src))
    return pairs


def _phase_blocks(data, pads_begin, strides, lengths, phases, planes):
    """The phases of the zero-padded ``data`` [R, *spatial], a block of rows at a time into
    ``planes`` [rows, phases, *lengths] (reused for every block: the padding in them is zeroed
    once): yields (start row, stop row, [one array [rows, *lengths] per phase]), where phase
    q's element j is the padded element j*stride + q on each axis. Copied straight from
    ``data`` (one strided pass)."""
    rows_all = data.shape[0]
    spatial = data.shape[1:]
    # per phase, per axis: the phase's elements that lie in the data, [lo, hi), and the data
    # index of element lo
    spans = []
    for phase in phases:
        axes = []
        for q, s, b, size, length in zip(phase, strides, pads_begin, spatial, lengths):
            lo = min(length, max(0, -(-(b - q) // s)))
            hi = min(length, max(lo, -(-(size + b - q) // s)))
            axes.append((lo, hi, lo * s + q - b))
        spans.append(axes)
    count = planes.shape[0]
    planes[...] = 0
    for r0 in range(0, rows_all, count):
        r1 = min(r0 + count, rows_all)
        parts = []
        for i, axes in enumerate(spans):
            part = planes[:r1 - r0, i]
            if all(hi > lo for lo, hi, _ in axes):
                part[(slice(None), *(slice(lo, hi) for lo, hi, _ in axes))] = data[
                    (slice(r0, r1), *(slice(start, start + (hi - lo - 1) * s + 1, s)
                                      for (lo, hi, start), s in zip(axes, strides)))]
            parts.append(part)
        yield r0, r1, parts


def backward(x: np.ndarray, w: np.ndarray, strides: Sequence[int], dilations: Sequence[int],
             pads_begin: Sequence[int], out: Sequence[int]) -> np.ndarray:
    """Grouped transposed convolution. ``x`` [N, G*Ci, *S], ``w`` [G, Ci, Co, *K] of one dtype;
    output [N, G*Co, *out] in the compute dtype: the full result cut from ``pads_begin`` on,
    zeros where ``out`` reaches past it."""
    ct = compute_dtype(x.dtype)
    n = x.shape[0]
    spatial = x.shape[2:]
    g, ci, co = w.shape[:3]
    kernel = w.shape[3:]
    nsp = len(kernel)
    kp = math.prod(kernel)
    full = windows.reach(spatial, kernel, strides, dilations)
    ends = tuple(max(f, b + o) for f, b, o in zip(full, pads_begin, out))
    buf = np.zeros((n, g, co) + ends, ct)
    if buf.size == 0 or x.size == 0 or w.size == 0:  # an empty output, or sums of no terms
        y = buf[(Ellipsis, *(slice(b, b + o) for b, o in zip(pads_begin, out)))]
        return y.reshape((n, g * co) + tuple(out))
    wt = np.ascontiguousarray(w.astype(ct, copy=False).reshape(g, ci, co * kp)
                              .transpose(0, 2, 1))  # [G, Co*K, Ci]
    rest = math.prod(spatial[1:])
    xg = x.reshape((n, g, ci, spatial[0], rest))
    row_bytes = g * co * kp * rest * ct.itemsize
    one_go = n * spatial[0] * row_bytes <= windows.tile_bytes()
    parts = [(slice(None), (0, spatial[0]))] if one_go else \
        [(slice(b, b + 1), band) for b in range(n) for band in windows.bands(spatial[0],
                                                                              row_bytes)]
    for batch, (r0, r1) in parts:
        cols = blas.matmul(wt, _as(xg[batch, :, :, r0:r1], ct).reshape(-1, g, ci,
                                                                       (r1 - r0) * rest))
        cols = cols.reshape((-1, g, co) + tuple(kernel) + (r1 - r0,) + spatial[1:])
        rows = (r1 - r0,) + spatial[1:]
        windows.add_taps(buf[batch], cols, kernel, rows, strides, dilations,
                         (r0 * strides[0],) + (0,) * (nsp - 1))
    y = buf[(Ellipsis, *(slice(b, b + o) for b, o in zip(pads_begin, out)))]
    return y.reshape((n, g * co) + tuple(out))
