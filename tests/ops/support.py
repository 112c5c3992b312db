"""Helpers for the op tests: run one op through the public path, independent references, values.

Every op test builds a real model with ModelBuilder and runs it with ``irexec.compile_model``, so
the reader-independent half of the pipeline (inference, the plan, input checks, the kernel) is
exercised exactly as a user would. The references here use plain loops or numpy primitives, never
irexec code.
"""

from __future__ import annotations

import numpy as np

import irexec
from irexec.ir import element_type as et_table
from irexec.builder import ModelBuilder

SUPPORTED = et_table.SUPPORTED
TYPE_NAMES = [et.name for et in SUPPORTED]
INT_TYPE_NAMES = [et.name for et in SUPPORTED if et.is_integral]
FLOAT_TYPE_NAMES = [et.name for et in SUPPORTED if et.is_real]
NUMERIC_TYPE_NAMES = [et.name for et in SUPPORTED if et.is_numeric]
# The types numpy (with ml_dtypes' bfloat16) computes with directly; the others are the narrow
# types (sub-byte, f8, nf4) and string.
PLAIN_TYPE_NAMES = ["boolean", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16",
                    "f32", "f64"]
NARROW_TYPE_NAMES = [et.name for et in SUPPORTED if et.is_narrow or et.bits == 8
                     and et.name.startswith("f8")]


def dtype_of(type_name: str) -> np.dtype:
    return et_table.from_name(type_name).dtype


def bits(a) -> np.ndarray:
    """Raw bits as unsigned integers of the same width (booleans stay booleans), so that NaN
    payloads and -0.0 compare exactly."""
    a = np.asarray(a)
    if a.dtype == np.bool_ or a.dtype == object:
        return a
    return np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}")


def assert_same_bits(actual, expected) -> None:
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if actual.dtype == object:  # strings: same Python str objects' values, no coercion
        assert actual.reshape(-1).tolist() == expected.reshape(-1).tolist(), (actual, expected)
        return
    assert np.array_equal(bits(actual), bits(expected)), (actual, expected)


# Types narrower than their one byte in memory: value range (ml_dtypes integers, and the uint8
# carriers u3/u6/nf4) or raw codes viewed as the float type (f4e2m1).
NARROW_RANGES = {"u1": (0, 1), "u2": (0, 3), "u3": (0, 7), "u4": (0, 15), "u6": (0, 63),
                 "i4": (-8, 7), "nf4": (0, 15)}


def representable(type_name: str, values) -> bool:
    """Whether every integer in ``values`` survives a round trip through the type."""
    wide = np.array(values, dtype=np.int64)
    with np.errstate(invalid="ignore", over="ignore"):
        back = wide.astype(dtype_of(type_name)).astype(np.float64)
    low, high = NARROW_RANGES.get(type_name, (None, None))
    in_range = low is None or bool(np.all((wide >= low) & (wide <= high)))
    return in_range and bool(np.array_equal(back, wide.astype(np.float64)))


def random_strings(shape, rng: np.random.Generator) -> np.ndarray:
    """Strings of 0 to 4 characters, some outside ASCII."""
    alphabet = list("abcxyz") + ["\u00e9", "\u4e2d", "\U0001f600"]
    flat = ["".join(rng.choice(alphabet, size=rng.integers(0, 5)).tolist())
            for _ in range(int(np.prod(shape, dtype=np.int64)))]
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(shape)


def random_values(type_name: str, shape, rng: np.random.Generator) -> np.ndarray:
    """Any bit pattern of the type (floats include NaNs with payloads, infinities, subnormals,
    -0.0); booleans are 0 or 1; strings are random text."""
    dtype = dtype_of(type_name)
    if type_name == "string":
        return random_strings(shape, rng)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if type_name in NARROW_RANGES:
        low, high = NARROW_RANGES[type_name]
        return rng.integers(low, high + 1, size=shape).astype(np.int8).astype(dtype)
    if type_name == "f4e2m1":
        return rng.integers(0, 16, size=shape).astype(np.uint8).view(dtype)
    width = dtype.itemsize
    raw = rng.integers(0, 2 ** (8 * width), size=shape, dtype=np.uint64).astype(f"u{width}")
    return raw.view(dtype)


def special_values(type_name: str) -> np.ndarray:
    """Values that a lossy implementation would change: extremes, large integers, NaN with a
    payload, -0.0, subnormals."""
    dtype = dtype_of(type_name)
    if dtype == np.bool_:
        return np.array([True, False, True, True], np.bool_)
    if type_name == "string":
        values = ["", "a", "\u00e9t\u00e9", "\U0001f600", "x" * 300, "\udcff raw byte", "\x00", " "]
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    if type_name in NARROW_RANGES:
        low, high = NARROW_RANGES[type_name]
        picks = [low, high, 0, 1, high - 1, low + 1, (low + high) // 2, high]
        return np.array(picks, dtype=np.int8).astype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        picks = [info.min, info.max, 0, 1, info.max - 1, info.min + 1]
        if dtype.itemsize >= 4:
            picks += [2**24 + 1, 2**31 - 1]
        if dtype.itemsize == 8:
            picks += [2**40 + 3, 2**33, 2**53 + 1, 2**63 - 1 if dtype.kind == "i" else 2**64 - 1]
        if dtype.kind == "i":
            picks += [-1, -5]
        return np.array(picks, dtype=np.int64 if dtype.kind == "i" else np.uint64).astype(dtype)
    patterns = {
        "f16": [0x7E01, 0xFE00, 0x8000, 0x0001, 0x7BFF, 0x7C00, 0xFC00, 0x3C00],
        "bf16": [0x7FC1, 0xFFC0, 0x8000, 0x0001, 0x7F7F, 0x7F80, 0xFF80, 0x3F80],
        "f32": [0x7FC00001, 0xFFC00000, 0x80000000, 0x00000001, 0x7F7FFFFF, 0x7F800000,
                0xFF800000, 0x3F800000],
        "f64": [0x7FF8000000000001, 0xFFF8000000000000, 0x8000000000000000, 1,
                0x7FEFFFFFFFFFFFFF, 0x7FF0000000000000, 0xFFF0000000000000,
                0x3FF0000000000000],
    }
    # The one-byte floats have no infinity (except e5m2) and e8m0 no sign: their extremes instead.
    patterns.update({
        "f8e4m3": [0x7F, 0xFF, 0x80, 0x01, 0x7E, 0xFE, 0x08, 0x38],  # NaN, -NaN, -0, sub, +-448
        "f8e5m2": [0x7E, 0xFE, 0x80, 0x01, 0x7B, 0x7C, 0xFC, 0x3C],
        "f8e8m0": [0xFF, 0x00, 0x01, 0x7F, 0xFE, 0x80, 0x7E, 0x3F],  # NaN, 2**-127, ..., 2**127
        "f4e2m1": list(range(16)),
    })
    # quiet NaN with a payload, -NaN, -0.0, smallest subnormal, max, inf, -inf, 1.0
    u = np.dtype(f"u{dtype.itemsize}")
    pattern = patterns[type_name]
    values = np.array(pattern, dtype=u).view(dtype)
    if dtype == np.float64:
        values = np.concatenate([values, np.array([1e300, -1e-300, 2.0**60 + 2.0**8])])
    return values


def run(builder: ModelBuilder, inputs: dict) -> dict[str, np.ndarray]:
    return irexec.compile_model(builder.build())(inputs)


def element_type(array: np.ndarray, type_name: str | None = None):
    """The element type named, or the one the array's dtype stands for (uint8 is u8: the uint8
    carriers u3, u6 and nf4 must be named)."""
    return et_table.from_name(type_name) if type_name else et_table.from_dtype(array.dtype)


def reverse(data: np.ndarray, axes: np.ndarray, mode: str = "index", *,
            axes_input: bool = False, axes_shape=None, data_type: str | None = None,
            axes_type: str | None = None) -> np.ndarray:
    """Run Reverse-1 on ``data`` (a Parameter). The axes are a Const, or a Parameter when
    ``axes_input`` (with partial shape ``axes_shape``, default the array's shape)."""
    b = ModelBuilder("reverse")
    et = element_type(data, data_type)
    x = b.parameter("data", et, list(data.shape))
    inputs = {"data": data}
    if axes_input:
        shape = list(axes.shape) if axes_shape is None else axes_shape
        a = b.parameter("axes", element_type(axes, axes_type), shape)
        inputs["axes"] = axes
    else:
        a = b.constant(axes, axes_type)
    b.result(b.op("Reverse", x, a, mode=mode, name="y"), "out")
    return run(b, inputs)["y"]


def reverse_sequence(data: np.ndarray, lengths: np.ndarray, batch_axis: int = 0,
                     seq_axis: int = 1, *, lengths_input: bool = False,
                     lengths_shape=None, data_shape=None, data_type: str | None = None,
                     lengths_type: str | None = None) -> np.ndarray:
    """Run ReverseSequence-1 on ``data`` (a Parameter, partial shape ``data_shape`` or its own
    shape); ``lengths`` a Const, or a Parameter when ``lengths_input``."""
    b = ModelBuilder("reverse_sequence")
    x = b.parameter("data", element_type(data, data_type),
                    list(data.shape) if data_shape is None else data_shape)
    inputs = {"data": data}
    if lengths_input:
        shape = list(lengths.shape) if lengths_shape is None else lengths_shape
        n = b.parameter("seq_lengths", element_type(lengths, lengths_type), shape)
        inputs["seq_lengths"] = lengths
    else:
        n = b.constant(lengths, lengths_type)
    b.result(b.op("ReverseSequence", x, n, batch_axis=batch_axis, seq_axis=seq_axis, name="y"),
             "out")
    return run(b, inputs)["y"]


def convert(data: np.ndarray, destination: str) -> np.ndarray:
    b = ModelBuilder("convert")
    x = b.parameter("data", et_table.from_dtype(data.dtype), list(data.shape))
    b.result(b.op("Convert", x, destination_type=destination, name="y"), "out")
    return run(b, {"data": data})["y"]


# --- references written independently of irexec -------------------------------------------------

def normalized_axes(axes, rank: int) -> tuple[int, ...]:
    out = set()
    for a in np.asarray(axes).reshape(-1).tolist():
        a = int(a)
        if a >= 2**63:  # an unsigned 64-bit value read as signed, as OpenVINO does
            a -= 2**64
        assert -rank <= a < rank
        out.add(a + rank if a < 0 else a)
    return tuple(sorted(out))


def reverse_sequence_loop(data: np.ndarray, lengths, batch_axis: int,
                          seq_axis: int) -> np.ndarray:
    """Plain per-slice loop: for batch index i, output position j < n along seq_axis takes input
    position n-1-j; everything else is copied."""
    rank = data.ndim
    b = batch_axis + rank if batch_axis < 0 else batch_axis
    s = seq_axis + rank if seq_axis < 0 else seq_axis
    out = data.copy()
    for i in range(data.shape[b]):
        n = int(lengths[i])
        for j in range(n):
            dst = [slice(None)] * rank
            dst[b], dst[s] = i, j
            src = list(dst)
            src[s] = n - 1 - j
            out[tuple(dst)] = data[tuple(src)]
    return out


def reverse_fibres_loop(data: np.ndarray, lengths: np.ndarray, axis: int) -> np.ndarray:
    """Plain per-fibre loop (DirectML's rule): every fibre along ``axis`` reverses its first n
    elements, n = its entry of ``lengths`` (broadcast to the data with 1 at ``axis``) clamped to
    the axis size."""
    axis = axis + data.ndim if axis < 0 else axis
    shape = [1 if d == axis else n for d, n in enumerate(data.shape)]
    per_fibre = np.broadcast_to(lengths, shape)
    dim = data.shape[axis]
    out = data.copy()
    for where in np.ndindex(*shape):
        n = min(int(per_fibre[where]), dim)
        for j in range(n):
            dst = list(where)
            dst[axis] = j
            src = list(where)
            src[axis] = n - 1 - j
            out[tuple(dst)] = data[tuple(src)]
    return out
