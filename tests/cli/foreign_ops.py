"""IR files full of OpenVINO ops irexec does not run (yet): blocks of Add and Relu, which
OpenVINO reads and runs. ``irexec info``, ``graph`` and ``validate`` must still work on them."""

from __future__ import annotations

from pathlib import Path

DIMS = "<dim>2</dim><dim>3</dim>"


def _in(port: int) -> str:
    return f'<port id="{port}">{DIMS}</port>'


def _out(port: int, names: str = "") -> str:
    named = f' names="{names}"' if names else ""
    return f'<port id="{port}" precision="FP32"{named}>{DIMS}</port>'


def add_relu_model(path: Path, blocks: int = 100, relu_type: str = "Relu",
                   version: str = "opset1", tail: str = "") -> Path:
    """x -> (Add(h, h) -> Relu) * blocks -> Result; ``relu_type`` and ``version`` spell the
    Relu layers; ``tail`` adds a ReverseSequence-free irexec op at the end when "convert"
    (a Convert irexec runs, fed by the last Relu)."""
    layers = ['<layer id="0" name="x" type="Parameter" version="opset1">'
              '<data shape="2,3" element_type="f32"/>'
              f'<output>{_out(0, "x")}</output></layer>']
    edges = []
    source, port, next_id = 0, 0, 1
    for b in range(blocks):
        layers.append(f'<layer id="{next_id}" name="add{b}" type="Add" version="opset1">'
                      f'<data auto_broadcast="numpy"/><input>{_in(0)}{_in(1)}</input>'
                      f'<output>{_out(2)}</output></layer>')
        edges += [(source, port, next_id, 0), (source, port, next_id, 1)]
        source, port, next_id = next_id, 2, next_id + 1
        layers.append(f'<layer id="{next_id}" name="relu{b}" type="{relu_type}" '
                      f'version="{version}"><input>{_in(0)}</input>'
                      f'<output>{_out(1)}</output></layer>')
        edges.append((source, port, next_id, 0))
        source, port, next_id = next_id, 1, next_id + 1
    if tail == "convert":
        layers.append(f'<layer id="{next_id}" name="to_f16" type="Convert" version="opset1">'
                      f'<data destination_type="f16"/><input>{_in(0)}</input>'
                      f'<output><port id="1" precision="FP16">{DIMS}</port></output></layer>')
        edges.append((source, port, next_id, 0))
        source, port, next_id = next_id, 1, next_id + 1
    layers.append(f'<layer id="{next_id}" name="y" type="Result" version="opset1">'
                  f'<input>{_in(0)}</input></layer>')
    edges.append((source, port, next_id, 0))
    text = ['<?xml version="1.0"?>', '<net name="add_relu" version="11">', "<layers>",
            *layers, "</layers>", "<edges>",
            *(f'<edge from-layer="{a}" from-port="{b}" to-layer="{c}" to-port="{d}"/>'
              for a, b, c, d in edges), "</edges>", "</net>"]
    path = Path(path)
    path.write_text("\n".join(text) + "\n")
    return path
