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
    return [(p.node, p.index) for p in model.outputs]


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


def _decompressions(model) -> dict[str, object]:
    """Weight decompressions (NNCF's compress_weights): each f16 Multiply of constants that a
    Convert to f32 widens, possibly through a Reshape; Convert layer name -> the Multiply."""
    found = {}
    for node in model.nodes:
        if node.type != "Convert" or node.outputs[0].element_type.name != "f32":
            continue
        src = node.inputs[0].source.node
        while src.type == "Reshape":
            src = src.inputs[0].source.node
        if src.type == "Multiply" and src.outputs[0].element_type.name == "f16":
            found[node.name] = src
    return found


def _compare(model, inputs, ov, tmp_path):
    """``irexec compare``'s layer results. OpenVINO CPU computes a weight decompression's f16
    Subtract and Multiply in f32 and never rounds them to f16 when it fuses them into the
    consumer (docs/compatibility.md); irexec rounds as the IR's types say. So the decompressed
    weights are checked where OpenVINO shows the IR's f16 values (the Multiply, bit for bit),
    and the rest of the model against an OpenVINO copy whose decompressions are replaced by
    constants of those IR-rounded weights."""
    decompressions = _decompressions(model)
    if not decompressions:
        return cmp.compare(model, inputs, ov)
    results = cmp.compare(model, inputs, ov)
    multiplies = {m.name for m in decompressions.values()}
    checked = [r for r in results if r.node.name in multiplies]
    assert len(checked) == len(multiplies)
    assert all(r.verdict == "bit-exact" for r in checked), _diverging(checked) or [
        (r.node.name, r.verdict) for r in checked]
    values = {}
    irexec.compile_model(model)(list(inputs.values()),
                                trace=lambda n, p, a: values.setdefault(n.name, a))
    core = ov.Core()
    oracle = core.read_model(model.path)
    import openvino.opset1 as ops

    for op in oracle.get_ordered_ops():
        name = op.get_friendly_name()
        if name in decompressions and op.get_type_name() == "Convert":
            constant = ops.constant(np.ascontiguousarray(values[name]))
            constant.set_friendly_name(name)
            op.output(0).replace(constant.output(0))
    ov.save_model(oracle, tmp_path / "oracle.xml", compress_to_fp16=False)
    path = model.path
    model.path = str(tmp_path / "oracle.xml")
    try:
        return cmp.compare(model, inputs, ov)
    finally:
        model.path = path


@pytest.mark.parametrize("name", NAMES)
def test_every_layer_agrees_with_openvino(tmp_path, name):
    xml = _runnable(name)
    ov = _openvino()
    model = irexec.read_model(xml)
    inputs = _inputs(name)
    results = _compare(model, inputs, ov, tmp_path)
    assert results and not _diverging(results), "\n".join(_diverging(results))
    if ENTRIES[name].extra.get("int8_kernels") or _decompressions(model):
        # OpenVINO's plain run (the saved outputs) differs from the IR's definition there:
        # int8 kernels where compare's run, with a Result after every layer, follows
        # FakeQuantize's float definition; weights decompressed without the f16 rounding.
        # docs/models.md gives the sizes; the layers were checked above.
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
    config = {"INFERENCE_PRECISION_HINT": "f32"}
    original = core.compile_model(core.read_model(xml), "CPU", config)(inputs)
    copy = core.compile_model(core.read_model(tmp_path / "copy.xml"), "CPU", config)(inputs)
    assert len(original) == len(copy)
    for x, y in zip(original.values(), copy.values()):
        assert np.asarray(x).tobytes() == np.asarray(y).tobytes()
