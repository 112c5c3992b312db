"""Every diagnostic code has a fixture that triggers exactly it, at the line its marker names, and
a repaired twin that validates cleanly (run-time codes: fails, then runs, in ``irexec run``).

The fixtures and their conventions are described in ``tests/validate/fixtures/README.md``. The
tests are parametrized over the code table, so a code added without fixtures fails here.
"""

from __future__ import annotations

import json
import re

import pytest

import irexec
from irexec.api import validate_file
from irexec.diagnostics.render import RENDERERS
from tests.validate.fixture_files import (FIXTURES, TEN_PROBLEMS, all_codes, code_markers,
                                          element_column, inputs_path, is_runtime, load_inputs,
                                          marked_line, run_cli, xml_path)
from tests.validate.sarif_schema import assert_valid_sarif

STATIC = [c for c in all_codes() if not is_runtime(c)]
RUNTIME = [c for c in all_codes() if is_runtime(c)]

# Diagnostics that know their line but not yet their column (see test_column_known_everywhere).


def expected_column(code: str, path, line: int) -> int:
    if code == "IR002":
        # libxml2 stops where an attribute value should open with a quote.
        text = path.read_text(encoding="utf-8").splitlines()[line - 1]
        return text.index("destination_type=") + len("destination_type=") + 1
    return element_column(path, line)


# --- the fixture set itself -------------------------------------------------------------------

@pytest.mark.parametrize("code", all_codes())
def test_every_code_has_fixtures(code):
    bad, fixed = xml_path(code), xml_path(code, fixed=True)
    if code == "IR001":
        assert bad.is_dir(), "IR001.xml is a directory: a model no reader can read as a file"
    else:
        assert bad.is_file()
        assert f"<!-- {code}: " in bad.read_text(encoding="utf-8"), "say at the top what is wrong"
    assert fixed.is_file()
    assert f"<!-- {code} fixed: " in fixed.read_text(encoding="utf-8")
    if is_runtime(code):
        assert inputs_path(code).is_file() and inputs_path(code, fixed=True).is_file()


def test_no_stray_files():
    known = set(all_codes())
    for path in FIXTURES.iterdir():
        if path.name in ("README.md", TEN_PROBLEMS.name):
            continue
        code = path.name.split(".")[0]
        assert code in known, f"{path.name} belongs to no code in the table"
        assert re.fullmatch(r"IR\d{3}(\.fixed)?\.(xml|bin|inputs\.json)", path.name), path.name


# --- codes found by validating one file -------------------------------------------------------

@pytest.mark.parametrize("code", STATIC)
def test_fixture_reports_exactly_its_code(code):
    path = xml_path(code)
    diags = validate_file(path)
    assert diags, f"{path.name} gives no diagnostic"
    assert [d.code for d in diags if d.code != code] == [], [str(d) for d in diags]
    line = marked_line(path)
    assert (line is None) == (code == "IR001"), "mark the offending line with <!-- here -->"
    for d in diags:
        assert d.location.line == line, str(d)
        if code != "IR001":
            assert d.location.column == expected_column(code, path, line), str(d)


@pytest.mark.parametrize("code", STATIC)
def test_fixed_fixture_is_clean(code):
    diags = validate_file(xml_path(code, fixed=True))
    assert diags == [], [str(d) for d in diags]


def test_broken_layer_is_not_also_unused(tmp_path):
    # The valid Reverse model of IR302.fixed.xml with both input ports of 'flip' numbered 0.
    text = xml_path("IR302", fixed=True).read_text(encoding="utf-8")
    assert text.count('<port id="1">') == 1
    path = tmp_path / "model.xml"
    path.write_text(text.replace('<port id="1">', '<port id="0">'), encoding="utf-8")
    assert [d.code for d in validate_file(path)] == ["IR104"]


# --- run-time codes ---------------------------------------------------------------------------

@pytest.mark.parametrize("code", RUNTIME)
def test_runtime_models_are_valid(code):
    for fixed in (False, True):
        assert validate_file(xml_path(code, fixed)) == []


@pytest.mark.parametrize("code", RUNTIME)
def test_run_fails_with_its_code(code, tmp_path):
    status, error, stderr = run_cli(code, fixed=False, workdir=tmp_path)
    assert status == 1
    assert stderr.startswith("error: ") and "Traceback" not in stderr
    assert error is not None and [d.code for d in error.diagnostics] == [code], str(error)
    line = marked_line(xml_path(code))
    assert error.diagnostics[0].location.line == line, str(error)


@pytest.mark.parametrize("code", RUNTIME)
def test_run_fixed_succeeds(code, tmp_path):
    status, error, stderr = run_cli(code, fixed=True, workdir=tmp_path)
    assert (status, error, stderr) == (0, None, "")


@pytest.mark.parametrize("code", [c for c in RUNTIME if load_inputs(inputs_path(c)) is not None])
def test_python_api_fails_with_its_code(code):
    compiled = irexec.compile_model(xml_path(code))
    inputs = load_inputs(inputs_path(code))
    if code == "IR603":  # a call converts numbers as OpenVINO's API does; the check is strict
        compiled(inputs)
        with pytest.raises(irexec.IRError) as info:
            for name, value in inputs.items():
                compiled.check_input(name, value)
    else:
        with pytest.raises(irexec.IRError) as info:
            compiled(inputs)
    assert [d.code for d in info.value.diagnostics] == [code]
    outputs = irexec.compile_model(xml_path(code, fixed=True))(
        load_inputs(inputs_path(code, fixed=True)))
    assert len(outputs) == 1


# --- ten problems at once ---------------------------------------------------------------------

def test_ten_problems_in_one_run():
    expected = code_markers(TEN_PROBLEMS)
    assert len(expected) == 10 and len({c for c, _ in expected}) == 10
    diags = validate_file(TEN_PROBLEMS)
    assert [(d.code, d.location.line) for d in diags] == expected, [str(d) for d in diags]
    assert len({d.location.layer_name for d in diags}) == 10
    for d in diags:
        assert d.location.column == element_column(TEN_PROBLEMS, d.location.line), str(d)


def test_ten_problems_in_every_format():
    path = str(TEN_PROBLEMS)
    diags = validate_file(TEN_PROBLEMS)
    expected = [(c, line, element_column(TEN_PROBLEMS, line))
                for c, line in code_markers(TEN_PROBLEMS)]
    results = [(path, diags)]

    text = RENDERERS["text"](results).splitlines()
    heads = [line for line in text if line.startswith(path + ":")]
    assert [tuple(re.match(re.escape(path) + r":(\d+):(\d+): (IR\d{3}) ", h).group(3, 1, 2))
            for h in heads] == [(c, str(ln), str(col)) for c, ln, col in expected]

    objects = json.loads(RENDERERS["json"](results))
    assert [(o["code"], o["line"], o["column"]) for o in objects] == expected

    sarif = assert_valid_sarif(RENDERERS["sarif"](results))
    found = [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"],
              r["locations"][0]["physicalLocation"]["region"]["startColumn"])
             for r in sarif["runs"][0]["results"]]
    assert found == expected
