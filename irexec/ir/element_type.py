"""The one table of element types.

Every name an IR file may use for an element type, its legacy precision spelling, its bit width and
the numpy dtype irexec computes with live here and nowhere else. Types whose numpy form is ``None``
are known (so the reader can name them) but cannot be computed with yet.

``string`` (numpy object arrays of Python ``str``, as ONNX Runtime's Python API uses) and
``complex64``/``complex128`` (not OpenVINO types: irexec's names, for ONNX models) are computed
with but cannot be held in IR files: see :attr:`ElementType.in_ir`.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np


@dataclass(frozen=True)
class ElementType:
    """An OpenVINO element type: ``f32``, ``i64``, ``boolean`` ..."""

    name: str  # the IR name, as written in element_type="..."
    precision: str  # the legacy precision name, as written on ports: FP32, I64, BOOL ...
    bits: int
    kind: str  # "boolean", "int", "uint", "float", "complex", "string", "dynamic", "other"
    dtype: np.dtype | None  # what irexec holds the values in; None = not supported yet

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"ElementType.{self.name}"

    @property
    def is_supported(self) -> bool:
        return self.dtype is not None

    @property
    def in_ir(self) -> bool:
        """Supported in IR files: string (OpenVINO's packed .bin layout is not read) and complex
        (not an OpenVINO type) are held only for ONNX models and the Python API."""
        return self.is_supported and self.kind not in ("string", "complex")

    @property
    def is_openvino(self) -> bool:
        """An element type OpenVINO knows (complex64/complex128 are irexec's, for ONNX)."""
        return self.kind != "complex"

    @property
    def is_integral(self) -> bool:
        """An integer type (signed or unsigned); boolean is not one."""
        return self.kind in ("int", "uint")

    @property
    def is_real(self) -> bool:
        return self.kind == "float"

    @property
    def is_numeric(self) -> bool:
        return self.kind in ("int", "uint", "float")

    @property
    def is_dynamic(self) -> bool:
        return self.kind == "dynamic"

    def nbytes(self, count: int) -> int:
        """Bytes that ``count`` elements of this type take in a .bin file."""
        return (count * self.bits + 7) // 8

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
    _et("string", "STRING", 8, "string", object),  # numpy object arrays of Python str
    # Not OpenVINO types: ONNX's complex types, under precision names no IR uses.
    _et("complex64", "IREXEC_COMPLEX64", 64, "complex", np.complex64),
    _et("complex128", "IREXEC_COMPLEX128", 128, "complex", np.complex128),
    # Known to OpenVINO, not computed by irexec yet: named so errors can say so.
    _et("u1", "BIN", 1, "other", None),
    _et("u2", "U2", 2, "other", None),
    _et("u3", "U3", 3, "other", None),
    _et("u4", "U4", 4, "other", None),
    _et("u6", "U6", 6, "other", None),
    _et("i4", "I4", 4, "other", None),
    _et("nf4", "NF4", 4, "other", None),
    _et("f4e2m1", "F4E2M1", 4, "other", None),
    _et("f8e4m3", "F8E4M3", 8, "other", None),
    _et("f8e5m2", "F8E5M2", 8, "other", None),
    _et("f8e8m0", "F8E8M0", 8, "other", None),
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
# for ONNX models and the Python API only (string, complex64, complex128).
SUPPORTED: tuple[ElementType, ...] = tuple(et for et in _TABLE if et.in_ir)
NOT_IN_IR: tuple[ElementType, ...] = tuple(et for et in _TABLE if et.is_supported and not et.in_ir)


def from_name(name: str) -> ElementType:
    """The element type an ``element_type`` attribute names (case-insensitive); KeyError if none."""
    return _BY_IR_NAME[name.strip().lower()]


def from_precision(text: str) -> ElementType:
    """The element type a port's ``precision`` names (IR or legacy spelling); KeyError if none."""
    return _BY_PRECISION[text.strip()]


def from_dtype(dtype) -> ElementType:
    """The element type irexec uses for a numpy dtype; KeyError if none."""
    return _BY_DTYPE[np.dtype(dtype)]
