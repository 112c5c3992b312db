"""The hostile corpus (tests/data/hostile/, written by its make_corpus.py): every file is one
attack or breakage, and manifest.json names the diagnostic code it must give. Each must give that
code from the library and, on the command line, exit 1 with one line per problem and no
traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import irexec
from irexec.api import check_model
from irexec.cli.common import load_inputs as _load_inputs
from tests.cli.inproc import irexec_cli

HOSTILE = Path(__file__).resolve().parent / "data" / "hostile"
MANIFEST = json.loads((HOSTILE / "manifest.json").read_text(encoding="utf-8"))
MODELS = sorted(n for n, e in MANIFEST.items() if e["kind"] == "model")
INPUTS = sorted(n for n, e in MANIFEST.items() if e["kind"] == "input")


def test_corpus_is_large_and_every_file_is_listed():
    assert len(MANIFEST) >= 40
    listed = set(MANIFEST) | {"base.xml", "base.bin", "manifest.json", "make_corpus.py"}
    listed |= {n.replace(".xml", ".bin") for n in MODELS}
    assert {p.name for p in HOSTILE.iterdir() if p.is_file()} <= listed


@pytest.mark.parametrize("name", MODELS)
def test_hostile_model_gives_its_code(name):
    expected = MANIFEST[name]["code"]
    model, diags = check_model(HOSTILE / name)
    errors = [d.code for d in diags if d.is_error]
    assert expected in errors, [str(d) for d in diags]


@pytest.mark.parametrize("name", MODELS)
def test_hostile_model_on_the_command_line(name):
    status, out, err = irexec_cli("run", HOSTILE / name)
    assert status == 1, err
    lines = err.splitlines()
    assert lines and all(line.startswith(("error: ", "warning: ")) for line in lines), err


@pytest.mark.parametrize("name", INPUTS)
def test_hostile_input_file(name, tmp_path):
    status, out, err = irexec_cli("run", HOSTILE / "base.xml", "--input",
                                  f"data={HOSTILE / name}")
    assert status == 1, err
    assert err.startswith("error: ") and len(err.splitlines()) == 1, err
    compiled = irexec.compile_model(HOSTILE / "base.xml")
    with pytest.raises(irexec.IRError) as caught:
        _load_inputs([f"data={HOSTILE / name}"], compiled, str(HOSTILE / "base.xml"))
    assert caught.value.code == MANIFEST[name]["code"]


def test_base_model_is_valid():
    status, out, err = irexec_cli("run", HOSTILE / "base.xml")
    assert status == 0, err


def test_reading_leaves_the_corpus_untouched(tmp_path):
    copy = tmp_path / "corpus"
    shutil.copytree(HOSTILE, copy)
    for name in MODELS:
        irexec_cli("run", copy / name, "--output", tmp_path / "out.npz")
    for path in HOSTILE.iterdir():
        assert (copy / path.name).read_bytes() == path.read_bytes(), path.name
