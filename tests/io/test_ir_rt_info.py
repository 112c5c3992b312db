"""<rt_info> at layer, port and net level is kept on the model and survives a write + read."""

import pytest

import irexec
from irexec.ir.model import rt_info_dict
from tests.helpers_ir import write_ir

MODEL = """\
<?xml version="1.0"?>
<net name="m" version="{version}">
  <layers>
    <layer id="0" name="x" type="Parameter" version="opset1">
      <data shape="2" element_type="f32"/>
      <rt_info>
        <attribute name="fused_names" version="0" value="x,x_orig"/>
        <attribute name="old_api_map_order" version="0" value="0"/>
      </rt_info>
      <output>
        <port id="0" precision="FP32" names="x">
          <dim>2</dim>
          <rt_info>
            <attribute name="layout" version="0" layout="[N]"/>
          </rt_info>
        </port>
      </output>
    </layer>
    <layer id="1" name="out" type="Result" version="opset1">
      <input>
        <port id="0">
          <dim>2</dim>
          <rt_info>
            <attribute name="tag" version="0" value="in"/>
          </rt_info>
        </port>
      </input>
    </layer>
  </layers>
  <edges>
    <edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>
  </edges>
  <rt_info>
    <MO_version value="2024.1"/>
    <conversion_parameters>
      <framework value="onnx"/>
      <input_model value="m.onnx"/>
      <nested>
        <deep value="yes"/>
      </nested>
    </conversion_parameters>
  </rt_info>
</net>
"""

LAYER_RT = {"fused_names": "x,x_orig", "old_api_map_order": "0"}
OUT_PORT_RT = {"layout": {"name": "layout", "version": "0", "layout": "[N]"}}
IN_PORT_RT = {"tag": "in"}
NET_RT = {"MO_version": "2024.1",
          "conversion_parameters": {"framework": "onnx", "input_model": "m.onnx",
                                    "nested": {"deep": "yes"}}}


def _read(tmp_path, version=11):
    return irexec.read_model(write_ir(tmp_path, MODEL.format(version=version)))


def test_layer_rt_info_is_kept(tmp_path):
    node = _read(tmp_path).nodes[0]
    assert [e.tag for e in node.rt_info] == ["attribute", "attribute"]
    assert node.rt_info[0].attrs == {"name": "fused_names", "version": "0", "value": "x,x_orig"}
    assert rt_info_dict(node.rt_info) == LAYER_RT


def test_port_rt_info_is_kept(tmp_path):
    model = _read(tmp_path)
    assert rt_info_dict(model.nodes[0].outputs[0].rt_info) == OUT_PORT_RT
    assert rt_info_dict(model.nodes[1].inputs[0].rt_info) == IN_PORT_RT


def test_net_rt_info_is_kept_with_nesting(tmp_path):
    model = _read(tmp_path)
    assert [e.tag for e in model.rt_info] == ["MO_version", "conversion_parameters"]
    assert model.rt_info[1].to_dict() == NET_RT["conversion_parameters"]
    assert rt_info_dict(model.rt_info) == NET_RT


def test_rt_info_is_kept_for_ir_v10_too(tmp_path):
    # OpenVINO drops node-level rt_info of v10 files; irexec never loses what the file holds.
    model = _read(tmp_path, version=10)
    assert rt_info_dict(model.nodes[0].rt_info) == LAYER_RT
    assert rt_info_dict(model.rt_info) == NET_RT


@pytest.mark.parametrize("version", [10, 11])
def test_rt_info_survives_save_and_read(tmp_path, version):
    model = _read(tmp_path, version)
    saved = tmp_path / "saved" / "copy.xml"
    saved.parent.mkdir()
    irexec.save_model(model, saved)
    again = irexec.read_model(saved)
    assert rt_info_dict(again.nodes[0].rt_info) == LAYER_RT
    assert rt_info_dict(again.nodes[0].outputs[0].rt_info) == OUT_PORT_RT
    assert rt_info_dict(again.nodes[1].inputs[0].rt_info) == IN_PORT_RT
    assert rt_info_dict(again.rt_info) == NET_RT
    # The raw entries, attribute order aside, are the same as read the first time.
    assert again.nodes[0].rt_info == model.nodes[0].rt_info
    assert again.rt_info == model.rt_info
