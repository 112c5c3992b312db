"""docs/ops.md and docs/diagnostics.md are what tools/gen_docs.py writes from the code now.

When this fails, run ``python tools/gen_docs.py``, read the diff, and commit it with the change
that caused it.
"""

from __future__ import annotations

import difflib
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _gen_docs():
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "tools" / "gen_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN_DOCS = _gen_docs()


@pytest.fixture(scope="module")
def generated() -> dict[Path, str]:
    return GEN_DOCS.generate()


@pytest.mark.parametrize("path", [GEN_DOCS.OPS_MD, GEN_DOCS.DIAGNOSTICS_MD, GEN_DOCS.OP_INDEX,
                                  GEN_DOCS.README],
                         ids=lambda p: p.name)
def test_generated_doc_is_fresh(path, generated):
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    diff = "".join(difflib.unified_diff(current.splitlines(True),
                                        generated[path].splitlines(True),
                                        f"{path.name} (committed)", f"{path.name} (generated)",
                                        n=1))
    assert not diff, f"{path.name} is stale: run python tools/gen_docs.py\n{diff[:3000]}"


def test_every_code_and_op_is_documented(generated):
    from irexec.ops import registry
    from irexec.diagnostics import codes

    diagnostics, ops = generated[GEN_DOCS.DIAGNOSTICS_MD], generated[GEN_DOCS.OPS_MD]
    for c in codes.CODES.values():
        assert f"### {c.code} {c.name}\n" in diagnostics
    for op in registry.all_ops():
        assert f"## {op.spec.type}-{op.spec.since}\n" in ops
