"""``irexec info MODEL``: what a model holds — IR version, opsets, layer counts, inputs, outputs,
weights, and every layer's inferred output types and shapes; text or ``--format json``."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter

from irexec.cli import common
from irexec.cli.columns import aligned
from irexec.ir.model import Model, OutputPort
from irexec.runtime.plan import output_names


def add_parser(sub) -> None:
    p = sub.add_parser("info", help="describe a model: opsets, inputs, outputs, layers",
                       description="Describe a model: IR version, opsets used, layer counts by "
                                   "type, inputs and outputs with their element types and partial "
                                   "shapes, the weights, and every layer's inferred outputs.")
    common.add_model_arguments(p)
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="output format (default: text)")


def _port(port: OutputPort | None) -> dict:
    if port is None:
        return {"element_type": None, "shape": None}
    return {"element_type": str(port.element_type), "shape": str(port.partial_shape)}


def describe(model: Model) -> dict:
    """Everything ``irexec info`` shows, as plain data (what ``--format json`` prints)."""
    constants = [n for n in model.nodes if n.type == "Constant" and n.value is not None]
    weights_path = getattr(model.weights, "path", None)
    return {
        "model": model.path,
        "name": model.name,
        "ir_version": model.ir_version,
        "opsets": sorted({n.version for n in model.nodes}),
        "layer_counts": dict(sorted(Counter(n.type for n in model.nodes).items())),
        "inputs": [{"name": p.name, "tensor_names": list(p.outputs[0].names),
                    **_port(p.outputs[0])} for p in model.parameters],
        "outputs": [{"name": name, "result": r.name, **_port(r.inputs[0].source)}
                    for r, name in zip(model.results, output_names(model))],
        "weights": {
            "file": weights_path,
            "file_bytes": (os.path.getsize(weights_path)
                           if weights_path and os.path.isfile(weights_path) else None),
            "constants": len(constants),
            "constant_bytes": sum(int(n.value.nbytes) for n in constants),
        },
        "layers": [{"id": n.id, "name": n.name, "type": n.type, "version": n.version,
                    "outputs": [_port(p) for p in n.outputs]} for n in model.nodes],
    }


def _shape_type(port: dict) -> str:
    return f"{port['element_type']} {port['shape']}"


def render_text(info: dict) -> list[str]:
    w = info["weights"]
    counts = ", ".join(f"{t} {c}" for t, c in info["layer_counts"].items())
    weights = f"{w['constant_bytes']} bytes in {w['constants']} constant" \
              f"{'s' * (w['constants'] != 1)}"
    if w["file"]:
        weights += f" ({w['file']}, {w['file_bytes']} bytes)"
    lines = [
        f"model:      {info['model']}",
        f"name:       {info['name']}",
        f"IR version: {info['ir_version']}",
        f"opsets:     {', '.join(info['opsets'])}",
        f"layers:     {len(info['layers'])} ({counts})",
        f"weights:    {weights}",
        "inputs:",
        *aligned([("name", "type", "shape", "tensor names"),
                  *((i["name"], i["element_type"], i["shape"], ", ".join(i["tensor_names"]))
                    for i in info["inputs"])]),
        "outputs:",
        *aligned([("name", "type", "shape", "result"),
                  *((o["name"], str(o["element_type"]), str(o["shape"]), o["result"])
                    for o in info["outputs"])]),
        "layers:",
        *aligned([("id", "name", "type", "version", "outputs"),
                  *((str(n["id"]), n["name"], n["type"], n["version"],
                     ", ".join(map(_shape_type, n["outputs"])) or "-")
                    for n in info["layers"])]),
    ]
    return lines


def execute(args) -> int:
    model = common.load_model(args)
    info = describe(model)
    if args.format == "json":
        print(json.dumps(info, indent=2))
    else:
        print("\n".join(render_text(info)))
    sys.stdout.flush()
    return 0
