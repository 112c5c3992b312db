"""The model zoo (tools/model_zoo.py): real architectures converted by OpenVINO's own converter.

For every zoo model: `irexec validate` reports nothing but the op types irexec does not run yet,
in one warning (OpenVINO wrote these files: any other diagnostic is a false alarm), and when irexec runs every
op type, the model runs and agrees with OpenVINO CPU's outputs (f32 inference precision, saved
by the zoo tool) within the tolerance of accumulating float ops; the IR writer's copy reads back
and runs the same. Run alone with ``pytest tests/models``; the zoo is built into ``$IREXEC_ZOO``
(default ``.zoo/``) by ``python tools/model_zoo.py``, which CI does first
(``IREXEC_REQUIRE_ZOO=1`` makes a missing zoo an error instead of a skip).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

import irexec
from irexec.ops import registry

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import model_zoo  # noqa: E402

ZOO = Path(os.environ.get("IREXEC_ZOO", ROOT / ".zoo"))
NAMES = [e.name for e in model_zoo.ZOO]


def _path(name: str) -> Path:
    xml = ZOO / f"{name}.xml"
    if not xml.is_file():
        if os.environ.get("IREXEC_REQUIRE_ZOO"):
            pytest.fail(f"{xml} is missing: build the zoo with python tools/model_zoo.py")
        pytest.skip(f"the zoo is not built ({xml}); python tools/model_zoo.py builds it")
    return xml


def _missing_types(xml: Path) -> set[str]:
    """Op types of the file (bodies included) that no registration serves, read straight from
    the XML, independently of irexec's reader."""
    missing = set()
    for layer in etree.parse(str(xml)).getroot().iter("layer"):
        try:
            registry.lookup(layer.get("type"), layer.get("version"))
        except registry.LookupFailure:
            missing.add(layer.get("type"))
    return missing


def _close(ours: np.ndarray, theirs: np.ndarray) -> None:
    assert ours.shape == theirs.shape
    if ours.dtype.kind in "iub":
        np.testing.assert_array_equal(ours, theirs)
        return
    a, b = ours.astype(np.float64), theirs.astype(np.float64)
    scale = max(1.0, float(np.abs(b).max(initial=0)))
    np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4 * scale)


@pytest.mark.parametrize("name", NAMES)
def test_zoo_model_validates_runs_and_agrees_with_openvino(name):
    xml = _path(name)
    missing = _missing_types(xml)
    model, diags = irexec.api.check_model(xml)
    if missing:
        # Nothing but the op types irexec lacks, named in one warning (IR113).
        assert [d.code for d in diags] == ["IR113"], [str(d) for d in diags]
        named = diags[0].message.split(": ", 1)[1]
        assert {part.split(" (")[0] for part in named.split("; ")[0].split("), ")} == missing
        return
    assert [str(d) for d in diags] == []
    inputs = dict(np.load(ZOO / f"{name}.inputs.npz"))
    expected = np.load(ZOO / f"{name}.outputs.npz")
    outputs = list(irexec.compile_model(model)(list(inputs.values())).values())
    assert len(outputs) == len(expected.files)
    for i, ours in enumerate(outputs):
        _close(ours, expected[f"output_{i}"])


@pytest.mark.parametrize("name", NAMES)
def test_zoo_model_written_back_runs_the_same(tmp_path, name):
    xml = _path(name)
    if _missing_types(xml):
        pytest.skip(f"{name} holds op types irexec does not run yet")
    model = irexec.read_model(xml)
    irexec.save_model(model, tmp_path / "copy.xml")
    inputs = list(dict(np.load(ZOO / f"{name}.inputs.npz")).values())
    a = irexec.compile_model(model)(inputs)
    b = irexec.compile_model(irexec.read_model(tmp_path / "copy.xml"))(inputs)
    for x, y in zip(a.values(), b.values()):
        assert x.tobytes() == y.tobytes()
