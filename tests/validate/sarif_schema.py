"""Validate a SARIF log against the official SARIF 2.1.0 JSON schema vendored beside this file.

sarif-schema-2.1.0.json is the OASIS schema (SARIF 2.1.0 errata01) copied verbatim; it is JSON
Schema draft-04, so jsonschema picks the draft-04 validator from its "$schema".
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

SCHEMA_FILE = Path(__file__).with_name("sarif-schema-2.1.0.json")


@cache
def _validator():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def assert_valid_sarif(text: str) -> dict:
    """Parse ``text`` and fail with every schema violation listed; return the parsed log."""
    log = json.loads(text)
    errors = sorted(_validator().iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)
    return log
