"""``irexec info``: IR version, opsets, layer counts, inputs, outputs, weights and every layer."""

from __future__ import annotations

import json

import pytest
from lxml import etree

import irexec
from tests.cli.conftest import one_error, run_cli
from tests.cli.inproc import SAMPLE_MODELS, irexec_cli, sample_ids
from tests.cli.ov_converted import ov_converted  # noqa: F401  (fixture)


def json_shape(shape) -> list | None:
    """What info's JSON says for a partial shape (written out independently of the code): an
    int per static dim, -1 per dim of any size, "lo..hi" text for an interval; None for a
    dynamic rank."""
    if shape is None or not shape.rank_is_static:
        return None
    out = []
    for d in shape:
        if d.is_static:
            out.append(d.min)
        elif d.min == 0 and d.max is None:
            out.append(-1)
        else:
            out.append(f"{d.min or ''}..{d.max if d.max is not None else ''}")
    return out


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
                                                           json_shape(port.partial_shape))
    compiled = irexec.compile_model(model)
    assert [o["name"] for o in info["outputs"]] == compiled.output_names()
    for entry, node in zip(info["layers"], model.nodes):
        assert (entry["id"], entry["name"], entry["type"]) == (node.id, node.name, node.type)
        assert [o["shape"] for o in entry["outputs"]] == [json_shape(p.partial_shape)
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


def test_json_shapes_are_lists_of_ints_and_dynamic_dims_are_said_plainly(tmp_path):
    """Shapes were strings ("[5,4,3]"); now lists: ints, -1 for any size, text for a bounded
    interval only; text output unchanged."""
    from irexec.builder import ModelBuilder
    from irexec.ir.shape import Dimension

    b = ModelBuilder()
    x = b.parameter("x", "f32", [Dimension(1, 8), -1, 768])
    b.result(b.op("Relu", x, name="r"), "out")
    path = tmp_path / "dyn.xml"
    irexec.save_model(b.build(), path)
    code, out, _ = irexec_cli("info", path, "--format", "json")
    info = json.loads(out)
    assert code == 0 and info["inputs"][0]["shape"] == ["1..8", -1, 768]
    assert info["outputs"][0]["shape"] == ["1..8", -1, 768]
    shapes = [p["shape"] for layer in info["layers"] for p in (*layer["inputs"],
                                                                *layer["outputs"])]
    assert ["1..8", -1, 768] in shapes and all(isinstance(s, list) for s in shapes)
    code, text, _ = irexec_cli("info", path)
    assert "x     f32   [1..8,?,768]" in text


def test_info_without_the_weights_shows_the_structure(tmp_path):
    """info refused an .xml whose .bin is missing; the structure needs no weights."""
    sample = SAMPLE_MODELS[0].parent / "convert_reverse_chain.xml"
    path = tmp_path / "alone.xml"
    path.write_bytes(sample.read_bytes())
    code, out, err = irexec_cli("info", path)
    assert code == 0 and err == "", err
    weights = next(line for line in out.splitlines() if line.startswith("weights:"))
    assert "missing" in weights and "alone.bin" in weights and "does not exist" in weights
    assert "flipped: Reverse-opset1" in out and "value:" not in out
    assert "output 2: f32 [5,4,3] -> 7:0 flipped_out" in out  # shapes inferred all the same
    code, out, _ = irexec_cli("info", path, "--format", "json")
    info = json.loads(out)
    assert code == 0 and "does not exist" in info["weights"]["missing"]
    assert "constant" not in next(layer for layer in info["layers"]
                                  if layer["type"] == "Constant")
    # run still needs them: one line
    code, _, err = irexec_cli("run", path)
    assert code == 1 and len(err.splitlines()) == 1 and "alone.bin" in err


def test_model_rt_info_is_shown(tmp_path):
    text = (SAMPLE_MODELS[0].parent / "convert_reverse_chain.xml").read_text()
    text = text.replace("</net>", '  <rt_info>\n    <info name="OpenVINO Runtime" value="2026.4.1"'
                                  '/>\n    <conversion_parameters>\n      <input_model value='
                                  '"model.onnx"/>\n    </conversion_parameters>\n  </rt_info>'
                                  '\n</net>')
    path = tmp_path / "m.xml"
    path.write_text(text)
    path.with_suffix(".bin").write_bytes(
        (SAMPLE_MODELS[0].parent / "convert_reverse_chain.bin").read_bytes())
    code, out, err = irexec_cli("info", path)
    assert code == 0, err
    lines = out.splitlines()
    at = lines.index("rt_info:")
    assert lines[at + 1:at + 3] == ["  OpenVINO Runtime: 2026.4.1",
                                    "  conversion_parameters/input_model: model.onnx"]
    info = json.loads(irexec_cli("info", path, "--format", "json")[1])
    assert info["rt_info"] == {"OpenVINO Runtime": "2026.4.1",
                               "conversion_parameters": {"input_model": "model.onnx"}}
