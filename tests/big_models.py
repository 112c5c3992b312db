"""Generators of very large IR files for the robustness tests (written to a temporary folder,
never kept in the repository): a chain of Convert layers of any length."""

from __future__ import annotations

from pathlib import Path


def convert_chain(path: Path, n: int, dims: bool = True) -> Path:
    """Parameter -> n Converts -> Result, n + 2 layers. Without ``dims`` the tensor is a scalar
    and the ports carry no <dim> (shorter lines: a million layers in about 150 MB)."""
    dim = "<dim>2</dim>" if dims else ""
    shape = "2" if dims else ""
    conv = ('<layer id="{i}" name="c{i}" type="Convert" version="opset1"><data '
            'destination_type="f32"/><input><port id="0">' + dim + '</port></input><output>'
            '<port id="1" precision="FP32">' + dim + '</port></output></layer>\n')
    edge = '<edge from-layer="{}" from-port="{}" to-layer="{}" to-port="0"/>\n'
    with open(path, "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0"?>\n<net name="chain" version="11">\n<layers>\n'
                f'<layer id="0" name="x" type="Parameter" version="opset1"><data shape="{shape}" '
                f'element_type="f32"/><output><port id="0" precision="FP32">{dim}</port>'
                f'</output></layer>\n')
        for start in range(1, n + 1, 10_000):
            f.write("".join(conv.format(i=i) for i in range(start, min(start + 10_000, n + 1))))
        f.write(f'<layer id="{n + 1}" name="out" type="Result" version="opset1"><input>'
                f'<port id="0">{dim}</port></input></layer>\n</layers>\n<edges>\n')
        f.write(edge.format(0, 0, 1))
        for start in range(1, n + 1, 10_000):
            f.write("".join(edge.format(i, 1, i + 1)
                            for i in range(start, min(start + 10_000, n + 1))))
        f.write("</edges>\n</net>\n")
    return path
