"""The examples of docs/api.md run as written (one after the other, as a reader would
paste them)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_examples_run(tmp_path, monkeypatch):
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 2
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "docs/api.md", "exec"), namespace)  # noqa: S102
    assert (tmp_path / "net.xml").is_file()
    (scores,) = namespace["scores"].values()
    assert scores.shape == (1, 8, 224, 224) and scores.dtype.name == "float16"
