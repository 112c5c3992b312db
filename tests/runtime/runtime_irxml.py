"""Hand-written IR text for the runtime tests, independent of irexec's own writer."""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr


@dataclass
class L:
    """One <layer>: inputs are dims lists; outputs are (dims, precision, names or None)."""

    id: int
    name: str
    type: str
    data: dict = field(default_factory=dict)
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    version: str = "opset1"
    layer_attrs: dict = field(default_factory=dict)  # extra attributes of <layer> itself


def _dims(dims, indent):
    if dims is None:
        return []
    return [f"{indent}<dim>{d}</dim>" for d in dims]


def ir_xml(layers: list[L], edges, version: int = 11, name: str = "m") -> str:
    """The IR text. ``edges`` are (from_id, output_index, to_id, input_index); output port ids
    follow the input port ids, as OpenVINO numbers them."""
    by_id = {layer.id: layer for layer in layers}
    out = ["<?xml version=\"1.0\"?>", f"<net name={quoteattr(name)} version=\"{version}\">",
           "  <layers>"]
    for layer in layers:
        out.append(f"    <layer id=\"{layer.id}\" name={quoteattr(layer.name)} "
                   f"type=\"{layer.type}\" version=\"{layer.version}\""
                   + "".join(f" {k}={quoteattr(str(v))}" for k, v in layer.layer_attrs.items())
                   + ">")
        if layer.data:
            attrs = " ".join(f"{k}={quoteattr(str(v))}" for k, v in layer.data.items())
            out.append(f"      <data {attrs}/>")
        if layer.inputs:
            out.append("      <input>")
            for i, dims in enumerate(layer.inputs):
                out.append(f"        <port id=\"{i}\">")
                out += _dims(dims, "          ")
                out.append("        </port>")
            out.append("      </input>")
        if layer.outputs:
            out.append("      <output>")
            for j, (dims, precision, names) in enumerate(layer.outputs):
                extra = f" names={quoteattr(names)}" if names is not None else ""
                out.append(f"        <port id=\"{len(layer.inputs) + j}\" "
                           f"precision=\"{precision}\"{extra}>")
                out += _dims(dims, "          ")
                out.append("        </port>")
            out.append("      </output>")
        out.append("    </layer>")
    out += ["  </layers>", "  <edges>"]
    for src, j, dst, i in edges:
        out.append(f"    <edge from-layer=\"{src}\" from-port=\"{len(by_id[src].inputs) + j}\" "
                   f"to-layer=\"{dst}\" to-port=\"{i}\"/>")
    out += ["  </edges>", "</net>", ""]
    return "\n".join(out)


def layer_line(text: str, name: str) -> int:
    """The 1-based line of the <layer> element named ``name`` in an IR text."""
    for number, line in enumerate(text.splitlines(), 1):
        if "<layer " in line and f"name=\"{name}\"" in line:
            return number
    raise AssertionError(f"no layer {name!r}")
