"""Two output ports of a Loop or If mapped to one body Result: each port's array is the
caller's alone (the body's value handed out once, copied for the other port), through the Loop's
fast path and its run loop alike."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import irexec
from irexec.runtime import compiled_model

DATA = Path(__file__).resolve().parents[2] / "data" / "subgraphs"

_SECOND_RESULT = ('<layer id="{id}" name="R2" type="Result" version="opset1"><input>'
                  '<port id="0" precision="FP32">{dims}</port></input></layer>\n\t</layers>')


def _with_second_port(tmp_path, name, maps, port, dims, layer, result_id):
    """``name``'s model with a second output port ``port`` of layer ``layer`` mapped (by the
    port-map lines ``maps``) to the body Result the first port reads, read by a Result R2."""
    text = (DATA / f"{name}.xml").read_text()
    for old, new in maps:
        assert old in text
        text = text.replace(old, old + "\n" + new)
    first_port_end = text.index("</output>", text.index(f'<layer id="{layer}"'))
    text = (text[:first_port_end] + f'<port id="{port}" precision="FP32" names="R2">{dims}'
            f'</port>' + text[first_port_end:])
    text = text.replace("\t</layers>\n\t<edges>", _SECOND_RESULT.format(id=result_id, dims=dims)
                        + f'\n\t<edges>\n<edge from-layer="{layer}" from-port="{port}" '
                          f'to-layer="{result_id}" to-port="0" />', 1)
    (tmp_path / "m.xml").write_text(text)
    shutil.copy(DATA / f"{name}.bin", tmp_path / "m.bin")
    return tmp_path / "m.xml"


@pytest.mark.parametrize("fast", [True, False])
def test_two_loop_ports_of_one_body_result_do_not_share_memory(tmp_path, monkeypatch, fast):
    path = _with_second_port(
        tmp_path, "loop_early_exit",
        [('<output external_port_id="4" internal_layer_id="6" />',
          '<output external_port_id="7" internal_layer_id="6" />')],
        7, "<dim>1</dim>", 4, 7)
    if not fast:
        monkeypatch.setattr(compiled_model, "small_body", lambda plan, model: False)
    out = irexec.compile_model(irexec.read_model(path))(
        {"x": np.array([1.0], np.float32), "limit": np.array(100, np.float32)})
    a, b = out["Result_95"], out["R2"]
    np.testing.assert_array_equal(a, np.array([128], np.float32))  # 1 doubled until >= 100
    np.testing.assert_array_equal(b, a)
    assert not np.shares_memory(a, b)
    a[...] = -1
    np.testing.assert_array_equal(b, np.array([128], np.float32))


@pytest.mark.parametrize("cond", [True, False])
def test_two_if_ports_of_one_body_result_do_not_share_memory(tmp_path, cond):
    path = _with_second_port(
        tmp_path, "if_branches",
        [('<output external_port_id="2" internal_layer_id="2" />',
          '<output external_port_id="3" internal_layer_id="2" />'),
         ('<output external_port_id="2" internal_layer_id="3" />',
          '<output external_port_id="3" internal_layer_id="3" />')],
        3, "<dim>2</dim><dim>3</dim>", 2, 4)
    compiled = irexec.compile_model(irexec.read_model(path))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = compiled({"c": np.array(cond), "a": x})
    a, b = out["Result_59"], out["R2"]
    np.testing.assert_array_equal(b, a)
    assert not np.shares_memory(a, b)
