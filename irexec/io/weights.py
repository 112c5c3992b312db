"""The .bin weights file: memory-mapped once, Const payloads viewed in place.

A Const's array is a read-only numpy view of the mapped file (no copy), except where the stored
form differs from numpy's (booleans are bytes where any nonzero value is true).
"""

from __future__ import annotations

import mmap
import os
import sys

import numpy as np

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
        """The Const payload at ``offset``: checks bounds and size, returns a read-only view."""
        buffer = self._open()
        count = 1
        for d in shape:
            count *= d
        needed = et.nbytes(count)
        if offset + size > len(buffer):
            raise WeightsError("IR502", f"offset {offset} + size {size} = {offset + size} lies "
                                        f"beyond the end of the weights file ({len(buffer)} bytes)")
        if size < needed:
            raise WeightsError("IR503", f"size {size} is too small: shape {list(shape)} of {et} "
                                        f"needs {needed} bytes")
        if not et.in_ir:
            raise WeightsError("IR505", f"element type {et} is not supported yet")
        if et.kind == "boolean":
            raw = np.frombuffer(buffer, dtype=np.uint8, count=count, offset=offset)
            return (raw != 0).reshape(shape)
        dtype = et.dtype
        if sys.byteorder != "little" and dtype.itemsize > 1:
            dtype = dtype.newbyteorder("<")
        array = np.frombuffer(buffer, dtype=dtype, count=count, offset=offset).reshape(shape)
        return array.astype(et.dtype, copy=False)
