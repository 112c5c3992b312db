"""Models full of OpenVINO ops irexec does not run yet (issue 14, item 5): ``info``, ``graph``
and ``validate`` work on them, marking those layers; ``run`` and ``compare`` name every such op
type in one line; a type no opset has is told apart (with the closest name) from a real one."""

from __future__ import annotations

import json

import numpy as np
import pytest

import irexec
from tests.cli.conftest import one_error, parse_errors
from tests.cli.foreign_ops import FIRST, SECOND, foreign_model
from tests.cli.inproc import irexec_cli
from tests.hidden_ops import hidden, run_hiding

HIDDEN = (FIRST[0], SECOND[0])


@pytest.fixture(autouse=True)
def _not_run():
    """The model's two op types are OpenVINO's; irexec is made not to run them here."""
    with hidden(*HIDDEN):
        yield


CANNOT_RUN = "irexec cannot run 2 op types of this model yet: Inverse (opset14, 100 layers), " \
             "ErfInv (opset17, 100 layers)"


@pytest.fixture
def blocks(tmp_path):
    return foreign_model(tmp_path / "foreign.xml")


def test_openvino_reads_and_runs_the_model(blocks):
    ov = pytest.importorskip("openvino")
    compiled = ov.Core().compile_model(ov.Core().read_model(blocks), "CPU")
    out = compiled({0: np.arange(16, dtype=np.float32).reshape(1, 4, 2, 2)})[0]
    assert out.shape == (1, 4, 2, 2)  # ErfInv of values beyond [-1, 1] is NaN: shape only


def _one_warning(err: str) -> str:
    (line,) = err.splitlines()
    assert line.startswith("warning: ") and CANNOT_RUN in line, err
    return line


def test_info_describes_every_layer_and_marks_those_it_cannot_run(blocks):
    status, out, err = irexec_cli("info", blocks)
    assert status == 0
    _one_warning(err)
    lines = out.splitlines()
    assert "not run:    Inverse (opset14, 100 layers), ErfInv (opset17, 100 layers) (irexec cannot " \
           "run these yet)" in lines
    assert "  1 inv0: Inverse-opset14  (irexec cannot run it yet)" in lines
    assert "  200 erfinv99: ErfInv-opset17  (irexec cannot run it yet)" in lines
    assert "      attributes: adjoint=false" in lines
    assert "  0 x: Parameter-opset1" in lines  # the ops it runs are not marked
    status, out, _ = irexec_cli("info", blocks, "--format", "json")
    info = json.loads(out)
    assert info["layer_counts"] == {"Inverse": 100, "ErfInv": 100, "Parameter": 1, "Result": 1}
    assert [e["runs"] for e in info["layers"]] == [True] + [False] * 200 + [True]
    assert info["layers"][1]["attributes"] == {"adjoint": "false"}
    assert info["outputs"] == [{"name": "y", "result": "y", "element_type": "f32",
                                "shape": [1, 4, 2, 2]}]
    assert len(info["edges"]) == 201


def test_graph_draws_it_and_marks_those_it_cannot_run(blocks, tmp_path):
    status, out, err = irexec_cli("graph", blocks)
    assert status == 0
    _one_warning(err)
    assert out.count('style="rounded,filled,dashed"') == 200
    assert out.count("(irexec cannot run it yet)") == 200
    status, out, _ = irexec_cli("graph", blocks, "-f", "mermaid")
    assert status == 0
    assert out.splitlines()[-1] == "  class " + ",".join(f"n{i}" for i in range(1, 201)) + \
        " notrun"


def test_validate_checks_the_structure_and_warns_once(blocks):
    status, out, err = irexec_cli("validate", blocks, "--format", "json")
    assert status == 0, out
    (diagnostic,) = json.loads(out)
    assert diagnostic["code"] == "IR113" and diagnostic["severity"] == "warning"
    assert CANNOT_RUN in diagnostic["message"] and diagnostic["layer"]["name"] == "inv0"
    status, _, _ = irexec_cli("validate", blocks, "--strict")
    assert status == 1


def test_validate_still_finds_structural_errors_among_them(tmp_path):
    """A mistake after the layers irexec cannot run is found: their outputs are taken as their
    ports declare, so the Convert after them is inferred and checked."""
    path = foreign_model(tmp_path / "m.xml", blocks=2, tail="convert")
    text = path.read_text()
    convert = text.index('name="to_f16"')
    output = text.index('<port id="1" precision="FP16">', convert)
    path.write_text(text[:output] + text[output:].replace("<dim>4</dim>", "<dim>7</dim>", 1))
    status, out, _ = irexec_cli("validate", path, "--format", "json")
    codes = sorted(d["code"] for d in json.loads(out))
    assert status == 1 and codes == ["IR113", "IR401"]
    (mismatch,) = [d for d in json.loads(out) if d["code"] == "IR401"]
    assert mismatch["layer"]["name"] == "to_f16" and "[1,7,2,2]" in mismatch["message"] \
        and "[1,4,2,2]" in mismatch["message"]


@pytest.mark.parametrize("command", ["run", "compare", "bench"])
def test_commands_that_run_name_every_op_type_in_one_line(blocks, command):
    proc = run_hiding(HIDDEN, command, blocks)
    m = one_error(proc)
    assert m.string == f"error: {blocks}: {CANNOT_RUN}"


def test_the_python_api_reads_it_and_refuses_to_compile_it(blocks):
    model = irexec.read_model(blocks)
    assert [d.code for d in model.diagnostics] == ["IR113"]
    assert model.outputs[0].get_partial_shape() == irexec.PartialShape([1, 4, 2, 2])
    with pytest.raises(irexec.IRError) as caught:
        irexec.compile_model(model)
    (d,) = caught.value.diagnostics
    assert d.code == "IR103" and d.message == CANNOT_RUN


def test_save_model_keeps_the_layers_it_cannot_run(blocks, tmp_path):
    model = irexec.read_model(blocks)
    irexec.save_model(model, tmp_path / "again.xml")
    again = irexec.read_model(tmp_path / "again.xml")
    assert [(n.type, n.version, n.extra_attrs) for n in again.nodes] == \
        [(n.type, n.version, n.extra_attrs) for n in model.nodes]


def test_a_type_no_opset_has_is_an_error_with_the_closest_name(tmp_path):
    path = foreign_model(tmp_path / "typo.xml", blocks=1, second_type="ErfInf")
    (m,) = parse_errors(run_hiding(HIDDEN, "run", path))
    assert m["layer"] == "erfinv0" and m["type"] == "ErfInf"
    assert m["message"].startswith("operation type 'ErfInf' (opset17) is unknown: neither "
                                   "irexec nor any OpenVINO opset has it; did you mean 'ErfInv'")


@pytest.mark.parametrize("typo, names", [("ReduceMx", ["ReduceMax", "ReduceMin"]),
                                         ("Frobnicate", [])])
def test_an_unknown_type_names_the_closest_types_only(tmp_path, typo, names):
    """The line listed every registered type (~3,000 characters) before "did you mean"."""
    path = foreign_model(tmp_path / "typo.xml", blocks=1, second_type=typo)
    (m,) = parse_errors(run_hiding(HIDDEN, "run", path))
    message = m["message"]
    assert f"'{typo}' (opset17)" in message and len(message) < 200, message
    assert all(f"'{n}'" in message for n in names)
    assert "Abs" not in message and "Xor" not in message
    if not names:
        assert "`irexec ops` lists" in message


def test_a_type_in_other_opsets_says_which(tmp_path):
    path = foreign_model(tmp_path / "v16.xml", blocks=1, second_version="opset16")
    m = one_error(run_hiding(HIDDEN, "run", path))
    assert m["message"] == ("operation type 'ErfInv' is not in opset16: OpenVINO has it in "
                            "opset17 (irexec does not run it yet)")


def test_an_opset_openvino_does_not_have(tmp_path):
    path = foreign_model(tmp_path / "v18.xml", blocks=1, second_version="opset18")
    m = one_error(run_hiding(HIDDEN, "run", path))
    assert "has opset1 to opset17 only, no opset18" in m["message"]


def test_a_wrongly_cased_type_suggests_the_right_case():
    from irexec.availability import closest

    assert closest("relu") == "Relu" and closest("REVERSESEQUENCE") == "ReverseSequence"
    assert closest("Frobnicate") is None
