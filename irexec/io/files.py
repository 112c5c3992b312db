"""Opening the files irexec reads -- the model, its .bin, ``--input`` arrays, ``--input-dir``
archives, ONNX files: regular files only, opened without ever blocking, and, on request, never
through a symbolic link.

A path may name a FIFO, a socket, a terminal or a device (``/dev/zero``, ``/dev/stdin``).
Opening a FIFO for reading blocks until a writer comes, and reading a device may never end, so
every such open goes through :func:`open_regular`: ``O_NONBLOCK`` (a FIFO opens at once),
``O_NOCTTY``, then ``fstat`` on the open descriptor (no race between a check and the open),
and anything but a regular file is refused with :class:`NotReadable`, an ``OSError`` whose
``strerror`` says what the path is.

Symbolic links: the model's text names no other file (the .bin is the .xml's name with .bin),
so which file is read is the file system's word, and irexec follows links as every program
does. A service that runs irexec on uploaded archives can refuse them: ``--no-follow-symlinks``
on the command line, ``IREXEC_NO_SYMLINKS=1`` in the environment, or ``with
no_symlinks():`` in Python. Then a path any part of which is a link is refused, and the file
itself is opened with ``O_NOFOLLOW`` (the kernel refuses a link swapped in after the check).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

from irexec.errors import UsageError

ENV_NO_SYMLINKS = "IREXEC_NO_SYMLINKS"
_YES = ("1", "true", "yes", "on")
_NO = ("", "0", "false", "no", "off")
_forced: list[bool] = []
_CHUNK = 1 << 24  # innermost no_symlinks() in force, for every thread


class NotReadable(OSError):
    """A path irexec will not read: not a regular file, or a link it was told not to follow."""

    def __init__(self, path: str, reason: str):
        super().__init__(errno.EINVAL, reason, path)


def follows_symlinks() -> bool:
    """False inside :func:`no_symlinks` or with ``IREXEC_NO_SYMLINKS=1``; UsageError if the
    variable holds something that is neither yes nor no."""
    if _forced:
        return not _forced[-1]
    text = os.environ.get(ENV_NO_SYMLINKS, "")
    if text.strip().lower() in _NO:
        return True
    if text.strip().lower() in _YES:
        return False
    raise UsageError(f"{ENV_NO_SYMLINKS}={text[:40]!r}: set it to 1 to refuse symbolic links, "
                     f"or 0 (or leave it unset) to follow them")


@contextlib.contextmanager
def no_symlinks(refuse: bool = True):
    """``with no_symlinks():`` irexec opens no file through a symbolic link inside (for every
    thread); ``no_symlinks(False)`` leaves the environment's choice in force."""
    if not refuse:
        yield
        return
    _forced.append(True)
    try:
        yield
    finally:
        _forced.pop()


def add_option(parser) -> None:
    """``--no-follow-symlinks`` on a command's argparse parser (see :func:`no_symlinks`)."""
    parser.add_argument("--no-follow-symlinks", action="store_true",
                        help=f"read no file through a symbolic link (also {ENV_NO_SYMLINKS}=1): "
                             f"for services that run irexec on files from elsewhere")


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"


def _check_no_links(path: str) -> None:
    absolute = os.path.abspath(path)
    if os.path.realpath(absolute) != absolute:
        raise NotReadable(path, "the path goes through a symbolic link, and symbolic links are "
                                "not followed (--no-follow-symlinks or IREXEC_NO_SYMLINKS)")


def open_regular(path) -> int:
    """A read-only descriptor of the regular file at ``path`` (the caller closes it). Raises
    NotReadable for anything else, OSError when the system refuses; never blocks."""
    path = os.fspath(path)
    follow = follows_symlinks()
    flags = (os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
             | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    if not follow:
        _check_no_links(path)
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if not follow and e.errno == errno.ELOOP:
            _check_no_links(path)  # a link swapped in since: say so
            raise NotReadable(path, "it is a symbolic link, and symbolic links are not "
                                    "followed") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotReadable(path, f"it is {_kind(mode)}; irexec reads regular files only")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_file(path):
    """:func:`open_regular` as a binary file object (``with open_file(p) as f``)."""
    return os.fdopen(open_regular(path), "rb")


def read_at_most(f, limit: int) -> bytes:
    """Up to ``limit + 1`` bytes from ``f`` (so that the caller can tell a file over the
    limit). ``f.read(n)`` allocates all n bytes first, whatever the file holds: the first read
    asks for the size ``fstat`` gives (and one more byte), any more in chunks. A read that
    returns less than it asked for has met the end of the file: no further read (another one
    would allocate a whole chunk, 16 MiB, only to find nothing)."""
    chunks, total = [], 0
    first = min(os.fstat(f.fileno()).st_size + 1, limit + 1)
    while total <= limit:
        want = first if not chunks else min(_CHUNK, limit + 1 - total)
        chunk = f.read(want)
        if chunk:
            chunks.append(chunk)
            total += len(chunk)
        if len(chunk) < want:
            break
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_file(path, limit: int | None = None) -> bytes:
    """The bytes of a regular file, at most ``limit + 1`` of them when a limit is given."""
    with open_file(path) as f:
        return f.read() if limit is None else read_at_most(f, limit)


__all__ = ["ENV_NO_SYMLINKS", "NotReadable", "add_option", "follows_symlinks", "no_symlinks",
           "open_file", "open_regular", "read_at_most", "read_file"]
