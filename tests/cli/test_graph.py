"""``irexec graph``: DOT checked with a real DOT parser (pydot), Mermaid, and SVG.

Graphviz's ``dot`` program is not a Python package, so CI may not have it. The SVG test
therefore never skips: with ``dot`` on PATH it checks the drawing itself, without it the promised
install message; the two tests after it run both paths on every machine (PATH without ``dot``, and
a stand-in ``dot`` that records how it was called).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

import irexec
from tests.cli.conftest import SAMPLES, one_error, run_cli
from tests.cli.inproc import SAMPLE_MODELS, irexec_cli, sample_ids
from tests.cli.ov_converted import ov_converted  # noqa: F401  (fixture)

CHAIN = SAMPLES / "convert_reverse_chain.xml"


def _parsed_dot(text: str):
    with warnings.catch_warnings():  # pydot 4 calls pyparsing's pre-3.3 names
        warnings.simplefilter("ignore", DeprecationWarning)
        import pydot  # the test extra

        (graph,) = pydot.graph_from_dot_data(text)
    return graph


def _check_dot(path) -> None:
    code, out, err = irexec_cli("graph", path)
    assert code == 0, err
    model = irexec.read_model(path)
    graph = _parsed_dot(out)
    nodes = {n.get_name(): n.get("label").strip('"') for n in graph.get_nodes()
             if n.get_name() not in ("node", "edge", "graph")}
    assert set(nodes) == {f"n{n.id}" for n in model.nodes}
    for node in model.nodes:
        label = nodes[f"n{node.id}"].split("\\n")
        assert label[:2] == [node.type, node.name]
        outputs = [f"{p.element_type} {p.partial_shape}" for p in node.outputs] \
            if node.type != "Result" else []
        assert label[2:2 + len(outputs)] == outputs
        # then every attribute as the XML writes it (a Parameter's and a Constant's type and
        # shape are the output line), and a constant's first values
        written = _xml_attributes(path, node.id)
        if node.type in ("Parameter", "Constant"):
            written = {k: v for k, v in written.items() if k not in ("element_type", "shape")}
        rest = label[2 + len(outputs):]
        assert rest[:len(written)] == [f"{k}={v}" for k, v in written.items()] \
            or sorted(rest[:len(written)]) == sorted(f"{k}={v}" for k, v in written.items())
        if node.type == "Constant":
            assert rest[len(written)].startswith("= [")
            if node.value.dtype in (np.int32, np.int64):  # the sample's axes: exact integers
                values = ", ".join(str(v) for v in node.value.reshape(-1)[:4].tolist())
                assert rest[len(written)].startswith(f"= [{values}")
    edges = sorted((e.get_source(), e.get_destination(), e.get("taillabel"), e.get("headlabel"))
                   for e in graph.get_edges())
    expected = sorted((f"n{p.source.node.id}", f"n{n.id}", f'"{p.source.port_id}"',
                       f'"{p.port_id}"') for n in model.nodes for p in n.inputs)
    assert edges == expected


def _xml_attributes(path, layer_id: int) -> dict[str, str]:
    """The <data> attributes of a layer as the file writes them (empty lists left out)."""
    layer = etree.parse(str(path)).find(f".//layer[@id='{layer_id}']")
    data = layer.find("data")
    return {k: v for k, v in (data.attrib.items() if data is not None else []) if v != ""}


@pytest.mark.parametrize("path", SAMPLE_MODELS, ids=sample_ids)
def test_dot_on_every_sample(path):
    _check_dot(path)


def test_dot_on_openvino_converted_ir(ov_converted):
    _check_dot(ov_converted)  # names such as 'y/sink_port_0' are quoted correctly


def test_quotes_and_backslashes_in_names_are_escaped(edited):
    path = edited({'name="flipped"': 'name="a &quot;b&quot; \\ c"'})  # a "b" \ c
    code, out, _ = irexec_cli("graph", path)
    assert code == 0
    labels = [n.get("label") for n in _parsed_dot(out).get_nodes()]
    assert any('a \\"b\\" \\\\ c' in (label or "") for label in labels)


def _check_mermaid(path, text: str) -> None:
    model = irexec.read_model(path)
    lines = text.splitlines()
    assert lines[0] == "flowchart TD"
    node_line = re.compile(r'^  n(\d+)(\(\["|\[")(.*)("\]\)|"\])$')
    edge_line = re.compile(r'^  n(\d+) -->\|"[^"]* \((\d+)→(\d+)\)"\| n(\d+)$')
    nodes = {int(m[1]): m[3] for m in map(node_line.match, lines[1:]) if m}
    edges = [(int(m[1]), int(m[2]), int(m[4]), int(m[3]))
             for m in map(edge_line.match, lines[1:]) if m]
    assert len(nodes) + len(edges) == len(lines) - 1  # every line is a node or an edge
    for node in model.nodes:
        assert nodes[node.id].split("<br/>")[:2] == [node.type, node.name.replace("&", "&amp;")]
    assert sorted(edges) == sorted((p.source.node.id, p.source.port_id, n.id, p.port_id)
                                   for n in model.nodes for p in n.inputs)


@pytest.mark.parametrize("path", SAMPLE_MODELS, ids=sample_ids)
def test_mermaid_on_every_sample(path, tmp_path):
    out = tmp_path / "g.mmd"
    code, _, err = irexec_cli("graph", path, "-o", out)  # format from the extension
    assert code == 0 and f"wrote {out}" in err
    _check_mermaid(path, out.read_text())


def test_mermaid_on_openvino_converted_ir(ov_converted):
    code, out, _ = irexec_cli("graph", ov_converted, "--format", "mermaid")
    assert code == 0
    _check_mermaid(ov_converted, out)


def test_svg_is_drawn_or_the_install_command_is_given(tmp_path, ov_converted):
    """Never skipped: what the user gets on this machine, whichever it is."""
    for path in [CHAIN, Path(ov_converted)]:
        out = tmp_path / f"{path.stem}.svg"
        proc = run_cli("graph", path, "-o", out)
        if shutil.which("dot"):
            assert proc.returncode == 0, proc.stderr
            svg = etree.parse(str(out))
            assert svg.getroot().tag == "{http://www.w3.org/2000/svg}svg"
            text = " ".join(svg.getroot().itertext())
            for node in irexec.read_model(path).nodes:
                assert node.name in text
        else:
            one_error(proc, path, None, None, None, "apt-get install graphviz")
            assert not out.exists()


def test_without_dot_on_path_the_install_command_is_given(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    env_path = os.environ.get("PATH")
    os.environ["PATH"] = str(empty)
    try:
        code, out, err = irexec_cli("graph", CHAIN, "-o", tmp_path / "g.png")
    finally:
        os.environ["PATH"] = env_path
    assert code == 1 and out == ""
    (line,) = err.splitlines()
    assert line.startswith(f"error: {CHAIN}: cannot draw png: Graphviz's 'dot' program")
    assert "apt-get install graphviz" in line and "brew install graphviz" in line
    assert not (tmp_path / "g.png").exists()


def test_svg_and_png_are_what_dot_draws(tmp_path):
    """A stand-in 'dot' records its arguments and input: the DOT text goes to dot -Tsvg / -Tpng
    on stdin and what dot prints is written to the file."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "dot"
    fake.write_text(f"#!{sys.executable}\n"
                    "import sys\n"
                    f"open({str(tmp_path / 'stdin.dot')!r}, 'w').write(sys.stdin.read())\n"
                    "sys.stdout.write('<svg>' + ' '.join(sys.argv[1:]) + '</svg>')\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    env_path = os.environ.get("PATH")
    os.environ["PATH"] = str(bin_dir)
    try:
        for fmt in ("svg", "png"):
            code, _, err = irexec_cli("graph", CHAIN, "-o", tmp_path / f"g.{fmt}")
            assert code == 0, err
            assert (tmp_path / f"g.{fmt}").read_text() == f"<svg>-T{fmt}</svg>"
    finally:
        os.environ["PATH"] = env_path
    _, dot_text, _ = irexec_cli("graph", CHAIN)
    assert (tmp_path / "stdin.dot").read_text() == dot_text


def test_unknown_extension_is_a_usage_error(tmp_path):
    proc = run_cli("graph", CHAIN, "-o", tmp_path / "g.txt")
    assert proc.returncode == 2 and "--format" in proc.stderr and "Traceback" not in proc.stderr


def test_bad_model_is_one_line_exit_1(edited):
    bad = edited({'seq_axis="0"': 'seq_axis="1"'})
    one_error(run_cli("graph", bad), bad, 39, "reversed_sequences", "ReverseSequence")
