"""The model zoo (tools/model_zoo.py): real architectures converted by OpenVINO's own converters.

For every zoo model:

* ``irexec validate`` reports nothing (OpenVINO wrote these files: any diagnostic is a false
  alarm), except, while irexec lacks an op type the model holds, that one warning (IR113) naming
  exactly those types; the other tests then skip the model;
* ``irexec compare`` names no diverging layer: every layer agrees with OpenVINO CPU (f32
  inference precision) within the numeric contract (irexec/numerics.py, docs/numerics.md);
* the model's outputs agree with the OpenVINO outputs the zoo tool saved, each within the
  tolerance its layer was judged by;
* a model with dynamic dimensions does the same at a second input size;
* irexec's IR writer copies the file to one that irexec and OpenVINO run exactly as the original.

Run alone with ``pytest tests/models``; the zoo is built into ``$IREXEC_ZOO`` (default ``.zoo/``)
by ``python tools/model_zoo.py``, which CI does first (``IREXEC_REQUIRE_ZOO=1`` makes a missing
model or a missing OpenVINO an error instead of a skip).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

import irexec
from irexec import numerics
from irexec.cli import compare as cmp
from irexec.ir import element_type as et_table
from irexec.ops import registry

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import model_zoo  # noqa: E402

ZOO = Path(os.environ.get("IREXEC_ZOO", ROOT / ".zoo"))
ENTRIES = {e.name: e for e in model_zoo.ZOO}
NAMES = list(ENTRIES)
DYNAMIC = [e.name for e in model_zoo.ZOO if e.dynamic]
REQUIRED = bool(os.environ.get("IREXEC_REQUIRE_ZOO"))


def _path(name: str) -> Path:
    xml = ZOO / f"{name}.xml"
    if not xml.is_file():
        if REQUIRED:
            pytest.fail(f"{xml} is missing: build the zoo with python tools/model_zoo.py")
        pytest.skip(f"the zoo is not built ({xml}); python tools/model_zoo.py builds it")
    return xml


def _openvino():
    try:
        import openvino as ov
    except ImportError:
        if REQUIRED:
            pytest.fail("OpenVINO is not installed: pip install '.[oracle]'")
        pytest.skip("OpenVINO is not installed")
    return ov


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


def _runnable(name: str) -> Path:
    xml = _path(name)
    missing = _missing_types(xml)
    if missing:  # test_validates_clean checks that irexec names them (IR113)
        pytest.skip(f"{name} holds op types irexec does not run yet: {', '.join(sorted(missing))}")
    return xml


def _inputs(name: str) -> dict[str, np.ndarray]:
    return dict(np.load(ZOO / f"{name}.inputs.npz"))


def _diverging(results) -> list[str]:
    return [f"{r.node.name} ({r.node.type}) output {r.port}: {r.verdict}, max abs diff "
            f"{r.max_abs}, {r.differing} of {r.ours.size} differ, {r.note} {r.tolerance}"
            for r in results if not r.agrees]


def _producers(model) -> list[tuple]:
    """(node, port) feeding each Result, in the model's output order."""
    return [(p.source.node, p.source.index) for p in model.outputs]


@pytest.mark.parametrize("name", NAMES)
def test_validates_clean(name):
    xml = _path(name)
    missing = _missing_types(xml)
    model, diags = irexec.api.check_model(xml)
    assert model is not None
    if missing:
        # Nothing but the op types irexec lacks, named in one warning (IR113).
        assert [d.code for d in diags] == ["IR113"], [str(d) for d in diags]
        named = diags[0].message.split(": ", 1)[1]
        assert {part.split(" (")[0] for part in named.split("; ")[0].split("), ")} == missing
        return
    assert [str(d) for d in diags] == []


def _compare(model, inputs, ov, tmp_path):
    """``irexec compare``'s layer results. Weight decompressions (NNCF's compress_weights) are
    computed as OpenVINO's plugins compute them, in f32 (irexec/runtime/fusion.py): the
    pattern's last layer agrees with OpenVINO's, and the layers inside it, traced as the IR's
    types say, with OpenVINO's values of them."""
    return cmp.compare(model, inputs, ov)


@pytest.mark.parametrize("name", NAMES)
def test_every_layer_agrees_with_openvino(tmp_path, name):
    xml = _runnable(name)
    ov = _openvino()
    model = irexec.read_model(xml)
    inputs = _inputs(name)
    results = _compare(model, inputs, ov, tmp_path)
    assert results and not _diverging(results), "\n".join(_diverging(results))
    if ENTRIES[name].extra.get("int8_kernels"):
        # OpenVINO's plain run (the saved outputs) differs from the IR's definition there:
        # int8 kernels where compare's run, with a Result after every layer, follows
        # FakeQuantize's float definition. docs/models.md gives the sizes; the layers were
        # checked above.
        return
    # The outputs against those the zoo tool saved, each within its layer's tolerance.
    judged = {(r.node.name, r.port): r for r in results}
    saved = np.load(ZOO / f"{name}.outputs.npz")
    outputs = list(irexec.compile_model(model)(list(inputs.values())).values())
    assert len(outputs) == len(saved.files)
    for i, ((node, port), ours) in enumerate(zip(_producers(model), outputs)):
        theirs = saved[f"output_{i}"]
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, (i, node.name)
        if ours.dtype.kind not in "f" and ours.dtype != et_table.ElementType.bf16.dtype:
            np.testing.assert_array_equal(ours, theirs)
            continue
        r = judged[(node.name, port)]
        tol = r.tolerance or numerics.tolerance(
            numerics.family(node.op.spec), et_table.from_dtype(ours.dtype))
        scale = float(np.abs(theirs).max(initial=0)) if tol.accum else None
        outside = tol.outside(ours, theirs, scale)
        assert not outside.any(), (i, node.name, float(np.abs(
            ours.astype(np.float64) - theirs.astype(np.float64)).max()), tol)


@pytest.mark.parametrize("name", DYNAMIC)
def test_dynamic_model_agrees_at_a_second_size(tmp_path, name):
    xml = _runnable(name)
    ov = _openvino()
    entry = ENTRIES[name]
    model = irexec.read_model(xml)
    shapes = model_zoo.second_shapes(entry)
    inputs = model_zoo._example_inputs(entry, 1, shapes)
    first = _inputs(name)
    assert [a.shape for a in inputs.values()] != [a.shape for a in first.values()]
    results = _compare(model, inputs, ov, tmp_path)
    assert results and not _diverging(results), "\n".join(_diverging(results))
    outputs = irexec.compile_model(model)(list(inputs.values()))
    saved = np.load(ZOO / f"{name}.outputs.npz")
    assert [a.shape for a in outputs.values()] != [saved[f].shape for f in saved.files]


@pytest.mark.parametrize("name", NAMES)
def test_written_back_runs_the_same_in_irexec_and_openvino(tmp_path, name):
    xml = _runnable(name)
    ov = _openvino()
    model = irexec.read_model(xml)
    irexec.save_model(model, tmp_path / "copy.xml")
    inputs = list(_inputs(name).values())
    a = irexec.compile_model(model)(inputs)
    b = irexec.compile_model(irexec.read_model(tmp_path / "copy.xml"))(inputs)
    assert len(a) == len(b)
    for x, y in zip(a.values(), b.values()):
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes()
    core = ov.Core()
    config = {"INFERENCE_PRECISION_HINT": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"}
    original = core.compile_model(core.read_model(xml), "CPU", config)(inputs)
    copy = core.compile_model(core.read_model(tmp_path / "copy.xml"), "CPU", config)(inputs)
    assert len(original) == len(copy)
    for x, y in zip(original.values(), copy.values()):
        assert np.asarray(x).tobytes() == np.asarray(y).tobytes()
