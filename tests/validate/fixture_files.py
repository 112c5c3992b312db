"""The per-code fixtures in ``tests/validate/fixtures/`` and how to read them (see its README).

Used by the fixture tests, the OpenVINO conformance test and ``tools/gen_docs.py``, so that all
three read the fixtures by the same rules:

* ``<CODE>.xml`` is the failing file, ``<CODE>.fixed.xml`` its repair; a Const reads
  ``<CODE>.bin`` / ``<CODE>.fixed.bin`` (the .bin beside the .xml).
* The line a diagnostic must point at ends with the marker ``<!-- here -->``.
* Run-time codes (IR6xx) pair a valid model with ``<CODE>.inputs.json`` (and the fixed model with
  ``<CODE>.fixed.inputs.json``): ``{name: {"dtype", "shape", "values"}}`` for an array saved with
  numpy, or ``{name: {"file_text": ...}}`` for a file holding that text instead of a .npy array.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
from pathlib import Path

import numpy as np

from irexec.errors import IRError
from irexec.diagnostics import codes
from irexec.ops import registry

FIXTURES = Path(__file__).with_name("fixtures")
MARKER = "<!-- here -->"
TEN_PROBLEMS = FIXTURES / "ten_problems.xml"


def is_runtime(code: str) -> bool:
    """IR6xx codes come from running a model on inputs, not from reading one file."""
    return code.startswith("IR6")


def all_codes() -> list[str]:
    """The codes with an example fixture: every code a built-in operation can raise (the ops'
    own codes join the table when the ops are loaded)."""
    registry.load_builtin()
    return sorted(c.code for c in codes.CODES.values() if c.example)


def xml_path(code: str, fixed: bool = False) -> Path:
    return FIXTURES / f"{code}{'.fixed' if fixed else ''}.xml"


def inputs_path(code: str, fixed: bool = False) -> Path:
    return FIXTURES / f"{code}{'.fixed' if fixed else ''}.inputs.json"


def marked_line(path: Path, marker: str = MARKER) -> int | None:
    """The 1-based line that ends with ``marker``; None if no line does (at most one may)."""
    if not path.is_file():
        return None
    found = [n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
             if line.rstrip().endswith(marker)]
    assert len(found) <= 1, f"{path.name}: {marker} marks {len(found)} lines"
    return found[0] if found else None


def element_column(path: Path, line: int) -> int:
    """The 1-based column of the first element on ``line`` (the ``<`` of its tag)."""
    return path.read_text(encoding="utf-8").splitlines()[line - 1].index("<") + 1


def code_markers(path: Path) -> list[tuple[str, int]]:
    """``(code, line)`` for each line ending with ``<!-- IRnnn -->`` (the multi-problem files)."""
    found = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        tail = line.rstrip()
        if tail.endswith("-->") and "<!-- IR" in tail:
            code = tail[tail.rindex("<!-- IR") + 5:-3].strip()
            if code in codes.CODES:
                found.append((code, n))
    return found


def read_inputs(path: Path) -> dict[str, dict]:
    return json.loads(path.read_text(encoding="utf-8"))


def input_array(spec: dict) -> np.ndarray:
    return np.array(spec["values"], dtype=spec["dtype"]).reshape(spec["shape"])


def load_inputs(path: Path) -> dict[str, np.ndarray] | None:
    """The inputs as arrays, for the Python API; None when one is not an array at all (a file
    that is not .npy only exists on the command line)."""
    specs = read_inputs(path)
    if any("file_text" in s for s in specs.values()):
        return None
    return {name: input_array(s) for name, s in specs.items()}


def write_inputs(path: Path, folder: Path) -> list[str]:
    """Write each input as ``folder/NAME.npy``; return the ``--input NAME=FILE`` arguments."""
    args = []
    for name, spec in read_inputs(path).items():
        target = folder / f"{name}.npy"
        if "file_text" in spec:
            target.write_text(spec["file_text"], encoding="utf-8")
        else:
            np.save(target, input_array(spec))
        args += ["--input", f"{name}={target}"]
    return args


@contextlib.contextmanager
def inside(folder: Path):
    """Run the block with ``folder`` as the working directory."""
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def run_cli(code: str, fixed: bool, workdir: Path) -> tuple[int, IRError | None, str]:
    """``irexec run <CODE>.xml --input ...`` inside ``workdir`` (the model and its inputs are
    copied there, so every path in a message is a bare file name). Returns the exit status of
    ``irexec run``, the IRError it reported (None on success) and what it wrote to stderr."""
    from irexec.cli import main as cli
    from irexec.cli import run

    xml = xml_path(code, fixed)
    shutil.copy(xml, workdir / xml.name)
    if xml.with_suffix(".bin").exists():
        shutil.copy(xml.with_suffix(".bin"), workdir / xml.with_suffix(".bin").name)
    with inside(workdir):
        argv = ["run", xml.name, *write_inputs(inputs_path(code, fixed), Path(""))]
        err, out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            status = cli.main(argv)
            # main() prints the diagnostics without their codes: run the command itself to
            # see which code it raised.
            try:
                run.execute(cli.build_parser().parse_args(argv))
                error = None
            except IRError as e:
                error = e
    return status, error, err.getvalue()
