"""The one way irexec writes a file: never over its own inputs, never half a file.

Every file a command writes (``run --output``, ``--output-dir``, ``--trace``, ``validate -o``,
``graph -o``, ``convert -o``) goes through :func:`write_file`:

* the bytes go to a temporary file beside the target, renamed over it only when complete, so a
  failure or an interrupt leaves the old file (or none), never a partial one;
* a target that is, by any path (``..``, symlinks, hard links), one of the ``protected`` files
  (the model's ``.xml``/``.bin``, the inputs) is refused before anything is written;
* a symlink to a file is kept: the file it points at is replaced;
* an existing file keeps its permission bits, and a file the user may not write is not replaced
  (``open()`` would refuse it too);
* a FIFO or a character device (``/dev/null``, a terminal) is written into, never replaced; a
  block device, a socket or a folder is refused.

Temporary files are recorded while they exist; :func:`remove_temporaries` deletes every one left
(the command line calls it on the way out, also after SIGINT, SIGTERM or SIGHUP:
:func:`signals_as_exceptions`), so no ``.irexec-*`` file survives an interrupted run.

NOTE for developers: a temporary is recorded *before* it is created (its name is chosen first and
created with O_EXCL), so there is no instant at which a signal could leave an unrecorded file.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import BinaryIO, Union

_temporaries: set[str] = set()
_cancelled: set[threading.Thread] = set()  # threads whose writes must not land (cancel())
_lock = threading.Lock()
PREFIX = ".irexec-"
Protected = Union["Guard", Mapping, Iterable]  # paths, or {path: what it is} for the refusal


class WriteRefused(ValueError):
    """The target may not be written (a protected file, a folder, a block device...): the
    message says why, in words for the user."""


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived (raised by :func:`signals_as_exceptions`'s handler), so that
    ``finally`` blocks run and temporaries are removed, as they are for KeyboardInterrupt."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class Cancelled(BaseException):
    """A write from a thread the command line abandoned after a signal (:func:`cancel`)."""


def cancel(thread: threading.Thread) -> None:
    """From now on ``thread`` creates no temporary and renames none over its target: the
    command line calls this when a signal stops it while a worker thread still computes, so
    that nothing the worker finishes afterwards appears (its temporaries are removed with the
    others)."""
    with _lock:
        _cancelled.add(thread)


def _refuse_if_cancelled() -> None:  # call with _lock held
    if threading.current_thread() in _cancelled:
        raise Cancelled("the command was stopped by a signal")


def same_file(a, b) -> bool:
    """Whether two paths name the same file: by device and inode when both exist (hard links,
    symlinks, ``..``), else by their resolved paths."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


class Guard:
    """Files no write may replace, known by identity (device and inode: hard links, symlinks,
    ``..``) and by resolved path (for files that do not exist yet). Built once per command."""

    def __init__(self, files: Protected = ()):
        if isinstance(files, Guard):
            files = files._files
        if not isinstance(files, Mapping):
            files = {p: "one of the files this command reads" for p in files if p is not None}
        self._files = {os.fspath(p): what for p, what in files.items() if p is not None}
        self._by_id: dict[tuple[int, int], str] = {}
        self._by_path: dict[str, str] = {}
        for path, what in self._files.items():
            try:
                st = os.stat(path)
                self._by_id.setdefault((st.st_dev, st.st_ino), what)
            except OSError:
                pass
            self._by_path.setdefault(os.path.realpath(path), what)

    def what(self, path) -> str | None:
        """What ``path`` is, if it is one of the guarded files; None otherwise."""
        if not self._files:
            return None
        try:
            st = os.stat(path)
            hit = self._by_id.get((st.st_dev, st.st_ino))
        except OSError:
            hit = None
        return hit or self._by_path.get(os.path.realpath(path))


def check_target(path, protected: Protected = ()) -> None:
    """WriteRefused if ``path`` may not be written: one of ``protected`` (a Guard, paths, or a
    mapping of paths to what they are: ``{"m.bin": "the model's weights"}``), a folder, a block
    device or a socket. Nothing is written; call it before long work to fail early."""
    path = os.fspath(path)
    guard = protected if isinstance(protected, Guard) else Guard(protected)
    what = guard.what(path)
    if what is not None:
        raise WriteRefused(f"'{path}' is {what}; irexec never writes over its inputs, choose "
                           f"another file")
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None
    if mode is not None:
        if stat.S_ISDIR(mode):
            raise WriteRefused(f"'{path}' is a folder, not a file; give a file name")
        if stat.S_ISBLK(mode):
            raise WriteRefused(f"'{path}' is a block device; irexec never writes to one")
        if stat.S_ISSOCK(mode):
            raise WriteRefused(f"'{path}' is a socket, which cannot be written as a file")
    elif path.endswith(("/", os.sep)):
        raise WriteRefused(f"'{path}' names a folder that does not exist; give a file name")


def _temporary_name(folder: str, target: str) -> str:
    base = os.path.basename(target)[:60]
    return os.path.join(folder, f"{PREFIX}{os.urandom(4).hex()}-{base}.tmp")


def _create_temporary(folder: str, target: str) -> tuple[int, str]:
    while True:
        tmp = _temporary_name(folder, target)
        with _lock:
            _refuse_if_cancelled()
            _temporaries.add(tmp)  # recorded first: a signal after this line cannot leak it
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                           0o600), tmp
        except FileExistsError:  # someone else's file: try another name
            _forget(tmp)
        except BaseException:  # also a signal just after the file was made: remove it
            _remove(tmp)
            raise


def _forget(tmp: str) -> None:
    with _lock:
        _temporaries.discard(tmp)


def _remove(tmp: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)
    _forget(tmp)


def remove_temporaries() -> None:
    """Delete every temporary file a write left behind (an interrupted one)."""
    with _lock:
        left = list(_temporaries)
    for tmp in left:
        _remove(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class _Stream:
    """A pipe or device as a file that cannot seek, whatever the device claims (/dev/null
    seeks, but always tells 0): writers such as zipfile then write strictly forward."""

    def __init__(self, f):
        self._f = f

    def write(self, data) -> int:
        return self._f.write(data)

    def flush(self) -> None:
        self._f.flush()

    def seekable(self) -> bool:
        return False

    def tell(self) -> int:
        raise OSError("a stream cannot tell its position")

    def seek(self, *args) -> int:
        raise OSError("a stream cannot seek")


def write_file(path, write: Callable[[BinaryIO], None], protected: Protected = ()) -> None:
    """Call ``write(f)`` with a binary file whose bytes end up at ``path`` (see the module's
    rules). WriteRefused or OSError when it cannot be written; ``path`` is then unchanged."""
    path = os.fspath(path)
    check_target(path, protected)
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
        with _lock:
            _refuse_if_cancelled()
        with open(path, "wb") as f:  # a pipe or a device takes the bytes as they come
            write(_Stream(f))
        return
    target = os.path.realpath(path)  # a symlink stays; the file it points at is replaced
    if mode is not None and not os.access(target, os.W_OK):
        raise PermissionError(13, "Permission denied", path)
    folder = os.path.dirname(target) or "."
    fd, tmp = _create_temporary(folder, target)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.chmod(tmp, stat.S_IMODE(mode) if mode is not None else 0o666 & ~_umask())
        with _lock:  # a cancelled thread renames nothing, even a file it finished
            _refuse_if_cancelled()
            os.replace(tmp, target)
            _temporaries.discard(tmp)
    finally:
        if tmp in _temporaries:
            _remove(tmp)


def write_bytes(path, data: bytes, protected: Protected = ()) -> None:
    write_file(path, lambda f: f.write(data), protected)


@contextlib.contextmanager
def signals_as_exceptions(signums=(signal.SIGTERM, signal.SIGHUP)):
    """Inside the block, SIGTERM and SIGHUP raise :class:`Terminated` (their default would kill
    the process on the spot, leaving temporaries); on the way out every temporary left is
    removed. Outside the main thread, where handlers cannot be set, only the cleanup applies."""
    previous = {}

    def handler(signum, frame):
        raise Terminated(signum)

    if threading.current_thread() is threading.main_thread():
        for s in signums:
            with contextlib.suppress(ValueError, OSError, AttributeError):
                previous[s] = signal.signal(s, handler)
    try:
        yield
    finally:
        remove_temporaries()
        for s, old in previous.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(s, old if old is not None else signal.SIG_DFL)


__all__ = ["Cancelled", "Guard", "Terminated", "WriteRefused", "cancel", "check_target",
           "remove_temporaries", "same_file", "signals_as_exceptions", "write_bytes", "write_file"]
