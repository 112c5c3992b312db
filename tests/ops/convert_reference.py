"""An exact reference for Convert, independent of numpy's casts: Python ints and Fractions,
rounded to each float format by hand (nearest, ties to even). Shared by tests/ops/test_convert.py
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
