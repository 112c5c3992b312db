"""The .bin weights file: each Const's payload copied out of the file when it is first needed.

The file is not memory-mapped. A mapped file that another program shrinks later -- a converter
rewriting the .bin in place while a long-running process holds the model -- kills the process
with SIGBUS the next time a kernel touches a page past the new end. Here each payload is read
with ``os.pread`` into a bytes object the model owns (a short read is an error, not a signal),
and the Const's array is a read-only numpy view of those bytes. Payloads at the same offset and
size are read once and shared.

When: a string Const is read with the model (its table is checked then); any other the first
time its value is asked for -- by inference, for a rule that looks at values, else by
``compile_model``, which takes every constant a run needs. So once a model is compiled, a run
needs nothing from the file, and a Const nothing reads is never read at all (1 GiB of unused
weights cost nothing). A value asked for later is read only from the very file the model was
read from: if it was changed or replaced since (size, time or inode), that is IR502, never stale
or mixed bytes.

Reading the weights is held to the memory budget (irexec/budget.py) in all, not only per
tensor: Consts whose payloads overlap could otherwise make a small file cost any amount of
memory. A packed Const (u1, i4, ...) is unpacked when its value is first needed.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Callable

import numpy as np

from irexec.errors import IRError
from irexec.io import bin_layout, files
from irexec.ir.element_type import ElementType
from irexec import budget


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


# Weights files opened for payloads inside ``held_open()``, closed when it ends; None outside.
_HELD: contextvars.ContextVar[list | None] = contextvars.ContextVar("irexec_held_weights",
                                                                    default=None)


@contextlib.contextmanager
def held_open():
    """Weights files opened for payloads in this block stay open until it ends (inference
    reads every small Const of a model: one open per file instead of one per Const)."""
    if _HELD.get() is not None:
        yield
        return
    held: list[Weights] = []
    token = _HELD.set(held)
    try:
        yield
    finally:
        _HELD.reset(token)
        for weights in held:
            weights.close()


class Weights:
    """A read-only .bin file whose payloads are copied out as they are asked for."""

    def __init__(self, path: str | None, limit: int | None = None):
        self.path = path
        self.size = 0  # the file's size when it was opened (0 when it cannot be)
        self._fd: int | None = None
        self._identity = None  # (device, inode, size, mtime) when first opened
        self._failure: WeightsError | None = None
        self._reading = True  # the reader holds the file open until close()
        self._payloads: dict[tuple[int, int], bytes] = {}
        self._read = 0  # bytes copied out so far
        self._limit = limit  # the most bytes they may take together (default: the budget)

    @property
    def failure(self) -> WeightsError | None:
        """Why the file cannot be used at all (said once for all Consts), or None."""
        return self._failure

    def _open(self) -> int:
        if self._failure is not None:  # the file is unusable: every Const hears the same
            raise self._failure
        if self._fd is not None:
            return self._fd
        first = self._identity is None
        try:
            self._fd = self._open_file()
        except WeightsError as e:
            if first:
                self._failure = e
            raise
        return self._fd

    def _open_file(self) -> int:
        """The open file; WeightsError when there is none, it is evidently not weights, or it
        is no longer the file the model was read from."""
        if self.path is None:
            raise WeightsError("IR501", "this Const needs the weights file (none given), which "
                                        "does not exist")
        try:
            fd = files.open_regular(self.path)
        except FileNotFoundError:
            what = "does not exist" if self._identity is None else \
                "was deleted after the model was read"
            raise WeightsError("IR501", f"this Const needs the weights file '{self.path}', "
                                        f"which {what}") from None
        except OSError as e:
            raise WeightsError("IR501", f"cannot read the weights file '{self.path}': "
                                        f"{e.strerror or e}") from None
        try:
            stat = os.fstat(fd)
            identity = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
            if self._identity is not None:
                if identity != self._identity:
                    raise WeightsError("IR502", f"the weights file '{self.path}' was changed or "
                                                f"replaced after the model was read; read the "
                                                f"model again")
                return fd
            what = not_weights(os.pread(fd, HEAD_BYTES, 0))
            if what is not None:
                raise WeightsError("IR501", f"the weights file '{self.path}' is {what}, not a "
                                            f".bin of weights; give the model's .bin (--weights)")
        except BaseException:
            os.close(fd)
            raise
        self._identity, self.size = identity, stat.st_size
        return fd

    def close(self) -> None:
        """Let go of the file: the reader is done. Payloads asked for later open it again,
        only if it is still the same file, and close it at once."""
        self._reading = False
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self):
        try:
            self.close()
        except OSError:
            pass

    def payload(self, offset: int, size: int) -> bytes:
        """The ``size`` bytes at ``offset``, copied out of the file (once per offset and size).
        The caller has checked that they lie within the file as it was when opened."""
        key = (offset, size)
        found = self._payloads.get(key)
        if found is not None:
            return found
        limit = self._limit if self._limit is not None else budget.current()
        if self._read + size > limit:
            raise WeightsError("IR109", f"the Consts read so far and this one take "
                                        f"{budget.describe(self._read + size)} of the weights "
                                        f"file in all, more than the memory budget of "
                                        f"{budget.describe(limit)}; raise the budget with "
                                        f"--memory-budget or {budget.ENV} if the machine has "
                                        f"the memory")
        fd = self._open()
        try:
            data = self._pread(fd, offset, size)
        finally:
            if not self._reading:
                held = _HELD.get()
                if held is None:
                    self.close()
                elif not any(w is self for w in held):
                    held.append(self)
        self._read += size
        self._payloads[key] = data
        return data

    def _pread(self, fd: int, offset: int, size: int) -> bytes:
        chunks, at = [], offset
        try:
            while at < offset + size:
                chunk = os.pread(fd, min(offset + size - at, 1 << 30), at)
                if not chunk:
                    break
                chunks.append(chunk)
                at += len(chunk)
        except OSError as e:
            raise WeightsError("IR501", f"cannot read the weights file '{self.path}': "
                                        f"{e.strerror or e}") from None
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        if len(data) < size:
            now = os.fstat(fd).st_size
            raise WeightsError("IR502", f"the weights file '{self.path}' shrank while irexec read "
                                        f"it (from {self.size} to {now} bytes): bytes {offset} to "
                                        f"{offset + size} are gone; read the model again once "
                                        f"the file is written")
        return data

    def tensor(self, et: ElementType, shape: tuple[int, ...], offset: int, size: int) -> np.ndarray:
        """The Const payload at ``offset``: checks bounds and size, then decodes it (a read-only
        view of the copied bytes for whole-byte numeric types)."""
        self.check(et, shape, offset, size)
        try:
            return bin_layout.decode(et, self.payload(offset, size), 0, size, shape)
        except bin_layout.LayoutError as e:
            raise WeightsError("IR506", str(e)) from None

    def later(self, et: ElementType, shape: tuple[int, ...], offset: int, size: int,
              location) -> Callable[[], np.ndarray]:
        """For ``Node.load_value_later``: a function that reads and decodes the payload (already
        checked) when the value is first needed; a file changed since is an IRError there."""
        def load() -> np.ndarray:
            try:
                return self.tensor(et, shape, offset, size)
            except WeightsError as e:
                raise IRError.make(e.code, str(e), location) from None

        return load

    def check(self, et: ElementType, shape: tuple[int, ...], offset: int, size: int) -> None:
        """WeightsError unless the payload lies in the file and ``size`` can hold it."""
        self._open()
        count = 1
        for d in shape:
            count *= d
        needed = bin_layout.min_size(et, count)
        if offset + size > self.size:
            raise WeightsError("IR502", f"offset {offset} + size {size} = {offset + size} lies "
                                        f"beyond the end of the weights file ({self.size} bytes)")
        if size < needed:
            at_least = "at least " if et.kind == "string" else ""  # plus the strings' text
            raise WeightsError("IR503", f"size {size} is too small: shape {list(shape)} of {et} "
                                        f"needs {at_least}{needed} bytes")
        if not et.in_ir:
            raise WeightsError("IR505", f"element type {et} is not supported in IR files")

    def used_size(self, et: ElementType, offset: int, count: int, size: int) -> int:
        """Bytes the payload at ``offset`` uses (for the "size is larger than needed" warning)."""
        if et.kind != "string":
            return et.nbytes(count)
        return bin_layout.used_size(et, self.payload(offset, size), 0, count)
