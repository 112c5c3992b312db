"""How each element type is laid out in a .bin file, both ways: bytes -> array -> bytes.

In memory every element takes one byte at least (see irexec/ir/element_type.py). In the .bin, as
OpenVINO 2026.4.1 writes and reads them:

* whole-byte numbers (i8..u64, f16, bf16, f32, f64, f8*): little-endian, back to back -- read as a
  zero-copy view of the payload's bytes;
* boolean: one byte each, any nonzero byte is true (written as 0 and 1);
* u1: eight per byte, the first element in the most significant bit;
* u2, u4, i4, nf4, f4e2m1: four or two per byte, the first element in the lowest bits;
* u3: eight elements in three bytes, u6: four in three bytes (the bit positions are below);
* string: an int32 count N, N+1 int32 offsets into the text that follows (where each string
  starts, then where the last ends), then the UTF-8 bytes. Bytes that are not UTF-8 are kept with
  Python's ``surrogateescape``, so they are written back unchanged.

Bits past the last element of a packed tensor are written as zeros.
"""

from __future__ import annotations

import sys

import numpy as np

from irexec.ir.element_type import ElementType, from_codes, to_codes

# Shifts of each element inside its byte, in element order.
_LOW_FIRST = {2: (0, 2, 4, 6), 4: (0, 4)}
_U1_SHIFTS = (7, 6, 5, 4, 3, 2, 1, 0)


class LayoutError(ValueError):
    """A payload that cannot be a tensor of this type (a malformed string table, a value too wide
    for its type)."""


def min_size(et: ElementType, count: int) -> int:
    """The fewest bytes a payload of ``count`` elements can take (strings: the header with every
    string empty)."""
    if et.kind == "string":
        return 4 * (count + 2)
    return et.nbytes(count)


def decode(et: ElementType, buffer, offset: int, size: int, shape: tuple[int, ...]) -> np.ndarray:
    """The tensor stored at ``buffer[offset:offset + size]``; the caller has checked that the
    range lies in the buffer and holds at least :func:`min_size` bytes. Whole-byte types are
    read-only views of ``buffer``; the others are decoded into new arrays."""
    count = 1
    for d in shape:
        count *= d
    if et.kind == "string":
        return _decode_strings(buffer, offset, size, count).reshape(shape)
    if et.kind == "boolean":
        return (np.frombuffer(buffer, np.uint8, count, offset) != 0).reshape(shape)
    if et.bits % 8 == 0:
        dtype = et.dtype
        if sys.byteorder != "little" and dtype.itemsize > 1:
            dtype = dtype.newbyteorder("<")
        array = np.frombuffer(buffer, dtype, count, offset).reshape(shape)
        return array if dtype is et.dtype else array.astype(et.dtype)
    raw = np.frombuffer(buffer, np.uint8, et.nbytes(count), offset)
    return from_codes(et, _unpack(et, raw, count)).reshape(shape)


def encode(et: ElementType, array: np.ndarray) -> bytes:
    """The bytes OpenVINO stores for ``array`` as a tensor of type ``et``."""
    array = np.asarray(array)
    if et.kind == "string":
        return _encode_strings(array)
    if et.kind == "boolean":
        return np.ascontiguousarray(array != 0, dtype=np.uint8).tobytes()
    if et.bits % 8 == 0:
        array = np.ascontiguousarray(array, dtype=et.dtype)
        if array.dtype.itemsize > 1 and sys.byteorder != "little":
            array = array.astype(array.dtype.newbyteorder("<"))
        return array.tobytes()
    try:
        codes = to_codes(et, array)
    except ValueError as e:
        raise LayoutError(str(e)) from None
    return _pack(et, codes).tobytes()


def _unpack(et: ElementType, raw: np.ndarray, count: int) -> np.ndarray:
    if et.bits == 1:
        return np.unpackbits(raw, count=count)  # most significant bit first
    if et.bits in _LOW_FIRST:
        shifts = np.array(_LOW_FIRST[et.bits], dtype=np.uint8)
        return ((raw[:, None] >> shifts) & np.uint8(et.max_code)).reshape(-1)[:count]
    if et.bits == 3:
        return _unpack_u3(raw, count)
    if et.bits == 6:
        return _unpack_u6(raw, count)
    raise AssertionError(f"no .bin layout for {et}")


def _pack(et: ElementType, codes: np.ndarray) -> np.ndarray:
    count = codes.size
    if et.bits == 1:
        return np.packbits(codes)
    if et.bits in _LOW_FIRST:
        per = 8 // et.bits
        padded = np.zeros(-(-count // per) * per, dtype=np.uint8)
        padded[:count] = codes
        groups = padded.reshape(-1, per) << np.array(_LOW_FIRST[et.bits], dtype=np.uint8)
        return np.bitwise_or.reduce(groups, axis=1).astype(np.uint8)
    if et.bits == 3:
        return _pack_u3(codes)
    if et.bits == 6:
        return _pack_u6(codes)
    raise AssertionError(f"no .bin layout for {et}")


# u3: eight elements in three bytes. Element i's low two bits sit in byte i // 4 (the first
# element in the top two bits), its third bit in byte 2 at bit 7 - i.
_U3_LOW_BYTE = np.array([0, 0, 0, 0, 1, 1, 1, 1])
_U3_LOW_SHIFT = np.array([6, 4, 2, 0, 6, 4, 2, 0], dtype=np.uint8)
_U3_HIGH_SHIFT = np.array([7, 6, 5, 4, 3, 2, 1, 0], dtype=np.uint8)
# u6: four elements in three bytes. Element i's low four bits sit in byte i // 2 (the first element
# in the high nibble), its top two bits in byte 2 at bits 6 - 2i and 7 - 2i.
_U6_LOW_BYTE = np.array([0, 0, 1, 1])
_U6_LOW_SHIFT = np.array([4, 0, 4, 0], dtype=np.uint8)
_U6_HIGH_SHIFT = np.array([6, 4, 2, 0], dtype=np.uint8)


def _unpack_u3(raw: np.ndarray, count: int) -> np.ndarray:
    groups = raw.reshape(-1, 3)
    low = (groups[:, _U3_LOW_BYTE] >> _U3_LOW_SHIFT) & np.uint8(3)
    high = (groups[:, 2:3] >> _U3_HIGH_SHIFT) & np.uint8(1)
    return (low | (high << np.uint8(2))).reshape(-1)[:count]


def _pack_u3(codes: np.ndarray) -> np.ndarray:
    groups = _grouped(codes, 8)
    out = np.zeros((groups.shape[0], 3), dtype=np.uint8)
    low = (groups & np.uint8(3)) << _U3_LOW_SHIFT
    out[:, 0] = np.bitwise_or.reduce(low[:, :4], axis=1)
    out[:, 1] = np.bitwise_or.reduce(low[:, 4:], axis=1)
    out[:, 2] = np.bitwise_or.reduce((groups >> np.uint8(2)) << _U3_HIGH_SHIFT, axis=1)
    return out.reshape(-1)


def _unpack_u6(raw: np.ndarray, count: int) -> np.ndarray:
    groups = raw.reshape(-1, 3)
    low = (groups[:, _U6_LOW_BYTE] >> _U6_LOW_SHIFT) & np.uint8(15)
    high = (groups[:, 2:3] >> _U6_HIGH_SHIFT) & np.uint8(3)
    return (low | (high << np.uint8(4))).reshape(-1)[:count]


def _pack_u6(codes: np.ndarray) -> np.ndarray:
    groups = _grouped(codes, 4)
    out = np.zeros((groups.shape[0], 3), dtype=np.uint8)
    low = (groups & np.uint8(15)) << _U6_LOW_SHIFT
    out[:, 0] = low[:, 0] | low[:, 1]
    out[:, 1] = low[:, 2] | low[:, 3]
    out[:, 2] = np.bitwise_or.reduce((groups >> np.uint8(4)) << _U6_HIGH_SHIFT, axis=1)
    return out.reshape(-1)


def _grouped(codes: np.ndarray, size: int) -> np.ndarray:
    """The codes in rows of ``size``, the last row padded with zeros."""
    padded = np.zeros(-(-codes.size // size) * size, dtype=np.uint8)
    padded[:codes.size] = codes
    return padded.reshape(-1, size)


def _decode_strings(buffer, offset: int, size: int, count: int) -> np.ndarray:
    header = np.frombuffer(buffer, "<i4", 1, offset)
    if int(header[0]) != count:
        raise LayoutError(f"the string table says it holds {int(header[0])} strings but the "
                          f"shape holds {count}")
    ends = np.frombuffer(buffer, "<i4", count + 1, offset + 4).astype(np.int64)
    text_start = offset + 4 * (count + 2)
    text_size = size - 4 * (count + 2)
    if ends[0] != 0 or np.any(ends[1:] < ends[:-1]) or ends[-1] > text_size:
        raise LayoutError(f"the string table's offsets must start at 0, never decrease and end "
                          f"within the {text_size} bytes of text that follow it")
    text = bytes(buffer[text_start:text_start + int(ends[-1])])
    out = np.empty(count, dtype=object)
    starts = ends[:-1].tolist()
    stops = ends[1:].tolist()
    for i in range(count):
        out[i] = text[starts[i]:stops[i]].decode("utf-8", "surrogateescape")
    return out


def _encode_strings(array: np.ndarray) -> bytes:
    try:
        parts = [str(v).encode("utf-8", "surrogateescape") for v in array.reshape(-1).tolist()]
    except UnicodeEncodeError as e:
        raise LayoutError(f"a string holds the lone surrogate {e.object[e.start]!r}, which "
                          f"stands for no byte and cannot be written") from None
    ends = np.zeros(len(parts) + 1, dtype="<i8")
    np.cumsum([len(p) for p in parts], out=ends[1:])
    if ends[-1] >= 2**31:
        raise LayoutError("a string tensor's text exceeds 2 GiB, more than a .bin string table "
                          "can address")
    return (np.array([len(parts)], "<i4").tobytes() + ends.astype("<i4").tobytes()
            + b"".join(parts))


def used_size(et: ElementType, buffer, offset: int, count: int) -> int:
    """How many bytes the payload at ``offset`` actually uses (strings: header plus text)."""
    if et.kind == "string":
        end = int(np.frombuffer(buffer, "<i4", 1, offset + 4 * (count + 1))[0])
        return 4 * (count + 2) + end
    return et.nbytes(count)
