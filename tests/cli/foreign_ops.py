"""IR files full of OpenVINO ops irexec is made not to run (tests/hidden_ops.py): blocks of
Inverse (opset14) and ErfInv (opset17), which OpenVINO reads and runs. ``irexec info``, ``graph``
and ``validate`` must still work on them."""

from __future__ import annotations

from pathlib import Path

DIMS = "<dim>1</dim><dim>4</dim><dim>2</dim><dim>2</dim>"
FIRST = ("Inverse", "opset14", {"adjoint": "false"})
SECOND = ("ErfInv", "opset17", {})


def _in(port: int) -> str:
    return f'<port id="{port}">{DIMS}</port>'


def _out(port: int, names: str = "", precision: str = "FP32") -> str:
    named = f' names="{names}"' if names else ""
    return f'<port id="{port}" precision="{precision}"{named}>{DIMS}</port>'


def _layer(layer_id: int, name: str, op: tuple, type_: str | None = None,
           version: str | None = None) -> str:
    op_type, op_version, attrs = op
    data = "".join(f' {k}="{v}"' for k, v in attrs.items())
    return (f'<layer id="{layer_id}" name="{name}" type="{type_ or op_type}" '
            f'version="{version or op_version}"><data{data}/><input>{_in(0)}</input>'
            f'<output>{_out(1)}</output></layer>')


def foreign_model(path: Path, blocks: int = 100, second_type: str | None = None,
                  second_version: str | None = None, tail: str = "") -> Path:
    """x [1,4,2,2] -> (Inverse -> ErfInv) * blocks -> Result; ``second_type``/``second_version``
    respell the ErfInv layers (a typo, a wrong opset); ``tail="convert"`` ends with a Convert to
    f16, an op irexec runs, fed by the last ErfInv."""
    layers = ['<layer id="0" name="x" type="Parameter" version="opset1">'
              '<data shape="1,4,2,2" element_type="f32"/>'
              f'<output>{_out(0, "x")}</output></layer>']
    edges = []
    source, next_id = 0, 1
    for b in range(blocks):
        for name, op, type_, version in ((f"inv{b}", FIRST, None, None),
                                         (f"erfinv{b}", SECOND, second_type, second_version)):
            layers.append(_layer(next_id, name, op, type_, version))
            edges.append((source, 0 if source == 0 else 1, next_id, 0))
            source, next_id = next_id, next_id + 1
    if tail == "convert":
        layers.append(f'<layer id="{next_id}" name="to_f16" type="Convert" version="opset1">'
                      f'<data destination_type="f16"/><input>{_in(0)}</input>'
                      f'<output>{_out(1, precision="FP16")}</output></layer>')
        edges.append((source, 1, next_id, 0))
        source, next_id = next_id, next_id + 1
    layers.append(f'<layer id="{next_id}" name="y" type="Result" version="opset1">'
                  f'<input>{_in(0)}</input></layer>')
    edges.append((source, 1 if source else 0, next_id, 0))
    text = ['<?xml version="1.0"?>', '<net name="foreign" version="11">', "<layers>",
            *layers, "</layers>", "<edges>",
            *(f'<edge from-layer="{a}" from-port="{b}" to-layer="{c}" to-port="{d}"/>'
              for a, b, c, d in edges), "</edges>", "</net>"]
    path = Path(path)
    path.write_text("\n".join(text) + "\n")
    return path
