"""``irexec info``: IR version, opsets, layer counts, inputs, outputs, weights and every layer."""

from __future__ import annotations

import json

import pytest

import irexec
from tests.cli.conftest import one_error, run_cli
from tests.cli.inproc import SAMPLE_MODELS, irexec_cli, sample_ids
from tests.cli.ov_converted import ov_converted  # noqa: F401  (fixture)


def _check_json(path) -> dict:
    code, out, err = irexec_cli("info", path, "--format", "json")
    assert code == 0, err
    info = json.loads(out)
    model = irexec.read_model(path)
    assert info["ir_version"] == model.ir_version
    assert info["opsets"] == sorted({n.version for n in model.nodes})
    assert sum(info["layer_counts"].values()) == len(model.nodes) == len(info["layers"])
    assert [i["name"] for i in info["inputs"]] == [p.name for p in model.parameters]
    for entry, port in zip(info["inputs"], model.inputs):
        assert (entry["element_type"], entry["shape"]) == (str(port.element_type),
                                                           str(port.partial_shape))
    compiled = irexec.compile_model(model)
    assert [o["name"] for o in info["outputs"]] == compiled.output_names()
    for entry, node in zip(info["layers"], model.nodes):
        assert (entry["id"], entry["name"], entry["type"]) == (node.id, node.name, node.type)
        assert [o["shape"] for o in entry["outputs"]] == [str(p.partial_shape)
                                                          for p in node.outputs]
    return info


@pytest.mark.parametrize("path", SAMPLE_MODELS, ids=sample_ids)
def test_json_on_every_sample(path):
    _check_json(path)


def test_json_on_openvino_converted_ir(ov_converted):
    info = _check_json(ov_converted)
    assert info["layer_counts"] == {"Convert": 2, "Parameter": 2, "Result": 2,
                                    "ReverseSequence": 1}


def test_text_columns_are_aligned(ov_converted):
    code, out, _ = irexec_cli("info", ov_converted)
    assert code == 0
    lines = out.splitlines()
    assert "IR version: 11" in lines and "opsets:     opset1" in lines
    start = lines.index("layers:")
    table = lines[start + 1:]
    assert table[0].split() == ["id", "name", "type", "version", "outputs"]
    column = table[0].index("type")
    assert all(line[column - 2:column] == "  " for line in table)  # one column edge for all
    assert any("y/sink_port_0" in line and "Result" in line for line in table)
    assert any(line.split()[:4] == ["3", "y", "ReverseSequence", "opset1"]
               and line.endswith("f32 [3,5,2]") for line in table)


def test_weights_are_counted():
    from tests.cli.conftest import SAMPLES

    code, out, _ = irexec_cli("info", SAMPLES / "convert_reverse_chain.xml", "--format", "json")
    weights = json.loads(out)["weights"]
    assert weights["constants"] == 1 and weights["constant_bytes"] == 8  # one i64 axis
    assert weights["file_bytes"] == (SAMPLES / "convert_reverse_chain.bin").stat().st_size


def test_bad_model_is_one_line_exit_1(edited):
    bad = edited({'seq_axis="0"': 'seq_axis="1"'})
    one_error(run_cli("info", bad), bad, 39, "reversed_sequences", "ReverseSequence")


def test_missing_file(tmp_path):
    one_error(run_cli("info", tmp_path / "none.xml"))
