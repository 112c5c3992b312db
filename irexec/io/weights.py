"""The .bin weights file: memory-mapped once, Const payloads viewed in place.

A Const's array is a read-only numpy view of the mapped file (no copy), except where the stored
form differs from irexec's (booleans, packed sub-byte types, strings: irexec/io/bin_layout.py).
"""

from __future__ import annotations

import mmap
import os

import numpy as np

from irexec.io import bin_layout
from irexec.ir.element_type import ElementType


class WeightsError(ValueError):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


HEAD_BYTES = 64
# What other files begin with: a .bin of weights has no header, so a file that starts like one
# of these was passed by mistake (--weights model.xml), and its bytes read as weights would only
# give nonsense values (an axis of 7311066695147732796).
_HEADERS = ((b"<?xml", "an XML file"), (b"<net", "an XML file"), (b"\x93NUMPY", "a .npy file"),
            (b"PK\x03\x04", "a zip archive (an .npz?)"))


_TEXT = frozenset(range(0x20, 0x7f)) | {0x09, 0x0a, 0x0d}


def not_weights(head: bytes) -> str | None:
    """What a file starting with ``head`` is when it is evidently not a .bin of weights: a
    known header, or text (HEAD_BYTES printable ASCII bytes holding spaces and a line break,
    which no tensor of numbers starts with by chance)."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    for magic, what in _HEADERS:
        if text.startswith(magic):
            return what
    if len(head) >= HEAD_BYTES and _TEXT.issuperset(head) and b" " in head and b"\n" in head:
        return "a text file"
    return None


class Weights:
    """A lazily opened, read-only memory map of one .bin file."""

    def __init__(self, path: str | None):
        self.path = path
        self._buffer: mmap.mmap | bytes | None = None
        self._failure: WeightsError | None = None

    @property
    def size(self) -> int:
        """The file's size in bytes (0 when it cannot be read)."""
        try:
            return len(self._open())
        except WeightsError:
            return 0

    @property
    def failure(self) -> WeightsError | None:
        """Why the file cannot be used at all (said once for all Consts), or None."""
        return self._failure

    def _open(self):
        if self._failure is not None:  # the file is unusable: every Const hears the same
            raise self._failure
        if self._buffer is None:
            try:
                self._buffer = self._map()
            except WeightsError as e:
                self._failure = e
                raise
        return self._buffer

    def _map(self):
        """The mapped file; WeightsError when there is none, or it is evidently not weights."""
        if self.path is None or not os.path.isfile(self.path):
            where = f"'{self.path}'" if self.path else "(none given)"
            what = "is not a regular file" if self.path and os.path.exists(self.path) else \
                "does not exist"
            raise WeightsError("IR501", f"this Const needs the weights file {where}, which "
                                        f"{what}")
        try:
            with open(self.path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                buffer = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        except OSError as e:
            raise WeightsError("IR501", f"cannot read the weights file '{self.path}': "
                                        f"{e.strerror or e}") from None
        what = not_weights(bytes(buffer[:HEAD_BYTES]))
        if what is not None:
            raise WeightsError("IR501", f"the weights file '{self.path}' is {what}, not a .bin "
                                        f"of weights; give the model's .bin (--weights)")
        return buffer

    def tensor(self, et: ElementType, shape: tuple[int, ...], offset: int, size: int) -> np.ndarray:
        """The Const payload at ``offset``: checks bounds and size, then decodes it (a read-only
        view of the mapped file for whole-byte numeric types)."""
        buffer = self.check(et, shape, offset, size)
        try:
            return bin_layout.decode(et, buffer, offset, size, shape)
        except bin_layout.LayoutError as e:
            raise WeightsError("IR506", str(e)) from None

    def check(self, et: ElementType, shape: tuple[int, ...], offset: int, size: int):
        """WeightsError unless the payload lies in the file and ``size`` can hold it; returns
        the mapped file."""
        buffer = self._open()
        count = 1
        for d in shape:
            count *= d
        needed = bin_layout.min_size(et, count)
        if offset + size > len(buffer):
            raise WeightsError("IR502", f"offset {offset} + size {size} = {offset + size} lies "
                                        f"beyond the end of the weights file ({len(buffer)} bytes)")
        if size < needed:
            at_least = "at least " if et.kind == "string" else ""  # plus the strings' text
            raise WeightsError("IR503", f"size {size} is too small: shape {list(shape)} of {et} "
                                        f"needs {at_least}{needed} bytes")
        if not et.in_ir:
            raise WeightsError("IR505", f"element type {et} is not supported in IR files")
        return buffer

    def used_size(self, et: ElementType, offset: int, count: int) -> int:
        """Bytes the payload at ``offset`` uses (for the "size is larger than needed" warning)."""
        return bin_layout.used_size(et, self._open(), offset, count)
