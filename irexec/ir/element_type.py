"""The one table of element types.

Every name an IR file may use for an element type, its legacy precision spelling, its bit width and
the numpy dtype irexec computes with live here and nowhere else. Types whose numpy form is ``None``
are known (so the reader can name them) but cannot be computed with yet.
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
    kind: str  # "boolean", "int", "uint", "float", "dynamic", "other"
    dtype: np.dtype | None  # what irexec holds the values in; None = not supported yet

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"ElementType.{self.name}"

    @property
    def is_supported(self) -> bool:
        return self.dtype is not None

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
    _et("string", "STRING", 8, "other", None),
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

SUPPORTED: tuple[ElementType, ...] = tuple(et for et in _TABLE if et.is_supported)


def from_name(name: str) -> ElementType:
    """The element type an ``element_type`` attribute names (case-insensitive); KeyError if none."""
    return _BY_IR_NAME[name.strip().lower()]


def from_precision(text: str) -> ElementType:
    """The element type a port's ``precision`` names (IR or legacy spelling); KeyError if none."""
    return _BY_PRECISION[text.strip()]


def from_dtype(dtype) -> ElementType:
    """The element type irexec uses for a numpy dtype; KeyError if none."""
    return _BY_DTYPE[np.dtype(dtype)]
