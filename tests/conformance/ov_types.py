"""OpenVINO tensors of the narrow element types, bit for bit (helpers for test_openvino_types.py).

OpenVINO's Python API holds sub-byte tensors (u1, u2, u3, u4, u6, i4, nf4, f4e2m1) packed, and
the f8 types as raw bytes; it does not take ml_dtypes arrays. These helpers pack raw codes into
OpenVINO's layout, unpack its outputs, and run one Convert the ways OpenVINO can (core
``evaluate``, a constant-folded CPU model, a CPU Parameter). The layout is written here from the
measured description (notes/types.md section 1), independently of irexec/io/bin_layout.py, so
that the round-trip tests check irexec's writer against OpenVINO, not against itself.

Raw codes are unsigned integers: the low ``bits`` bits for sub-byte types (i4 -1 is 15), the
little-endian bit pattern for whole-byte types (booleans as 0/1).
"""

from __future__ import annotations

import numpy as np

from irexec.ir import element_type as et_table

OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}

# (elements per group, bytes per group, bits per element) of the packed types
GROUPS = {"u1": (8, 1, 1), "u2": (4, 1, 2), "u3": (8, 3, 3), "u4": (2, 1, 4), "i4": (2, 1, 4),
          "nf4": (2, 1, 4), "f4e2m1": (2, 1, 4), "u6": (4, 3, 6)}

# nf4's codebook as f32 bit patterns (OpenVINO's ConvertNF4::dequantize, notes/types.md section 2)
NF4_F32_BITS = np.array([
    0xBF800000, 0xBF3239B1, 0xBF066B30, 0xBECA32A0, 0xBE91A24D, 0xBE3D353F, 0xBDBA7871, 0x00000000,
    0x3DA2FAFF, 0x3E24CAE3, 0x3E7C04DD, 0x3EAD033A, 0x3EE1A4B8, 0x3F1007AB, 0x3F3913B3, 0x3F800000,
], dtype=np.uint32)
# f4e2m1 magnitudes of codes 0..7; bit 3 is the sign
F4E2M1_MAGNITUDES = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], np.float32)


def packed_size(type_name: str, n: int) -> int:
    per, nbytes, _ = GROUPS[type_name]
    return nbytes * -(-n // per)


def _positions(type_name: str, i: int) -> list[tuple[int, int, int]]:
    """Where element ``i`` of a group lives: (byte, shift, width) pieces, low bits first."""
    if type_name == "u1":
        return [(0, 7 - i, 1)]
    if type_name == "u2":
        return [(0, 2 * i, 2)]
    if type_name in ("u4", "i4", "nf4", "f4e2m1"):
        return [(0, 4 * i, 4)]
    if type_name == "u3":  # two low bits MSB-first in bytes 0-1, bit 2 in byte 2 (MSB first)
        return [(i // 4, 6 - 2 * (i % 4), 2), (2, 7 - i, 1)]
    if type_name == "u6":  # low nibble high-first in bytes 0-1, two high bits in byte 2
        return [(i // 2, 4 * (1 - i % 2), 4), (2, 6 - 2 * i, 2)]
    raise KeyError(type_name)


def pack(type_name: str, codes) -> bytes:
    """Raw codes -> OpenVINO's packed bytes (padding bits 0), one element at a time."""
    per, nbytes, bits = GROUPS[type_name]
    codes = [int(c) & ((1 << bits) - 1) for c in np.asarray(codes).reshape(-1).tolist()]
    out = bytearray(packed_size(type_name, len(codes)))
    for k, code in enumerate(codes):
        base = (k // per) * nbytes
        low = 0
        for byte, shift, width in _positions(type_name, k % per):
            out[base + byte] |= ((code >> low) & ((1 << width) - 1)) << shift
            low += width
    return bytes(out)


def unpack(type_name: str, raw, n: int) -> np.ndarray:
    """OpenVINO's packed bytes -> ``n`` raw codes (uint8); padding bits are ignored."""
    per, nbytes, _ = GROUPS[type_name]
    raw = bytes(raw)
    out = np.zeros(n, np.uint8)
    for k in range(n):
        base = (k // per) * nbytes
        code, low = 0, 0
        for byte, shift, width in _positions(type_name, k % per):
            code |= ((raw[base + byte] >> shift) & ((1 << width) - 1)) << low
            low += width
        out[k] = code
    return out


def is_packed(type_name: str) -> bool:
    return type_name in GROUPS


def ov_type(ov, type_name: str):
    return getattr(ov.Type, type_name)


def width(type_name: str) -> int:
    """Bytes per element of a whole-byte type."""
    return et_table.from_name(type_name).dtype.itemsize


def raw_of_array(type_name: str, array: np.ndarray) -> np.ndarray:
    """irexec's array (or a plain numpy one) -> raw codes as unsigned integers, flat."""
    array = np.asarray(array)
    if is_packed(type_name):
        return et_table.to_codes(et_table.from_name(type_name), array).astype(np.uint64)
    if type_name == "boolean":
        return array.reshape(-1).astype(np.uint64)
    w = width(type_name)
    flat = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    return flat.view(f"<u{w}").astype(np.uint64)


def array_of_raw(type_name: str, raw) -> np.ndarray:
    """Raw codes -> an array of irexec's dtype for the type."""
    et = et_table.from_name(type_name)
    raw = np.asarray(raw, np.uint64)
    if is_packed(type_name):
        return et_table.from_codes(et, raw.astype(np.uint8))
    if type_name == "boolean":
        return raw != 0
    return raw.astype(f"<u{et.dtype.itemsize}").view(et.dtype)


def tensor(ov, type_name: str, raw, shape=None):
    """An ov.Tensor of the type holding these raw codes (a new buffer)."""
    raw = np.asarray(raw, np.uint64).reshape(-1)
    shape = [raw.size] if shape is None else list(shape)
    t = ov.Tensor(ov_type(ov, type_name), ov.Shape(shape))
    buf = np.asarray(t.data).view(np.uint8).reshape(-1)
    if is_packed(type_name):
        buf[:] = np.frombuffer(pack(type_name, raw), np.uint8)
    else:
        w = 1 if type_name == "boolean" else width(type_name)
        buf[:] = raw.astype(f"<u{w}").view(np.uint8)
    return t


def raw_of_tensor(type_name: str, t, n: int | None = None) -> np.ndarray:
    """An ov.Tensor's raw codes (flat, uint64); only real elements, padding bits ignored."""
    n = t.get_size() if n is None else n
    buf = np.asarray(t.data).view(np.uint8).reshape(-1).copy()
    if is_packed(type_name):
        return unpack(type_name, buf, n).astype(np.uint64)
    if type_name == "boolean":
        return buf[:n].astype(np.uint64)
    return buf.view(f"<u{width(type_name)}")[:n].astype(np.uint64)


def values_f32(type_name: str, raw) -> np.ndarray:
    """The f32 value of each raw code of a narrow type (independent of irexec: codebooks and
    ml_dtypes for the f8 formats)."""
    import ml_dtypes

    raw = np.asarray(raw, np.uint64)
    if type_name in ("u1", "u2", "u3", "u4", "u6"):
        return raw.astype(np.float32)
    if type_name == "i4":
        return ((raw.astype(np.int64) ^ 8) - 8).astype(np.float32)
    if type_name == "nf4":
        return NF4_F32_BITS[raw.astype(np.int64)].view(np.float32)
    if type_name == "f4e2m1":
        r = raw.astype(np.int64)
        return np.where(r & 8, -F4E2M1_MAGNITUDES[r & 7], F4E2M1_MAGNITUDES[r & 7])
    dtype = {"f8e4m3": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2,
             "f8e8m0": ml_dtypes.float8_e8m0fnu}[type_name]
    return raw.astype(np.uint8).view(dtype).astype(np.float32)


# --- running one Convert in OpenVINO -------------------------------------------------------------

def core_convert(ov, src: str, dst: str, src_tensor):
    """Core ``Convert.evaluate`` (OpenVINO's reference implementation); None if it refuses."""
    node = ov.opset1.convert(ov.op.Constant(src_tensor), ov_type(ov, dst))
    out = ov.Tensor(ov_type(ov, dst), src_tensor.get_shape())
    return out if node.evaluate([out], [src_tensor]) else None


_CORES: list = []


def _core(ov):
    """One ov.Core per process (creating one costs more than compiling a small model)."""
    if not _CORES:
        _CORES.append(ov.Core())
    return _CORES[0]


def cpu_convert(ov, src: str, dst: str, src_tensor, folded: bool):
    """The CPU plugin's Convert: of a Const (constant-folded) or of a Parameter. Raises the
    plugin's RuntimeError when it refuses."""
    shape = src_tensor.get_shape()
    if folded:
        source, params, feed = ov.op.Constant(src_tensor), [], {}
    else:
        source = ov.opset1.parameter(shape, ov_type(ov, src), name="x")
        params, feed = [source], {0: src_tensor}
    model = ov.Model([ov.opset1.result(ov.opset1.convert(source, ov_type(ov, dst)))], params, "c")
    request = _core(ov).compile_model(model, "CPU", OV_CONFIG).create_infer_request()
    request.infer(feed)
    return request.get_output_tensor(0)


def openvino_convert(ov, src: str, dst: str, src_tensor):
    """OpenVINO's answer for a pair: core evaluate where it converts the pair, else the CPU
    plugin on a folded Const. Returns (tensor, mode)."""
    out = core_convert(ov, src, dst, src_tensor)
    if out is not None:
        return out, "core"
    return cpu_convert(ov, src, dst, src_tensor, folded=True), "fold"


# --- which pairs OpenVINO converts at all (run in a subprocess: see refusal_matrix) -------------

def _sample(ov, type_name: str):
    if type_name == "string":
        return ov.Tensor(np.array(["1", "0"]))
    return tensor(ov, type_name, [1, 0])


def _works(ov, src: str, dst: str) -> list[str]:
    """The modes that convert the pair; the CPU is tried only where core evaluate refuses (every
    pair core converts is supported anyway)."""
    modes = []
    try:
        if core_convert(ov, src, dst, _sample(ov, src)) is not None:
            modes.append("core")
    except Exception:  # noqa: BLE001 - any refusal counts as "does not convert"
        pass
    for folded in (True, False):
        if modes:
            break
        try:
            cpu_convert(ov, src, dst, _sample(ov, src), folded)
            modes.append("fold" if folded else "cpu")
        except Exception:  # noqa: BLE001
            pass
    return modes


def refusal_matrix(pairs: list[tuple[str, str]]) -> dict[str, list[str]]:
    """For each pair, the modes in which OpenVINO converts it ("core", then "fold", then "cpu":
    the first that works). Each CPU compile takes tens of milliseconds; two threads overlap them.
    Run this in a subprocess: a refused CPU model can take the process down."""
    from concurrent.futures import ThreadPoolExecutor

    import openvino as ov

    with ThreadPoolExecutor(2) as pool:
        modes = list(pool.map(lambda p: _works(ov, *p), pairs))
    return {f"{s}->{d}": m for (s, d), m in zip(pairs, modes)}


if __name__ == "__main__":  # python -m tests.conformance.ov_types < pairs.json > modes.json
    import json
    import sys

    print(json.dumps(refusal_matrix([tuple(p) for p in json.load(sys.stdin)])))
