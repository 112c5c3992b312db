"""An exact reference for Convert, independent of numpy's casts: Python ints and Fractions,
rounded to each float format by hand (nearest, ties to even). Shared by tests/ops/type/test_convert.py
and tests/conformance."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .support import dtype_of, random_values

# precision p (significand bits incl. the implicit one), emin, emax
FORMATS = {"f16": (11, -14, 15), "bf16": (8, -126, 127), "f32": (24, -126, 127),
           "f64": (53, -1022, 1023)}
INT_RANGES = {name: (int(np.iinfo(dtype_of(name)).min), int(np.iinfo(dtype_of(name)).max))
              for name in ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")}
INF = object()  # the rounded value overflows the format


def round_to_format(value: Fraction, fmt: str):
    """``value`` rounded to nearest, ties to even, in a binary float format; INF on overflow.
    Returns a Python float (every result is exactly representable in a double)."""
    p, emin, emax = FORMATS[fmt]
    if value == 0:
        return 0.0
    sign = -1 if value < 0 else 1
    a = abs(value)
    e = a.numerator.bit_length() - a.denominator.bit_length()  # 2**e <= a < 2**(e+2)
    if Fraction(2) ** e > a:
        e -= 1
    if Fraction(2) ** (e + 1) <= a:
        e += 1
    e = max(e, emin)
    quantum = Fraction(2) ** (e - p + 1)
    n, rest = divmod(a, quantum)
    if rest > quantum / 2 or (rest == quantum / 2 and n % 2 == 1):
        n += 1
    result = n * quantum
    largest = (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax
    if result > largest:
        return INF
    return math.copysign(float(result), sign)


def exact(x) -> int | Fraction | float:
    """A numpy scalar's exact value: int, Fraction, or a float nan/inf."""
    if isinstance(x, (np.bool_, bool)):
        return int(x)
    if np.dtype(type(x)).kind in "iu":
        return int(x)
    f = float(x)  # exact for f16, bf16, f32 and f64
    if math.isnan(f) or math.isinf(f):
        return f
    return Fraction(f)


def expected_in_range(x, dst: str):
    """The correct conversion of ``x``, or None when it lies outside dst's range."""
    v = exact(x)
    if dst == "boolean":
        return None if isinstance(v, float) and math.isnan(v) else bool(v != 0)
    if isinstance(v, float):  # nan or inf
        return None
    if dst in INT_RANGES:
        t = math.trunc(v)
        lo, hi = INT_RANGES[dst]
        return t if lo <= t <= hi else None
    r = round_to_format(Fraction(v), dst)
    if r is INF:
        return None
    if r == 0:  # keep the sign: -0.0 stays -0.0 and tiny negatives round to -0.0
        negative = v < 0 or (not isinstance(v, int) and math.copysign(1.0, float(x)) < 0)
        return -0.0 if negative else 0.0
    return r


def same(actual, expected) -> bool:
    if isinstance(expected, bool):
        return bool(actual) is expected and isinstance(actual, (bool, np.bool_))
    if isinstance(expected, int):
        return int(actual) == expected
    a = float(actual)
    return a == expected and math.copysign(1, a) == math.copysign(1, expected)


# --- value pools (each source type's representable values that stress conversions) ----------

_INTS = [0, 1, -1, 2, -2, 3, 7, -7, 100, -100, 127, -128, 128, -129, 200, 255, 256, -256, 300,
         -300, 1000, 12345, -12345, 32767, -32768, 32768, 65504, 65519, 65520, 65535, 65536, -65536,
         100000, 2**24, 2**24 + 1, 2**24 + 3, -(2**24 + 1), 2**24 + 2**16 + 1, 2**31 - 1, -(2**31),
         2**31, 2**31 + 1, 2**32 - 1, 2**32, 2**40 + 5, -(2**40 + 5), 2**53 + 1, 2**53 + 3,
         2**62 + 2**39 + 1, 2**63 - 1, -(2**63), 2**63, 2**63 + 2**40 + 1, 2**64 - 1, 0x7FFF7FFF,
         0x12345678, 123456789, -123456789, 0x1000081, 0x7FFFFF80]

_FLOATS = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, 0.9999999, 1.4, -1.6, 2.7,
           -2.7, 100.7, 127.4, 127.5, 127.9, -128.9, 255.5, 255.9, 1e-8, -1e-8, 1e-40, 1e-310,
           6e-8, 3e-8, 65504.0, 65519.0, 65520.0, 65535.9, 1e5, -1e5, 3e38, 3.4028234663852886e38,
           1e39, 1e300, -1e300, math.pi, -math.e, 1 / 3, 1 + 2**-8, 1 + 3 * 2**-9,
           1 + 2**-8 + 2**-30, 1 + 2**-11, 1 + 2**-11 + 2**-40, 1 + 2**-24 + 2**-50, 2147483520.0,
           2147483647.5, -2147483648.9, 4294967040.0, 9.2233715e18, 1.8446743e19,
           1.8446744073709552e19, 9.223372036854775e18, -9.223372036854776e18, 123456.789, 0.1,
           2.0**-14, 2.0**-24, 2.0**-25, 3 * 2.0**-26, 2.0**-126, 2.0**-149, 2.0**-133,
           2.0**24 + 2.0**16 + 2.0, 2.0**60 + 2.0**36]


def pool(src: str) -> np.ndarray:
    """Every value of the pools representable in ``src`` (after the cast into it), plus random bit
    patterns."""
    dtype = dtype_of(src)
    rng = np.random.default_rng(sum(map(ord, src)))
    if src == "boolean":
        return np.array([True, False])
    if dtype.kind in "iu":
        lo, hi = INT_RANGES[src]
        fixed = np.array([v for v in _INTS if lo <= v <= hi], dtype=dtype)
    else:
        with np.errstate(over="ignore"):
            fixed = np.array(_FLOATS + [-v for v in _FLOATS], np.float64).astype(dtype)
    return np.concatenate([fixed, random_values(src, (200,), rng)])


# --- the narrow types (tests/ops/type/test_convert_narrow.py) -----------------------------------------
# Everything below follows /work/notes/types.md section 3 ("Value rules", OpenVINO 2026.4.1) and is
# written with Python ints and Fractions only: no numpy or ml_dtypes casts, no irexec code.

import struct  # noqa: E402
from dataclasses import dataclass  # noqa: E402

# nf4 (types.md section 2): the codebook and the thresholds, as f32 bit patterns.
NF4_CODEBOOK_BITS = (0xBF800000, 0xBF3239B1, 0xBF066B30, 0xBECA32A0, 0xBE91A24D, 0xBE3D353F,
                     0xBDBA7871, 0x00000000, 0x3DA2FAFF, 0x3E24CAE3, 0x3E7C04DD, 0x3EAD033A,
                     0x3EE1A4B8, 0x3F1007AB, 0x3F3913B3, 0x3F800000)
NF4_THRESHOLD_BITS = (0xBF591CD9, 0xBF1C5270, 0xBEEB8480, 0xBEADEA76, 0xBE703CEC, 0xBE0D38BC,
                      0xBD3A7871, 0x3D22FAFF, 0x3DF64863, 0x3E5067E0, 0x3E9582D4, 0x3EC753F9,
                      0x3F006D03, 0x3F248DAF, 0x3F5C89D9)

NARROW_INTS = {"u1": (1, False), "u2": (2, False), "u3": (3, False), "u4": (4, False),
               "u6": (6, False), "i4": (4, True)}  # bits, signed
# The small float formats: exponent bits, mantissa bits, largest finite value, infinity, NaN codes
# (of the positive half; the sign bit is the top bit of the code). e4m3fn and f4e2m1 have no
# infinity; f4e2m1 no NaN.
SMALL_FLOATS = {"f8e4m3": (4, 3, Fraction(448), False), "f8e5m2": (5, 2, Fraction(57344), True),
                "f4e2m1": (2, 1, Fraction(6), False)}


def f32_from_bits(b: int) -> float:
    return struct.unpack("<f", struct.pack("<I", b))[0]


NF4_CODEBOOK = tuple(Fraction(f32_from_bits(b)) for b in NF4_CODEBOOK_BITS)
NF4_THRESHOLDS = tuple(Fraction(f32_from_bits(b)) for b in NF4_THRESHOLD_BITS)


@dataclass(frozen=True)
class Value:
    """One source element: ``kind`` is "num", "inf" or "nan"; ``exact`` the value of a number
    (int for integer sources, Fraction for floats); ``negative`` the sign bit (for -0.0 and NaN
    too); ``payload`` a NaN's top two mantissa bits once in f32."""

    kind: str
    negative: bool = False
    exact: int | Fraction = 0
    is_float: bool = False
    payload: int = 2
    nf4: bool = False  # an nf4 codebook entry (truncated, not rounded, to bf16)


def int_value(v: int) -> Value:
    return Value("num", v < 0, int(v))


def _small_float_value(name: str, code: int) -> Value:
    ebits, mbits, _, has_inf = SMALL_FLOATS[name]
    negative = bool(code >> (ebits + mbits))
    e = (code >> mbits) & ((1 << ebits) - 1)
    m = code & ((1 << mbits) - 1)
    bias = (1 << (ebits - 1)) - 1
    top = (1 << ebits) - 1
    if name == "f8e4m3" and e == top and m == (1 << mbits) - 1:
        return Value("nan", negative, is_float=True)
    if has_inf and e == top:  # f8e5m2's NaN payload is its two mantissa bits
        return Value("inf" if m == 0 else "nan", negative, is_float=True, payload=m)
    if e == 0:
        magnitude = Fraction(m, 1 << mbits) * Fraction(2) ** (1 - bias)
    else:
        magnitude = (1 + Fraction(m, 1 << mbits)) * Fraction(2) ** (e - bias)
    return Value("num", negative, -magnitude if negative else magnitude, True)


def narrow_value(name: str, code: int) -> Value:
    """The value of a narrow type's raw code (decoded by hand). An f8e4m3 or f8e8m0 NaN widens to
    f32 0x7FC00000 with its sign (payload bits 10); an f8e5m2 NaN keeps its two low bits."""
    if name in NARROW_INTS:
        bits, signed = NARROW_INTS[name]
        return int_value(code - (1 << bits) if signed and code >> (bits - 1) else code)
    if name == "nf4":
        return Value("num", NF4_CODEBOOK[code] < 0, NF4_CODEBOOK[code], True, nf4=True)
    if name == "f8e8m0":
        if code == 0xFF:
            return Value("nan", False, is_float=True)
        return Value("num", False, Fraction(2) ** (code - 127), True)
    return _small_float_value(name, code)


_FLOAT_LAYOUT = {"f16": (16, 10), "bf16": (16, 7), "f32": (32, 23), "f64": (64, 52)}


def plain_value(x, name: str) -> Value:
    """The value of one element of a plain type (a numpy scalar)."""
    if name == "boolean":
        return int_value(int(bool(x)))
    if name in INT_RANGES:
        return int_value(int(x))
    width, mbits = _FLOAT_LAYOUT[name]
    raw = int(np.array(x).reshape(1).view(f"u{width // 8}")[0])
    negative = bool(raw >> (width - 1))
    f = float(x)  # exact for f16, bf16, f32, f64
    if math.isnan(f):
        top2 = (raw >> (mbits - 2)) & 3
        if name == "f64":  # f64 -> f32 (as C's cast, IEEE 754) quiets a signalling NaN
            top2 |= 2
        return Value("nan", negative, is_float=True, payload=top2)
    if math.isinf(f):
        return Value("inf", negative, is_float=True)
    return Value("num", negative, Fraction(f), True)


def round_magnitude(a: Fraction, p: int, emin: int) -> Fraction:
    """``a >= 0`` rounded to nearest, ties to even, with ``p`` significand bits and subnormals
    below 2**emin; no upper limit."""
    if a == 0:
        return Fraction(0)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    quantum = Fraction(2) ** (max(e, emin) - p + 1)
    n, rest = divmod(a, quantum)
    if rest > quantum / 2 or (rest == quantum / 2 and n % 2 == 1):
        n += 1
    return n * quantum


def _rounded(v: Value, p: int, emin: int, largest: Fraction) -> Value:
    """A finite value rounded to a format; beyond ``largest`` it becomes an infinity."""
    r = round_magnitude(abs(Fraction(v.exact)), p, emin)
    if r > largest:
        return Value("inf", v.negative, is_float=True)
    return Value("num", v.negative, -r if v.negative else r, True)


F32_LARGEST = (2 - Fraction(2) ** -23) * Fraction(2) ** 127
F16_LARGEST = Fraction(65504)


def to_f32(v: Value) -> Value:
    """OpenVINO's first step for every narrow float target: round to f32 (nearest even)."""
    return _rounded(v, 24, -126, F32_LARGEST) if v.kind == "num" else v


def _small_float_code(name: str, v: Value) -> int:
    """A finite value that is exactly representable in a small float format, as its code."""
    table = _SMALL_FLOAT_CODES[name]
    return table[abs(Fraction(v.exact))] | (0x80 >> (8 - _width(name)) if v.negative else 0)


def _width(name: str) -> int:
    ebits, mbits, _, _ = SMALL_FLOATS[name]
    return 1 + ebits + mbits


_SMALL_FLOAT_CODES = {
    name: {narrow_value(name, c).exact: c for c in range(1 << (_width(name) - 1))
           if narrow_value(name, c).kind == "num"}
    for name in SMALL_FLOATS}


def small_float_magnitudes(name: str) -> list[Fraction]:
    """Every finite non-negative value of f8e4m3, f8e5m2 or f4e2m1, ascending."""
    return sorted(_SMALL_FLOAT_CODES[name])


def to_f8(v: Value, dst: str) -> int:
    """f8e4m3 / f8e5m2 code: f32, then f16, then f8, each nearest even. Overflow: e4m3 NaN,
    e5m2 infinity. A NaN keeps its sign; e5m2 also the top two f32 payload bits (00 is inf)."""
    sign = 0x80 if v.negative else 0
    ebits, mbits, largest, _ = SMALL_FLOATS[dst]
    emin = 2 - (1 << (ebits - 1))
    v = to_f32(v)
    if v.kind == "num":
        v = _rounded(v, 11, -14, F16_LARGEST)
    if v.kind == "num":
        v = _rounded(v, mbits + 1, emin, largest)
    if v.kind == "num":
        return _small_float_code(dst, v)
    if dst == "f8e4m3":
        return sign | 0x7F
    return sign | 0x7C | (v.payload if v.kind == "nan" else 0)


def to_f4e2m1(v: Value) -> int:
    """Nearest even from the f32 value, saturating at +-6; NaN and +-inf give +-6 by the sign."""
    sign = 8 if v.negative else 0
    v = to_f32(v)
    if v.kind != "num":
        return sign | 7
    r = round_magnitude(abs(v.exact), 2, 0)
    return sign | _SMALL_FLOAT_CODES["f4e2m1"][min(r, Fraction(6))]


def to_e8m0(v: Value) -> int:
    """+NaN 0xFF; the sign bit set (-0, -NaN, negatives) or +0: 0x00; +inf 0xFE. Otherwise the
    power of two 2**k <= x < 2**(k+1), rounded up above 1.5 * 2**k, to the even code at exactly
    1.5 * 2**k, the code k + 127 clamped to 0..254."""
    v = to_f32(v)
    if v.kind == "nan":
        return 0 if v.negative else 0xFF
    if v.negative or (v.kind == "num" and v.exact == 0):
        return 0
    if v.kind == "inf":
        return 0xFE
    x = Fraction(v.exact)
    k = x.numerator.bit_length() - x.denominator.bit_length()
    while Fraction(2) ** k > x:
        k -= 1
    while Fraction(2) ** (k + 1) <= x:
        k += 1
    code = k + 127
    middle = Fraction(3, 2) * Fraction(2) ** k
    if x > middle or (x == middle and code % 2 == 1):
        code += 1
    return min(max(code, 0), 0xFE)


def to_nf4(v: Value) -> int:
    """How many thresholds the f32 value exceeds (a plain loop); NaN is code 0."""
    v = to_f32(v)
    if v.kind == "nan":
        return 0
    count = 0
    for t in NF4_THRESHOLDS:
        if v.kind == "inf":
            count += 0 if v.negative else 1
        elif v.exact > t:
            count += 1
    return count


def to_narrow_int(v: Value, dst: str) -> int:
    """u1 ... u6, i4 as the code (low bits): integers wrap; floats truncate toward zero first,
    and NaN, +-inf and magnitudes from 2**31 give 0."""
    bits, _ = NARROW_INTS[dst]
    if v.kind != "num":
        return 0
    if v.is_float:
        if abs(v.exact) >= 2**31:
            return 0
        return math.trunc(v.exact) % (1 << bits)
    return v.exact % (1 << bits)


def expected_narrow(v: Value, dst: str):
    """The result of converting ``v`` to any type, narrow or plain: a raw code (int) for the
    narrow floats, nf4, u3 and u6; the value for u1, u2, u4, i4 and the plain types (a float
    nan/inf/-0.0 for the float types, a bool for boolean)."""
    if dst in NARROW_INTS:
        code = to_narrow_int(v, dst)
        bits, signed = NARROW_INTS[dst]
        if dst in ("u3", "u6"):
            return code
        return code - (1 << bits) if signed and code >> (bits - 1) else code
    if dst in ("f8e4m3", "f8e5m2"):
        return to_f8(v, dst)
    if dst == "f4e2m1":
        return to_f4e2m1(v)
    if dst == "f8e8m0":
        return to_e8m0(v)
    if dst == "nf4":
        return to_nf4(v)
    return expected_plain(v, dst)


def expected_plain(v: Value, dst: str):
    """A value converted to a plain type: irexec's plain rules (float -> int truncates, saturates,
    NaN is 0; integers wrap; floats round to nearest even from the exact value; boolean x != 0)."""
    if dst == "boolean":
        return v.kind != "num" or v.exact != 0
    if dst in INT_RANGES:
        lo, hi = INT_RANGES[dst]
        if v.kind == "nan":
            return 0
        if v.kind == "inf":
            return lo if v.negative else hi
        if v.is_float:
            return min(max(math.trunc(v.exact), lo), hi)
        return (v.exact - lo) % (hi - lo + 1) + lo  # two's complement wrap
    if v.kind == "nan":
        return math.nan
    if v.kind == "inf":
        return -math.inf if v.negative else math.inf
    if v.nf4 and dst == "bf16":
        return nf4_to_bf16_value(v)
    r = round_to_format(Fraction(v.exact), dst)
    if r is INF:
        return -math.inf if v.negative else math.inf
    return math.copysign(abs(r), -1.0 if v.negative else 1.0)


def nf4_to_bf16_value(v: Value) -> float:
    """nf4 -> bf16 is OpenVINO's own bf16 rounding of the f32 codebook entry (measured in
    /work/notes/matrix/all.jsonl, all three modes; convert.md's "quirky rounding"): of the
    magnitude, keep 8 significand bits and add one unit only when the last kept bit is odd and
    the dropped part is at least half a unit (code 4 0xBE91A24D gives 0xBE92, code 8 0x3DA2FAFF
    gives 0x3DA2)."""
    a = abs(Fraction(v.exact))
    if a == 0:
        return -0.0 if v.negative else 0.0
    unit = Fraction(2**7)
    while unit > a:  # 2**floor(log2 a)
        unit /= 2
    unit /= 2**7
    n, rest = divmod(a, unit)
    if n % 2 == 1 and rest >= unit / 2:
        n += 1
    return math.copysign(float(n * unit), -1.0 if v.negative else 1.0)


def nf4_to_bf16(code: int) -> float:
    return nf4_to_bf16_value(narrow_value("nf4", code))


_NAN_LAYOUT = {"f16": (16, 0x7C00, 8), "bf16": (16, 0x7F80, 5), "f32": (32, 0x7F800000, 21),
               "f64": (64, 0x7FF8000000000000, 50)}


def nan_bits(v: Value, dst: str) -> int:
    """The bits of a narrow float's NaN widened to a plain float type (measured, core): the sign
    and the two payload bits of the f32 (f8e5m2: the code's own two low bits; f8e4m3, f8e8m0:
    10), placed at the top of dst's mantissa; f64 comes from the f32 by a conversion that sets
    the quiet bit."""
    width, base, shift = _NAN_LAYOUT[dst]
    return (int(v.negative) << (width - 1)) | base | (v.payload << shift)


def matches(actual, expected) -> bool:
    """``actual`` (a Python int/bool/float read from the output) equals ``expected`` exactly:
    NaN matches NaN, zeros match by sign."""
    if isinstance(expected, bool):
        return actual is expected
    if isinstance(expected, float):
        if math.isnan(expected):
            return math.isnan(actual)
        return actual == expected and math.copysign(1, actual) == math.copysign(1, expected)
    return actual == expected and not isinstance(actual, float)
