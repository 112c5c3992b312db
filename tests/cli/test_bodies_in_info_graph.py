"""``irexec info`` and ``irexec graph`` show sub-graphs (issue 19): each body with its port map,
back edges and layers (nested bodies inside theirs), as clusters in DOT and subgraphs in
Mermaid."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli.inproc import irexec_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "subgraphs"
NESTED = DATA / "nested_loops.xml"


def test_info_text_shows_bodies_nested_with_port_maps():
    status, out, _ = irexec_cli("info", NESTED)
    assert status == 0
    lines = out.splitlines()
    assert "layers:     6 (Constant 2, Loop 1, Parameter 1, Result 2), and 13 in bodies" in lines
    outer = lines.index("      body body: 7 layers")
    inner = lines.index("            body body: 6 layers")
    assert outer < inner
    assert "        output 4 <- layer 6, concatenated along axis 0 (start 0, end -1, stride 1, " \
           "part 1)" in lines
    assert "        output special <- layer 5 (execution condition)" in lines
    assert "        back edge: layer 6 -> layer 0 (the next iteration's value)" in lines
    assert "              2 added: Add-opset1" in lines  # the inner body's layer, indented twice


def test_info_json_holds_every_body_layer():
    status, out, _ = irexec_cli("info", NESTED, "--format", "json")
    info = json.loads(out)
    (loop,) = [layer for layer in info["layers"] if layer["type"] == "Loop"]
    (body,) = loop["bodies"]
    assert body["name"] == "body" and len(body["layers"]) == 7
    assert {"external_port": 4, "internal_layer": 6, "axis": 0, "start": 0, "end": -1,
            "stride": 1, "part_size": 1} in body["outputs"]
    assert body["back_edges"] == [{"from_layer": 6, "to_layer": 0}]
    (inner,) = [layer for layer in body["layers"] if layer["type"] == "Loop"]
    assert [layer["name"] for layer in inner["bodies"][0]["layers"]][2] == "added"
    assert info["body_layers"] == 13


def test_if_shows_both_branches():
    status, out, _ = irexec_cli("info", DATA / "if_branches.xml", "--format", "json")
    (layer,) = [x for x in json.loads(out)["layers"] if x["type"] == "If"]
    assert [b["name"] for b in layer["bodies"]] == ["then_body", "else_body"]


def _dot_structure(text: str):
    """Node ids declared, edge endpoints, and clusters with the clusters they sit in."""
    declared = set(re.findall(r"^\s*(n[\w]+) \[label=", text, re.M))
    ends = re.findall(r"^\s*(n\w+) -> (n\w+) \[", text, re.M)
    parents, open_clusters = {}, []
    for line in text.splitlines():
        m = re.match(r"\s*subgraph (cluster_\w+) \{", line)
        if m:
            parents[m.group(1)] = open_clusters[-1] if open_clusters else None
            open_clusters.append(m.group(1))
        elif line.strip() == "}" and open_clusters:
            open_clusters.pop()
    return declared, ends, parents


def test_dot_draws_bodies_as_nested_clusters():
    status, out, _ = irexec_cli("graph", NESTED)
    assert status == 0
    declared, ends, parents = _dot_structure(out)
    assert parents == {"cluster_n3_body": None, "cluster_n3_body_3_body": "cluster_n3_body"}
    assert len(declared) == 6 + 13
    assert all(a in declared and b in declared for a, b in ends)
    assert 'n3 -> n3_body_0 [label="in 2", style=dotted' in out
    assert 'n3_body_6 -> n3_body_0 [label="next iteration", style=dashed' in out
    assert out.count("{") == out.count("}")


def test_mermaid_draws_bodies_as_nested_subgraphs():
    status, out, _ = irexec_cli("graph", NESTED, "-f", "mermaid")
    lines = [line.strip() for line in out.splitlines()]
    opened = [line for line in lines if line.startswith("subgraph ")]
    assert opened == ['subgraph n3_body["outer_loop: body"]',
                      'subgraph n3_body_3_body["inner_loop: body"]']
    assert lines.count("end") == 2
    assert lines.index('subgraph n3_body_3_body["inner_loop: body"]') < lines.index("end")
    assert 'n3_body_6 -.->|"out 4 concatenated on 0"| n3' in lines
