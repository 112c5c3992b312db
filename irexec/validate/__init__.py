"""Check IR files against the op specifications and report every problem at once."""

from __future__ import annotations

from irexec.diagnostics.diagnostic import Diagnostic


def validate_file(path, weights=None) -> list[Diagnostic]:
    """Every problem in one IR file (errors and warnings), in file order. Never raises for a
    problem in the file: an unreadable or malformed file gives one diagnostic."""
    from irexec.api import check_model

    return check_model(path, weights)[1]
