"""SARIF 2.1.0, the format GitHub code scanning (and most CI dashboards) read.

One run; ``tool.driver.rules`` holds every code that occurs (id, name, descriptions, help, default
level), sorted by code, and each result points at its rule by ``ruleId`` and ``ruleIndex``. A
result's location is the file as a relative URI with forward slashes (GitHub matches it against
the repository's paths) and, when the line is known, a region; absolute paths become ``file://``
URIs. tests/validate/ checks the output against the official schema.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

from irexec.diagnostics import codes
from irexec.diagnostics.diagnostic import Diagnostic, FileDiagnostics, Location
from irexec.diagnostics.render.text import layer_part
from irexec.version import __version__

SCHEMA = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
          "sarif-schema-2.1.0.json")


def artifact_uri(path: str) -> str:
    pure = PurePath(path)
    if pure.is_absolute():
        return pure.as_uri()
    return quote(pure.as_posix(), safe="/")  # as_posix() also drops a leading "./"


def rule(code: codes.Code) -> dict[str, Any]:
    return {
        "id": code.code,
        "name": code.name,
        "shortDescription": {"text": code.name.replace("-", " ")},
        "fullDescription": {"text": code.help},
        "help": {"text": code.help},
        "defaultConfiguration": {"level": code.severity},
    }


def physical_location(path: str, loc: Location) -> dict[str, Any]:
    where: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(loc.file or path)}}
    if loc.line is not None:
        region = {"startLine": loc.line}
        if loc.column is not None:
            region["startColumn"] = loc.column
        where["region"] = region
    return where


def result(path: str, d: Diagnostic, rule_index: int) -> dict[str, Any]:
    location: dict[str, Any] = {"physicalLocation": physical_location(path, d.location)}
    if d.location.layer_name is not None:
        # The layer is an XML element: viewers that understand logical locations can show it.
        location["logicalLocations"] = [{"name": d.location.layer_name, "kind": "element"}]
    return {
        "ruleId": d.code,
        "ruleIndex": rule_index,
        "level": d.severity,  # our two severities are SARIF level names as they stand
        "message": {"text": layer_part(d.location) + d.message},
        "locations": [location],
    }


def render(results: Sequence[FileDiagnostics]) -> str:
    pairs = [(path, d) for path, diags in results for d in diags]
    used = sorted({d.code for _, d in pairs})
    index = {code: i for i, code in enumerate(used)}
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "irexec",
                "version": __version__,
                "rules": [rule(codes.get(code)) for code in used],
            }},
            "results": [result(path, d, index[d.code]) for path, d in pairs],
        }],
    }
    return json.dumps(log, indent=2) + "\n"
