"""A progress bar on stderr for long work (with the rate so far and the time left at that rate),
shown only when stderr is a terminal.

Piped or redirected, nothing is drawn, so logs and scripts see only the results. No dependency:
a bar is one line redrawn with a carriage return. Lines the command prints while the bar is up go
through ``Progress.print``, which clears the bar first and draws it again after the line.
"""

from __future__ import annotations

import sys
import time

from irexec.diagnostics import printable

WIDTH = 30
MIN_INTERVAL = 0.1  # seconds between redraws, so a fast loop does not flood the terminal
FLUSH_INTERVAL = 0.2  # seconds between flushes of lines printed to a file or pipe


class Progress:
    def __init__(self, total: int, stream=None, enabled: bool | None = None):
        self.total = total
        self.done = 0
        self.label = ""
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self._is_terminal() if enabled is None else enabled
        self._drawn = 0
        self._last = 0.0
        self._started = time.monotonic()
        self._flushed = 0.0

    def _is_terminal(self) -> bool:
        try:
            return self.stream.isatty()
        except (AttributeError, ValueError):
            return False

    def _line(self) -> str:
        filled = WIDTH * self.done // self.total if self.total else WIDTH
        return (f"[{'#' * filled}{'.' * (WIDTH - filled)}] {self.done}/{self.total}"
                f"{self._pace()} {self.label}")[:200]

    def _pace(self) -> str:
        """The rate so far and the time left at that rate (nothing before the first item)."""
        elapsed = time.monotonic() - self._started
        if not self.done or elapsed <= 0:
            return ""
        rate = self.done / elapsed
        left = int(round((self.total - self.done) / rate)) if self.total > self.done else 0
        shown = f"{rate:.1f}/s" if rate >= 1 else f"{1 / rate:.1f} s each"
        return f" {shown}, ETA {left // 3600}:{left // 60 % 60:02d}:{left % 60:02d}"

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < MIN_INTERVAL:
            return
        self._last = now
        line = self._line()
        self.stream.write("\r" + line + " " * max(0, self._drawn - len(line)))
        self.stream.flush()
        self._drawn = len(line)

    def _clear(self) -> None:
        if self.enabled and self._drawn:
            self.stream.write("\r" + " " * self._drawn + "\r")
            self.stream.flush()
            self._drawn = 0

    def start(self, label: str) -> None:
        """Work on the next item (``label``) begins."""
        self.label = printable.line(label)  # a file name's escapes stay out of the terminal
        self._draw(force=self.done == 0)

    def advance(self) -> None:
        self.done += 1
        self._draw(force=self.done == self.total)

    def print(self, text: str, file=None) -> None:
        """Print a line of output without mixing it into the bar. Lines to a file or pipe are
        flushed at most every FLUSH_INTERVAL seconds (a flush per line costs a system call per
        sample of a large dataset), and always before a line to another stream, so the two keep
        their order."""
        self._clear()
        stream = file or sys.stdout
        if stream is not sys.stdout:
            sys.stdout.flush()
        now = time.monotonic()
        flush = self.enabled or stream is not sys.stdout or now - self._flushed >= FLUSH_INTERVAL
        print(text, file=stream, flush=flush)
        if flush:
            self._flushed = now
        self._draw(force=True)

    def close(self) -> None:
        self._clear()
        sys.stdout.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
