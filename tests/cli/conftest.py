"""Fixtures for the command-line tests: run ``python -m irexec`` in a subprocess, copy samples.

Every error test checks the contract of DESIGN.md: exit code 1, one line per problem on stderr in
the form ``error: file:line: layer 'name' (Type): message``, and never a traceback.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[2] / "samples"

# error: FILE:LINE: layer 'NAME' (TYPE): MESSAGE   (the layer part is absent for file-level errors)
ERROR_LINE = re.compile(r"^error: (?P<file>.+?)(?::(?P<line>\d+))?: "
                        r"(?:layer '(?P<layer>[^']*)' \((?P<type>[A-Za-z0-9_]+)\): )?"
                        r"(?P<message>.+)$")


def run_cli(*args, cwd=None, exe=None) -> subprocess.CompletedProcess:
    """``irexec ARGS`` via ``python -m irexec`` (or the given executable); text output."""
    env = {k: v for k, v in os.environ.items() if k != "IREXEC_DEBUG"}
    command = [exe] if exe else [sys.executable, "-m", "irexec"]
    return subprocess.run([*command, *map(str, args)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def run_on_terminal(*args):
    """``irexec ARGS`` with stderr on a pseudo-terminal (stdout piped): the process and the text
    the terminal was shown."""
    import pty

    controller, terminal = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "irexec", *map(str, args)],
                              stdout=subprocess.PIPE, stderr=terminal, timeout=120)
        os.close(terminal)
        terminal = None
        shown = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(controller)
        if terminal is not None:
            os.close(terminal)
    return proc, shown.decode()


def parse_errors(proc: subprocess.CompletedProcess) -> list[re.Match]:
    """The stderr lines, each parsed as an error line; fails on a traceback or any other line."""
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines, "nothing on stderr"
    matches = [ERROR_LINE.match(line) for line in lines]
    assert all(matches), f"not an error line: {lines}"
    return matches


def one_error(proc: subprocess.CompletedProcess, file=None, line=None, layer=None, type_=None,
              *fragments) -> re.Match:
    """Exit code 1 and exactly one well-formed error line with these parts."""
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    (m,) = parse_errors(proc)
    if file is not None:
        assert Path(m["file"]).resolve() == Path(file).resolve(), m["file"]
    if line is not None:
        assert m["line"] is not None and int(m["line"]) == line, (m.string, line)
    if layer is not None:
        assert (m["layer"], m["type"]) == (layer, type_), m.string
    for fragment in fragments:
        assert fragment in m["message"], (fragment, m.string)
    return m


def line_of(path: Path, snippet: str, nth: int = 1) -> int:
    """The 1-based line number of the nth line of a file containing ``snippet``."""
    seen = 0
    for number, text in enumerate(Path(path).read_text().splitlines(), start=1):
        if snippet in text:
            seen += 1
            if seen == nth:
                return number
    raise AssertionError(f"{snippet!r} not in {path}")


@pytest.fixture
def chain(tmp_path) -> Path:
    """A private copy of samples/convert_reverse_chain.{xml,bin}."""
    for ext in (".xml", ".bin"):
        shutil.copy(SAMPLES / f"convert_reverse_chain{ext}", tmp_path / f"chain{ext}")
    return tmp_path / "chain.xml"


@pytest.fixture
def edited(chain):
    """``edited({old: new, ...}, bin=None)``: the chain sample with text replaced (each ``old``
    must occur exactly once) and optionally new .bin bytes."""

    def make(replacements: dict[str, str], bin: bytes | None = None, name="edited") -> Path:
        text = chain.read_text()
        for old, new in replacements.items():
            assert text.count(old) == 1, old
            text = text.replace(old, new)
        path = chain.with_name(f"{name}.xml")
        path.write_text(text)
        path.with_suffix(".bin").write_bytes(bin if bin is not None else
                                             chain.with_suffix(".bin").read_bytes())
        return path

    return make
