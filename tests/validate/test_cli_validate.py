"""``irexec validate`` in a subprocess: exit codes, code selection, formats, several files.

Exit codes: 0 no error (warnings allowed unless --strict), 1 an error, 2 a usage error. Whatever
the file, the report is in the chosen format and there is never a traceback.
"""

from __future__ import annotations

import json

import pytest

from irexec.cli.usage import UsageError
from irexec.cli.validate import parse_codes
from irexec.diagnostics.codes import CODES
from tests.cli.conftest import SAMPLES, run_cli
from tests.validate import models
from tests.validate.sarif_schema import assert_valid_sarif


def validate(*args, cwd):
    proc = run_cli("validate", *args, cwd=cwd)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def codes_in(proc) -> list[str]:
    """The codes of a JSON report, in order."""
    return [d["code"] for d in json.loads(proc.stdout)]


@pytest.fixture
def files(tmp_path):
    """The models of tests/validate/models.py written as <name>.xml in tmp_path (the cwd)."""
    for name in ("VALID", "WARNING_ONLY", "ERROR_AND_WARNING", "MALFORMED", "NOT_IR"):
        models.write(tmp_path, name.lower(), getattr(models, name))
    return tmp_path


# --- exit codes and --strict --------------------------------------------------------------------

def test_valid_sample(tmp_path):
    proc = validate(SAMPLES / "convert_reverse_chain.xml", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout == "0 errors, 0 warnings in 1 file\n"


def test_errors_exit_1_with_text_on_stdout(files):
    proc = validate("error_and_warning.xml", cwd=files)
    assert proc.returncode == 1 and proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("error_and_warning.xml:11:3: IR302 bad-attribute-value: "
                               "layer 'cast' (Convert): ")
    assert lines[1].startswith("  help: ")
    assert lines[2].startswith("error_and_warning.xml:24:1: IR205 unused-layer: layer 'dead'")
    assert lines[-1] == "1 error, 1 warning in 1 file"


def test_warnings_pass_unless_strict(files):
    assert validate("warning_only.xml", cwd=files).returncode == 0
    strict = validate("warning_only.xml", "--strict", cwd=files)
    assert strict.returncode == 1 and "IR205" in strict.stdout
    assert validate("valid.xml", "--strict", cwd=files).returncode == 0


# --- --select and --ignore ----------------------------------------------------------------------

@pytest.mark.parametrize("option, codes, expected, status", [
    ("--ignore", "IR302", ["IR205"], 0),
    ("--ignore", "bad-attribute-value,unused-layer", [], 0),
    ("--select", "unused-layer", ["IR205"], 0),
    ("--select", "IR3", ["IR302"], 1),
    ("--select", "ir302, IR205", ["IR302", "IR205"], 1),
    ("--select", "IR", ["IR302", "IR205"], 1),
])
def test_select_and_ignore(files, option, codes, expected, status):
    proc = validate("error_and_warning.xml", "--format", "json", option, codes, cwd=files)
    assert (codes_in(proc), proc.returncode) == (expected, status)


def test_ignore_wins_over_select(files):
    proc = validate("error_and_warning.xml", "--format", "json", "--select", "IR2,IR3",
                    "--ignore", "IR302", cwd=files)
    assert (codes_in(proc), proc.returncode) == (["IR205"], 0)


def test_select_still_reports_a_file_it_cannot_check(files):
    proc = validate("malformed.xml", "--format", "json", "--select", "IR3", cwd=files)
    assert (codes_in(proc), proc.returncode) == (["IR002"], 1)


@pytest.mark.parametrize("option, codes", [
    ("--select", "IR9"), ("--select", "no-such-name"), ("--ignore", "IR3021"),
    ("--ignore", "E501"), ("--select", ","),
])
def test_unknown_codes_are_a_usage_error(files, option, codes):
    proc = validate("valid.xml", option, codes, cwd=files)
    assert proc.returncode == 2 and proc.stdout == ""
    assert f"argument {option}" in proc.stderr


def test_parse_codes():
    assert parse_codes("--select", "IR30") == {c for c in CODES if c.startswith("IR30")}
    assert parse_codes("--select", " unused-layer , IR001 ") == {"IR205", "IR001"}
    assert "IR306" in parse_codes("--select", "ir3")
    with pytest.raises(UsageError, match="'unused'"):
        parse_codes("--select", "unused")


# --- formats ------------------------------------------------------------------------------------

def test_json_format(files):
    proc = validate("error_and_warning.xml", "--format", "json", cwd=files)
    assert proc.returncode == 1
    first, second = json.loads(proc.stdout)
    assert (first["code"], first["file"], first["line"], first["layer"]["name"]) == (
        "IR302", "error_and_warning.xml", 11, "cast")
    assert second["severity"] == "warning"


def test_sarif_format(files):
    proc = validate("error_and_warning.xml", "valid.xml", "--format", "sarif", cwd=files)
    assert proc.returncode == 1
    (run,) = assert_valid_sarif(proc.stdout)["runs"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
            for r in run["results"]] == [("IR302", "error_and_warning.xml"),
                                         ("IR205", "error_and_warning.xml")]


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_malformed_xml_is_reported_in_the_chosen_format(files, fmt):
    proc = validate("malformed.xml", "--format", fmt, cwd=files)
    assert proc.returncode == 1 and proc.stderr == ""
    if fmt == "json":
        (d,) = json.loads(proc.stdout)
        assert (d["code"], d["name"], d["line"]) == ("IR002", "xml-syntax", 4)
        assert d["column"] is not None
    else:
        (result,) = assert_valid_sarif(proc.stdout)["runs"][0]["results"]
        assert result["ruleId"] == "IR002"
        assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 4


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_unreadable_file(files, fmt):
    proc = validate("absent.xml", "--format", fmt, cwd=files)
    assert proc.returncode == 1 and proc.stderr == ""
    assert "IR001" in proc.stdout and "absent.xml" in proc.stdout
    if fmt == "sarif":
        assert_valid_sarif(proc.stdout)


def test_a_directory_is_an_unreadable_file(files):
    files.joinpath("folder.xml").mkdir()
    proc = validate("folder.xml", "--format", "json", cwd=files)
    assert (codes_in(proc), proc.returncode) == (["IR001"], 1)


def test_unknown_format_is_a_usage_error(files):
    proc = validate("valid.xml", "--format", "xml", cwd=files)
    assert proc.returncode == 2 and proc.stdout == ""


# --- several files, --skip-non-ir, --output -----------------------------------------------------

def test_several_files_in_the_order_given(files):
    proc = validate("warning_only.xml", "valid.xml", "malformed.xml", "absent.xml", cwd=files)
    assert proc.returncode == 1
    located = [line.split(": ")[0:2] for line in proc.stdout.splitlines()
               if not line.startswith("  ")][:-1]
    assert [(where.split(":")[0], code.split()[0]) for where, code in located] == [
        ("warning_only.xml", "IR205"), ("malformed.xml", "IR002"), ("absent.xml", "IR001")]
    assert proc.stdout.splitlines()[-1] == "2 errors, 1 warning in 4 files"


def test_not_an_ir_file_is_an_error_unless_skipped(files):
    plain = validate("not_ir.xml", "valid.xml", cwd=files)
    assert plain.returncode == 1 and "IR003 not-an-ir" in plain.stdout
    skipped = validate("--skip-non-ir", "not_ir.xml", "valid.xml", cwd=files)
    assert (skipped.returncode, skipped.stdout) == (0, "0 errors, 0 warnings in 1 file\n")


def test_skip_non_ir_still_reports_malformed_xml(files):
    proc = validate("--skip-non-ir", "--format", "json", "malformed.xml", "not_ir.xml", cwd=files)
    assert (codes_in(proc), proc.returncode) == (["IR002"], 1)


def test_output_file(files):
    proc = validate("error_and_warning.xml", "--format", "sarif", "--output", "report.sarif",
                    cwd=files)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert_valid_sarif((files / "report.sarif").read_text(encoding="utf-8"))


def test_output_file_that_cannot_be_written(files):
    proc = validate("valid.xml", "--output", "no/such/dir/report.txt", cwd=files)
    assert proc.returncode == 2 and "--output" in proc.stderr
