"""``irexec info MODEL``: what a model holds — IR version, opsets, layer counts, the model's
rt_info, inputs, outputs, weights, and every layer with its attributes, ports (numbers, types,
shapes), edges and, for a constant, its shape and first values; text or ``--format json`` (which
carries all of it; shapes as lists, see describe.shape_json).

It needs no kernel: a model whose ops irexec cannot run yet is described all the same, those
layers marked (their outputs are what their ports declare). Nor does it need the weights: an
.xml whose .bin is missing is described with its constants' values unknown, the weights said to
be missing.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter

from irexec.api import check_model
from irexec.cli import common, describe
from irexec.cli.columns import aligned
from irexec.diagnostics import printable
from irexec.errors import IRError
from irexec.ir.model import Model, OutputPort, RtInfo
from irexec.availability import not_run_summary
from irexec.runtime.plan import output_names

SHOWN_VALUES = 6  # a constant's first values in the text


def add_parser(sub) -> None:
    p = sub.add_parser("info", help="describe a model: opsets, inputs, outputs, layers",
                       description="Describe a model: IR version, opsets used, layer counts by "
                                   "type, inputs and outputs with their element types and partial "
                                   "shapes, the weights, and every layer with its attributes, "
                                   "ports, edges and constant values.")
    common.add_model_arguments(p)
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="output format (default: text; json carries everything)")


def _port(port: OutputPort | None) -> dict:
    if port is None:
        return {"element_type": None, "shape": None}
    return {"element_type": describe._str(port.element_type),
            "shape": describe.shape_json(port.partial_shape)}


def _body_layer_count(model: Model) -> int:
    """Layers inside sub-graphs, at any depth (without recursion: bodies may nest deeply)."""
    count, stack = 0, [model]
    while stack:
        for node in stack.pop().nodes:
            for body in node.bodies.values():
                count += len(body.model.nodes)
                stack.append(body.model)
    return count


def rt_info(entries: list[RtInfo]) -> dict:
    """A model's (or layer's) ``<rt_info>`` as plain data: each entry by its ``name`` (OpenVINO's
    ``<info name=... value=...>`` and ``<attribute name=...>``) or its tag, its ``value`` or its
    nested entries."""
    out: dict = {}
    for e in entries:
        key = e.attrs["name"] if e.tag in ("info", "attribute") and "name" in e.attrs else e.tag
        if e.children:
            out[key] = rt_info(e.children)
        else:
            out[key] = e.attrs.get("value", {k: v for k, v in e.attrs.items() if k != "name"})
    return out


def _rt_info_lines(entries: dict, prefix: str = "") -> list[str]:
    lines = []
    for key, value in entries.items():
        if isinstance(value, dict) and value:
            lines += _rt_info_lines(value, f"{prefix}{key}/")
        else:
            text = str(value) if not isinstance(value, dict) else ""
            lines.append(f"{prefix}{key}: {text if len(text) <= 120 else text[:117] + '...'}")
    return lines


def describe_model(model: Model) -> dict:
    """Everything ``irexec info`` shows, as plain data (what ``--format json`` prints)."""
    constants = [n for n in model.nodes if n.role == "constant" and not n.broken
                 and n.op is not None and n.value is not None]
    weights_path = getattr(model.weights, "path", None)
    not_run = [n for n in model.nodes if n.op is None]
    return {
        "model": model.path,
        "name": model.name,
        "ir_version": model.ir_version,
        "opsets": sorted({n.version for n in model.nodes}),
        "layer_counts": dict(sorted(Counter(n.type for n in model.nodes).items())),
        "body_layers": _body_layer_count(model),
        "not_run": not_run_summary(not_run) if not_run else None,
        "inputs": [{"name": p.name, "tensor_names": list(p.outputs[0].names),
                    **_port(p.outputs[0])} for p in model.parameters],
        "outputs": [{"name": name, "result": r.name,
                     **_port(r.inputs[0].source if r.inputs else None)}
                    for r, name in zip(model.results, output_names(model))],
        "rt_info": rt_info(model.rt_info),
        "weights": {
            "missing": getattr(model, "weights_missing", None),
            "file": weights_path,
            "file_bytes": (os.path.getsize(weights_path)
                           if weights_path and os.path.isfile(weights_path) else None),
            "constants": len(constants),
            "constant_bytes": sum(int(n.value.nbytes) for n in constants),
        },
        "layers": [describe.layer(n, runs=n.op is not None) for n in model.nodes],
        "edges": describe.edges(model),
    }


def _ends(links: list[dict]) -> str:
    return ", ".join(f"{e['layer']}:{e['port']} {e['name']}" for e in links)


def _body_lines(entry: dict, indent: str) -> list[str]:
    """A layer's bodies: each with its port map and back edges, then its layers, indented."""
    lines = []
    for b in entry.get("bodies", []):
        lines.append(f"{indent}    body {b['name']}: {len(b['layers'])} layers")
        for kind in ("inputs", "outputs"):
            for m in b[kind]:
                lines.append(f"{indent}      {_mapping_line(m, kind[:-1])}")
        for e in b["back_edges"]:
            lines.append(f"{indent}      back edge: layer {e['from_layer']} -> layer "
                         f"{e['to_layer']} (the next iteration's value)")
        for layer in b["layers"]:
            lines += _layer_lines(layer, indent + "      ")
    return lines


def _mapping_line(m: dict, direction: str) -> str:
    arrow = "->" if direction == "input" else "<-"
    port = "special" if m["external_port"] < 0 else m["external_port"]
    text = f"{direction} {port} {arrow} layer {m['internal_layer']}"
    if "purpose" in m:
        text += f" ({m['purpose'].replace('_', ' ')})"
    if "axis" in m:
        how = "sliced" if direction == "input" else "concatenated"
        text += (f", {how} along axis {m['axis']} (start {m['start']}, end {m['end']}, stride "
                 f"{m['stride']}, part {m['part_size']})")
    return text


def _layer_lines(entry: dict, indent: str = "  ") -> list[str]:
    head = f"{indent}{entry['id']} {entry['name']}: {entry['type']}-{entry['version']}"
    if not entry["runs"]:
        head += "  (irexec cannot run it yet)"
    lines = [head]
    attrs = describe.attribute_text(entry["attributes"])
    if attrs:
        lines.append(f"{indent}    attributes: " + ", ".join(attrs))
    for port in entry["inputs"]:
        source = port["from"]
        where = f" <- {source['layer']}:{source['port']} {source['name']}" if source else \
            " <- nothing"
        lines.append(f"{indent}    input {port['port']}: "
                     f"{describe.type_text(port['element_type'], port['shape'])}{where}")
    for port in entry["outputs"]:
        text = f"{indent}    output {port['port']}: " \
               f"{describe.type_text(port['element_type'], port['shape'])}"
        if "declared_precision" in port:
            text += f" (declared {port['declared_precision']})"
        if port["names"] and port["names"] != [entry["name"]]:
            text += f" names {', '.join(port['names'])}"
        if port["to"]:
            text += f" -> {_ends(port['to'])}"
        lines.append(text)
    constant = entry.get("constant")
    if constant is not None:
        shown = constant["values"][:SHOWN_VALUES]
        more = ", ..." if constant["elements"] > len(shown) else ""
        items = ", ".join(json.dumps(v) if isinstance(v, str) else str(v) for v in shown)
        lines.append(f"{indent}    value: {constant['element_type']} "
                     f"[{','.join(map(str, constant['shape']))}] = [{items}{more}]")
    return lines + _body_lines(entry, indent)


def render_text(info: dict) -> list[str]:
    w = info["weights"]
    counts = ", ".join(f"{t} {c}" for t, c in info["layer_counts"].items())
    weights = f"{w['constant_bytes']} bytes in {w['constants']} constant" \
              f"{'s' * (w['constants'] != 1)}"
    if w.get("missing"):
        weights = (f"missing: {w['missing']}; the structure is shown, the constants' values "
                   f"are not")
    elif w["file"] and w["file_bytes"] is not None:
        weights += f" ({w['file']}, {w['file_bytes']} bytes)"
    elif w["file"]:
        weights += f" (no file {w['file']})"
    lines = [
        f"model:      {info['model']}",
        f"name:       {info['name']}",
        f"IR version: {info['ir_version']}",
        f"opsets:     {', '.join(info['opsets'])}",
        f"layers:     {len(info['layers'])} ({counts})" + (
            f", and {info['body_layers']} in bodies" if info["body_layers"] else ""),
        f"weights:    {weights}",
    ]
    if info["not_run"]:
        lines.append(f"not run:    {info['not_run']} (irexec cannot run these yet)")
    if info["rt_info"]:
        lines += ["rt_info:", *(f"  {line}" for line in _rt_info_lines(info["rt_info"]))]
    lines += [
        "inputs:",
        *aligned([("name", "type", "shape", "tensor names"),
                  *((i["name"], str(i["element_type"]), describe.shape_text(i["shape"]),
                     ", ".join(i["tensor_names"])) for i in info["inputs"])]),
        "outputs:",
        *aligned([("name", "type", "shape", "result"),
                  *((o["name"], str(o["element_type"]), describe.shape_text(o["shape"]),
                     o["result"])
                    for o in info["outputs"])]),
        "layers (id name: type-version; ports as number: type shape, <- from and -> to "
        "layer:port):",
    ]
    for entry in info["layers"]:
        lines += _layer_lines(entry)
    return lines


def _load(args) -> Model:
    """The model, read without its weights if they are missing (its structure is what info
    shows); other errors are errors."""
    model, diags = check_model(args.model, getattr(args, "weights", None),
                               weights_optional=True)
    errors = [d for d in diags if d.is_error]
    if errors:
        raise IRError(errors)
    model.diagnostics = diags
    common.print_warnings(diags)
    return model


def execute(args) -> int:
    model = _load(args)
    info = describe_model(model)
    if args.format == "json":
        print(json.dumps(info, indent=2))
    else:
        print("\n".join(map(printable.line, render_text(info))))  # names: one line each
    sys.stdout.flush()
    return 0
