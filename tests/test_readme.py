"""README.md shows real output: every ``$ irexec ...`` command of its console blocks that reads
files of this repository and writes none is run, and prints what the README shows (a line
``...`` stands for any lines). The error example is a file of the repository (samples/bad/)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
WRITES = {"-o", "--output", "--trace", "--output-dir"}


def console_commands() -> list[tuple[str, list[str]]]:
    """(command line, the lines shown after it) for each ``$ irexec`` line."""
    found = []
    for block in re.findall(r"```console\n(.*?)```", README, flags=re.S):
        lines = block.splitlines()
        for i, line in enumerate(lines):
            if not line.startswith("$ "):
                continue
            shown = []
            for after in lines[i + 1:]:
                if after.startswith("$ "):
                    break
                shown.append(after)
            found.append((line[2:], shown))
    return found


def runnable(command: str) -> bool:
    if "|" in command:
        return False
    args = shlex.split(command)
    if args[0] != "irexec" or WRITES & set(args):
        return False
    if args[1] == "compare":
        try:
            import openvino  # noqa: F401
        except ImportError:
            return False
    return (ROOT / args[2]).exists()  # normalized.xml, say, is an example, not a file here


COMMANDS = [(c, shown) for c, shown in console_commands() if runnable(c)]


def matches(shown: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` is ``shown``, a "..." line standing for any lines."""
    if not shown:
        return not actual
    if shown[0] == "...":
        return any(matches(shown[1:], actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and actual[0] == shown[0] and matches(shown[1:], actual[1:])


def test_the_readme_has_commands_to_check():
    checked = {shlex.split(c)[1] for c, _ in COMMANDS}
    assert {"run", "info", "validate"} <= checked
    assert any("samples/bad/" in c for c, _ in COMMANDS)


@pytest.mark.parametrize("command,shown", COMMANDS, ids=[c for c, _ in COMMANDS])
def test_readme_command_prints_what_the_readme_shows(command, shown):
    env = {**{k: v for k, v in os.environ.items() if k != "IREXEC_DEBUG"},
           "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "irexec", *shlex.split(command)[1:]], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)
    actual = proc.stderr.splitlines() + proc.stdout.splitlines()
    assert matches(shown, actual), "\n".join(["README shows:", *shown, "but irexec prints:",
                                              *actual])


def test_the_pre_commit_hook_and_install_lines_work_from_the_repository():
    assert "pip install irexec\n" not in README and "rev: v0.1.0" not in README
    assert "id: irexec-validate" in (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "pip install 'irexec[" not in README


def test_every_registered_op_is_in_the_supported_operations_table():
    # The built-in ops, asked of a fresh interpreter (tests here register ops of their own).
    script = ("from irexec.ops import registry; registry.load_builtin(); "
              "print(' '.join(f'{op.spec.type}-{op.spec.since}' for op in registry.all_ops()))")
    builtin = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                             text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)},
                             check=True).stdout.split()
    assert "ReverseSubsequences-1" in builtin
    section = README[README.index("## Supported operations"):]
    table = section[:section.index("\n\n", section.index("| --- |"))]
    listed = set(re.findall(r"\b[A-Z][A-Za-z0-9]*-\d+\b", table))
    assert listed == set(builtin), (sorted(set(builtin) - listed), sorted(listed - set(builtin)))
