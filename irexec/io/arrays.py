"""Arrays in .npy/.npz files: how tensors of every element type are stored and read back.

numpy's file format holds numpy's own dtypes only, never ml_dtypes' or irexec's structured ones,
and irexec never loads pickles. So in files (``irexec run --input/--output``, ``--input-dir``,
``--trace``):

============================  ===========================================================
element type                  stored as
============================  ===========================================================
boolean, i8 .. u64, f16 .. f64  itself
bf16                          its raw bits, uint16
f8e4m3, f8e5m2, f8e8m0        their raw bits, uint8
f4e2m1, nf4                   their 4-bit codes, uint8 (nf4: the codebook index)
i4                            its values, int8 (-8 to 7)
u1, u2, u3, u4, u6            their values, uint8
string                        a numpy unicode array (``<U``)
============================  ===========================================================

Reading accepts the same, and for the raw-bit types also the ``|V1``/``|V2`` arrays that
``numpy.save`` writes for ml_dtypes arrays. A value that does not fit its type (an i4 of 9, a
u3 of 8, an f4e2m1 code of 16) is an error, never wrapped.

What a string tensor holds: byte strings, as in OpenVINO (``std::string``). irexec holds each
as a Python str: its UTF-8 text, with any byte that is not UTF-8 as U+DC80..U+DCFF (Python's
``surrogateescape``, which is how a .bin's strings are read and written back unchanged). So
a string element may hold any character but the other surrogates, U+D800..U+DFFF outside that
range, which stand for no byte at all: an input holding one is refused when it is read
(``check_strings``), and :func:`string_bytes` turns any element into its bytes without failing.
"""

from __future__ import annotations

import numpy as np

from irexec.ir import element_type as et_table
from irexec.ir.element_type import ElementType


def to_file(array: np.ndarray) -> np.ndarray:
    """``array`` in the form the table above stores it."""
    array = np.asarray(array)
    if array.dtype.kind == "O":
        return array.astype(str)
    try:
        et = et_table.from_dtype(array.dtype)
    except KeyError:
        return array
    if et.name == "bf16":
        return array.view(np.uint16)
    if et.is_coded or et.kind == "float" and et.bits <= 8:
        return np.ascontiguousarray(array).view(np.uint8)
    if et.is_narrow:  # i4, u1, u2, u4: the values
        return array.astype(np.int8 if et.kind == "int" else np.uint8)
    return array


def from_file(array: np.ndarray, et: ElementType) -> np.ndarray:
    """An array read from a file, for a tensor of type ``et``: turned from the stored form into
    irexec's, when it is in the stored form. ValueError if its values do not fit the type.
    Anything else is returned as it is (the input checks then name the mismatch)."""
    array = np.asarray(array)
    if not et.is_supported:
        return array
    if et.kind == "string":
        check_strings(array)
        return array
    stored = np.uint16 if et.name == "bf16" else np.uint8
    if et.name == "bf16" or et.kind == "float" and et.bits <= 8 or et.is_coded:
        if array.dtype.kind == "V" and array.dtype.names is None \
                and array.dtype.itemsize == np.dtype(stored).itemsize:
            array = array.view(stored)
        if array.dtype != stored:
            return array
        if et.bits < 8:
            _check_range(array, 0, et.max_code, et, "values" if et.kind == "uint" else "codes")
        return et_table.from_codes(et, array) if et.bits < 8 else array.view(et.dtype)
    if et.is_narrow and array.dtype == (np.int8 if et.kind == "int" else np.uint8):
        low, high = (-(1 << (et.bits - 1)), (1 << (et.bits - 1)) - 1) if et.kind == "int" \
            else (0, et.max_code)
        _check_range(array, low, high, et, "values")
        return array.astype(et.dtype)
    return array


def string_bytes(value) -> bytes:
    """The bytes a string element stands for (see the module's docstring). Never fails: a lone
    surrogate that stands for no byte, which ``check_strings`` keeps out of inputs, is written
    as UTF-8 would write the code point (``surrogatepass``), for a checksum or a preview."""
    text = str(value)
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def check_strings(array: np.ndarray) -> None:
    """ValueError naming the first element of a str array that holds a lone surrogate no byte
    stands for (U+D800..U+DFFF but U+DC80..U+DCFF)."""
    if array.dtype.kind == "U" and array.size:
        codes = np.ascontiguousarray(array).view(np.uint32).reshape(array.size, -1)
        bad = ((codes >= 0xD800) & (codes <= 0xDFFF)) & ~((codes >= 0xDC80) & (codes <= 0xDCFF))
        if not bad.any():
            return
        flat = int(np.flatnonzero(bad.any(axis=1))[0])
        code = int(codes[flat][bad[flat]][0])
    elif array.dtype.kind == "O":
        for flat, value in enumerate(array.reshape(-1).tolist()):
            if isinstance(value, str):
                try:
                    value.encode("utf-8", "surrogateescape")
                except UnicodeEncodeError as e:
                    code = ord(value[e.start])
                    break
        else:
            return
    else:
        return
    index = [int(i) for i in np.unravel_index(flat, array.shape)] if array.ndim else []
    raise ValueError(f"holds the lone surrogate U+{code:04X} in element {index}, which is no "
                     f"text and stands for no byte; a string holds UTF-8 text (bytes that are "
                     f"not UTF-8 as U+DC80..U+DCFF)")


def _check_range(array: np.ndarray, low: int, high: int, et: ElementType, what: str) -> None:
    if array.size and (int(array.min()) < low or int(array.max()) > high):
        bad = array[(array < low) | (array > high)].reshape(-1)[0]
        raise ValueError(f"holds {int(bad)}, but {et} {what} are {low} to {high}")
