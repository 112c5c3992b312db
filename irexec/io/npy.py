"""Loading .npy and .npz files someone else wrote, without trusting them.

``numpy.load(allow_pickle=False)`` already refuses pickles, but it believes the header: a
100-byte file that claims a shape of 10**12 elements makes numpy allocate the whole array before
reading finds the data missing. Here each header is read first and checked against the bytes
that really follow it and against the memory budget (irexec/budget.py); only then is the
array loaded. Every failure is a ``NpyError`` with a sentence for the user.
"""

from __future__ import annotations

import io
import os
import zipfile

import numpy as np

from irexec import budget
from irexec.io import files

_format = np.lib.format
HEADER_BYTES = 1 << 16  # numpy itself refuses headers over 10,000 bytes


class NpyError(ValueError):
    pass


def _check_header(f, available: int, what: str) -> None:
    """Read and check a .npy header at the file's position; leaves the position unchanged."""
    start = f.tell()
    try:
        version = _format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = _format.read_array_header_1_0(f)
        else:  # 2.0 and 3.0 differ only in how the header text is encoded
            shape, fortran, dtype = _format.read_array_header_2_0(f)
    except (ValueError, EOFError, SyntaxError, TypeError, UnicodeError) as e:
        raise NpyError(f"{what} is not a .npy array written by numpy.save ({e})") from None
    header = f.tell() - start
    f.seek(start)
    if dtype.hasobject:
        raise NpyError(f"{what} holds Python objects, which irexec never loads from a file "
                       f"(save strings as a unicode array)")
    problem = budget.shape_problem(shape, dtype.itemsize)
    if problem is not None:
        raise NpyError(f"{what}: {problem}")
    needed = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if header + needed > available:
        raise NpyError(f"{what} is truncated: its header promises {needed} bytes of data for "
                       f"shape {list(shape)} of {dtype}, but only {available - header} follow")


def load(path) -> np.ndarray | dict[str, np.ndarray]:
    """The array of a .npy file, or the arrays of a .npz archive (a dict by key). Only a
    regular file is read (irexec/io/files.py): a FIFO or a device is an OSError at once."""
    path = os.fspath(path)
    with files.open_file(path) as f:
        magic = f.read(6)
        f.seek(0)
        if magic.startswith(b"PK"):
            return _load_npz(f)
        _check_header(f, os.fstat(f.fileno()).st_size, "the file")
        try:
            return np.load(f, allow_pickle=False)
        except (ValueError, EOFError) as e:
            raise NpyError(f"the file is not a .npy array written by numpy.save ({e})") from None


def load_npz(path) -> dict[str, np.ndarray]:
    """Every array of a .npz archive, each member checked as a .npy before it is read."""
    with files.open_file(os.fspath(path)) as f:
        return _load_npz(f)


def _load_npz(f) -> dict[str, np.ndarray]:
    arrays = {}
    try:
        with zipfile.ZipFile(f) as archive:
            for info in archive.infolist():
                if not info.filename.endswith(".npy"):
                    continue
                key = info.filename[:-4]
                with archive.open(info) as member:
                    head = io.BytesIO(member.read(HEADER_BYTES))
                _check_header(head, info.file_size, f"array '{key}'")
                with archive.open(info) as member:
                    arrays[key] = _format.read_array(member, allow_pickle=False)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as e:
        if isinstance(e, NpyError):
            raise
        raise NpyError(f"the file is not a .npz archive of arrays written by numpy.savez "
                       f"({e})") from None
    return arrays


__all__ = ["NpyError", "load", "load_npz"]
