"""Exact element-type conversion (Convert-1, ONNX Cast).

Between the types numpy and ml_dtypes' bfloat16 hold, numpy's casts are exact (correctly rounded,
round-to-nearest-even) except for two families, handled here:

* float -> integer: numpy leaves out-of-range values and NaN undefined. irexec truncates toward
  zero, saturates at the target's limits and maps NaN to 0, so every input has one answer.
* anything wider than f32 (f64, and integers above 24 bits) -> bf16: ml_dtypes goes through f32,
  rounding twice (f64 1 + 2**-8 + 2**-30 gives 1.0 instead of 1.0078125). irexec first rounds to
  f32 *to odd* (truncate, then set the last bit if anything was dropped), after which the single
  round-to-nearest-even step to bf16 is exact.

Integer narrowing wraps (two's complement), as numpy and OpenVINO do. Anything to boolean is
``x != 0`` (so NaN is true).

The narrow types follow OpenVINO 2026.4.1's rules, which are the same in its reference
implementation and its CPU plugin:

* to u1, u2, u3, u4, u6, i4: truncate toward zero and keep the low bits (2 -> u1 is 0, -1 -> u4 is
  15); NaN, infinities and floats of magnitude 2**31 or more give 0.
* to f8e4m3, f8e5m2: the value is rounded to f32, then f16, then the f8 format (three
  round-to-nearest-even steps, as OpenVINO does: 0.390742 gives 0.375, not 0.40625). Overflow
  gives NaN (e4m3, which has no infinity) or infinity (e5m2); e5m2 keeps a NaN's sign and the top
  two bits of its f32 payload, so a NaN whose top bits are 00 becomes an infinity.
* to f8e8m0 (a power of two, 2**-127 to 2**127): the exponent rounded to nearest, ties to even
  code (1.5 -> 2, 3 -> 2, 6 -> 8); overflow and +inf give 2**127; NaN gives NaN; zero, anything
  negative and values up to 1.5 * 2**-127 give 2**-127.
* to f4e2m1: round to nearest even, saturating at +-6; NaN gives +-6 by its sign.
* to nf4: the code is the number of OpenVINO's thresholds the value exceeds (not always the
  nearest codebook entry); NaN gives code 0 (-1.0).
* from nf4: the codebook value; to bf16 by OpenVINO's own rounding: add half an ulp only when
  the kept last bit is odd, else truncate (code 4 gives 0xBE92, code 8 gives 0x3DA2).
* from f8e5m2 to f16, bf16, f32, f64: NaN keeps its sign and two payload bits, as OpenVINO widens
  the code as the top byte of an f16 (0x7D gives f32 0x7FA00000).

Which pairs convert at all is :func:`unsupported_reason`: OpenVINO's set.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from irexec.ir import element_type as et_table
from irexec.ir.element_type import ElementType

BF16 = np.dtype(ml_dtypes.bfloat16)
_FLOATS = ("f16", "bf16", "f32", "f64")
# The types numpy (and ml_dtypes' bfloat16) compute with directly.
_PLAIN = ("boolean", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64") + _FLOATS

# nf4's codebook (OpenVINO's ConvertNF4) as f32 bit patterns, code 0 to 15.
NF4_VALUES = np.array([
    0xBF800000, 0xBF3239B1, 0xBF066B30, 0xBECA32A0, 0xBE91A24D, 0xBE3D353F, 0xBDBA7871, 0x00000000,
    0x3DA2FAFF, 0x3E24CAE3, 0x3E7C04DD, 0x3EAD033A, 0x3EE1A4B8, 0x3F1007AB, 0x3F3913B3, 0x3F800000,
], dtype=np.uint32).view(np.float32)
# f32 -> nf4: code k+1 starts strictly above threshold k (OpenVINO's decision tree, measured).
NF4_THRESHOLDS = np.array([
    0xBF591CD9, 0xBF1C5270, 0xBEEB8480, 0xBEADEA76, 0xBE703CEC, 0xBE0D38BC, 0xBD3A7871, 0x3D22FAFF,
    0x3DF64863, 0x3E5067E0, 0x3E9582D4, 0x3EC753F9, 0x3F006D03, 0x3F248DAF, 0x3F5C89D9,
], dtype=np.uint32).view(np.float32)


def unsupported_reason(src: ElementType, dst: ElementType) -> str | None:
    """Why ``src`` cannot be converted to ``dst`` (None if it can): OpenVINO's set of pairs."""
    if src == dst:
        return None
    if "string" in (src.kind, dst.kind):
        return "strings convert only to string"
    if dst.name in ("nf4", "f4e2m1", "f8e8m0") and src.name not in _FLOATS:
        return f"{dst} is made from f16, bf16, f32 or f64 only"
    if src.name in ("nf4", "f4e2m1") and dst.name not in _FLOATS + ("i8", "u8", "u4", "i4"):
        return f"{src} converts only to f16, bf16, f32, f64, i8, u8, u4 and i4"
    if src.name == "f8e8m0" and dst.name not in _FLOATS:
        return "f8e8m0 converts only to f16, bf16, f32 and f64"
    return None


def convert(x: np.ndarray, dst) -> np.ndarray:
    """``x`` converted to the element type ``dst`` (an ElementType, or a numpy dtype irexec
    holds); the source type is the one ``x.dtype`` stands for."""
    if type(x) is np.ndarray and x.ndim and type(dst) is ElementType:
        cast = _CASTS.get((x.dtype, dst))
        if cast is not None:  # integers and booleans to numpy's integers and floats
            return x.astype(cast)
    dst = dst if isinstance(dst, ElementType) else et_table.from_dtype(dst)
    if x.ndim == 0:  # ufuncs turn 0-d arrays into numpy scalars; work on one element instead
        return convert(x.reshape(1), dst).reshape(())
    src = et_table.from_dtype(x.dtype)
    # Signalling NaNs raise numpy's "invalid" flag in casts, and beyond a float type's range is
    # +-inf by IEEE rounding: the rules above define every result, so numpy need not warn.
    with np.errstate(invalid="ignore", over="ignore"):
        if src == dst:
            return x.copy()
        if src.name in _PLAIN and dst.name in _PLAIN:
            if x.ndim and type(x) is np.ndarray and type(dst) is ElementType:
                _cast_of(x.dtype, dst)
            return _convert(x, dst.dtype)
        return _convert_narrow(_values(x, src), src, dst)


# Conversions that are one numpy cast, which the path below makes too: integers and booleans
# to numpy's integers, f32 and f64 (no float source and no f16: no flag to silence, no
# rounding rule of their own). (source dtype, destination ElementType) -> numpy dtype, filled
# as met.
_CASTS: dict = {}
_CAST_TO = frozenset({"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64"})


def _cast_of(dtype: np.dtype, dst: ElementType) -> None:
    """Remember (dtype, dst) in _CASTS when converting to it is a plain numpy cast."""
    if dtype.kind in "biu" and et_table.from_dtype(dtype).name in _PLAIN \
            and dst.name in _CAST_TO and len(_CASTS) < 256:
        _CASTS[(dtype, dst)] = dst.dtype


def _values(x: np.ndarray, src: ElementType) -> np.ndarray:
    """The values of a narrow-typed array in a type numpy computes with, exactly."""
    if src.name in _PLAIN:
        return x
    if src.is_coded:  # u3, u6: the value; nf4: the codebook entry
        codes = x.view(np.uint8)
        return NF4_VALUES[codes] if src.name == "nf4" else codes
    if src.kind == "int":
        return x.astype(np.int8)
    if src.kind == "uint":
        return x.astype(np.uint8)
    if src.name == "f8e5m2":  # the top byte of an f16: widened bit for bit, NaN payloads kept
        return (x.view(np.uint8).astype(np.uint16) << np.uint16(8)).view(np.float16).astype(
            np.float32)
    return x.astype(np.float32)  # f8 and f4 values are all exact in f32


def _convert_narrow(v: np.ndarray, src: ElementType, dst: ElementType) -> np.ndarray:
    name = dst.name
    if name in _PLAIN:
        if src.name == "nf4" and name == "bf16":  # OpenVINO's own bf16 rounding, see below
            b = v.view(np.uint32)
            return ((b + ((b & np.uint32(0x10000)) >> np.uint32(1))) >> np.uint32(16)).astype(
                np.uint16).view(BF16)
        out = _convert(v, dst.dtype)
        if src.name == "f8e5m2" and name in _FLOATS:
            _keep_e5m2_nan_payloads(v, out)
        return out
    if dst.kind in ("int", "uint"):  # u1, u2, u3, u4, u6, i4
        return et_table.from_codes(dst, _low_bits(v, dst.bits))
    f = v.astype(np.float32)  # ints and f64 round to nearest even, as OpenVINO's first step
    if name in ("f8e4m3", "f8e5m2"):
        return _to_f8(f, dst)
    if name == "f8e8m0":
        return _to_e8m0(f).view(dst.dtype)
    if name == "f4e2m1":
        codes = f.astype(dst.dtype).view(np.uint8)
        nan = np.isnan(f)
        codes[nan] = np.where(np.signbit(f[nan]), np.uint8(0xF), np.uint8(0x7))  # +-6
        return codes.view(dst.dtype)
    if name == "nf4":
        codes = np.searchsorted(NF4_THRESHOLDS, f, side="left").astype(np.uint8)
        codes[np.isnan(f)] = 0
        return et_table.from_codes(dst, codes)
    raise AssertionError(f"no conversion to {dst}")


# An f8e5m2 NaN is the top byte of an f16 NaN: OpenVINO widens it with its payload (the two low
# bits of the code), through f32, as bits: f16 keeps the code's byte, bf16 the f32's top half,
# and f64 comes from the f32 by the hardware's conversion, which sets the quiet bit.
_E5M2_NAN = {"f16": (np.uint16, 15, 0x7C00, 8), "bf16": (np.uint16, 15, 0x7F80, 5),
             "f32": (np.uint32, 31, 0x7F800000, 21), "f64": (np.uint64, 63, 0x7FF8000000000000, 50)}


def _keep_e5m2_nan_payloads(v: np.ndarray, out: np.ndarray) -> None:
    """``v``: the f8e5m2 values as f32 (NaN payloads in bits 21-22); ``out``: converted."""
    nan = np.isnan(v)
    if not nan.any():
        return
    f32 = v[nan].view(np.uint32)
    uint, sign_shift, base, payload_shift = _E5M2_NAN[et_table.from_dtype(out.dtype).name]
    sign = (f32 >> np.uint32(31)).astype(uint) << uint(sign_shift)
    payload = ((f32 >> np.uint32(21)) & np.uint32(3)).astype(uint) << uint(payload_shift)
    out.view(uint)[nan] = sign | uint(base) | payload


def _low_bits(v: np.ndarray, bits: int) -> np.ndarray:
    """Integers as their low ``bits`` bits (uint8); floats truncated first, 0 for NaN, +-inf and
    magnitudes from 2**31 (OpenVINO goes through a 32-bit integer there)."""
    mask = (1 << bits) - 1
    if v.dtype == np.bool_:
        return v.astype(np.uint8)
    if v.dtype.kind in "iu":
        wide = v.astype(np.uint64) if v.dtype.kind == "u" else v.astype(np.int64).view(np.uint64)
        return (wide & np.uint64(mask)).astype(np.uint8)
    w = v.astype(np.float64)
    bad = ~np.isfinite(w) | (np.abs(w) >= 2.0**31)
    t = np.trunc(np.where(bad, 0.0, w)).astype(np.int64)
    return (t & mask).astype(np.uint8)


def _to_f8(f: np.ndarray, dst: ElementType) -> np.ndarray:
    half = f.astype(np.float16)  # round to nearest even; beyond f16's range is +-inf
    if dst.name == "f8e4m3":  # ml_dtypes: nearest even from the f16 value; overflow is NaN
        return half.astype(dst.dtype)
    h = half.view(np.uint16).astype(np.uint32)
    codes = ((h + 0x7F + ((h >> 8) & 1)) >> 8).astype(np.uint8)  # nearest even; overflow is inf
    nan = np.isnan(f)
    if nan.any():
        raw = f[nan].view(np.uint32)
        codes[nan] = (((raw >> 24) & 0x80) | 0x7C | ((raw >> 21) & 3)).astype(np.uint8)
    return codes.view(dst.dtype)


def _to_e8m0(f: np.ndarray) -> np.ndarray:
    bits = f.view(np.uint32)
    exponent = (bits >> 23) & 0xFF
    mantissa = bits & 0x7FFFFF
    half = np.uint32(0x400000)
    up = (mantissa > half) | ((mantissa == half) & (exponent & 1 == 1))
    code = np.minimum(exponent + up, 0xFE)  # rounding past 2**127 (and +inf) saturates
    subnormal = exponent == 0  # 2**-127 is code 0, 2**-126 code 1; 1.5 * 2**-127 rounds to 0
    code = np.where(subnormal, (mantissa > 0x600000).astype(np.uint32), code)
    code = np.where(bits >> 31 == 1, 0, code)  # negative (and -0, -NaN): the smallest code
    code = np.where(np.isnan(f) & (bits >> 31 == 0), 0xFF, code)
    return code.astype(np.uint8)


def _convert(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if dtype == np.bool_:
        return x != 0
    if _is_float(x.dtype) and dtype.kind in "iu":
        return _float_to_int(x, dtype)
    if dtype == BF16 and x.dtype != BF16 and (x.dtype == np.float64 or x.dtype.kind in "iu"):
        return _round_to_odd_f32(x).astype(BF16)
    return x.astype(dtype)


def _is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or dtype == BF16


def _float_to_int(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    wide = x.astype(np.float64)  # exact for every float type irexec holds
    with np.errstate(invalid="ignore", over="ignore"):
        out = np.trunc(wide).astype(dtype)
    # float(info.max) may round up past the maximum (2**63 for i64), so compare as floats.
    out[wide >= float(info.max)] = info.max
    out[wide <= float(info.min)] = info.min
    out[np.isnan(wide)] = 0
    return out


def _round_to_odd_f64_from_int(x: np.ndarray) -> np.ndarray:
    """Integers to f64, rounded to odd (exact whenever |x| < 2**53)."""
    negative = x < 0 if x.dtype.kind == "i" else np.zeros(x.shape, dtype=bool)
    magnitude = x.astype(np.int64).astype(np.uint64) if x.dtype.kind == "i" else x.astype(np.uint64)
    magnitude[negative] = (~magnitude[negative]) + np.uint64(1)  # |INT64_MIN| fits in uint64
    f = magnitude.astype(np.float64)
    f[f >= 2.0**64] = np.nextafter(2.0**64, 0)  # keep back-conversion in range
    with np.errstate(invalid="ignore"):
        back = f.astype(np.uint64)
    up = back > magnitude
    f[up] = np.nextafter(f[up], 0)
    inexact = f.astype(np.uint64) != magnitude
    bits = f.view(np.uint64)
    bits[inexact] |= np.uint64(1)
    f[negative] = -f[negative]
    return f


def _round_to_odd_f32(x: np.ndarray) -> np.ndarray:
    """f64 (or integers) to f32 rounded to odd: later rounding to bf16 is then exact."""
    wide = _round_to_odd_f64_from_int(x) if x.dtype.kind in "iu" else x.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        f = wide.astype(np.float32)
    finite = np.isfinite(wide)
    back = f.astype(np.float64)
    away = finite & (np.abs(back) > np.abs(wide))  # rounding went away from zero: step back
    f[away] = np.nextafter(f[away], np.float32(0))
    inexact = finite & (f.astype(np.float64) != wide)
    bits = f.view(np.uint32)
    bits[inexact] |= np.uint32(1)
    return f
