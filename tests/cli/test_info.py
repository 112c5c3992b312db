"""``irexec info``: IR version, opsets, layer counts, inputs, outputs, weights and every layer."""

from __future__ import annotations

import json

import pytest
from lxml import etree

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
        assert [o["port"] for o in entry["outputs"]] == [p.port_id for p in node.outputs]
        assert [i["port"] for i in entry["inputs"]] == [p.port_id for p in node.inputs]
        assert [(i["from"]["layer"], i["from"]["port"]) for i in entry["inputs"]] == \
            [(p.source.node.id, p.source.port_id) for p in node.inputs]
        assert entry["attributes"] == _xml_attributes(path, node.id) and entry["runs"]
        if node.type == "Constant":
            constant = entry["constant"]
            assert constant["shape"] == list(node.value.shape)
            assert constant["elements"] == node.value.size
            if node.value.dtype.kind in "iu" and node.value.dtype.names is None:
                assert constant["values"] == node.value.reshape(-1)[:16].tolist()
    assert sorted((e["from_layer"], e["from_port"], e["to_layer"], e["to_port"])
                  for e in info["edges"]) == sorted(_xml_edges(path))
    return info


def _xml_attributes(path, layer_id: int) -> dict[str, str]:
    """A layer's attributes as the file writes them (an empty list left out; a Result's
    output_names on the <layer> element, where OpenVINO reads it)."""
    layer = etree.parse(str(path)).find(f".//layer[@id='{layer_id}']")
    data = layer.find("data")
    found = dict(data.attrib) if data is not None else {}
    if layer.get("output_names") is not None:
        found["output_names"] = layer.get("output_names")
    return {k: v for k, v in found.items() if v != ""}


def _xml_edges(path) -> list[tuple[int, int, int, int]]:
    return [tuple(int(e.get(a)) for a in ("from-layer", "from-port", "to-layer", "to-port"))
            for e in etree.parse(str(path)).iter("edge")]


@pytest.mark.parametrize("path", SAMPLE_MODELS, ids=sample_ids)
def test_json_on_every_sample(path):
    _check_json(path)


def test_json_on_openvino_converted_ir(ov_converted):
    info = _check_json(ov_converted)
    assert info["layer_counts"] == {"Convert": 2, "Parameter": 2, "Result": 2,
                                    "ReverseSequence": 1}


def test_text_summary_and_one_block_per_layer(ov_converted):
    code, out, _ = irexec_cli("info", ov_converted)
    assert code == 0
    lines = out.splitlines()
    assert "IR version: 11" in lines and "opsets:     opset1" in lines
    start = next(i for i, line in enumerate(lines) if line.startswith("layers ("))
    blocks = lines[start + 1:]
    heads = [line for line in blocks if not line.startswith("      ")]
    model = irexec.read_model(ov_converted)
    assert heads == [f"  {n.id} {n.name}: {n.type}-{n.version}" for n in model.nodes]
    rs = next(n for n in model.nodes if n.type == "ReverseSequence")
    block = blocks[blocks.index(f"  {rs.id} {rs.name}: ReverseSequence-opset1") + 1:]
    block = block[:next(i for i, line in enumerate(block) if not line.startswith("      "))]
    (attrs,) = [line for line in block if line.lstrip().startswith("attributes:")]
    assert f"batch_axis={rs.attrs['batch_axis']}" in attrs and \
        f"seq_axis={rs.attrs['seq_axis']}" in attrs
    for port in rs.inputs:  # its port number, type, shape and where it comes from
        src = port.source
        assert (f"      input {port.port_id}: {src.element_type} {src.partial_shape} <- "
                f"{src.node.id}:{src.port_id} {src.node.name}") in block
    (out_port,) = rs.outputs
    consumers = ", ".join(f"{c.node.id}:{c.port_id} {c.node.name}" for c in out_port.consumers)
    assert any(line.startswith(f"      output {out_port.port_id}: f32 [3,5,2]")
               and line.endswith(f"-> {consumers}") for line in block)
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
