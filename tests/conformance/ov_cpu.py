"""Where OpenVINO 2026.4.1's CPU plugin is exact, written as predicates on input values.

Sources: /work/shared/facts/openvino.md (a), (b) and the Convert measurements summarised in
docs/compatibility.md. The conformance tests compare irexec with OpenVINO bit for bit on values
these predicates accept, and separately show that irexec is exact on values they reject.
"""

from __future__ import annotations

import math

import numpy as np

from tests.ops.convert_reference import expected_in_range

NARROWED_TO_32 = ("i64", "u64")  # Reverse / ReverseSequence data narrowed to 32 bits
VIA_F32 = ("i32", "u32", "i64", "u64", "f64")  # ReverseSequence data computed in f32


def _float(x) -> float:
    return float(x)


def _exact_in_f32(v: float, subnormal_ok: bool = False) -> bool:
    if not math.isfinite(v) or abs(v) > 3.4028234663852886e38:
        return False
    normal = v == 0 or abs(v) >= 2.0**-126
    return float(np.float32(v)) == v and (normal or subnormal_ok)


def _exact_in_bf16(v) -> bool:
    import ml_dtypes

    f = float(v)
    return (math.isfinite(f) and float(np.float32(f).astype(ml_dtypes.bfloat16)) == f
            and (f == 0 or abs(f) >= 2.0**-126))


def _is_signalling_nan(x) -> bool:
    a = np.asarray(x)
    if a.dtype.kind == "b" or not np.isnan(a.astype(np.float64)):
        return False
    width = a.dtype.itemsize * 8
    raw = int(a.reshape(1).view(f"u{a.dtype.itemsize}")[0])
    quiet_bit = {16: 9 if a.dtype == np.float16 else 6, 32: 22, 64: 51}[width]
    return not raw >> quiet_bit & 1


def data_ok(op: str, type_name: str, x) -> bool:
    """Does the CPU plugin move this data value through Reverse / ReverseSequence unchanged?"""
    if type_name in NARROWED_TO_32:
        if not -(2**31) <= int(x) < 2**31:
            return False
        if op == "Reverse":
            return True
    if op == "ReverseSequence" and type_name in ("i32", "u32", "i64", "u64"):
        return abs(int(x)) <= 2**24
    if type_name == "f64":
        v = _float(x)
        return _exact_in_f32(v, subnormal_ok=True)  # no NaN, inf, nor what f32 cannot hold
    if type_name == "f16" or (type_name == "bf16" and op == "ReverseSequence"):
        return not _is_signalling_nan(x)  # the plugin goes through f32 and quiets them
    return True


def convert_ok(src: str, dst: str, x) -> bool:
    """Does the CPU plugin convert this in-range value exactly (static shapes)?"""
    expected = expected_in_range(x, dst)
    if expected is None:
        return False
    if src == "boolean":
        return True
    f = float(x)
    if math.isnan(f):
        return False
    int_src = src not in ("f16", "bf16", "f32", "f64")
    if src == "f64" and not (_exact_in_f32(f) or f == 0):
        return False  # every f64 value goes through f32 first
    if dst == "boolean":
        if int_src:
            v = int(x)
            if src in ("u32", "u64"):
                return 0 <= v < 2**31
            return -(2**31) < v < 2**31
        return True
    if dst in ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"):
        if int_src:
            v = int(x)
            if dst in ("i64", "u64") and src in ("i64", "u64", "u32"):
                return -(2**31) <= v < 2**31
            return True
        t = math.trunc(f)
        if dst in ("i64", "u64", "u32") and src != "f16":
            return -(2**31) <= t < 2**31
        return True
    # float destinations
    if math.isinf(f):
        return dst != "f64" and src != "f64"
    if dst == "bf16":
        if int_src:
            return _exact_in_bf16(int(x)) if src not in ("i8", "u8") else True
        # Float to bf16 rounds the CPU's own way (it depends on the instruction set: AVX-512
        # machines flush f32 subnormals, AVX2-only ones round neither to nearest-even nor
        # toward zero), so only values bf16 holds exactly are a test of the plugin.
        return _exact_in_bf16(f)
    if dst == "f64" and int_src:
        return float(np.float32(int(x))) == int(x)
    return True
