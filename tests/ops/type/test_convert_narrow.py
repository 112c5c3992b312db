"""Convert-1 to and from the narrow types: u1, u2, u3, u4, u6, i4, nf4, f4e2m1, f8e4m3, f8e5m2,
f8e8m0 (the plain types: tests/ops/type/test_convert.py).

The rules are OpenVINO 2026.4.1's, measured in /work/notes/types.md section 3 ("Value rules") and
summed up in irexec/kernels/convert.py. The expected values never come from numpy's or ml_dtypes'
casts, nor from irexec: convert_reference.py decodes every narrow code by hand and rounds with
Python ints and Fractions (f32, then f16, then f8 for f8e4m3/f8e5m2, three nearest-even steps; e8m0
by comparing with 1.5 * 2**k; nf4 by counting the thresholds a value exceeds). A few worked
examples of types.md are checked as literal facts as well.

Two rules were measured after types.md was written (/work/notes/matrix/all.jsonl): nf4 -> bf16
is OpenVINO's own bf16 rounding (half an ulp added only when the kept last bit is odd; types.md's
"truncates" holds only for its even examples), and an f8e5m2 NaN widens to the plain floats with
its sign and two payload bits.

Where types.md leaves irexec a choice, irexec's documented plain rules apply: a narrow float to a
plain integer truncates, saturates and maps NaN to 0 (OpenVINO gives INT_MIN for NaN and wraps
negatives into unsigned types, differently per device); f64 sources are rounded to f32 first for
every narrow float target, as OpenVINO's converters take a float.
"""

from __future__ import annotations

import math
import struct
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec.ir import element_type as et_table
from irexec.builder import ModelBuilder
from irexec.kernels.convert import convert as kernel
from irexec.kernels.convert import unsupported_reason

from tests.ops.convert_reference import (_INTS, INT_RANGES, NF4_CODEBOOK_BITS, NF4_THRESHOLD_BITS,
                                expected_narrow, matches, nan_bits, narrow_value, nf4_to_bf16,
                                plain_value, small_float_magnitudes)
from tests.ops.support import (NARROW_RANGES, NARROW_TYPE_NAMES, PLAIN_TYPE_NAMES, TYPE_NAMES, bits,
                      convert, dtype_of, random_values, special_values)

NARROW = NARROW_TYPE_NAMES
FLOATS = ["f16", "bf16", "f32", "f64"]
SUB_BYTE_INTS = ["u1", "u2", "u3", "u4", "u6", "i4"]
CODE_BITS = {"u1": 1, "u2": 2, "u3": 3, "u4": 4, "u6": 6, "i4": 4, "nf4": 4, "f4e2m1": 4,
             "f8e4m3": 8, "f8e5m2": 8, "f8e8m0": 8}
# Held as their raw code: the output byte is compared as it is (no bit beyond the type's width).
CODED = ["u3", "u6", "nf4", "f4e2m1", "f8e4m3", "f8e5m2", "f8e8m0"]

# OpenVINO's set of pairs (types.md section 3: every cell with at least one "+"), written out.
_FROM_INTEGER_LIKE = set(PLAIN_TYPE_NAMES) | {"u1", "u2", "u3", "u4", "u6", "i4", "f8e4m3",
                                              "f8e5m2"}
ALLOWED = {
    **{name: _FROM_INTEGER_LIKE for name in SUB_BYTE_INTS + ["f8e4m3", "f8e5m2"]},
    "nf4": {"i8", "u8", "f16", "bf16", "f32", "f64", "u4", "i4", "nf4"},
    "f4e2m1": {"i8", "u8", "f16", "bf16", "f32", "f64", "u4", "i4", "f4e2m1"},
    "f8e8m0": {"f16", "bf16", "f32", "f64", "f8e8m0"},
    **{name: {"u1", "u2", "u3", "u4", "u6", "i4", "f8e4m3", "f8e5m2"}
       for name in PLAIN_TYPE_NAMES if name not in FLOATS},
    **{name: set(NARROW) for name in FLOATS},
    "string": {"string"},
}
NARROW_PAIRS = [(s, d) for s in TYPE_NAMES for d in TYPE_NAMES if s in NARROW or d in NARROW]
SUPPORTED_PAIRS = [(s, d) for s, d in NARROW_PAIRS
                   if unsupported_reason(et_table.from_name(s), et_table.from_name(d)) is None]
UNSUPPORTED_PAIRS = [p for p in NARROW_PAIRS if p not in SUPPORTED_PAIRS]


def f32(b: int) -> float:
    return struct.unpack("<f", struct.pack("<I", b))[0]


def from_bits(raw, type_name: str) -> np.ndarray:
    dtype = dtype_of(type_name)
    return np.array(raw, dtype=f"u{dtype.itemsize}").view(dtype)


def every_code(type_name: str) -> tuple[np.ndarray, list[int]]:
    """Every code of a narrow type, as an array of the type, and the codes."""
    codes = list(range(1 << CODE_BITS[type_name]))
    if type_name == "i4":
        values = [c - 16 if c >= 8 else c for c in codes]
        return np.array(values, np.int8).astype(dtype_of("i4")), codes
    return np.array(codes, np.uint8).view(dtype_of(type_name)), codes


def codes_of(array: np.ndarray, type_name: str) -> list[int]:
    if type_name in ("u1", "u2", "u4", "i4"):
        return [v & ((1 << CODE_BITS[type_name]) - 1) for v in array.astype(np.int64).tolist()]
    return array.view(np.uint8).tolist()


def values_of(array: np.ndarray, type_name: str):
    """The reference's view of each element (narrow: decoded from the code by hand)."""
    if type_name in NARROW:
        return [narrow_value(type_name, c) for c in codes_of(array, type_name)]
    return [plain_value(x, type_name) for x in array]


def observed(out: np.ndarray, dst: str) -> list:
    """The output as the reference describes it: raw codes for CODED types, values otherwise."""
    if dst in CODED:
        return out.view(np.uint8).tolist()
    if dst in ("u1", "u2", "u4", "i4"):
        return out.astype(np.int64).tolist()
    if dst == "boolean" or dst in INT_RANGES:
        return out.tolist()
    with np.errstate(invalid="ignore"):  # signalling NaNs (f8e5m2's payloads) widen quietly
        return out.astype(np.float64).tolist()


# --- adversarial pools ----------------------------------------------------------------------------

def _ulp(x: float, p: int, emin: int) -> float:
    """The spacing of a binary format (p significand bits) at |x|."""
    e = max(math.frexp(abs(x))[1] - 1, emin) if x else emin
    return 2.0 ** (e - p + 1)


def _around(t: float) -> list[float]:
    """A value and its neighbours that trip double rounding: an f32 ulp, half and a full f16 ulp
    away, half an f32 ulp away (an f64 -> f32 tie) and just beyond."""
    u16, u32 = _ulp(t, 11, -14), _ulp(t, 24, -126)
    out = [t]
    for s in (1, -1):
        out += [t + s * u32, t + s * u16, t + s * u16 / 2, t + s * (u16 / 2 + u32),
                t + s * u32 / 2, t + s * (u32 / 2 + u32 / 64)]
    return out


_GENERIC = [0.0, 1.0, 0.5, 1.5, 2.0, 2.5, 3.0, 0.1, 1 / 3, math.pi, 1e-30, 1e-40, 1e-310, 6e-8,
            2.0**-24, 2.0**-25, 65504.0, 65519.0, 65520.0, 1e5, 3e38, 3.4028235677973366e38,
            1e39, 1e300, 2147483520.0, 2147483647.5, 2.0**31, 4294967295.0, 1e10, 2.0**53 + 2,
            2.0**63, 2.0**64]


def _float_extras(dst: str) -> list[float]:
    if dst in SUB_BYTE_INTS:  # truncation, wrapping, and the 2**31 limit
        near = [k + d for k in range(-70, 71) for d in (0.0, 0.5, 0.25, -0.25, 0.9999999)]
        big = [2.0**31 - 1, 2.0**31 - 0.5, 2.0**31 - 128, 2.0**31 + 0.5, 2.0**31 + 1,
               2.0**31 + 256, 2.0**32 - 1, 2.0**32 + 3, 2.0**40 + 3, 500.0, 1000.0, 1000.7]
        return near + big
    if dst in ("f8e4m3", "f8e5m2", "f4e2m1"):
        grid = [float(m) for m in small_float_magnitudes(dst)]
        step = {"f8e4m3": 32.0, "f8e5m2": 8192.0, "f4e2m1": 2.0}[dst]
        grid.append(grid[-1] + step)  # the first value beyond the format: its tie is overflow
        points = grid + [(a + b) / 2 for a, b in zip(grid, grid[1:])]
        return [x for t in points for x in _around(t)] + [100.0, 1e4]
    if dst == "f8e8m0":
        out = []
        for k in range(-150, 129):
            for t in (1.5 * 2.0**k, 2.0**k):
                if t < 3.5e38:
                    u32 = _ulp(t, 24, -149)
                    out += [t, t + u32, t - u32, t + u32 / 2, t - u32 / 2, t + u32 / 1024]
        out += [f32(b) for b in (0x00600000, 0x00600001, 0x005FFFFF, 0x00400000, 0x00000001,
                                 0x007FFFFF, 0x00800000, 0x7F400000, 0x7F400001, 0x7F7FFFFF)]
        return out
    if dst == "nf4":
        out = []
        for b in NF4_THRESHOLD_BITS + NF4_CODEBOOK_BITS:
            t = f32(b)
            u32 = _ulp(t, 24, -126)
            out += [t, t + u32, t - u32, t + u32 / 4, t - u32 / 4, t + u32 / 2, t - u32 / 2]
        cb = [f32(b) for b in NF4_CODEBOOK_BITS]
        return out + [(a + b) / 2 for a, b in zip(cb, cb[1:])] + [1.5, 2.0, 1e30]
    return []  # plain destinations: the generic values


# NaN patterns of each float type: signalling (payload top bits 00), 01, 10, 11, with a low
# payload bit, both signs.
_NANS = {
    "f16": [0x7C01, 0x7D00, 0x7E00, 0x7F01, 0x7DFF],
    "bf16": [0x7F81, 0x7FA0, 0x7FC0, 0x7FE1, 0x7FBF],
    "f32": [0x7F800001, 0x7FA00000, 0x7FC00000, 0x7FE00001, 0x7FBFFFFF, 0x7F80FFFF],
    "f64": [0x7FF0000000000001, 0x7FF4000000000000, 0x7FF8000000000000, 0x7FFC000000000001,
            0x7FF7FFFFFFFFFFFF],
}
_SIGN = {"f16": 1 << 15, "bf16": 1 << 15, "f32": 1 << 31, "f64": 1 << 63}


def float_pool(src: str, dst: str) -> np.ndarray:
    values = _GENERIC + _float_extras(dst)
    values = values + [-v for v in values] + [math.inf, -math.inf]
    with np.errstate(over="ignore", under="ignore"):
        fixed = np.array(values, np.float64).astype(dtype_of(src))
    nans = from_bits(_NANS[src] + [b | _SIGN[src] for b in _NANS[src]], src)
    tiny = from_bits([1, _SIGN[src] | 1], src)  # the smallest subnormals
    rng = np.random.default_rng(sum(map(ord, src + dst)))
    pool = np.concatenate([fixed, nans, tiny, special_values(src),
                           random_values(src, (64,), rng)])
    _, first = np.unique(bits(pool), return_index=True)  # one of each bit pattern
    return pool[np.sort(first)]


_INT_EXTRAS = [8, -8, 9, -9, 15, 16, 17, 31, 32, 52, 63, 64, 65, 500, 1000, 448, 464, 465, 479,
               480, 496, 512, 2049, 2051, 4097, 8193, 57343, 57344, 61439, 61440, 61441, 65503,
               65504, 65519, 65520, 65535, 2**24 + 1, 2**24 + 3, 2**31 - 1, 2**32 + 7, 2**33 - 1]


def int_pool(src: str) -> np.ndarray:
    if src == "boolean":
        return np.array([False, True])
    lo, hi = INT_RANGES[src]
    candidates = sorted(set(_INTS + _INT_EXTRAS + [-v for v in _INT_EXTRAS]))
    return np.array([v for v in candidates if lo <= v <= hi], dtype=dtype_of(src))


def source_pool(src: str, dst: str) -> np.ndarray:
    if src in NARROW:
        return every_code(src)[0]
    if src in FLOATS:
        return float_pool(src, dst)
    return int_pool(src)


def check(data: np.ndarray, src: str, dst: str, out: np.ndarray) -> None:
    assert isinstance(out, np.ndarray)
    assert out.dtype == dtype_of(dst) and out.shape == data.shape, (out.dtype, out.shape)
    flat_in, flat_out = data.reshape(-1), out.reshape(-1)
    got = observed(flat_out, dst)
    if src == dst:  # a copy, bit for bit (NaN payloads included)
        assert np.array_equal(bits(flat_out), bits(flat_in))
        return
    wrong = []
    nan_check = src in NARROW and dst in FLOATS
    raw = bits(flat_out).tolist() if nan_check else None
    for i, (x, v, y) in enumerate(zip(flat_in, values_of(flat_in, src), got)):
        e = expected_narrow(v, dst)
        if not matches(y, e) or (nan_check and v.kind == "nan" and raw[i] != nan_bits(v, dst)):
            wrong.append((hex(int(bits(np.array([x]))[0])) if src not in NARROW else x, y, e))
    assert not wrong, f"{src}->{dst}: {len(wrong)} wrong; (input, got, expected) {wrong[:6]}"


# --- which pairs convert -------------------------------------------------------------------------

def test_the_supported_pairs_are_openvinos():
    """unsupported_reason agrees with the support matrix of types.md, cell by cell."""
    disagree = [(s, d) for s, d in NARROW_PAIRS
                if (unsupported_reason(et_table.from_name(s), et_table.from_name(d)) is None)
                != (d in ALLOWED[s])]
    assert not disagree
    assert len(SUPPORTED_PAIRS) == sum(len(ALLOWED[s] & set(NARROW)) if s not in NARROW
                                       else len(ALLOWED[s]) for s in ALLOWED)


@pytest.mark.parametrize("src, dst", UNSUPPORTED_PAIRS)
def test_unsupported_pairs_are_rejected_when_the_model_is_built(src, dst):
    b = ModelBuilder("convert")
    x = b.parameter("data", src, [2])
    b.result(b.op("Convert", x, destination_type=dst, name="y"), "out")
    with pytest.raises(irexec.IRError) as info:
        b.build()
    assert info.value.code == "IR302"
    message = str(info.value)
    assert f"{src} cannot be converted to {dst}" in message


# --- every supported pair, on adversarial values ------------------------------------------------

@pytest.mark.parametrize("src, dst", SUPPORTED_PAIRS)
def test_every_supported_pair(src, dst):
    """Every code of a narrow source; for plain sources NaNs with payloads, +-inf, +-0,
    subnormals, the ties and overflow boundaries of the target, integers and near-integers up to
    and beyond 2**31, negatives into unsigned types, random bit patterns."""
    data = source_pool(src, dst)
    check(data, src, dst, convert(data, dst))


# --- worked examples of types.md, as literal facts ------------------------------------------------

def one(src: str, value, dst: str):
    """Convert one element; ``value`` is a number, or an int of raw bits for a float source."""
    if isinstance(value, int) and src in FLOATS:
        data = from_bits([value], src)
    elif src in NARROW and src != "i4":
        data = np.array([value], np.uint8).view(dtype_of(src))
    else:
        data = np.array([value]).astype(dtype_of(src))
    out = convert(data, dst)
    return observed(out, dst)[0]


@pytest.mark.parametrize("src, value, dst, expected", [
    # f8e4m3: f32 -> f16 -> e4m3; overflow and infinities are NaN, by sign
    ("f32", 0x3EC80F55, "f8e4m3", 0x2C),  # 0.390742: 0.375, where a single rounding gives 0x2D
    ("f32", 0xBF97FC65, "f8e4m3", 0xBA),  # -1.18739 -> -1.25
    ("f32", 0x43E00000, "f8e4m3", 0x7E),  # 448
    ("f32", 0x43E80000, "f8e4m3", 0x7E),  # 464, the tie above 448: even, 448
    ("f32", 0x43E80001, "f8e4m3", 0x7E),  # an f32 ulp above: f16 464 first, then the tie
    ("f32", 0x43E82000, "f8e4m3", 0x7F),  # 464.25, above the tie in f16: NaN
    ("f32", 0x7F800000, "f8e4m3", 0x7F), ("f32", 0xFF800000, "f8e4m3", 0xFF),
    ("f32", 0x7FC00000, "f8e4m3", 0x7F), ("f32", 0xFFC00000, "f8e4m3", 0xFF),
    ("f32", 0x80000000, "f8e4m3", 0x80),
    # f8e5m2: 0.5626170 (nf4 code 13) -> 0.5; overflow is infinity; NaN keeps the top 2 bits
    ("f32", 0x3F1007AB, "f8e5m2", 0x38),
    ("f32", 0x7F800001, "f8e5m2", 0x7C),  # signalling NaN, payload bits 00: +inf
    ("f32", 0xFF800001, "f8e5m2", 0xFC),
    ("f32", 0x7FA00000, "f8e5m2", 0x7D), ("f32", 0xFFA00000, "f8e5m2", 0xFD),
    ("f32", 0x7FC00000, "f8e5m2", 0x7E), ("f32", 0x7FE00000, "f8e5m2", 0x7F),
    ("i32", 61439, "f8e5m2", 0x7C),  # f16 61440 is a tie above 57344: to even, past the range
    ("i32", 61438, "f8e5m2", 0x7C), ("i32", 61423, "f8e5m2", 0x7B),
    ("f32", 0x47700000, "f8e5m2", 0x7C),  # 61440
    ("f32", 0x476FFFFF, "f8e5m2", 0x7C),  # 61439.996 rounds to f16 61440 first
    # f8e8m0: nearest, ties to the even code
    ("f32", 0x3FC00000, "f8e8m0", 128), ("f32", 0x40400000, "f8e8m0", 128),  # 1.5, 3 -> 2
    ("f32", 0x40C00000, "f8e8m0", 130), ("f32", 0x3F400000, "f8e8m0", 126),  # 6 -> 8, .75 -> .5
    ("f32", 0x3FC00001, "f8e8m0", 128), ("f32", 0x3FBFFFFF, "f8e8m0", 127),
    ("f32", 0x40400001, "f8e8m0", 129),
    ("f32", 0x7F7FFFFF, "f8e8m0", 0xFE), ("f32", 0x7F800000, "f8e8m0", 0xFE),
    ("f32", 0x7FC00000, "f8e8m0", 0xFF), ("f32", 0xFFC00000, "f8e8m0", 0x00),
    ("f32", 0x00000000, "f8e8m0", 0x00), ("f32", 0x80000000, "f8e8m0", 0x00),
    ("f32", 0xBF800000, "f8e8m0", 0x00), ("f32", 0xFF800000, "f8e8m0", 0x00),
    ("f32", 0x00600000, "f8e8m0", 0x00), ("f32", 0x00600001, "f8e8m0", 0x01),
    ("f32", 0x00000001, "f8e8m0", 0x00), ("f32", 0x00800000, "f8e8m0", 0x01),
    ("f16", 0x3E00, "f8e8m0", 128), ("bf16", 0x4040, "f8e8m0", 128),
    ("f64", 0x4008000000000800, "f8e8m0", 128),  # 3 + 2**-40 is 3 in f32: the tie, to even
    ("f64", 0x3FF4000000001000, "f4e2m1", 2),  # 1.25 + 2**-40 is 1.25 in f32: to even, 1.0
    ("f64", 0x3FF4000000000000 + (1 << 30), "f4e2m1", 3),  # 2 f32 ulps above: 1.5
    # f4e2m1: nearest even, saturating at +-6, NaN +-6 by sign
    ("f32", 0x3E800000, "f4e2m1", 0), ("f32", 0x3F400000, "f4e2m1", 2),  # 0.25, 0.75
    ("f32", 0x3FA00000, "f4e2m1", 2), ("f32", 0x40200000, "f4e2m1", 4),  # 1.25, 2.5
    ("f32", 0x40A00000, "f4e2m1", 6), ("f32", 0x41000000, "f4e2m1", 7),  # 5 -> 4, 8 -> 6
    ("f32", 0x7FC00000, "f4e2m1", 7), ("f32", 0xFFC00000, "f4e2m1", 15),
    ("f32", 0xFF800000, "f4e2m1", 15), ("f32", 0x80000000, "f4e2m1", 8),
    ("f32", 0xBE800000, "f4e2m1", 8),  # -0.25 -> -0
    # nf4: thresholds are strict; NaN is code 0; -0.0 is code 7
    *[("f32", b, "nf4", k) for k, b in enumerate(NF4_THRESHOLD_BITS)],
    *[("f32", b + (1 if b < 0x80000000 else -1), "nf4", k + 1)
      for k, b in enumerate(NF4_THRESHOLD_BITS)],
    ("f32", 0x7FC00000, "nf4", 0), ("f32", 0x80000000, "nf4", 7), ("f32", 0x7F800000, "nf4", 15),
    ("f32", 0x3F000000, "nf4", 12),  # 0.5: below the threshold 0x3F006D03
    # integer targets: truncate and keep the low bits; NaN, inf, |x| >= 2**31 are 0
    ("i32", -1, "u4", 15), ("i32", -1, "i4", -1), ("i32", 8, "i4", -8), ("i32", -9, "i4", 7),
    ("i32", 500, "u6", 52), ("i32", 1000, "i4", -8), ("i32", 2, "u1", 0), ("i32", -3, "u1", 1),
    ("f32", 0x40000000, "u1", 0), ("f32", 0xC0400000, "u1", 1), ("f32", 0xBF800000, "u4", 15),
    ("f32", 0x43FA0000, "u6", 52), ("f32", 0x447A0000, "i4", -8), ("f32", 0xC1100000, "i4", 7),
    ("f64", 0x41EFFFFFFFE00000, "u4", 0),  # 4294967295.0
    ("f64", 0x41DFFFFFFFC00000, "u4", 15),  # 2147483647.0
    ("f64", 0xC1E0000000200000, "u4", 0),  # -2147483649.0 (wrapping would give 15)
    ("f64", 0xC1DFFFFFFFC00000, "u4", 1),  # -2147483647.0
    ("f32", 0x7FC00000, "u3", 0), ("f32", 0xFF800000, "i4", 0), ("f32", 0xC0733333, "u2", 1),
    ("i64", 2**40 + 13, "u3", 5), ("u64", 2**64 - 1, "u6", 63), ("i8", -128, "i4", 0),
    ("u6", 63, "u4", 15), ("u6", 63, "u1", 1), ("i4", -1, "u6", 63), ("i4", -8, "u3", 0),
    ("u3", 7, "i4", 7), ("u4", 9, "i4", -7), ("f8e5m2", 0x7C, "u4", 0),  # inf
    ("f8e4m3", 0xC6, "u4", 13),  # -3.5 -> -3
    ("nf4", 0, "u4", 15), ("nf4", 15, "i4", 1), ("nf4", 14, "u4", 0),
    ("f4e2m1", 15, "i4", -6), ("f4e2m1", 15, "u4", 10),
    # from nf4: the codebook; to bf16 truncated
    ("nf4", 8, "bf16", 0.0791015625), ("nf4", 9, "bf16", 0.16015625),
    ("nf4", 4, "bf16", -0.28515625), ("nf4", 12, "bf16", 0.44140625),  # odd last bit: rounded
    ("nf4", 8, "f32", f32(0x3DA2FAFF)), ("nf4", 0, "f16", -1.0), ("nf4", 7, "f64", 0.0),
    # from the other narrow types: exact values, rounded where the target is narrower
    ("f8e8m0", 0, "f32", 2.0**-127), ("f8e8m0", 0, "f16", 0.0), ("f8e8m0", 0, "bf16", 2.0**-127),
    ("f8e8m0", 254, "f16", math.inf), ("f8e8m0", 254, "f64", 2.0**127),
    ("f8e8m0", 0xFF, "f32", math.nan), ("f8e5m2", 0xFC, "f64", -math.inf),
    ("f8e4m3", 0x01, "f32", 2.0**-9), ("f8e4m3", 0x7E, "bf16", 448.0),
    ("f4e2m1", 15, "f16", -6.0), ("f4e2m1", 8, "f32", -0.0), ("i4", -8, "f16", -8.0),
    ("u1", 1, "boolean", True), ("i4", -1, "u8", 255), ("i4", -1, "u64", 2**64 - 1),
    ("f8e4m3", 0x7F, "boolean", True), ("f8e5m2", 0x80, "boolean", False),
])
def test_worked_examples(src, value, dst, expected):
    assert matches(one(src, value, dst), expected)


def test_double_rounding_differs_from_a_single_rounding():
    """The e4m3 and e5m2 examples of types.md are genuinely double-rounded: ml_dtypes' direct
    cast (a single rounding) gives the next code."""
    import ml_dtypes

    for value, dst, dtype, ours in [(f32(0x3EC80F55), "f8e4m3", ml_dtypes.float8_e4m3fn, 0x2C),
                                    (f32(0x3F1007AB), "f8e5m2", ml_dtypes.float8_e5m2, 0x38)]:
        data = np.array([value], np.float32)
        assert int(data.astype(dtype).view(np.uint8)[0]) == ours + 1
        assert convert(data, dst).view(np.uint8).tolist() == [ours]


# Measured in /work/notes/matrix/all.jsonl (core evaluate): NaN codes widened to plain floats.
_NAN_FACTS = {
    "f8e5m2": {"f32": {0x7D: 0x7FA00000, 0x7E: 0x7FC00000, 0x7F: 0x7FE00000, 0xFD: 0xFFA00000},
               "f16": {0x7D: 0x7D00, 0x7E: 0x7E00, 0x7F: 0x7F00, 0xFF: 0xFF00},
               "bf16": {0x7D: 0x7FA0, 0x7E: 0x7FC0, 0x7F: 0x7FE0, 0xFE: 0xFFC0},
               "f64": {0x7D: 0x7FFC000000000000, 0x7E: 0x7FF8000000000000,
                       0x7F: 0x7FFC000000000000, 0xFE: 0xFFF8000000000000}},
    "f8e4m3": {"f32": {0x7F: 0x7FC00000, 0xFF: 0xFFC00000}, "f16": {0x7F: 0x7E00, 0xFF: 0xFE00},
               "bf16": {0x7F: 0x7FC0, 0xFF: 0xFFC0},
               "f64": {0x7F: 0x7FF8000000000000, 0xFF: 0xFFF8000000000000}},
    "f8e8m0": {"f32": {0xFF: 0x7FC00000}, "f16": {0xFF: 0x7E00}, "bf16": {0xFF: 0x7FC0}},
}


@pytest.mark.parametrize("src, dst", [(s, d) for s in _NAN_FACTS for d in _NAN_FACTS[s]])
def test_nan_codes_widen_with_their_sign_and_payload(src, dst):
    facts = _NAN_FACTS[src][dst]
    data = np.array(list(facts), np.uint8).view(dtype_of(src))
    assert bits(convert(data, dst)).tolist() == list(facts.values())
    assert [nan_bits(narrow_value(src, c), dst) for c in facts] == list(facts.values())


def test_nf4_from_f64_is_rounded_to_f32_first():
    """f64 just above a threshold but within half an f32 ulp of it counts as the threshold."""
    t = f32(NF4_THRESHOLD_BITS[12])
    out = convert(np.array([t, t + 2.0**-40, np.nextafter(np.float32(t), np.float32(1))],
                           np.float64), "nf4")
    assert out.view(np.uint8).tolist() == [12, 12, 13]


def test_nf4_to_bf16_is_openvinos_rounding_for_every_code():
    """Measured (matrix/all.jsonl, core, fold and CPU): neither truncation nor nearest-even."""
    measured = [0xBF80, 0xBF32, 0xBF06, 0xBECA, 0xBE92, 0xBE3D, 0xBDBA, 0x0000, 0x3DA2, 0x3E24,
                0x3E7C, 0x3EAD, 0x3EE2, 0x3F10, 0x3F39, 0x3F80]
    data, codes = every_code("nf4")
    out = convert(data, "bf16")
    assert bits(out).tolist() == measured
    assert out.astype(np.float64).tolist() == [nf4_to_bf16(c) for c in codes]


# --- shapes, scalars, aliasing, warnings ----------------------------------------------------------

@pytest.mark.parametrize("src", NARROW + PLAIN_TYPE_NAMES)
def test_scalars_stay_zero_dimensional(src):
    """A 0-d input gives a 0-d ndarray for every supported target (one model, one Convert per
    target)."""
    targets = [d for s, d in SUPPORTED_PAIRS if s == src]
    data = source_pool(src, "f32")[:1].reshape(())
    b = ModelBuilder()
    x = b.parameter("data", src, [])
    for dst in targets:
        b.result(b.op("Convert", x, destination_type=dst, name=dst))
    outputs = irexec.compile_model(b.build())({"data": data})
    for dst in targets:
        out = outputs[dst]
        assert isinstance(out, np.ndarray) and out.shape == () and out.dtype == dtype_of(dst)
        check(data, src, dst, out)
        kernel_out = kernel(data, dtype_of(dst))
        assert isinstance(kernel_out, np.ndarray) and kernel_out.shape == ()


@pytest.mark.parametrize("src, dst", [(s, d) for s, d in SUPPORTED_PAIRS
                                      if s in NARROW and d in ("f32", "f8e5m2", "u4", s)])
def test_shapes_and_non_contiguous_inputs(src, dst):
    data = np.resize(every_code(src)[0], (4, 6, 8))
    out = convert(data, dst)
    check(data, src, dst, out)
    strided = data.transpose(2, 0, 1)[:, ::2, ::-1]  # no copy: a strided view
    assert not strided.flags.c_contiguous
    check(strided, src, dst, kernel(strided, dtype_of(dst)))
    empty = data[:0]
    assert convert(empty, dst).shape == (0, 6, 8)


@pytest.mark.parametrize("src", NARROW)
def test_outputs_never_alias_inputs(src):
    data = np.resize(every_code(src)[0], (3, 5))
    for s, dst in SUPPORTED_PAIRS:
        if s != src:
            continue
        out = kernel(data, dtype_of(dst))
        assert not np.shares_memory(out, data), dst
        if dst == src:
            assert np.array_equal(bits(out.view(np.uint8)), bits(data.view(np.uint8)))
    out = convert(data, src)
    assert not np.shares_memory(out, data) and np.array_equal(out.view(np.uint8),
                                                              data.view(np.uint8))


@pytest.mark.parametrize("src", NARROW + PLAIN_TYPE_NAMES)
def test_no_numpy_warnings_for_any_bit_pattern(src):
    """Every bit pattern (every code; for plain floats random bits, signalling NaNs, infinities,
    out-of-range values) converts to every supported target without a RuntimeWarning."""
    if src in NARROW:
        data = every_code(src)[0]
    else:
        rng = np.random.default_rng(2)
        data = np.concatenate([random_values(src, (300,), rng), special_values(src)]
                              + ([from_bits(_NANS[src], src), float_pool(src, "f8e8m0")]
                                 if src in FLOATS else [int_pool(src)]))
    targets = [d for s, d in SUPPORTED_PAIRS if s == src]
    assert targets
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for dst in targets:
            kernel(data, dtype_of(dst))


def test_coded_outputs_never_set_bits_beyond_the_type():
    """u3, u6 and nf4 hold the code in a byte: anything above it would be refused by the writer."""
    for src in FLOATS:
        data = float_pool(src, "nf4")
        for dst in ("u3", "u6", "nf4"):
            codes = convert(data, dst).view(np.uint8)
            assert int(codes.max()) < 1 << CODE_BITS[dst]
            et_table.to_codes(et_table.from_name(dst), convert(data, dst))


# --- property: random pairs and bit patterns ------------------------------------------------------

@settings(max_examples=150, deadline=None)
@given(st.sampled_from(SUPPORTED_PAIRS), st.integers(0, 2**32 - 1))
def test_property_random_bit_patterns(pair, seed):
    src, dst = pair
    rng = np.random.default_rng(seed)
    data = random_values(src, (24,), rng)
    if src in FLOATS:  # also near the target's interesting values
        pool = float_pool(src, dst)
        data = np.concatenate([data, pool[rng.integers(0, pool.size, 24)]])
    check(data, src, dst, convert(data, dst))


def test_reference_agrees_with_the_facts_it_is_built_from():
    """The hand decoders: f8e4m3 largest 448 and no infinity, e5m2 infinity at 0x7C, f4e2m1
    largest 6, e8m0 2**-127 .. 2**127, nf4 codes 0 and 15 are -1 and 1."""
    assert narrow_value("f8e4m3", 0x7E).exact == 448 and narrow_value("f8e4m3", 0x7F).kind == "nan"
    assert narrow_value("f8e4m3", 0x78).exact == 256 and narrow_value("f8e4m3", 0x08).exact == \
        Fraction(1, 64)
    assert narrow_value("f8e5m2", 0x7C).kind == "inf" and narrow_value("f8e5m2", 0x7B).exact == \
        57344
    assert narrow_value("f8e5m2", 0x7D).kind == "nan" and narrow_value("f8e5m2", 0x04).exact == \
        Fraction(1, 2**14)
    assert narrow_value("f4e2m1", 7).exact == 6 and narrow_value("f4e2m1", 9).exact == \
        Fraction(-1, 2)
    assert narrow_value("f8e8m0", 0).exact == Fraction(1, 2**127)
    assert narrow_value("f8e8m0", 254).exact == 2**127
    assert narrow_value("nf4", 0).exact == -1 and narrow_value("nf4", 15).exact == 1
    assert narrow_value("i4", 8).exact == -8 and narrow_value("u6", 63).exact == 63
    assert NARROW_RANGES["u6"] == (0, 63)
