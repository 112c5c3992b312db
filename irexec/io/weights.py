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


class Weights:
    """A lazily opened, read-only memory map of one .bin file."""

    def __init__(self, path: str | None):
        self.path = path
        self._buffer: mmap.mmap | bytes | None = None

    def _open(self):
        if self._buffer is None:
            if self.path is None or not os.path.isfile(self.path):
                where = f"'{self.path}'" if self.path else "(none given)"
                what = "is not a regular file" if self.path and os.path.exists(self.path) else \
                    "does not exist"
                raise WeightsError("IR501", f"this Const needs the weights file {where}, which "
                                            f"{what}")
            try:
                with open(self.path, "rb") as f:
                    size = os.fstat(f.fileno()).st_size
                    self._buffer = (mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size
                                    else b"")
            except OSError as e:
                raise WeightsError("IR501", f"cannot read the weights file '{self.path}': "
                                            f"{e.strerror or e}") from None
        return self._buffer

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
