"""One mistake, one diagnostic, cause first.

Every file of the hostile corpus (tests/data/hostile/) and every per-code fixture
(tests/validate/fixtures/) holds exactly one problem. For each, validation finds exactly one
diagnostic, with the file's code, and ``irexec run`` prints exactly that one line: the cause, never
a consequence of it (an input port left unfed by a broken edge, a layer left unused by it, the
same oversized tensor at its port after its attribute).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import irexec
from irexec.api import check_model
from tests.cli.inproc import irexec_cli
from tests.validate.fixture_files import (all_codes, inputs_path, is_runtime, run_cli,
                                          write_inputs, xml_path)

HOSTILE = Path(__file__).resolve().parent / "data" / "hostile"
MANIFEST = json.loads((HOSTILE / "manifest.json").read_text(encoding="utf-8"))
HOSTILE_MODELS = sorted(n for n, e in MANIFEST.items() if e["kind"] == "model")
STATIC = [c for c in all_codes() if not is_runtime(c)]
RUNTIME = [c for c in all_codes() if is_runtime(c)]


def the_one_diagnostic(path):
    diags = check_model(path)[1]
    assert len(diags) == 1, [f"{d.code} {d}" for d in diags]
    return diags[0]


@pytest.mark.parametrize("name", HOSTILE_MODELS)
def test_hostile_file_gives_one_line(name):
    path = HOSTILE / name
    diag = the_one_diagnostic(path)
    assert diag.code == MANIFEST[name]["code"] and diag.is_error, str(diag)
    status, _, err = irexec_cli("run", path)
    assert status == 1
    assert err.splitlines() == [f"error: {diag}"]


@pytest.mark.parametrize("code", STATIC)
def test_fixture_gives_one_line(code, tmp_path):
    path = xml_path(code)
    diag = the_one_diagnostic(path)
    assert diag.code == code, str(diag)
    # A model that runs only when given its inputs (IR112) has them beside it.
    given = write_inputs(inputs_path(code), tmp_path) if inputs_path(code).is_file() else []
    status, _, err = irexec_cli("run", path, *given)
    if code == "IR113":  # read and checked, but irexec cannot run it: run's one line says so
        model = irexec.read_model(path)
        with pytest.raises(irexec.IRError) as cannot:
            irexec.compile_model(model)
        assert err.splitlines() == [f"error: {cannot.value.diagnostics[0]}"] and status == 1
        return
    assert err.splitlines() == [f"{diag.severity}: {diag}"]
    assert status == (1 if diag.is_error else 0)


@pytest.mark.parametrize("code", RUNTIME)
def test_runtime_fixture_gives_one_line(code, tmp_path):
    status, error, err = run_cli(code, fixed=False, workdir=tmp_path)
    assert status == 1 and error is not None
    assert err.splitlines() == [f"error: {d}" for d in error.diagnostics]
    assert [d.code for d in error.diagnostics] == [code]


SUBGRAPHS = Path(__file__).resolve().parent / "data" / "subgraphs"


@pytest.mark.parametrize("name, edge", [
    # into the model's Result: the Concat that fed it (and what feeds the Concat) was called
    # unused, three IR205 warnings before the IR201 that caused them
    ("stateful", ('from-layer="3" from-port="2" to-layer="5"', 'from-layer="9" from-port="2" '
                                                               'to-layer="5"')),
    # into a Loop body's Result: the body's Less was called unused
    ("loop_early_exit", ('from-layer="4" from-port="2" to-layer="5"',
                         'from-layer="9" from-port="2" to-layer="5"')),
])
def test_an_edge_from_a_missing_layer_is_one_diagnostic(name, edge, tmp_path):
    path = tmp_path / f"{name}.xml"
    text = (SUBGRAPHS / f"{name}.xml").read_text(encoding="utf-8")
    assert text.count(edge[0]) == 1
    path.write_text(text.replace(edge[0], edge[1]), encoding="utf-8")
    path.with_suffix(".bin").write_bytes((SUBGRAPHS / f"{name}.bin").read_bytes())
    diag = the_one_diagnostic(path)
    assert diag.code == "IR201" and "names layer id 9, which does not exist" in diag.message
    status, out, err = irexec_cli("validate", path)
    assert status == 1 and "1 error, 0 warnings" in out + err
