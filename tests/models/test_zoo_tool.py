"""tools/model_zoo.py itself: the list needs neither torch nor OpenVINO; a rebuild skips what is
cached under the same key; a model that fails to build is named and the others still build."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import model_zoo  # noqa: E402

BLOCKED = ("torch", "openvino", "transformers", "tensorflow", "nncf")


def _run_without_heavy_modules(*args) -> subprocess.CompletedProcess:
    code = ("import runpy, sys\n"
            + "".join(f"sys.modules[{m!r}] = None\n" for m in BLOCKED)
            + f"sys.argv = ['model_zoo.py', *{list(args)!r}]\n"
            + f"runpy.run_path({str(ROOT / 'tools' / 'model_zoo.py')!r}, run_name='__main__')\n")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_list_needs_neither_torch_nor_openvino():
    proc = _run_without_heavy_modules("--list")
    assert proc.returncode == 0, proc.stderr
    names = [line.split()[0] for line in proc.stdout.splitlines()]
    assert names == [e.name for e in model_zoo.ZOO]
    assert len(names) >= 20 and len(set(names)) == len(names)
    assert "(fp16)" in proc.stdout and "(dynamic)" in proc.stdout


def test_unknown_model_is_one_line_and_exit_2():
    proc = _run_without_heavy_modules("--only", "nope")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: no zoo model named nope (see --list)"


@pytest.fixture
def fake_build(monkeypatch):
    """``build`` writes empty files and counts its calls (no torch, no OpenVINO)."""
    calls = []

    def build(entry, cache, seed=0):
        calls.append(entry.name)
        if entry.name == "squeezenet":
            raise RuntimeError("Exception from the converter\nmore detail")
        for suffix in model_zoo.FILES:
            (cache / f"{entry.name}{suffix}").write_bytes(b"")
        return {"name": entry.name, "layers": 3, "op_types": ["Relu"], "seconds": 0.5}

    monkeypatch.setattr(model_zoo, "build", build)
    monkeypatch.setattr(model_zoo, "cache_key", lambda: "key one")
    return calls


def test_rebuild_skips_cached_models_and_names_failures(fake_build, tmp_path, monkeypatch,
                                                        capsys):
    chosen = [e for e in model_zoo.ZOO if e.name in ("resnet18", "squeezenet", "gpt_tiny")]
    assert model_zoo.build_all(chosen, tmp_path) == 1
    out, err = capsys.readouterr()
    assert fake_build == ["resnet18", "squeezenet", "gpt_tiny"]
    assert "[2/3] squeezenet: FAILED: RuntimeError: Exception from the converter\n" in out
    assert err.strip() == "error: 1 model(s) did not build: squeezenet"
    assert "zoo: 2 of 3 models" in out
    # Again under the same key: only the failed one is built.
    fake_build.clear()
    model_zoo.build_all(chosen, tmp_path)
    assert fake_build == ["squeezenet"]
    assert "[1/3] resnet18: cached" in capsys.readouterr().out
    # Another key (the tool or OpenVINO changed): everything again.
    fake_build.clear()
    monkeypatch.setattr(model_zoo, "cache_key", lambda: "key two")
    model_zoo.build_all(chosen, tmp_path)
    assert fake_build == ["resnet18", "squeezenet", "gpt_tiny"]
    assert (tmp_path / "zoo.key").read_text().strip() == "key two"


def test_cache_key_follows_the_tool_content():
    pytest.importorskip("openvino")
    key = model_zoo.cache_key()
    import hashlib

    assert key.split()[0] == hashlib.sha256(
        (ROOT / "tools" / "model_zoo.py").read_bytes()).hexdigest()[:16]


def test_models_md_describes_every_zoo_model():
    text = (ROOT / "docs" / "models.md").read_text()
    table = text.split(model_zoo.BEGIN, 1)[1].split(model_zoo.END, 1)[0]
    described = text.split("## Models", 1)[1]
    for entry in model_zoo.ZOO:
        assert f"\n| {entry.name} |" in table, entry.name
        assert f"\n| {entry.name} |" in described, entry.name
