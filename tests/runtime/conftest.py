"""Fixtures for the runtime and API tests.

``ir_file(layers, edges, ...)`` writes a hand-written IR ``.xml`` (and optionally a ``.bin``) into
``tmp_path`` (see runtime_irxml.py); ``registry_sandbox`` restores the op registry after a test that
registers its own ops.
"""

from __future__ import annotations

import pytest
from tests.runtime.runtime_irxml import ir_xml


@pytest.fixture
def ir_file(tmp_path):
    """Write an IR file: ``ir_file(layers, edges, version=11, weights=b"", stem="model")``."""

    def write(layers, edges, version: int = 11, weights: bytes | None = None,
              stem: str = "model"):
        xml = tmp_path / f"{stem}.xml"
        xml.write_text(ir_xml(layers, edges, version, stem))
        if weights is not None:
            (tmp_path / f"{stem}.bin").write_bytes(weights)
        return xml

    return write


@pytest.fixture
def registry_sandbox():
    """Let a test register ops (even override built-ins); the registry is restored afterwards."""
    from irexec.ops import registry

    with registry.sandbox():
        yield registry
