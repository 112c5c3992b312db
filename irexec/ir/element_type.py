"""The one table of element types.

Every name an IR file may use for an element type, its legacy precision spelling, its bit width and
the numpy dtype irexec computes with live here and nowhere else.

In memory every element takes at least one byte: numpy's own dtypes where they exist, ml_dtypes'
for bf16, the f8/f4 floats, i4, u1, u2 and u4, and for u3, u6 (the value) and nf4 (the 4-bit
codebook index) one byte under a one-field structured dtype named after the type
(``np.dtype([("nf4", "u1")])``), so an array's dtype always names its element type. ``string`` is a
numpy object array of Python ``str``. ``complex64``/``complex128`` are not OpenVINO types:
irexec's names for ONNX's, computed with but never written to IR files (see
:attr:`ElementType.in_ir`). How each type is packed in a .bin file is irexec/io/bin_layout.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np


class Flag:
    """A yes/no fact that reads both ways OpenVINO's and irexec's code ask it: ``et.is_real``
    (a property, irexec's) and ``et.is_real()`` (a method, OpenVINO's ``Type``). Truthy as the
    fact, equal to the bool; two objects, ``Flag.TRUE`` and ``Flag.FALSE``.

    NOTE for developers: the one element-type table serves both APIs, and the two spell these
    questions differently; a Flag lets existing ``if et.is_real:`` code and scripts written for
    ``ov.Type`` run on the same objects. ``is`` comparisons with True/False do not hold."""

    __slots__ = ("_value",)
    TRUE: Flag
    FALSE: Flag

    def __init__(self, value: bool):
        self._value = value

    def __bool__(self) -> bool:
        return self._value

    __call__ = __bool__

    def __index__(self) -> int:
        return int(self._value)

    def __eq__(self, other) -> bool:
        return self._value == bool(other) if isinstance(other, (Flag, bool)) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._value)

    def __repr__(self) -> str:
        return repr(self._value)

    def __reduce__(self):
        return _flag, (self._value,)


Flag.TRUE, Flag.FALSE = Flag(True), Flag(False)


def _flag(value: bool) -> Flag:
    return Flag.TRUE if value else Flag.FALSE


class _TypeLookup(type):
    """``ElementType(np.float32)``, ``ElementType(float)``, ``ElementType("f32")``: the table's
    entry, as OpenVINO's ``Type(dtype)``; the full five-field form builds a table row."""

    def __call__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs:
            return lookup(args[0])
        return super().__call__(*args, **kwargs)


@dataclass(frozen=True)
class ElementType(metaclass=_TypeLookup):
    """An OpenVINO element type: ``f32``, ``i64``, ``boolean`` ... Also OpenVINO's ``Type``
    (``irexec.Type`` is this class): ``Type.f32``, ``Type(np.float32)``, ``to_dtype()``,
    ``get_size()``, ``is_real()`` ... (the questions OpenVINO asks with a call are
    :class:`Flag` s here, so ``is_real`` and ``is_real()`` both work)."""

    name: str  # the IR name, as written in element_type="..."
    precision: str  # the legacy precision name, as written on ports: FP32, I64, BOOL ...
    bits: int
    kind: str  # "boolean", "int", "uint", "float", "complex", "string", "dynamic", "other"
    dtype: np.dtype | None  # what irexec holds the values in; None = not supported

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"ElementType.{self.name}"

    @property
    def is_supported(self) -> bool:
        return self.dtype is not None

    @property
    def in_ir(self) -> bool:
        """Held in IR files: every supported type but complex (not an OpenVINO type, held only
        for ONNX models and the Python API)."""
        return self.is_supported and self.kind != "complex"

    @property
    def is_openvino(self) -> bool:
        """An element type OpenVINO knows (complex64/complex128 are irexec's, for ONNX)."""
        return self.kind != "complex"

    @property
    def is_integral(self) -> Flag:
        """An integer type (signed or unsigned); boolean is not one. (OpenVINO's
        ``is_integral()`` counts boolean: that is :attr:`integral`.)"""
        return _flag(self.kind in ("int", "uint"))

    @property
    def is_real(self) -> Flag:
        return _flag(self.kind == "float")

    @property
    def is_numeric(self) -> bool:
        return self.kind in ("int", "uint", "float")

    @property
    def is_dynamic(self) -> Flag:
        return _flag(self.kind == "dynamic")

    @property
    def is_narrow(self) -> bool:
        """Fewer bits than the byte each element takes in memory (u1 ... u6, i4, nf4, f4e2m1)."""
        return self.bits < 8 and self.is_supported

    @property
    def is_coded(self) -> bool:
        """Held as its raw code in a one-field structured uint8 dtype (u3, u6, nf4)."""
        return self.dtype is not None and self.dtype.names is not None

    @property
    def max_code(self) -> int:
        """The largest raw code of a narrow type (7 for u3, 15 for nf4)."""
        return (1 << self.bits) - 1

    def nbytes(self, count: int) -> int:
        """Bytes that ``count`` elements of this type take in a .bin file. u3 and u6 are stored in
        whole groups of three bytes (eight u3 or four u6 elements)."""
        if self.bits in (3, 6):
            per_group = 24 // self.bits
            return 3 * -(-count // per_group)
        return (count * self.bits + 7) // 8

    # --- OpenVINO's Type ------------------------------------------------------------------------
    # Its methods and properties, answered from the row; nothing here is a second table.

    @property
    def is_static(self) -> Flag:
        return _flag(self.kind != "dynamic")

    @property
    def is_signed(self) -> Flag:
        """OpenVINO's answer: the signed integers, the floats and boolean."""
        return _flag(self.kind in ("int", "float", "boolean"))

    @property
    def is_quantized(self) -> Flag:
        """OpenVINO's quantized types (a list of its own: i4, i8, i32, u8, nf4, the f8 and
        f4 floats)."""
        return _flag(self.name in _QUANTIZED)

    @property
    def is_integral_number(self) -> Flag:
        """OpenVINO's ``is_integral_number()``: not a float, not boolean."""
        return _flag(self.integral_number)

    @property
    def real(self) -> bool:
        return self.kind == "float"

    @property
    def integral(self) -> bool:
        """OpenVINO's ``integral``: not a float (boolean, nf4, string count)."""
        return self.kind not in ("float", "complex")

    @property
    def integral_number(self) -> bool:
        return self.integral and self.kind != "boolean"

    @property
    def signed(self) -> bool:
        return bool(self.is_signed)

    @property
    def quantized(self) -> bool:
        return bool(self.is_quantized)

    def to_dtype(self) -> np.dtype:
        """The numpy dtype irexec holds this type in (and takes inputs of): numpy's own,
        ml_dtypes' for bf16, f8, i4, u1 ... (OpenVINO's gives float16 for bf16 and uint8 or
        int8 for the narrow types; docs/api.md)."""
        if self.dtype is None:
            raise RuntimeError(f"element type {self.name} has no numpy dtype")
        return self.dtype

    def get_type_name(self) -> str:
        return self.name

    @property
    def type_name(self) -> str:
        return self.name

    def to_string(self) -> str:
        return self.name

    def get_size(self) -> int:
        """Bytes of one element, rounded up (OpenVINO's: 1 for u1, 4 for f32, 32 for string,
        its C++ string object)."""
        return (self.get_bitwidth() + 7) // 8

    @property
    def size(self) -> int:
        return self.get_size()

    def get_bitwidth(self) -> int:
        return 256 if self.kind == "string" else self.bits

    @property
    def bitwidth(self) -> int:
        return self.get_bitwidth()

    def compatible(self, other) -> bool:
        other = lookup(other)
        return self == other or self.kind == "dynamic" or other.kind == "dynamic"

    def merge(self, other) -> ElementType | None:
        """The type both allow (dynamic gives way), None when they differ."""
        other = lookup(other)
        if self.kind == "dynamic":
            return other
        if other.kind == "dynamic" or other == self:
            return self
        return None

    def __reduce__(self):
        return lookup, (self.name,)  # unpickled: the table's own row

    # Class-level attributes (ElementType.f32 ...) are attached below the table.


def _et(name, precision, bits, kind, dtype):
    return ElementType(name, precision, bits, kind, None if dtype is None else np.dtype(dtype))


_TABLE: tuple[ElementType, ...] = (
    _et("boolean", "BOOL", 8, "boolean", np.bool_),
    _et("i8", "I8", 8, "int", np.int8),
    _et("i16", "I16", 16, "int", np.int16),
    _et("i32", "I32", 32, "int", np.int32),
    _et("i64", "I64", 64, "int", np.int64),
    _et("u8", "U8", 8, "uint", np.uint8),
    _et("u16", "U16", 16, "uint", np.uint16),
    _et("u32", "U32", 32, "uint", np.uint32),
    _et("u64", "U64", 64, "uint", np.uint64),
    _et("f16", "FP16", 16, "float", np.float16),
    _et("f32", "FP32", 32, "float", np.float32),
    _et("f64", "FP64", 64, "float", np.float64),
    _et("bf16", "BF16", 16, "float", ml_dtypes.bfloat16),
    # Narrow types, one element per byte in memory (packed in .bin files: irexec/io/bin_layout.py).
    _et("f8e4m3", "F8E4M3", 8, "float", ml_dtypes.float8_e4m3fn),
    _et("f8e5m2", "F8E5M2", 8, "float", ml_dtypes.float8_e5m2),
    _et("f8e8m0", "F8E8M0", 8, "float", ml_dtypes.float8_e8m0fnu),
    _et("f4e2m1", "F4E2M1", 4, "float", ml_dtypes.float4_e2m1fn),
    _et("i4", "I4", 4, "int", ml_dtypes.int4),
    _et("u1", "BIN", 1, "uint", ml_dtypes.uint1),
    _et("u2", "U2", 2, "uint", ml_dtypes.uint2),
    _et("u4", "U4", 4, "uint", ml_dtypes.uint4),
    # No numpy or ml_dtypes type: the value (u3, u6) or codebook index (nf4) in one byte, under a
    # one-field structured dtype named after the type, so that the dtype alone names the type.
    _et("u3", "U3", 3, "uint", [("u3", np.uint8)]),
    _et("u6", "U6", 6, "uint", [("u6", np.uint8)]),
    _et("nf4", "NF4", 4, "nf4", [("nf4", np.uint8)]),
    _et("string", "STRING", 8, "string", object),  # numpy object arrays of Python str
    # Not OpenVINO types: ONNX's complex types, under precision names no IR uses.
    _et("complex64", "IREXEC_COMPLEX64", 64, "complex", np.complex64),
    _et("complex128", "IREXEC_COMPLEX128", 128, "complex", np.complex128),
    _et("dynamic", "UNSPECIFIED", 0, "dynamic", None),  # OpenVINO's serializer writes UNSPECIFIED
)

_BY_NAME = {et.name: et for et in _TABLE}
# element_type="..." accepts the IR names in any case; "undefined" is OpenVINO's old name for dynamic.
_BY_IR_NAME = {**{et.name.lower(): et for et in _TABLE}, "undefined": _BY_NAME["dynamic"]}
# precision="..." on ports also accepts the legacy upper-case names (case-sensitively, as OpenVINO).
_BY_PRECISION = {
    **{et.name: et for et in _TABLE},
    **{et.precision: et for et in _TABLE},
    "U1": _BY_NAME["u1"],  # accepted by OpenVINO beside BIN and u1
    "undefined": _BY_NAME["dynamic"],
}
_BY_DTYPE = {et.dtype: et for et in _TABLE if et.dtype is not None}

for _et_item in _TABLE:
    setattr(ElementType, _et_item.name, _et_item)

# The types irexec computes with everywhere, IR files included; NOT_IN_IR are computed with too,
# for ONNX models and the Python API only (complex64, complex128).
SUPPORTED: tuple[ElementType, ...] = tuple(et for et in _TABLE if et.in_ir)
NOT_IN_IR: tuple[ElementType, ...] = tuple(et for et in _TABLE if et.is_supported and not et.in_ir)


_QUANTIZED = frozenset({"i4", "i8", "i32", "u8", "nf4", "f8e4m3", "f8e5m2", "f8e8m0", "f4e2m1"})

# Python's own types as OpenVINO's Type() reads them.
_BY_PYTHON_TYPE = {float: "f64", int: "i64", bool: "boolean", str: "string", bytes: "string"}


def lookup(value) -> ElementType:
    """An element type from anything that names one: an ElementType, an IR name ("f32"), a
    numpy dtype or scalar type, or Python's float, int, bool, str. TypeError if it names
    none (a user's argument: say what was given)."""
    if isinstance(value, ElementType):
        return value
    if isinstance(value, str):
        try:
            return from_name(value)
        except KeyError:
            raise TypeError(f"{value!r} is not an element type name (such as f32, i64, "
                            f"boolean)") from None
    if isinstance(value, type) and value in _BY_PYTHON_TYPE:
        return _BY_NAME[_BY_PYTHON_TYPE[value]]
    try:
        dtype = np.dtype(value)
    except TypeError:
        raise TypeError(f"{value!r} does not name an element type") from None
    if dtype.kind in "US":
        return _BY_NAME["string"]
    try:
        return from_dtype(dtype)
    except KeyError:
        raise TypeError(f"numpy dtype {dtype} is not an element type irexec holds") from None


def from_name(name: str) -> ElementType:
    """The element type an ``element_type`` attribute names (case-insensitive); KeyError if none."""
    return _BY_IR_NAME[name.strip().lower()]


def parse_name(text: str) -> ElementType:
    """:func:`from_name` for attribute text: ValueError with a readable message if it names no
    type (a legacy precision name such as FP32, which OpenVINO refuses here too, says so)."""
    try:
        return from_name(text)
    except KeyError:
        pass
    try:
        legacy = from_precision(text)
    except KeyError:
        raise ValueError(f"'{text}' is not an element type name (such as f32, i64, "
                         f"boolean)") from None
    raise ValueError(f"'{text}' is a port precision name; element types are written in IR "
                     f"names, here '{legacy}'")


def from_precision(text: str) -> ElementType:
    """The element type a port's ``precision`` names (IR or legacy spelling); KeyError if none."""
    return _BY_PRECISION[text.strip()]


def from_dtype(dtype) -> ElementType:
    """The element type irexec uses for a numpy dtype; KeyError if none."""
    return _BY_DTYPE[np.dtype(dtype)]


def to_codes(et: ElementType, array: np.ndarray) -> np.ndarray:
    """A narrow type's raw bits, right-aligned, as a flat uint8 array (i4 -1 is 15)."""
    codes = np.ascontiguousarray(array, dtype=et.dtype).reshape(-1).view(np.uint8)
    if et.is_coded:
        if codes.size and int(codes.max()) > et.max_code:
            raise ValueError(f"a {et} tensor holds the code {int(codes.max())}, which does not "
                             f"fit in {et.bits} bits (0 to {et.max_code})")
        return codes
    return codes & np.uint8(et.max_code)


def from_codes(et: ElementType, codes: np.ndarray) -> np.ndarray:
    """The inverse of :func:`to_codes`: raw bits (uint8, right-aligned, only the low ``bits``
    used) to an array of the type."""
    codes = np.array(codes, dtype=np.uint8) & np.uint8(et.max_code)  # a new C-order array
    return codes.view(et.dtype)  # ml_dtypes' int4 reads the low nibble as two's complement


def plain_values(array: np.ndarray) -> np.ndarray:
    """The values of an array in a dtype numpy computes with: u3/u6 as uint8, i4 as int8, u1/u2/u4
    as uint8, f8/f4 as float32 (exact); nf4 as its codes (uint8); other arrays unchanged."""
    array = np.asarray(array)
    et = _BY_DTYPE.get(array.dtype)
    if et is None or not (et.is_narrow or et.name.startswith("f8")):
        return array
    if et.is_coded:
        return array.view(np.uint8)
    if et.kind in ("int", "uint"):
        return array.astype(np.int8 if et.kind == "int" else np.uint8)
    return array.astype(np.float32)
