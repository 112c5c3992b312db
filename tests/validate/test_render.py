"""The three renderers on hand-made diagnostics: independent of what the reader finds."""

from __future__ import annotations

import json

import pytest

from irexec.diagnostics import codes
from irexec.diagnostics.diagnostic import Diagnostic, Location
from irexec.diagnostics.render import RENDERERS, json_format, sarif, text
from tests.validate.sarif_schema import assert_valid_sarif

FLIP = Location("m.xml", 17, "flip", "Reverse", "2", 5)
AXIS = Diagnostic("IR306", "axis 5 is out of range [-2, 1]", FLIP)
UNUSED = Diagnostic("IR205", "nothing uses its output",
                    Location("m.xml", 30, "dead", "Convert", "4"))
UNREADABLE = Diagnostic("IR001", "cannot read the model: No such file or directory",
                        Location("gone.xml"))
RESULTS = [("m.xml", [AXIS, UNUSED]), ("gone.xml", [UNREADABLE]), ("clean.xml", [])]


def test_the_table_names_every_format():
    assert set(RENDERERS) == {"text", "json", "sarif"}


@pytest.mark.parametrize("fmt", sorted(RENDERERS))
def test_renderers_are_pure_and_end_with_a_newline(fmt):
    first = RENDERERS[fmt](RESULTS)
    assert first == RENDERERS[fmt](RESULTS) and first.endswith("\n")


# --- text ---------------------------------------------------------------------------------------

def test_text_lines_help_and_summary():
    assert text.render(RESULTS).splitlines() == [
        ("m.xml:17:5: IR306 axis-out-of-range: layer 'flip' (Reverse): "
         "axis 5 is out of range [-2, 1]"),
        "  help: axes lie in [-rank, rank-1]",
        "m.xml:30: IR205 unused-layer: layer 'dead' (Convert): nothing uses its output",
        f"  help: {codes.CODES['IR205'].help}",
        "gone.xml: IR001 file-unreadable: cannot read the model: No such file or directory",
        f"  help: {codes.CODES['IR001'].help}",
        "2 errors, 1 warning in 3 files",
    ]


@pytest.mark.parametrize("loc, where", [
    (Location("a.xml", 3, column=7), "a.xml:3:7: "),
    (Location("a.xml", 3), "a.xml:3: "),
    (Location("a.xml"), "a.xml: "),
    (Location(None, 3), "given.xml:3: "),       # no file in the location: the path checked
    (Location("a.bin", 2), "a.bin:2: "),        # the location's own file wins
])
def test_text_position(loc, where):
    line = text.render([("given.xml", [Diagnostic("IR104", "msg", loc)])]).splitlines()[0]
    assert line == f"{where}IR104 bad-port: msg"


@pytest.mark.parametrize("loc, part", [
    (Location("a.xml", 1, "n", "Convert", "3"), "layer 'n' (Convert): "),
    (Location("a.xml", 1, "n", None, "3"), "layer 'n': "),
    (Location("a.xml", 1, None, "Convert", "3"), "layer id 3 (Convert): "),
    (Location("a.xml", 1, None, "Convert", None), ""),
])
def test_text_layer_part(loc, part):
    line = text.render([("a.xml", [Diagnostic("IR101", "msg", loc)])]).splitlines()[0]
    assert line == f"a.xml:1: IR101 bad-layer-attribute: {part}msg"


def test_text_no_help_line_without_help(monkeypatch):
    monkeypatch.setitem(codes.CODES, "IR999", codes.Code("IR999", "test-code", codes.ERROR, ""))
    out = text.render([("a.xml", [Diagnostic("IR999", "msg", Location("a.xml", 1))])])
    assert out == "a.xml:1: IR999 test-code: msg\n1 error, 0 warnings in 1 file\n"


@pytest.mark.parametrize("results, summary", [
    ([], "0 errors, 0 warnings in 0 files"),
    ([("a.xml", [])], "0 errors, 0 warnings in 1 file"),
    ([("a.xml", [AXIS]), ("b.xml", [])], "1 error, 0 warnings in 2 files"),
    ([("a.xml", [UNUSED, UNUSED])], "0 errors, 2 warnings in 1 file"),
    ([("a.xml", [AXIS, AXIS, UNUSED])], "2 errors, 1 warning in 1 file"),
])
def test_text_summary_counts_and_plurals(results, summary):
    assert text.render(results).splitlines()[-1] == summary


# --- json ---------------------------------------------------------------------------------------

def test_json_objects_keys_in_order():
    objects = json.loads(json_format.render(RESULTS))
    assert [list(o) for o in objects] == [[
        "code", "name", "severity", "message", "file", "line", "column", "layer", "help"]] * 3
    assert objects[0] == {
        "code": "IR306", "name": "axis-out-of-range", "severity": "error",
        "message": "axis 5 is out of range [-2, 1]", "file": "m.xml", "line": 17, "column": 5,
        "layer": {"id": "2", "name": "flip", "type": "Reverse"},
        "help": "axes lie in [-rank, rank-1]"}
    assert objects[1]["severity"] == "warning" and objects[1]["column"] is None
    assert objects[2] == {
        "code": "IR001", "name": "file-unreadable", "severity": "error",
        "message": UNREADABLE.message, "file": "gone.xml", "line": None, "column": None,
        "layer": None, "help": codes.CODES["IR001"].help}


def test_json_empty_and_file_fallback():
    assert json.loads(json_format.render([("a.xml", [])])) == []
    (obj,) = json.loads(json_format.render([("a.xml", [Diagnostic("IR104", "m", Location())])]))
    assert obj["file"] == "a.xml"


# --- sarif --------------------------------------------------------------------------------------

def test_sarif_is_valid_and_has_one_run():
    log = assert_valid_sarif(sarif.render(RESULTS))
    assert log["version"] == "2.1.0" and log["$schema"] == sarif.SCHEMA
    (run,) = log["runs"]
    from irexec import __version__
    assert run["tool"]["driver"]["name"] == "irexec"
    assert run["tool"]["driver"]["version"] == __version__


def test_sarif_rules_are_the_codes_used_and_results_point_at_them():
    (run,) = json.loads(sarif.render(RESULTS))["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["IR001", "IR205", "IR306"]  # sorted, each once
    assert rules[1] == {
        "id": "IR205", "name": "unused-layer", "shortDescription": {"text": "unused layer"},
        "fullDescription": {"text": codes.CODES["IR205"].help},
        "help": {"text": codes.CODES["IR205"].help},
        "defaultConfiguration": {"level": "warning"}}
    for res in run["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
    assert [(r["ruleId"], r["level"]) for r in run["results"]] == [
        ("IR306", "error"), ("IR205", "warning"), ("IR001", "error")]


def test_sarif_locations():
    (run,) = json.loads(sarif.render(RESULTS))["runs"]
    axis, unused, unreadable = run["results"]
    assert axis["message"]["text"] == "layer 'flip' (Reverse): axis 5 is out of range [-2, 1]"
    assert axis["locations"] == [{
        "physicalLocation": {"artifactLocation": {"uri": "m.xml"},
                             "region": {"startLine": 17, "startColumn": 5}},
        "logicalLocations": [{"name": "flip", "kind": "element"}]}]
    assert unused["locations"][0]["physicalLocation"]["region"] == {"startLine": 30}
    assert unreadable["locations"] == [
        {"physicalLocation": {"artifactLocation": {"uri": "gone.xml"}}}]


@pytest.mark.parametrize("path, uri", [
    ("models/a.xml", "models/a.xml"),
    ("./models/a.xml", "models/a.xml"),
    ("my models/a#1.xml", "my%20models/a%231.xml"),
    ("/abs/dir/a.xml", "file:///abs/dir/a.xml"),
])
def test_sarif_uris(path, uri):
    log = assert_valid_sarif(sarif.render([(path, [Diagnostic("IR104", "m", Location(path, 1))])]))
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == uri


def test_sarif_without_problems_is_valid():
    log = assert_valid_sarif(sarif.render([("a.xml", [])]))
    assert log["runs"][0]["results"] == [] and log["runs"][0]["tool"]["driver"]["rules"] == []


def test_sarif_every_code_in_the_table_is_a_valid_rule():
    # Guards the table itself: a severity SARIF has no level for, or an empty help, fails here.
    diags = [Diagnostic(c, f"problem {c}", Location("a.xml", 1, column=1)) for c in codes.CODES]
    log = assert_valid_sarif(sarif.render([("a.xml", diags)]))
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(codes.CODES)
    assert all(r["help"]["text"] for r in rules)


@pytest.mark.parametrize("breakage", [
    lambda log: log["runs"][0]["results"][0].update(level="info"),
    lambda log: log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    ["region"].update(startLine=0),
    lambda log: log.update(version="2.0.0"),
])
def test_the_schema_check_is_not_vacuous(breakage):
    log = json.loads(sarif.render(RESULTS))
    breakage(log)
    with pytest.raises(AssertionError):
        assert_valid_sarif(json.dumps(log))
