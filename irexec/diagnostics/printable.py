"""Text irexec prints, made safe: names and values from a model are the model author's, and may
hold newlines, carriage returns, terminal escapes or bidirectional overrides.

A layer named ``x&#10;error: evil.xml:1: forged line&#13;`` would otherwise print a line of its
own that looks like irexec's, and an escape sequence could rewrite the terminal. Every line of
text output goes through :func:`line`, which writes each such character as a Python-style
escape (``\\n``, ``\\r``, ``\\x1b``, ``\\u202e``): one line stays one line. JSON and SARIF need
nothing more (``json.dumps`` escapes them, and writes ASCII).

And printing never fails on a character the output's encoding lacks
(``PYTHONIOENCODING=ascii``, a Latin-1 terminal): :func:`configure_streams` makes stdout and
stderr write it as a backslash escape instead of raising.
"""

from __future__ import annotations

import re
import sys

# C0 and C1 controls, DEL, the Unicode line and paragraph separators, the bidirectional
# embeddings, overrides, isolates and marks, and lone surrogates.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                     "\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match) -> str:
    c = match.group()
    if c in _NAMED:
        return _NAMED[c]
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def line(text) -> str:
    """``text`` as one printable line: every control, separator and bidirectional character
    escaped (the common case, nothing to escape, costs one regex search)."""
    text = str(text)
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(_escape, text)


def configure_streams() -> None:
    """Make stdout and stderr escape what their encoding cannot write, never raise."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # a closed or unusual stream: leave it
                pass


__all__ = ["configure_streams", "line"]
