"""Run a function in a child process, so that a crash there (a signal inside a C++ library such
as OpenVINO: SIGFPE on an integer division of INT64_MIN by -1, SIGSEGV) ends the child, not the
command, which then says in one line what happened.

The child is started with ``spawn`` (a fresh interpreter: no threads or locks inherited from the
parent, which may already run BLAS threads); the function and its arguments travel by pickle, so
the function must be a module-level one. The child is killed when the parent stops early (Ctrl-C,
SIGTERM).
"""

from __future__ import annotations

import multiprocessing
import signal
import traceback


class ChildDied(Exception):
    """The child ended without an answer: ``signum`` is the signal that ended it (None: it
    exited, with ``exitcode``)."""

    def __init__(self, signum: int | None, exitcode: int | None):
        self.signum, self.exitcode = signum, exitcode
        super().__init__(self.how())

    def how(self) -> str:
        if self.signum is None:
            return f"exited with code {self.exitcode}"
        try:
            name = signal.Signals(self.signum).name
        except ValueError:
            name = f"signal {self.signum}"
        meaning = signal.strsignal(self.signum) or ""
        return f"was killed by {name}" + (f" ({meaning.lower()})" if meaning else "")


class ChildFailed(Exception):
    """The function raised in the child: its type name, message and traceback text."""

    def __init__(self, type_name: str, message: str, trace: str):
        self.type_name, self.message, self.trace = type_name, message, trace
        super().__init__(f"{type_name}: {message}")


def _serve(connection, function, args):
    try:
        answer = ("ok", function(*args))
    except BaseException as e:  # handed to the parent, which decides what it means
        answer = ("raised", (type(e).__name__, str(e), traceback.format_exc()))
    connection.send(answer)
    connection.close()


def call(function, *args, poll_seconds: float = 0.1):
    """``function(*args)`` computed in a child process. Raises ChildDied when the child ends
    without answering (a signal or an exit), ChildFailed when the function raised."""
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_serve, args=(sender, function, args), daemon=True)
    process.start()
    sender.close()  # the child's end: once the child is gone, recv sees end-of-file
    try:
        while not receiver.poll(poll_seconds):
            if not process.is_alive():
                break
        try:
            kind, value = receiver.recv()
        except EOFError:
            process.join()
            code = process.exitcode
            raise ChildDied(-code if code is not None and code < 0 else None, code) from None
        process.join()
    finally:
        if process.is_alive():
            process.kill()
            process.join()
        receiver.close()
    if kind == "raised":
        raise ChildFailed(*value)
    return value
