"""Usage errors (exit 2), ``irexec ops``, ``--version`` and ``python -m irexec``."""

from __future__ import annotations

import pytest

import irexec
from tests.cli.conftest import SAMPLES, one_error, run_cli

CHAIN = SAMPLES / "convert_reverse_chain.xml"


@pytest.mark.parametrize("args", [
    (),
    ("frobnicate",),
    ("run",),
    ("run", CHAIN, "--seed", "abc"),
    ("run", CHAIN, "--seed"),
    ("run", CHAIN, "--no-such-option"),
    ("run", CHAIN, "extra.xml"),
    ("ops", "Reverse", "ReverseSequence"),
])
def test_usage_errors_exit_2(args):
    proc = run_cli(*args)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "usage:" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.stdout == ""


def test_help_exits_0():
    for args in (("--help",), ("run", "--help"), ("ops", "--help")):
        proc = run_cli(*args)
        assert proc.returncode == 0 and "usage:" in proc.stdout
    assert "--input" in run_cli("run", "--help").stdout
    assert "--seed" in run_cli("run", "--help").stdout


def test_version():
    proc = run_cli("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"irexec {irexec.__version__}"


def test_ops_lists_the_registered_operations():
    proc = run_cli("ops")
    assert proc.returncode == 0 and proc.stderr == ""
    rows = {}  # a type registered in several families (ReverseSequence: opset, onnx) has a row each
    for line in proc.stdout.splitlines():
        if line.strip():
            rows[line.split()[0]] = rows.get(line.split()[0], "") + line + "\n"
    for name in ("Reverse", "ReverseSequence", "Convert", "Parameter", "Constant", "Result"):
        assert name in rows, proc.stdout
    assert "opset1 only" in rows["Reverse"]
    assert "opset16" in rows["ReverseSequence"]
    assert "onnx10 to onnx27" in rows["ReverseSequence"] and "onnx6" in rows["Cast"]


@pytest.mark.parametrize("query", ["ReverseSequence", "reversesequence", "REVERSESEQUENCE"])
def test_ops_shows_one_op_with_its_attributes(query):
    proc = run_cli("ops", query)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert text.startswith("ReverseSequence-1")
    batch = next(line for line in text.splitlines() if line.strip().startswith("batch_axis"))
    seq = next(line for line in text.splitlines() if line.strip().startswith("seq_axis"))
    # Defaults are shown as the XML attribute text would be written.
    assert 'default "0"' in batch and 'default "1"' in seq
    assert "seq_lengths" in text and "data" in text


def test_ops_reverse_shows_its_modes():
    proc = run_cli("ops", "Reverse")
    assert proc.returncode == 0
    assert proc.stdout.startswith("Reverse-1")
    mode = next(line for line in proc.stdout.splitlines() if line.strip().startswith("mode"))
    assert "required" in mode and "index" in mode and "mask" in mode
    assert "ReverseSequence" not in proc.stdout


def test_ops_finds_an_alias():
    proc = run_cli("ops", "Const")
    assert proc.returncode == 0 and proc.stdout.startswith("Constant-1")


def test_ops_unknown_type_exits_1():
    m = one_error(run_cli("ops", "Nope"))
    assert "Nope" in m.string and "`irexec ops` lists" in m.string
    assert "ReverseSequence" not in m.string  # not every registered type (~3,000 characters)


def test_python_dash_m():
    proc = run_cli("run", CHAIN)
    assert proc.returncode == 0 and "outputs:" in proc.stdout


def test_ops_unknown_type_suggests_the_closest():
    m = one_error(run_cli("ops", "Rellu"))
    assert "did you mean 'Relu', 'PRelu' or 'Elu'?" in m.string and len(m.string) < 150



def test_help_texts_name_docs_where_they_are():
    """An installed irexec has no docs/ folder: help texts that named "docs/numerics.md" sent
    users to a file they did not have. They say it is in irexec's source repository."""
    import re

    from irexec.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    texts = [parser.description or ""]
    for command in sub.choices.values():
        texts += [command.description or "", command.epilog or ""]
        texts += [a.help or "" for a in command._actions]
    named = [t for t in texts if "docs/" in t]
    assert named, "some help text names a document"
    for text in named:
        for m in re.finditer(r"docs/[\w./-]+", text):
            assert text[m.end():].startswith(" in irexec's source repository"), text
