"""Where a batch's outputs go: one ``.npz`` per sample (``OUT/<stem>.npz``, arrays keyed by output
name), each written whole or not at all by irexec/io/safe_write.py (a temporary beside it, renamed
over it when complete), only ever by the process that asked for the run.

``--resume`` trusts a file that is there and whole: a zip archive whose members are exactly the
model's outputs, each a readable ``.npy`` header (a rename is atomic, so a file of the safe
writer is either absent or complete; anything else there is done again).
"""

from __future__ import annotations

import os
import zipfile

import numpy as np

from irexec.io import safe_write
from irexec.io.arrays import to_file


def write_npz(f, arrays: dict[str, np.ndarray]) -> None:
    """What np.savez writes, for any key (np.savez takes keys as keyword arguments, so outputs
    named 'file' or 'allow_pickle' would collide with its own parameters); no pickles."""
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in arrays.items():
            array = to_file(array)  # strings as unicode, narrow types as their bits
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)


def output_path(folder: str, stem: str) -> str:
    return os.path.join(folder, stem + ".npz")


def save(path: str, arrays: dict[str, np.ndarray], protected=()) -> None:
    safe_write.write_file(path, lambda f: write_npz(f, arrays), protected)


def is_whole(path: str, names: list[str]) -> bool:
    """Whether ``path`` is a complete output file holding exactly the outputs ``names``."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.namelist()
            if sorted(members) != sorted(f"{n}.npy" for n in names):
                return False
            for member in members:
                with archive.open(member) as f:
                    if np.lib.format.read_magic(f) == (1, 0):
                        np.lib.format.read_array_header_1_0(f)
                    else:
                        np.lib.format.read_array_header_2_0(f)
            return archive.testzip() is None
    except (OSError, zipfile.BadZipFile, ValueError, EOFError):
        return False
