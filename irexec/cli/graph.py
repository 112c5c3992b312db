"""``irexec graph MODEL [-o FILE]``: the graph of layers as Graphviz DOT or Mermaid text, or as
SVG/PNG drawn by Graphviz's ``dot`` program.

DOT and Mermaid are written by irexec itself and need nothing installed. SVG and PNG are drawn by
``dot``, a program of the Graphviz package (not a Python package): when it is missing, the command
says how to install it and writes nothing. Each node shows the layer's type, name, output types
and shapes, attributes and (a constant) first values; each edge the element type and shape it
carries and the port numbers at its ends. A layer whose op irexec cannot run yet is drawn
dashed: drawing needs no kernel.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from irexec.cli import common, describe
from irexec.cli.usage import UsageError
from irexec.diagnostics import printable
from irexec.ir.model import Model, OutputPort

FORMATS = ("dot", "mermaid", "svg", "png")
EXTENSIONS = {".dot": "dot", ".gv": "dot", ".mmd": "mermaid", ".mermaid": "mermaid",
              ".svg": "svg", ".png": "png"}
INSTALL_DOT = ("Graphviz's 'dot' program is needed to draw svg and png but was not found on PATH; "
               "install Graphviz (Debian/Ubuntu: sudo apt-get install graphviz; macOS: brew "
               "install graphviz; conda: conda install graphviz), or write .dot or .mmd text")
DOT_TIMEOUT = 300  # seconds; a layout of a few thousand nodes takes well under a minute


def add_parser(sub) -> None:
    p = sub.add_parser("graph", help="draw the graph of layers (DOT, Mermaid, SVG, PNG)",
                       description="Write the graph of layers as Graphviz DOT or Mermaid text, or "
                                   "as SVG/PNG drawn by Graphviz's dot program. The format comes "
                                   "from --format, else from the extension of -o, else DOT.")
    common.add_model_arguments(p)
    p.add_argument("--output", "-o", metavar="FILE",
                   help="write to FILE (.dot, .gv, .mmd, .svg, .png); default: stdout")
    p.add_argument("--format", "-f", choices=FORMATS,
                   help="dot, mermaid, svg or png (default: by the extension of -o, else dot)")


def _port_text(port: OutputPort | None) -> str:
    if port is None or port.element_type is None:
        return "?"
    return f"{port.element_type} {port.partial_shape}"


def _dot_string(text: str) -> str:
    text = printable.line(text)  # a name's control characters, shown as escapes
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


MAX_ATTRIBUTES = 8  # lines of attributes in a node's label; the rest is "..."
NOT_RUN = "(irexec cannot run it yet)"


def _label_lines(node) -> list[str]:
    """Type, name, each output's type and shape, the attributes (name=value), a constant's
    first values, and a mark on a layer whose op irexec cannot run."""
    lines = [node.type, node.name]
    if node.role != "result":
        lines += [_port_text(p) for p in node.outputs]
    attrs = describe.attributes(node)
    if node.role in ("parameter", "constant"):  # their type and shape: the output line above
        attrs = {k: v for k, v in attrs.items() if k not in ("element_type", "shape")}
    attrs = describe.attribute_text(attrs)
    lines += attrs[:MAX_ATTRIBUTES] + (["..."] if len(attrs) > MAX_ATTRIBUTES else [])
    if node.role == "constant" and not node.broken \
            and node.value is not None:
        lines.append("= " + describe.preview(node.value, 4))
    if node.op is None:
        lines.append(NOT_RUN)
    return lines


def _edges(model: Model):
    """(source node, target node, source port, target port) for every connection, in XML order."""
    for node in model.nodes:
        for port in node.inputs:
            if port.source is not None:
                yield port.source.node, node, port.source, port


def _walk(model: Model, prefix: str = "n"):
    """The models to draw, depth first without recursion (bodies may nest deeply): ("open",
    model, prefix of its node ids, owning layer, body name, the layer's id) before a model's
    bodies, ("close", …) after them; the outermost model has no owner."""
    stack = [("open", model, prefix, None, None, None)]
    while stack:
        item = stack.pop()
        yield item
        if item[0] == "close":
            continue
        _, m, pre, owner, _, _ = item
        stack.append(("close", *item[1:]))
        children = [("open", body.model, f"{pre}{node.id}_{_safe_id(name)}_", node, name,
                     f"{pre}{node.id}")
                    for node in m.nodes for name, body in node.bodies.items()]
        stack.extend(reversed(children))


def _safe_id(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)


def _port_map_edges(node, body, outer_id: str, inner_prefix: str):
    """(from id, to id, label, style) for a body's port map and back edges: the layer's inputs
    into the body's Parameters, the body's Results out to the layer, a back edge to the next
    iteration."""
    for m in body.inputs:
        label = "iteration" if m.purpose else f"in {m.external}" + (
            f" sliced on {m.axis}" if m.axis is not None else "")
        yield outer_id, f"{inner_prefix}{m.internal}", label, "dotted"
    for m in body.outputs:
        label = m.purpose.replace("_", " ") if m.purpose else f"out {m.external}" + (
            f" concatenated on {m.axis}" if m.axis is not None else "")
        yield f"{inner_prefix}{m.internal}", outer_id, label, "dotted"
    for result, parameter in body.back_edges:
        yield f"{inner_prefix}{result}", f"{inner_prefix}{parameter}", "next iteration", "dashed"


def to_dot(model: Model) -> str:
    lines = [f"digraph {_dot_string(model.name)} {{",
             "  rankdir=TB;",
             "  compound=true;",
             '  node [shape=box, style="rounded,filled", fillcolor="#f4f4f4",'
             ' fontname="Helvetica"];',
             '  edge [fontname="Helvetica", fontsize=10];']
    fills = {"parameter": "#d7ecff", "result": "#ffe2c6", "constant": "#eeeeee"}
    depth = 1
    for event, m, prefix, owner, body_name, owner_id in _walk(model):
        if event == "close":
            if owner is not None:
                depth -= 1
                indent = "  " * depth
                body = owner.bodies[body_name]
                for a, b, label, style in _port_map_edges(owner, body, owner_id, prefix):
                    lines.append(f"{indent}  {a} -> {b} [label={_dot_string(label)}, "
                                 f'style={style}, color="#888888"];')
                lines.append(f"{indent}}}")
            continue
        if owner is not None:  # a body: a cluster of its own, its port map drawn dotted
            indent = "  " * depth
            lines.append(f"{indent}subgraph cluster_{prefix[:-1]} {{")
            lines.append(f"{indent}  label={_dot_string(f'{owner.name}: {body_name}')}; "
                         f'style="rounded,dashed"; color="#888888";')
            depth += 1
        indent = "  " * depth
        for node in m.nodes:
            fill = f', fillcolor="{fills[node.role]}"' if node.role in fills else ""
            if node.op is None:  # drawn dashed: irexec cannot run it
                fill = ', style="rounded,filled,dashed", fillcolor="#fff4d6"'
            label = "\\n".join(_dot_string(s)[1:-1] for s in _label_lines(node))
            lines.append(f'{indent}{prefix}{node.id} [label="{label}"{fill}];')
        for src, dst, out, inp in _edges(m):  # port numbers at the ends of the edge
            lines.append(f"{indent}{prefix}{src.id} -> {prefix}{dst.id} "
                         f"[label={_dot_string(_port_text(out))}, "
                         f'taillabel="{out.port_id}", headlabel="{inp.port_id}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _mermaid_text(text: str) -> str:
    # Mermaid labels in double quotes take HTML entities, not backslash escapes.
    return (printable.line(text).replace("&", "&amp;").replace('"', "&quot;")
            .replace("<", "&lt;").replace(">", "&gt;"))


def to_mermaid(model: Model) -> str:
    lines = ["flowchart TD"]
    not_run = []
    links = []
    depth = 1
    for event, m, prefix, owner, body_name, owner_id in _walk(model):
        if event == "close":
            if owner is not None:
                depth -= 1
                lines.append("  " * depth + "end")
                body = owner.bodies[body_name]
                links += [f'  {a} -.->|"{_mermaid_text(label)}"| {b}'
                          for a, b, label, _ in _port_map_edges(owner, body, owner_id, prefix)]
            continue
        if owner is not None:
            title = _mermaid_text(f"{owner.name}: {body_name}")
            lines.append("  " * depth + f'subgraph {prefix[:-1]}["{title}"]')
            depth += 1
        indent = "  " * depth
        for node in m.nodes:
            label = "<br/>".join(_mermaid_text(s) for s in _label_lines(node))
            shape = ('(["', '"])') if node.role in ("parameter", "result") else ('["', '"]')
            lines.append(f"{indent}{prefix}{node.id}{shape[0]}{label}{shape[1]}")
            if node.op is None:
                not_run.append(f"{prefix}{node.id}")
        for src, dst, out, inp in _edges(m):
            text = f"{_port_text(out)} ({out.port_id}→{inp.port_id})"
            lines.append(f'{indent}{prefix}{src.id} -->|"{_mermaid_text(text)}"| '
                         f"{prefix}{dst.id}")
    lines += links
    if not_run:  # drawn dashed: irexec cannot run them
        lines.append("  classDef notrun stroke-dasharray: 5 5, fill:#fff4d6")
        lines.append(f"  class {','.join(not_run)} notrun")
    return "\n".join(lines) + "\n"


def choose_format(fmt: str | None, output: str | None) -> str:
    if fmt:
        return fmt
    if output is None:
        return "dot"
    ext = os.path.splitext(output)[1].lower()
    if ext not in EXTENSIONS:
        raise UsageError(f"cannot tell the format from '{output}': use --format, or an extension "
                         f"of {', '.join(EXTENSIONS)}")
    return EXTENSIONS[ext]


class DotMissing(Exception):
    pass


def render(dot_text: str, fmt: str) -> bytes:
    """``dot_text`` drawn by Graphviz as ``fmt`` (svg or png). DotMissing when ``dot`` is not on
    PATH; RuntimeError with dot's own message when it fails."""
    exe = shutil.which("dot")
    if exe is None:
        raise DotMissing(INSTALL_DOT)
    proc = subprocess.run([exe, f"-T{fmt}"], input=dot_text.encode("utf-8"),
                          capture_output=True, timeout=DOT_TIMEOUT)
    if proc.returncode != 0 or not proc.stdout:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RuntimeError(f"Graphviz's dot failed (exit {proc.returncode}): "
                           f"{message[0] if message else 'no output'}")
    return proc.stdout


def execute(args) -> int:
    fmt = choose_format(args.format, args.output)
    if fmt in ("svg", "png") and args.output is None and sys.stdout.isatty():
        raise UsageError(f"{fmt} is binary data: give -o FILE.{fmt}, or pipe the output")
    if args.output is not None:
        common.check_output("--output", args.output, args)
    model = common.load_model(args)
    if fmt == "mermaid":
        data = to_mermaid(model).encode("utf-8")
    else:
        data = to_dot(model).encode("utf-8")
        if fmt in ("svg", "png"):
            try:
                data = render(data.decode("utf-8"), fmt)
            except (DotMissing, RuntimeError, subprocess.TimeoutExpired, OSError) as e:
                print(printable.line(f"error: {args.model}: cannot draw {fmt}: {e}"),
                      file=sys.stderr)
                return 1
    if args.output is None:
        if fmt in ("svg", "png"):
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
        else:
            sys.stdout.write(data.decode("utf-8"))
        sys.stdout.flush()
        return 0
    common.write_output("--output", args.output, lambda f: f.write(data), args)
    print(f"wrote {args.output} ({fmt}, {len(model.nodes)} layers)", file=sys.stderr)
    return 0
