"""irexec/ops/openvino_opsets.py: OpenVINO 2026.4.1's opsets, as data irexec reads without
OpenVINO. Known facts are checked here always; with OpenVINO installed, the whole table is
regenerated and compared, and a sample of memberships is asked of OpenVINO's IR reader."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from irexec.ops import openvino_opsets
from irexec.ops.openvino_opsets import OPSETS

ROOT = Path(__file__).resolve().parents[1]


def test_opsets_1_to_17():
    assert sorted(OPSETS) == list(range(1, 18))
    assert all(isinstance(v, frozenset) and v for v in OPSETS.values())


def test_known_memberships():
    assert "Relu" in OPSETS[1] and "Relu" in OPSETS[16] and "Relu" not in OPSETS[17]
    assert [n for n in OPSETS if "ReverseSequence" in OPSETS[n]] == list(range(1, 17))
    assert [n for n in OPSETS if "Reverse" in OPSETS[n]] == [1]
    assert [n for n in OPSETS if "Parameter" in OPSETS[n]] == list(range(1, 18))
    assert OPSETS[17] == {"Parameter", "Convert", "ShapeOf", "ErfInv", "GroupedMatMul",
                          "RGBtoNV12", "BGRtoNV12"}  # notes-on-open-issues.md, note 2
    assert "NonMaxSuppression" in OPSETS[9] and "Softmax" in OPSETS[8]
    assert min(n for n in OPSETS if "ScatterNDUpdate" in OPSETS[n]) == 4  # ScatterNDUpdate-3
    assert "Frobnicate" not in set().union(*OPSETS.values())


def test_opsets_1_to_16_grow_but_not_strictly():
    """Each of opset2..16 holds almost all of the one before; the exceptions are OpenVINO's:
    Reverse and Xor stop after opset1, RNNCell and ShuffleChannels skip opset2 alone."""
    for n in range(3, 17):
        assert OPSETS[n - 1] <= OPSETS[n], sorted(OPSETS[n - 1] - OPSETS[n])
    assert sorted(OPSETS[1] - OPSETS[2]) == ["RNNCell", "Reverse", "ShuffleChannels", "Xor"]
    assert {"RNNCell", "ShuffleChannels"} <= OPSETS[3]
    assert not {"Reverse", "Xor"} & OPSETS[16]


def test_the_table_is_pure_data():
    """No imports at all: the lead's registry and the reader load it without cost or circle."""
    tree = ast.parse(Path(openvino_opsets.__file__).read_text(encoding="utf-8"))
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]


def _tool():
    spec = importlib.util.spec_from_file_location("make_opset_table",
                                                  ROOT / "tools" / "make_opset_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_table_is_what_openvino_says():
    ov = pytest.importorskip("openvino")
    if not ov.get_version().startswith(openvino_opsets.OPENVINO_VERSION):
        pytest.skip(f"the table is OpenVINO {openvino_opsets.OPENVINO_VERSION}'s")
    tool = _tool()
    assert tool.render(*tool.opsets_of_openvino()) == \
        Path(openvino_opsets.__file__).read_text(encoding="utf-8")


LAYER = """<?xml version="1.0"?>
<net name="m" version="11"><layers>
<layer id="0" name="x" type="Parameter" version="opset1"><data shape="2" element_type="f32"/>
<output><port id="0" precision="FP32"><dim>2</dim></port></output></layer>
<layer id="1" name="op" type="{type}" version="opset{n}">
<input><port id="0"><dim>2</dim></port></input>
<output><port id="1" precision="FP32"><dim>2</dim></port></output></layer>
<layer id="2" name="out" type="Result" version="opset1"><input><port id="0"><dim>2</dim></port>
</input></layer></layers><edges>
<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>
<edge from-layer="1" from-port="1" to-layer="2" to-port="0"/></edges></net>
"""


@pytest.mark.parametrize("type_,n", [("Relu", 1), ("Relu", 16), ("Relu", 17), ("Abs", 17),
                                     ("Reverse", 1), ("Reverse", 2), ("Xor", 2), ("Xor", 1),
                                     ("ShuffleChannels", 2), ("ShuffleChannels", 3),
                                     ("Sigmoid", 12), ("ErfInv", 17), ("ErfInv", 16),
                                     ("Frobnicate", 5)])
def test_openvinos_ir_reader_agrees(tmp_path, type_, n):
    """OpenVINO's IR reader says "doesn't contain the operation" exactly when the table says
    opset N lacks the type (a layer it does hold may still fail later, for its ports)."""
    ov = pytest.importorskip("openvino")
    path = tmp_path / "m.xml"
    path.write_text(LAYER.format(type=type_, n=n))
    try:
        ov.Core().read_model(path)
        message = ""
    except Exception as e:  # noqa: BLE001
        message = str(e)
    lacks = f"Opset opset{n} doesn't contain the operation with type: {type_}" in message
    assert lacks == (type_ not in OPSETS[n]), message


def test_the_registry_serves_an_op_in_exactly_the_opsets_openvino_puts_it_in():
    """An op type irexec registers in the opset family resolves for ``opsetN`` exactly when
    OpenVINO's opsetN holds it (Relu is not in opset17, RNNCell not in opset2): a version
    OpenVINO rejects is rejected with the opsets that hold the type."""
    from irexec.ops import registry

    wrong = []
    known = set().union(*OPSETS.values())
    for op_type in sorted(set(registry.registered_types(registry.OPSET)) & known):
        for n in sorted(OPSETS):
            try:
                registry.lookup(op_type, f"opset{n}")
                served = True
            except registry.LookupFailure as e:
                served = False
                assert "opset" in str(e)
            if served != (op_type in OPSETS[n]):
                wrong.append((op_type, n, served))
    assert wrong == []
    with pytest.raises(registry.LookupFailure, match=r"Relu is not in opset17; registered: Relu-1"):
        registry.lookup("Relu", "opset17")
