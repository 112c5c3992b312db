"""Long work run so that a signal stops the command at once.

Python runs a signal's handler only between bytecodes of the main thread, so a kernel inside
one long numpy call (an einsum, a matrix product, a reduction) used to hold Ctrl-C and SIGTERM
until it returned, minutes later. :func:`call` runs the work in a worker thread instead (numpy
releases the GIL in its loops) while the main thread waits in short, interruptible joins:
the handler raises there (KeyboardInterrupt, or safe_write.Terminated), the worker is
abandoned, and the command ends with the usual exit code. The abandoned worker may go on
computing until the process exits, but :func:`irexec.io.safe_write.cancel` keeps it from
creating or renaming any file, so an interrupted command leaves no output, partial or whole,
that it had not finished before the signal.

Outside the main thread (a command run from a thread, where no handler can be set) the work
runs in place.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import TypeVar

from irexec.io import safe_write

R = TypeVar("R")
POLL = 0.05  # seconds between the main thread's looks at pending signals
_abandoned: list[threading.Thread] = []


def call(work: Callable[..., R], *args, **kwargs) -> R:
    """``work(*args, **kwargs)`` in a worker thread (with the caller's context variables);
    its result, or its exception raised here. A signal's exception raised while waiting
    propagates at once, and the worker is abandoned."""
    if threading.current_thread() is not threading.main_thread():
        return work(*args, **kwargs)
    outcome: dict = {}
    context = contextvars.copy_context()

    def run() -> None:
        try:
            outcome["result"] = context.run(work, *args, **kwargs)
        except BaseException as e:  # handed to the main thread, which decides
            outcome["error"] = e

    worker = threading.Thread(target=run, name="irexec-work", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(POLL)
    except BaseException:
        safe_write.cancel(worker)
        _abandoned.append(worker)
        raise
    if "error" in outcome:
        error = outcome.pop("error")
        try:
            raise error
        finally:
            del error
    return outcome["result"]


def abandoned() -> bool:
    """Whether a worker that a signal abandoned is still running."""
    return any(t.is_alive() for t in _abandoned)
