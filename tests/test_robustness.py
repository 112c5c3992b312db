"""Hostile input beyond the corpus (tests/test_hostile.py): entity attacks that must read no file,
inputs too big to keep in the repository, the memory budget, output files that must never be
half-written or written over the run's inputs, and one CompiledModel called from many threads."""

from __future__ import annotations

import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import irexec
from irexec.api import check_model
from irexec import budget
from irexec.runtime.inputs import make_inputs
from tests.big_models import convert_chain
from tests.cli.inproc import irexec_cli

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ROOT / "tests" / "data" / "hostile"
SAMPLE = ROOT / "samples" / "convert_reverse_chain.xml"
BASE = (HOSTILE / "base.xml").read_text(encoding="utf-8")


def codes(path) -> list[str]:
    return [d.code for d in check_model(path)[1] if d.is_error]


# --- entities and DTDs: nothing read, nothing expanded -------------------------------------------

XXE_FORMS = {
    "general": '<!DOCTYPE net [<!ENTITY x SYSTEM "{0}">]>\n',
    "parameter": '<!DOCTYPE net [<!ENTITY % x SYSTEM "{0}"> %x;]>\n',
    "external_dtd": '<!DOCTYPE net SYSTEM "{0}">\n',
}


@pytest.mark.parametrize("form", sorted(XXE_FORMS))
def test_xxe_never_opens_the_file(form, tmp_path):
    """The entity names a FIFO: opening it for reading would block until a writer comes, so a
    reader that finishes has provably not opened it (and a secret file beside it is not in any
    message)."""
    fifo = tmp_path / "secret"
    os.mkfifo(fifo)
    xml = tmp_path / "model.xml"
    xml.write_text(BASE.replace('<?xml version="1.0"?>\n', '<?xml version="1.0"?>\n' +
                                XXE_FORMS[form].format(fifo.as_uri()))
                   .replace('name="hostile"', 'name="&x;"' if form == "general" else
                            'name="hostile"'), encoding="utf-8")
    (tmp_path / "model.bin").write_bytes((HOSTILE / "base.bin").read_bytes())
    found = []
    reader = threading.Thread(target=lambda: found.append(codes(xml)), daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # unblock the reader before failing, so the test run can end
        with open(fifo, "wb"):
            pass
        pytest.fail("the reader opened the FIFO an entity names")
    assert found == [["IR005"]]


def test_entity_bombs_cost_no_time_and_no_memory():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.monotonic()
    for name in ("billion_laughs.xml", "quadratic_blowup.xml"):
        assert codes(HOSTILE / name) == ["IR005"]
    assert time.monotonic() - start < 2
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50 * 1024  # KiB


# --- text and attribute caps --------------------------------------------------------------------

@pytest.mark.parametrize("size", [(1 << 20) + 1, 11_000_000])
def test_huge_text_node(size, tmp_path):
    xml = tmp_path / "m.xml"
    xml.write_text(BASE.replace("<dim>2</dim><dim>3</dim></port></output>",
                                f"<dim>{'1' * size}</dim><dim>3</dim></port></output>", 1))
    assert codes(xml) == ["IR006"]


@pytest.mark.parametrize("size", [(1 << 20) + 1, 11_000_000])
def test_huge_attribute_value(size, tmp_path):
    xml = tmp_path / "m.xml"
    xml.write_text(BASE.replace('name="hostile"', f'name="{"n" * size}"'))
    assert codes(xml) == ["IR006"]


@pytest.mark.parametrize("where", ["text", "attribute"])
@pytest.mark.parametrize("pad", [0, 1, 4095, 524_287])
def test_values_of_exactly_the_cap_are_accepted(where, pad, tmp_path):
    # Shifting the value by `pad` bytes moves it across the byte-level check's blocks.
    value = "1" * (1 << 20)
    text = BASE.replace('name="hostile"', f'name="hostile" pad="{"p" * pad}"')
    if where == "text":
        text = text.replace("<dim>2</dim><dim>3</dim></port></output>",
                            f"<dim>{value}</dim><dim>3</dim></port></output>", 1)
    else:
        text = text.replace('name="hostile"', f'name="{value}"')
    xml = tmp_path / "m.xml"
    xml.write_text(text)
    assert "IR006" not in codes(xml)
    xml.write_text(text.replace(value, value + "1"))
    assert codes(xml) == ["IR006"]


def test_text_joined_across_a_comment_is_one_text(tmp_path):
    # Each half is shorter than the cap, but the parser drops the comment and joins them: the
    # byte-level shortcut of the length check must not miss it.
    half = "1" * ((1 << 19) + 1000)
    xml = tmp_path / "m.xml"
    xml.write_text(BASE.replace("<dim>2</dim><dim>3</dim></port></output>",
                                f"<dim>{half}<!-- x -->{half}</dim><dim>3</dim></port></output>",
                                1))
    assert codes(xml) == ["IR006"]


def test_text_in_cdata_with_angle_brackets(tmp_path):
    text = "<>" * ((1 << 19) + 10)
    xml = tmp_path / "m.xml"
    xml.write_text(BASE.replace("<dim>2</dim><dim>3</dim></port></output>",
                                f"<dim><![CDATA[{text}]]></dim><dim>3</dim></port></output>", 1))
    assert codes(xml) == ["IR006"]


def test_huge_attribute_in_utf16(tmp_path):
    xml = tmp_path / "m.xml"
    text = BASE.replace('name="hostile"', f'name="{chr(0x3C3C) * ((1 << 20) + 1)}"')
    text = text.replace("encoding='utf-8'", "encoding='utf-16'").replace(
        'encoding="utf-8"', 'encoding="utf-16"')
    xml.write_bytes(text.encode("utf-16"))
    assert codes(xml) == ["IR006"]


def test_large_file_with_short_values_passes_the_length_caps(tmp_path):
    # Many layers, more than MAX_TEXT bytes in all: the byte-level check clears it.
    path = convert_chain(tmp_path / "chain.xml", 5_000)
    assert os.path.getsize(path) > (1 << 20)
    assert not [d for d in check_model(path)[1] if d.code == "IR006"]


# --- long chains and many layers ----------------------------------------------------------------

def test_ten_thousand_deep_chain(tmp_path):
    path = convert_chain(tmp_path / "chain.xml", 10_000)
    model = irexec.read_model(path)
    out = irexec.compile_model(model)(make_inputs(model, {}, 0))
    assert out["out"].shape == (2,)
    for command in ("validate", "info", "run"):
        status, _, err = irexec_cli(command, path)
        assert status == 0, err


@pytest.mark.skipif(not os.environ.get("IREXEC_HUGE_TESTS"),
                    reason="a million layers take minutes; set IREXEC_HUGE_TESTS=1")
def test_a_million_layers(tmp_path):
    path = convert_chain(tmp_path / "million.xml", 999_998, dims=False)
    model = irexec.read_model(path)
    out = irexec.compile_model(model)([np.float32(1.5)])
    assert out["out"] == np.float32(1.5)


# --- the memory budget ----------------------------------------------------------------------------

@pytest.mark.parametrize("text,expected", [("1024", 1024), ("2K", 2048), ("1.5M", 3 << 19),
                                           ("3G", 3 << 30), ("1GiB", 1 << 30), ("4 T", 4 << 40)])
def test_budget_sizes(text, expected):
    assert budget.parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "-5", "0", "1e309", "NaN", "0x10", "5X", "%"])
def test_budget_sizes_refused(text):
    with pytest.raises(ValueError):
        budget.parse_size(text)


def test_budget_default_is_a_fraction_of_memory(monkeypatch):
    monkeypatch.delenv(budget.ENV, raising=False)
    assert budget.current() == int(budget.physical_memory() * budget.DEFAULT_FRACTION)
    assert budget.parse_size("25%") == int(budget.physical_memory() * 0.25)


def test_budget_from_the_environment(monkeypatch):
    monkeypatch.setenv(budget.ENV, "1K")
    model, diags = check_model(SAMPLE)
    assert [d.code for d in diags] == []  # the sample's tensors are 240 bytes at most
    monkeypatch.setenv(budget.ENV, "100")
    errors = [d for d in check_model(SAMPLE)[1] if d.is_error]
    assert errors and {d.code for d in errors} == {"IR109"}
    assert "layer 'data'" in str(errors[0]) and "240 bytes" in str(errors[0])


def test_a_constant_over_the_budget_is_one_error_at_its_shape(monkeypatch):
    # The Const's shape attribute and its port's dims say the same size: one mistake, reported
    # once, at the attribute its payload is read by.
    monkeypatch.setenv(budget.ENV, "1G")
    path = HOSTILE / "const_shape_over_budget.xml"
    text = path.read_text(encoding="utf-8").splitlines()
    shape_line = next(n for n, line in enumerate(text, 1)
                      if "<data" in line and 'shape="1000000000000"' in line)
    diags = check_model(path)[1]
    assert [(d.code, d.location.line) for d in diags] == [("IR109", shape_line)]
    assert "the constant: shape [1000000000000]" in diags[0].message


def test_a_port_over_the_budget_is_reported_when_no_attribute_is(monkeypatch, tmp_path):
    # A Parameter's declared dims too large: the port is the only place that says so.
    monkeypatch.setenv(budget.ENV, "1G")
    xml = tmp_path / "m.xml"
    xml.write_text(BASE.replace("<dim>2</dim><dim>3</dim></port></output>",
                                "<dim>2000000000</dim><dim>3</dim></port></output>", 1))
    (tmp_path / "m.bin").write_bytes((HOSTILE / "base.bin").read_bytes())
    diags = [d for d in check_model(xml)[1] if d.is_error]
    assert [d.code for d in diags] == ["IR109"] and "output port 0" in diags[0].message


def test_budget_option_on_the_command_line(tmp_path):
    status, _, err = irexec_cli("run", SAMPLE, "--memory-budget", "100")
    assert status == 1 and "more than the memory budget of 100 bytes" in err
    assert "layer 'data'" in err
    with pytest.raises(SystemExit) as caught:  # argparse: not a size
        irexec_cli("run", SAMPLE, "--memory-budget", "5P")
    assert caught.value.code == 2
    status, _, err = irexec_cli("run", SAMPLE, "--memory-budget", "1G")
    assert status == 0, err


def test_generated_inputs_respect_the_budget(tmp_path):
    xml = tmp_path / "m.xml"
    xml.write_text(BASE.replace('shape="2,3"', 'shape="?,3"')
                   .replace("<dim>2</dim><dim>3</dim></port></output>",
                            "<dim>-1</dim><dim>3</dim></port></output>", 1))
    (tmp_path / "m.bin").write_bytes((HOSTILE / "base.bin").read_bytes())
    model = irexec.read_model(xml)
    with budget.limit(8):
        with pytest.raises(irexec.IRError) as caught:
            make_inputs(model, {}, 0)
    assert caught.value.code == "IR109" and "input 'data'" in str(caught.value)


# --- output files -----------------------------------------------------------------------------------

@pytest.fixture
def workdir(tmp_path):
    for name in ("base.xml", "base.bin"):
        (tmp_path / name).write_bytes((HOSTILE / name).read_bytes())
    np.save(tmp_path / "data.npy", np.ones((2, 3), np.float32))
    return tmp_path


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()
            if p.is_file()}


@pytest.mark.parametrize("target", ["base.xml", "base.bin", "data.npy", "./sub/../base.xml"])
def test_output_never_over_the_runs_own_files(workdir, target):
    (workdir / "sub").mkdir()
    before = _snapshot(workdir)
    status, _, err = irexec_cli("run", workdir / "base.xml", "--input",
                                f"data={workdir / 'data.npy'}", "--output", workdir / target)
    assert status == 2 and "never writes over its inputs" in err, err
    assert _snapshot(workdir) == before


def test_output_through_a_symlink_to_the_model_is_refused(workdir):
    os.symlink(workdir / "base.xml", workdir / "link.npz")
    status, _, err = irexec_cli("run", workdir / "base.xml", "--output", workdir / "link.npz")
    assert status == 2, err


def test_output_dir_never_the_input_dir(workdir):
    inputs = workdir / "in"
    inputs.mkdir()
    np.savez(inputs / "a.npz", data=np.ones((2, 3), np.float32))
    status, _, err = irexec_cli("run", workdir / "base.xml", "--input-dir", inputs,
                                "--output-dir", inputs)
    assert status == 2, err


def test_error_mid_run_leaves_no_output(workdir, monkeypatch):
    from irexec.runtime.compiled_model import CompiledModel

    def broken(self, *args, **kwargs):
        raise irexec.IRError.make("IR308", "refused for the test")

    monkeypatch.setattr(CompiledModel, "_run", broken)
    before = _snapshot(workdir)
    status, _, err = irexec_cli("run", workdir / "base.xml", "--output", workdir / "out.npz",
                                "--input", f"data={workdir / 'data.npy'}")
    assert status == 1 and "refused for the test" in err
    assert _snapshot(workdir) == before


def test_interrupt_while_writing_leaves_no_partial_file(workdir):
    """A real SIGINT arrives after half the archive is written: no output, no temporary file,
    the inputs untouched, exit 130."""
    script = f"""
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # (even where SIGINT came ignored)
sys.path.insert(0, {str(ROOT)!r})
import irexec.cli.run as run
real = run.write_npz
def half(f, arrays):
    f.write(b"PK" + bytes(1000))
    f.flush()
    os.kill(os.getpid(), signal.SIGINT)
    real(f, arrays)
run.write_npz = half
from irexec.cli.main import main
sys.exit(main(sys.argv[1:]))
"""
    before = _snapshot(workdir)
    result = subprocess.run([sys.executable, "-c", script, "run", str(workdir / "base.xml"),
                             "--input", f"data={workdir / 'data.npy'}", "--output",
                             str(workdir / "out.npz")], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 130, result.stderr
    assert "Traceback" not in result.stderr
    assert _snapshot(workdir) == before  # no out.npz, no .irexec-*.npz left behind


def test_saved_output_follows_the_umask(workdir):
    out = workdir / "out.npz"
    old = os.umask(0o022)
    try:
        status, _, err = irexec_cli("run", workdir / "base.xml", "--output", out)
    finally:
        os.umask(old)
    assert status == 0, err
    assert out.stat().st_mode & 0o777 == 0o644


# --- threads ----------------------------------------------------------------------------------------

def test_one_compiled_model_from_eight_threads():
    """8 threads x 200 calls with different inputs give exactly what sequential calls give (the
    sample's tensors are big enough for the kernels to reuse pooled memory)."""
    path = ROOT / "samples" / "reverse_sequence.xml"
    model = irexec.read_model(path)
    compiled = irexec.compile_model(model)
    name = compiled.input_names()[0]
    shape = tuple(model.parameters[0].outputs[0].partial_shape.to_shape())
    rng = np.random.default_rng(7)
    inputs = [rng.standard_normal(shape).astype(np.float32) for _ in range(16)]
    expected = [{k: v.copy() for k, v in compiled({name: x}).items()} for x in inputs]
    failures = []

    def worker(t: int):
        for i in range(200):
            k = (t * 7 + i) % len(inputs)
            got = compiled({name: inputs[k]})
            if any(not np.array_equal(got[n], expected[k][n]) for n in got):
                failures.append((t, i))
            # Keep some results alive across calls, drop others, as callers do.
            if i % 3:
                del got

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    for x, want in zip(inputs, expected):
        assert all(np.array_equal(compiled({name: x})[n], want[n]) for n in want)


# === Hardening, round two (issue 15): each class of bug, one section =============================

def _run(*args, env=None, timeout=120, input_text=None) -> subprocess.CompletedProcess:
    """``python -m irexec ARGS`` in a subprocess using this checkout (a signal or an encoding
    can only be seen from outside)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("IREXEC_")}
    environ["PYTHONPATH"] = str(ROOT)
    environ.update(env or {})
    return subprocess.run([sys.executable, "-m", "irexec", *map(str, args)], cwd=ROOT,
                          env=environ, capture_output=True, text=True, timeout=timeout,
                          input=input_text)


def _write(folder: Path, xml: str, name: str = "m", weights: bytes | None = None) -> Path:
    path = folder / f"{name}.xml"
    path.write_text(xml, encoding="utf-8")
    path.with_suffix(".bin").write_bytes((HOSTILE / "base.bin").read_bytes() if weights is None
                                         else weights)
    return path


def _timed(function, *args):
    start = time.monotonic()
    result = function(*args)
    return result, time.monotonic() - start


# --- 1. attribute floods: linear in the number of attributes, one summary ----------------------

FLOOD = 100_000


@pytest.mark.parametrize("where", ["data", "rt_info"])
def test_an_attribute_flood_reads_in_linear_time(where, tmp_path):
    """100,000 attributes on one element took 97 s (lxml's items() and attrib look each one up
    again by name); the unknown ones are five diagnostics and one summary, not 100,000."""
    flood = " ".join(f'a{i}="{i}"' for i in range(FLOOD))
    if where == "data":
        xml = BASE.replace('batch_axis="0"', f'batch_axis="0" {flood}')
    else:
        xml = BASE.replace("</layers>", f"</layers><rt_info><attribute {flood}/></rt_info>")
    path = _write(tmp_path, xml)
    (model, diags), took = _timed(check_model, path)
    assert took < 20, took  # about 1 s here; quadratic reading took minutes
    unknown = [d for d in diags if d.code == "IR310"]
    if where == "data":
        assert len(unknown) == 6 and "99995 more attributes" in unknown[-1].message
        node = next(n for n in model.nodes if n.name == "reversed")
        assert len(node.extra_attrs) == FLOOD and node.extra_attrs["a77777"] == "77777"
    else:
        assert unknown == [] and len(model.rt_info[0].attrs) == FLOOD
    out = tmp_path / "saved.xml"
    _, took = _timed(irexec.save_model, model, out)
    assert took < 20, took  # lxml's set() checked each attribute against the others
    saved, _ = check_model(out)
    assert [n.extra_attrs for n in saved.nodes] == [n.extra_attrs for n in model.nodes]


def test_attributes_helper_keeps_order_names_and_namespaces():
    from lxml import etree

    from irexec.io.ir_reader import FEW_ATTRIBUTES, attributes

    for count in (0, 3, FEW_ATTRIBUTES, FEW_ATTRIBUTES + 1, 500):
        attrs = "".join(f' a{i}="v{i}&#10;&amp;"' for i in range(count))
        element = etree.fromstring(f'<x xmlns:q="urn:q" q:z="9"{attrs}/>')
        assert attributes(element) == dict(element.items())
        assert list(attributes(element)) == element.keys()


def test_unknown_attributes_up_to_five_are_reported_one_by_one(tmp_path):
    names = [f"extra{i}" for i in range(7)]
    for count in (5, 6, 7):
        xml = BASE.replace('batch_axis="0"', 'batch_axis="0" ' + " ".join(
            f'{n}="1"' for n in names[:count]))
        diags = [d for d in check_model(_write(tmp_path, xml))[1] if d.code == "IR310"]
        shown = [d.message for d in diags]
        assert len(diags) == min(count, 6)
        assert all(f"'{n}'" in " ".join(shown) for n in names[:count])
        if count > 5:
            assert shown[-1].startswith(f"{count - 5} more attributes")


def test_many_edges_into_a_layer_with_many_ports_are_linear(tmp_path):
    """A Result-like fan: one layer whose 50,000 input ports are numbered backwards (so the
    numbering shortcut never holds), each with an edge: the port was searched for per edge."""
    from tests.helpers_ir import net, parameter

    n = 50_000
    ports = "".join(f'<port id="{n - 1 - i}"><dim>2</dim></port>' for i in range(n))
    xml = net([parameter(0, "x", "2", dims=[2]),
               f'<layer id="1" name="sink" type="Result" version="opset1"><input>{ports}'
               f"</input></layer>"],
              [(0, 0, 1, i) for i in range(n)])
    (_, diags), took = _timed(check_model, _write(tmp_path, xml))
    assert took < 20, took
    assert {d.code for d in diags} <= {"IR108", "IR303", "IR307"}  # nothing about the edges


@pytest.mark.parametrize("kind, code", [("duplicate port ids", "IR104"),
                                        ("bad port ids", "IR104"), ("bad dims", "IR105"),
                                        ("bad precisions", "IR106"), ("broken edges", "IR201")])
def test_many_problems_of_one_kind_on_one_layer_are_summarised(kind, code, tmp_path):
    """20,000 ports with a bad id on one layer gave 20,000 lines (40,000 with their help): past
    ten of one code on one layer (or outside any layer), one line counts the rest."""
    n = 20_000
    port = {"duplicate port ids": lambda i: '<port id="0" precision="FP32"><dim>2</dim></port>',
            "bad port ids": lambda i: '<port id="x" precision="FP32"><dim>2</dim></port>',
            "bad dims": lambda i: f'<port id="{i}" precision="FP32"><dim>x</dim></port>',
            "bad precisions": lambda i: f'<port id="{i}" precision="FP99"><dim>2</dim></port>',
            "broken edges": lambda i: ""}[kind]
    head = '<port id="0" precision="FP32" names="data">'
    xml = BASE.replace(head, "".join(port(i) for i in range(1, n)) + head)
    if kind == "broken edges":
        xml = BASE.replace("<edges>", "<edges>" + '<edge from-layer="x" from-port="0" '
                                                  'to-layer="2" to-port="0"/>' * n)
    (_, diags), took = _timed(check_model, _write(tmp_path, xml))
    mine = [d for d in diags if d.code == code]
    assert len(mine) == 11, [str(d) for d in diags][:20]
    assert f"{n - 1 - 10 if kind != 'broken edges' else n - 10} more problems of this kind" in \
        mine[-1].message
    assert took < 30, took


# --- 2. one-line files: columns without quadratic time -------------------------------------------

def _one_line_chain(n: int, bad_every: int) -> str:
    layers = "".join(
        f'<layer id="{i}" name="c{i}" type="Convert" version="opset1"><data destination_type="f32"'
        f'{" colour=" + chr(34) + "red" + chr(34) if i % bad_every == 0 else ""}/><input>'
        f'<port id="0"><dim>2</dim></port></input><output><port id="1" precision="FP32">'
        f"<dim>2</dim></port></output></layer>" for i in range(1, n + 1))
    edges = "".join(f'<edge from-layer="{i}" from-port="{1 if i else 0}" to-layer="{i + 1}" '
                    f'to-port="0"/>' for i in range(n + 1))
    return ('<?xml version="1.0"?><net name="one" version="11"><layers><layer id="0" name="x" '
            'type="Parameter" version="opset1"><data shape="2" element_type="f32"/><output>'
            '<port id="0" precision="FP32"><dim>2</dim></port></output></layer>' + layers +
            f'<layer id="{n + 1}" name="out" type="Result" version="opset1"><input><port id="0">'
            f"<dim>2</dim></port></input></layer></layers><edges>{edges}</edges></net>")


def test_one_line_file_with_a_warning_on_every_layer(tmp_path):
    """20,000 layers on one line, each with a warning: 26 s before (the line searched and
    decoded again per diagnostic); each column is still the layer's ``<data``."""
    xml = _one_line_chain(20_000, 1)
    path = _write(tmp_path, xml)
    (_, diags), took = _timed(check_model, path)
    assert took < 30, took
    warnings = [d for d in diags if d.code == "IR310"]
    assert len(warnings) == 20_000
    starts = [m.start() + 1 for m in re.finditer("<data ", xml)][1:]  # the Parameter's first
    assert [d.location.column for d in warnings] == starts


def test_one_line_file_of_megabytes_with_scattered_warnings(tmp_path):
    """A 6 MB one-line file with 2,000 unknown attributes scattered through it (the 47 MB one
    with 5,000 took 178 s); non-ASCII names before them keep columns in characters."""
    xml = _one_line_chain(30_000, 15).replace('name="c1"', 'name="c1\u00e9\u4e2d"')
    path = _write(tmp_path, xml)
    assert path.stat().st_size > 5_000_000
    (_, diags), took = _timed(check_model, path)
    assert took < 30, took
    warnings = [d for d in diags if d.code == "IR310"]
    assert len(warnings) == 2_000
    assert [d.location.column for d in warnings] == [
        m.start() + 1 for m in re.finditer('<data destination_type="f32" colour', xml)]


def test_columns_asked_out_of_order_are_right():
    """The reader asks in document order; the index must not depend on it."""
    import random as random_module

    from lxml import etree

    from irexec.io.columns import Columns

    rnd = random_module.Random(5)
    parts = []
    for i in range(300):
        parts.append(f'<layer id="{i}"><data a="\u00e9"/><port><dim>1</dim><dim>2</dim></port>'
                     f"</layer>" + ("\n" if rnd.random() < 0.05 else ""))
    text = "<net><layers>" + "".join(parts) + "</layers></net>"
    data = text.encode()
    root = etree.fromstring(data)
    elements = list(root.iter())
    expected = {}
    for e in elements:
        line = text.split("\n")[e.sourceline - 1]
        same = [x for x in elements if x.sourceline == e.sourceline and x.tag == e.tag]
        at = [m.start() + 1 for m in re.finditer(f"<{e.tag}(?=[ />])", line)]
        expected[e] = at[same.index(e)]
    columns = Columns(data)
    order = elements[:]
    rnd.shuffle(order)
    for e in order:
        assert columns.of(e) == expected[e], (e.tag, e.sourceline)


# --- 3. and 13. paths that are not regular files; symbolic links ---------------------------------

def _in_thread(function, fifo: Path, seconds: float = 20):
    """Run ``function`` where a blocking open of ``fifo`` would hang: if it is still running
    after ``seconds``, open the FIFO for writing to release it, and fail."""
    found = []

    def work():
        try:
            found.append((True, function()))
        except BaseException as e:  # handed to the test's thread
            found.append((False, e))

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        with open(fifo, "wb"):
            pass
        worker.join(5)
        pytest.fail(f"opening {fifo.name} blocked")
    ok, value = found[0]
    if not ok:
        raise value
    return value


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("option", ["--input", "model", "--weights", "onnx model",
                                    "model named .npz"])
def test_no_option_opens_a_fifo(option, fifo, tmp_path):
    """--input NAME=FIFO blocked forever (inputs were opened without a check)."""
    base = tmp_path / "base.xml"
    base.write_bytes((HOSTILE / "base.xml").read_bytes())
    base.with_suffix(".bin").write_bytes((HOSTILE / "base.bin").read_bytes())
    if option == "--input":
        args = ("run", base, "--input", f"data={fifo}")
    elif option == "model":
        args = ("run", fifo)
    elif option == "--weights":
        args = ("run", base, "--weights", fifo)
    elif option == "onnx model":
        os.rename(fifo, fifo.with_suffix(".onnx"))
        fifo = fifo.with_suffix(".onnx")
        args = ("run", fifo)
    else:
        os.rename(fifo, fifo.with_suffix(".npz"))
        fifo = fifo.with_suffix(".npz")
        args = ("run", base, "--input", f"data={fifo}")
    status, _, err = _in_thread(lambda: irexec_cli(*args), fifo)
    assert status == 1 and err.startswith("error: ") and len(err.splitlines()) == 1, err
    assert "FIFO" in err and "regular files only" in err


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_devices_are_refused_everywhere(device, tmp_path):
    base = _write(tmp_path, BASE, "base")
    for args in (("run", base, "--input", f"data={device}"), ("run", device),
                 ("validate", device), ("run", base, "--weights", device)):
        status, out, err = irexec_cli(*args)
        assert status == 1 and "character device" in out + err, (args, out, err)


def test_npz_members_of_input_dir_are_read_from_regular_files_only(tmp_path, fifo):
    from irexec.io import npy

    with pytest.raises(OSError) as caught:
        _in_thread(lambda: npy.load_npz(fifo), fifo)
    assert "FIFO" in str(caught.value)


def _symlinked_model(tmp_path) -> Path:
    """model.xml beside a model.bin that links to a file outside the folder."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.bin").write_bytes((HOSTILE / "base.bin").read_bytes())
    upload = tmp_path / "upload"
    upload.mkdir()
    (upload / "model.xml").write_bytes((HOSTILE / "base.xml").read_bytes())
    os.symlink(outside / "secret.bin", upload / "model.bin")
    return upload / "model.xml"


def test_symlinks_are_followed_unless_refused(tmp_path, monkeypatch):
    path = _symlinked_model(tmp_path)
    status, _, err = irexec_cli("run", path)
    assert status == 0, err  # the file system's word, as for any program
    status, _, err = irexec_cli("run", "--no-follow-symlinks", path)
    assert status == 1 and "symbolic link" in err and "model.bin" in err, err
    monkeypatch.setenv("IREXEC_NO_SYMLINKS", "1")
    status, out, _ = irexec_cli("validate", path)
    assert status == 1 and "IR501" in out and "symbolic link" in out, out
    with pytest.raises(irexec.IRError) as caught:
        irexec.read_model(path)
    assert caught.value.code == "IR501"


def test_no_follow_symlinks_refuses_links_anywhere_on_the_path(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    _write(real, BASE, "model")
    os.symlink(real, tmp_path / "linked")
    os.symlink(real / "model.xml", tmp_path / "model.xml")
    for path in (tmp_path / "linked" / "model.xml", tmp_path / "model.xml"):
        status, _, err = irexec_cli("run", "--no-follow-symlinks", path)
        assert status == 1 and "symbolic link" in err, err
    status, _, err = irexec_cli("run", "--no-follow-symlinks", real / "model.xml")
    assert status == 0, err
    from irexec.io import files

    with files.no_symlinks():
        with pytest.raises(irexec.IRError) as caught:
            irexec.read_model(tmp_path / "linked" / "model.xml")
    assert caught.value.code == "IR001"
    irexec.read_model(tmp_path / "linked" / "model.xml")  # and followed again outside


def test_no_follow_symlinks_covers_inputs(tmp_path):
    base = _write(tmp_path, BASE, "base")
    np.save(tmp_path / "data.npy", np.ones((2, 3), np.float32))
    os.symlink(tmp_path / "data.npy", tmp_path / "link.npy")
    status, _, err = irexec_cli("run", "--no-follow-symlinks", base, "--input",
                                f"data={tmp_path / 'link.npy'}")
    assert status == 1 and "symbolic link" in err, err


# --- 4. XML memory: estimated before parsing, held to the budget ---------------------------------

def _rt_info_flood(size: int) -> str:
    unit = '<attribute name="a" version="0" value="x"/>'
    return BASE.replace("</layers>", "</layers><rt_info>" + unit * (size // len(unit)) +
                        "</rt_info>", 1)


def test_xml_over_the_budget_is_refused_before_parsing(tmp_path):
    """21 MB of rt_info took 804 MB under --memory-budget 64M; now a 3 MB one (about 100 MB
    to parse) is refused under 64M, before libxml2 sees it, and read under the default."""
    path = _write(tmp_path, _rt_info_flood(3_000_000))
    with budget.limit(64 << 20):
        (model, diags), took = _timed(check_model, path)
    assert model is None and [d.code for d in diags] == ["IR109"]
    assert "XML file" in diags[0].message and "64.0 MiB" in diags[0].message
    assert took < 2
    model, diags = check_model(path)
    assert model is not None and not [d for d in diags if d.is_error]
    result = _run("run", path, "--memory-budget", "64M")
    assert result.returncode == 1 and "IR109" not in result.stderr  # text, not codes
    assert result.stderr.startswith("error: ") and "memory budget" in result.stderr


def test_tiny_budgets_still_read_small_models():
    """The XML may always take a few MiB: a tiny budget refuses tensors, not small files."""
    with budget.limit(1024):
        assert [d for d in check_model(SAMPLE)[1] if d.is_error] == []
    with budget.limit(100):
        errors = [d for d in check_model(SAMPLE)[1] if d.is_error]
    assert errors and all(d.code == "IR109" and "XML" not in d.message for d in errors)


XML_SHAPES = {
    "rt_info_attributes": lambda n: _rt_info_flood(n),
    "empty_elements": lambda n: BASE.replace("</layers>", "</layers><rt_info>" + "<a/>" * (n // 4)
                                             + "</rt_info>", 1),
    "text_elements": lambda n: BASE.replace("</layers>", "</layers><rt_info>" +
                                            "<a>x</a>" * (n // 8) + "</rt_info>", 1),
    "attribute_flood": lambda n: BASE.replace('batch_axis="0"', 'batch_axis="0" ' + " ".join(
        f'a{i:06x}="1"' for i in range(n // 11))),
    "layer_chain": lambda n: _one_line_chain(n // 330, 1_000_000).replace("><", ">\n<"),
    "long_values": lambda n: BASE.replace("</layers>", "</layers><rt_info>" + (
        '<attribute name="a" value="' + "v" * 100_000 + '"/>') * (n // 100_030) + "</rt_info>"),
}


@pytest.mark.parametrize("shape", sorted(XML_SHAPES))
def test_xml_memory_estimate_bounds_the_peak(shape, tmp_path):
    """The estimate irexec refuses files by is at least the peak memory reading really takes,
    for every kind of markup (measured in a fresh process; docs/robustness.md has figures)."""
    from irexec.io import limits

    path = _write(tmp_path, XML_SHAPES[shape](2_000_000))
    estimate = limits.xml_cost(path.read_bytes())
    script = f"""
import resource, sys
sys.path.insert(0, {str(ROOT)!r})
from irexec.api import check_model
from irexec import budget
def status(key):  # this process's own (getrusage's maxrss may be the parent's after exec)
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key))
check_model({str(HOSTILE / "base.xml")!r})  # what the first model costs whatever its size
before = status("VmRSS:")  # now, not the high-water mark importing left
with budget.limit(1 << 40):
    model, diags = check_model({str(path)!r})
assert model is not None, [str(d) for d in diags]
print(status("VmHWM:") - before)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    peak = int(result.stdout)
    assert estimate >= peak, (estimate, peak)
    assert estimate < 3 * peak + (8 << 20), (estimate, peak)  # and not wildly above it


def test_running_out_of_memory_while_parsing_is_its_own_error(tmp_path):
    """libxml2 out of memory said "malformed XML: unknown error" (IR002)."""
    path = _write(tmp_path, BASE.replace("</layers>", "</layers><rt_info>" + "<a/>" * 1_500_000
                                         + "</rt_info>", 1))
    script = f"""
import resource, sys
sys.path.insert(0, {str(ROOT)!r})
import irexec
from irexec import budget
from irexec.io import limits
with open("/proc/self/status") as f:
    mapped = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
size = len(open({str(path)!r}, "rb").read())
limit = mapped + size * 4 + (32 << 20)  # room for the bytes, not for the tree
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
try:
    with budget.limit(1 << 40):
        irexec.read_model({str(path)!r})
except irexec.IRError as e:
    print(e.code, e.diagnostics[0].message)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("IR109 the machine ran out of memory parsing"), \
        result.stdout


# --- 5. the .bin changed or truncated after reading ----------------------------------------------

def test_truncating_the_bin_after_compiling_is_no_signal(tmp_path):
    """The .bin was memory-mapped: truncating it under a compiled model killed the process
    with SIGBUS at the next call. Now a run needs nothing from the file."""
    model = ROOT / "samples" / "reverse_sequence.xml"
    for name in ("reverse_sequence.xml", "reverse_sequence.bin"):
        (tmp_path / name).write_bytes((ROOT / "samples" / name).read_bytes())
    script = f"""
import os, sys
sys.path.insert(0, {str(ROOT)!r})
import numpy as np
import irexec
from irexec.runtime.inputs import make_inputs
path = {str(tmp_path / "reverse_sequence.xml")!r}
model = irexec.read_model(path)
compiled = irexec.compile_model(model)
inputs = make_inputs(model, {{}}, 0)
before = compiled(inputs)
os.truncate(path[:-4] + ".bin", 0)
with open(path[:-4] + ".bin", "r+b") as f:
    f.write(b"\\xff" * 3)
after = compiled(inputs)
assert all(np.array_equal(before[k], after[k]) for k in before)
print("same", len(before))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, (result.returncode, result.stderr)  # -7 was SIGBUS
    assert result.stdout.startswith("same")
    del model


def test_unused_weights_are_never_read_and_a_changed_bin_is_noticed(tmp_path):
    """A Const no layer reads costs nothing (the .bin is not mapped, and it is not copied
    either); asked for after the file changed, it is IR502, not bytes of another file."""
    layer = ('<layer id="9" name="unused" type="Const" version="opset1"><data element_type="f32" '
             'shape="67108864" offset="16" size="268435456"/><output><port id="0" '
             'precision="FP32"><dim>67108864</dim></port></output></layer>')
    path = _write(tmp_path, BASE.replace("</layers>", layer + "</layers>"))
    os.truncate(path.with_suffix(".bin"), 16 + (1 << 28))  # 256 MiB, sparse
    script = f"""
import os, sys
sys.path.insert(0, {str(ROOT)!r})
import irexec
from irexec.runtime.inputs import make_inputs
def resident():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmRSS:"))
before = resident()
model = irexec.read_model({str(path)!r})
compiled = irexec.compile_model(model)
compiled(make_inputs(model, {{}}, 0))
grown = resident() - before
os.truncate({str(path.with_suffix(".bin"))!r}, 16 + (1 << 20))
unused = next(n for n in model.nodes if n.name == "unused")
try:
    unused.value
    print(grown, "read")
except irexec.IRError as e:
    print(grown, e.code)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    grown, outcome = result.stdout.split()
    assert int(grown) < (32 << 20) and outcome == "IR502", result.stdout


def test_a_bin_that_shrinks_while_it_is_read_is_ir502(tmp_path, monkeypatch):
    from irexec.io import weights as weights_module

    path = _write(tmp_path, BASE)
    real = weights_module.Weights._pread

    def shrink_then_read(self, fd, offset, size):
        os.truncate(self.path, 4)
        return real(self, fd, offset, size)

    monkeypatch.setattr(weights_module.Weights, "_pread", shrink_then_read)
    errors = [d for d in check_model(path)[1] if d.is_error]
    assert [d.code for d in errors] == ["IR502"] and "shrank" in errors[0].message
    assert errors[0].location.layer_name == "seq_lengths"


def test_a_bin_replaced_after_reading_is_never_read_as_the_old_one(tmp_path):
    """What a run needs was read with the model; a payload asked for after the file changed
    (size, time or inode) is IR502, never bytes of the new file taken for the old."""
    from irexec.io.weights import Weights

    path = _write(tmp_path, BASE)
    model = irexec.read_model(path)
    weights_path = path.with_suffix(".bin")
    weights_path.write_bytes(bytes(16))  # same size, other bytes
    compiled = irexec.compile_model(model)
    assert compiled(make_inputs(model, {}, 0))["reversed"].shape == (2, 3)
    i64 = next(n for n in model.nodes if n.name == "seq_lengths").attrs["element_type"]
    weights = Weights(str(weights_path))
    weights.check(i64, (2,), 0, 16)
    weights.close()
    os.utime(weights_path, ns=(1, 1))
    with pytest.raises(irexec.IRError) as caught:
        weights.later(i64, (2,), 0, 16, None)()
    assert caught.value.code == "IR502" and "changed or replaced" in str(caught.value)


def test_weights_read_are_held_to_the_budget_in_all(tmp_path):
    """Consts whose payloads overlap could make a small .bin cost any amount of memory: 200
    Consts of 1 MiB, each starting a byte after the last, in a file of 1 MiB + 200 bytes."""
    layers = []
    for i in range(200):
        layers.append(f'<layer id="{10 + i}" name="w{i}" type="Const" version="opset1"><data '
                      f'element_type="u8" shape="1048576" offset="{i}" size="1048576"/><output>'
                      f'<port id="0" precision="U8"><dim>1048576</dim></port></output></layer>'
                      f'<layer id="{1000 + i}" name="r{i}" type="Result" version="opset1"><input>'
                      f'<port id="0"><dim>1048576</dim></port></input></layer>')
    edges = "".join(f'<edge from-layer="{10 + i}" from-port="0" to-layer="{1000 + i}" '
                    f'to-port="0"/>' for i in range(200))
    xml = BASE.replace("</layers>", "".join(layers) + "</layers>").replace(
        "</edges>", edges + "</edges>")
    weights = (HOSTILE / "base.bin").read_bytes() + bytes((1 << 20) + 200)
    path = _write(tmp_path, xml, weights=weights)
    with budget.limit(64 << 20):
        with pytest.raises(irexec.IRError) as caught:  # compiling reads what a run needs
            irexec.compile_model(irexec.read_model(path))
    assert caught.value.code == "IR109" and "weights file in all" in str(caught.value)


# --- 6. strings: what a string tensor holds, checked when read, printed safely --------------------

def _string_model(tmp_path, texts: list[bytes]) -> Path:
    import struct

    ends = [0]
    for t in texts:
        ends.append(ends[-1] + len(t))
    payload = struct.pack("<i", len(texts)) + struct.pack(f"<{len(ends)}i", *ends) + b"".join(texts)
    from tests.helpers_ir import layer, net, parameter, result

    n = len(texts)
    xml = net([layer(0, "s", "Const", outputs=[[n]], precision="STRING",
                     data={"element_type": "string", "shape": n, "offset": 0,
                           "size": len(payload)}),
               parameter(1, "x", "2", "string", dims=[2], names="x"),
               result(2, "out", [n]), result(3, "echo", [2])],
              [(0, 0, 2, 0), (1, 0, 3, 0)])
    return _write(tmp_path, xml, weights=payload)


def test_string_const_that_is_not_utf8_runs_and_prints(tmp_path):
    """validate passed it and run exited 3 in the checksum: a string is a byte string, as in
    OpenVINO, and its checksum is that of its bytes."""
    import zlib

    texts = [b"ok", b"\xff\xfebad", b"\xc3", b"\x1b[31mred"]
    path = _string_model(tmp_path, texts)
    assert [d for d in check_model(path)[1] if d.is_error] == []
    status, out, err = irexec_cli("run", path, "--output", tmp_path / "out.npz")
    assert status == 0, err
    crc = 0
    for t in texts:
        crc = zlib.crc32(t, zlib.crc32(len(t).to_bytes(4, "little"), crc))
    assert f"{crc:08x}" in out
    assert "\x1b" not in out  # the escape is shown, not sent to the terminal
    saved = np.load(tmp_path / "out.npz")["out"]
    assert [s.encode("utf-8", "surrogateescape") for s in saved.tolist()] == texts


def test_string_input_with_a_lone_surrogate_is_refused_before_anything_is_written(tmp_path):
    path = _string_model(tmp_path, [b"a"])
    np.save(tmp_path / "x.npy", np.array(["ok", "a\ud800b"]))
    status, _, err = irexec_cli("run", path, "--input", f"x={tmp_path / 'x.npy'}", "--output",
                                tmp_path / "out.npz")
    assert status == 1 and "IR603" not in err and "U+D800" in err and "element [1]" in err, err
    assert not (tmp_path / "out.npz").exists()
    np.save(tmp_path / "y.npy", np.array(["ok", "raw \udcff byte"]))  # a byte that is not UTF-8
    status, out, err = irexec_cli("run", path, "--input", f"x={tmp_path / 'y.npy'}")
    assert status == 0, err


def test_writing_a_string_that_holds_no_bytes_is_an_irerror(tmp_path):
    from irexec.builder import ModelBuilder

    b = ModelBuilder("s")
    b.result(b.constant(np.array(["\ud800"], dtype=object), "string"), name="out")
    with pytest.raises(irexec.IRError) as caught:
        irexec.save_model(b.build(), tmp_path / "s.xml")
    assert caught.value.code == "IR506"


# --- 7. and 8. ranks numpy cannot hold, dims no array can have ---------------------------------

def test_rank_65_is_a_diagnostic_not_a_crash(tmp_path):
    """A Const of 65 dims made validate exit 3 (empty SARIF) and read_model raise ValueError;
    a Parameter of 65 dims passed validate and exited 3 in run."""
    for name in ("rank_65_const.xml", "rank_65_parameter.xml"):
        with pytest.raises(irexec.IRError) as caught:
            irexec.read_model(HOSTILE / name)
        assert caught.value.code == "IR114"
        status, out, err = irexec_cli("validate", "--format", "sarif", HOSTILE / name)
        assert status == 1 and '"IR114"' in out, err


def test_every_dim_is_bounded_not_only_the_product():
    assert budget.shape_problem((2**62, 0), 4, 1 << 30) is not None
    assert budget.shape_problem((0, 2**40), 1, 1 << 30) is not None
    assert budget.shape_problem((0, 1 << 20), 4, 1 << 30) is None
    assert budget.shape_problem((1,) * 64, 4, 1 << 30) is None
    assert budget.problem_code((1,) * 65) == "IR114" and budget.problem_code((2, 0)) == "IR109"
    with budget.limit(1 << 30):
        with pytest.raises(irexec.IRError) as caught:
            budget.check_shape((0, 2**62), 4, "input 'x'")
    assert caught.value.code == "IR109"


def test_huge_times_zero_never_reaches_numpy(tmp_path):
    """[2**62, 0] f32 passed the budget (0 bytes), then numpy's "array is too big" exited 3."""
    for name in ("dims_huge_times_zero.xml", "const_huge_times_zero.xml"):
        for command in ("validate", "run"):
            status, _, err = irexec_cli(command, HOSTILE / name)
            assert status == 1 and "internal error" not in err, err
        with pytest.raises(irexec.IRError) as caught:
            irexec.read_model(HOSTILE / name)
        assert caught.value.code == "IR109"


# --- 9. and 11. printing: any encoding, no forged lines -----------------------------------------

FORGED = 'x&#10;error: evil.xml:1: forged line&#13;&#x85;&#x202E;'


def _forged_model(tmp_path) -> Path:
    xml = (BASE.replace('name="data"', f'name="{FORGED}"', 1)
           .replace('names="data"', f'names="{FORGED}"')
           .replace('name="reversed"', f'name="r{FORGED}"')
           .replace('names="reversed"', f'names="o{FORGED}"')
           .replace('batch_axis="0"', f'batch_axis="0" z{"a" * 3}="1"'))
    return _write(tmp_path, xml)


def _assert_no_forged_line(text: str, allowed: tuple[str, ...]) -> None:
    for line in text.splitlines():
        assert not line.startswith("error: evil.xml"), text
        assert line.startswith(allowed), (line, text)
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]", line), repr(line)


def test_names_cannot_forge_lines(tmp_path):
    """A layer named ``x&#10;error: evil.xml:1: forged line&#13;`` printed its own error line
    in stderr and in validate's report."""
    path = _forged_model(tmp_path)
    status, out, err = irexec_cli("validate", path)
    assert status == 0 and "\\nerror: evil.xml" in out
    _assert_no_forged_line(out, (f"{path}:", "  help: ", "0 errors"))
    status, out, err = irexec_cli("run", path)
    assert status == 0, err
    _assert_no_forged_line(err, ("warning: ",))
    _assert_no_forged_line(out, ("inputs", "outputs", "  "))
    for command in (("info",), ("graph",), ("graph", "-f", "mermaid")):
        status, out, err = irexec_cli(*command, path)
        assert status == 0, err
        _assert_no_forged_line(out, ("", ))
    bad = _write(tmp_path, (tmp_path / "m.xml").read_text().replace(
        'type="ReverseSequence"', 'type="NoSuchOp"'), "bad")
    status, _, err = irexec_cli("run", bad)
    assert status == 1 and len(err.splitlines()) == 1, err
    _assert_no_forged_line(err, ("error: ",))
    error = pytest.raises(irexec.IRError, irexec.read_model, bad).value
    assert "\n" not in str(error) and "\\n" in str(error)


def test_printing_never_fails_on_an_encoding(tmp_path):
    """PYTHONIOENCODING=ascii and a non-ASCII output name exited 3."""
    path = _write(tmp_path, BASE.replace('names="reversed"', 'names="r\u00e9vers\u00e9 \u4e2d"')
                  .replace('name="data"', 'name="d\u00e9"'))
    for command in (("run",), ("info",), ("validate",), ("graph",)):
        result = _run(*command, path, env={"PYTHONIOENCODING": "ascii"})
        assert result.returncode == 0, (command, result.stderr)
        assert "internal error" not in result.stderr
    assert "r\\xe9vers\\xe9 \\u4e2d" in _run("run", path, env={"PYTHONIOENCODING": "ascii"}).stdout


# --- 10. bad options and environment values are usage errors -----------------------------------

@pytest.mark.parametrize("variable, value", [("IREXEC_MEMORY_BUDGET", "garbage"),
                                             ("IREXEC_MEMORY_BUDGET", "\uff11G"),
                                             ("IREXEC_NO_SYMLINKS", "maybe")])
def test_bad_environment_values_are_usage_errors(variable, value, monkeypatch):
    """IREXEC_MEMORY_BUDGET=garbage was IR109 located in the model ("fix the dims"), exit 1."""
    result = _run("validate", SAMPLE, env={variable: value})
    assert result.returncode == 2, result.stderr
    assert variable in result.stderr and "IR109" not in result.stdout
    assert "Traceback" not in result.stderr
    monkeypatch.setenv(variable, value)
    from irexec.errors import UsageError

    with pytest.raises(UsageError):
        irexec.read_model(SAMPLE)


# --- 12. numbers in IR text are ASCII, as OpenVINO reads them -----------------------------------

@pytest.mark.parametrize("kind, text", [
    ("int", "\uff14"), ("int", "\u0664"), ("int", "4\u3000"), ("int", "1_0"),
    ("uint", "\uff10"), ("int_list", "1,\u30002"), ("int_list", "1,\uff12"),
    ("float", "\uff11.5"), ("float_list", "0.5,\u30001"), ("shape", "2,\uff13"),
    ("partial_shape", "2,\uff13"), ("bool", "true\u3000"), ("element_type", "f3\uff12"),
    ("enum", "\u212aeep"),  # the Kelvin sign lowers to k
])
def test_ir_text_is_ascii(kind, text):
    """``<dim>４</dim>`` read as 4: Python's \\d, int(), float() and str.strip() take any
    script's digits and spaces."""
    from irexec.ir import text as ir_text
    from irexec.ir.attrs import KINDS

    with pytest.raises(ValueError):
        KINDS[kind].parse(text)
    assert KINDS[kind].parse(text.translate({0xff14: "4", 0x0664: "4", 0x3000: " ", 0xff10: "0",
                                             0xff12: "2", 0xff11: "1", 0xff13: "3",
                                             0x212a: "k"}).replace("_", "")) is not None
    for bad in ("\uff12", "2\u3000", "\u0662"):
        with pytest.raises(ValueError):
            ir_text.parse_dim_element(bad)
    with pytest.raises(ValueError):
        ir_text.parse_precision("FP32\u3000")


# --- 14. sub-graph bodies: nesting, port maps, back edges, loops that would not end -------------

SUBGRAPHS = ROOT / "tests" / "data" / "subgraphs"


def _subgraph(tmp_path, name: str, *edits, model: str = "m") -> Path:
    text = (SUBGRAPHS / f"{name}.xml").read_text(encoding="utf-8")
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    return _write(tmp_path, text, model, (SUBGRAPHS / f"{name}.bin").read_bytes())


def _scalar_npy(tmp_path, name: str, value, dtype) -> str:
    path = tmp_path / f"{name}.npy"
    np.save(path, np.array(value, dtype))
    return f"{name}={path}"


@pytest.mark.parametrize("depth, code", [(19, None), (21, "IR006"), (100, "IR006"),
                                         (3000, "IR006")])
def test_bodies_nested_thousands_deep_are_one_diagnostic(depth, code, tmp_path):
    """TensorIterators nested in each other's bodies: as deep as the XML depth cap allows they
    read, check, run and write back; deeper is one IR006 line (no RecursionError, no
    traceback, no hang), in validate and in run."""
    from tests.fuzz.engine import nested_bodies

    path = tmp_path / "nested.xml"
    path.write_bytes(nested_bodies(depth))
    (tmp_path / "nested.bin").write_bytes(b"")
    if code is None:
        model = irexec.read_model(path)
        out = irexec.compile_model(model)({"x": np.array([1.5, -2], np.float32)})
        assert np.array_equal(out["r"], np.array([1.5, -2], np.float32))
        irexec.save_model(model, tmp_path / "again.xml")
        assert irexec.read_model(tmp_path / "again.xml") is not None
        return
    for command in ("validate", "run"):
        (result, seconds) = _timed(_run, command, path)
        assert result.returncode == 1, result.stderr
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr
        lines = (result.stdout + result.stderr).splitlines()
        assert len([x for x in lines if " IR006 " in x or x.startswith("error:")]) == 1
        assert seconds < 30
    with pytest.raises(irexec.IRError) as info:
        irexec.read_model(path)
    assert [d.code for d in info.value.diagnostics] == ["IR006"]
    if depth == 21:
        assert "sub-graph body" in str(info.value)


@pytest.mark.parametrize("edits, code, words", [
    ([('part_size="1"', 'part_size="0"')], "IR110", "part_size must be at least 1"),
    ([('part_size="1"', 'part_size="-3"')], "IR110", "part_size must be at least 1"),
    ([('axis="0"', 'axis="99999999999999999999"')], "IR110", "64 bits"),
    ([('stride="1"', 'stride="0"')], "IR110", "stride must not be 0"),
])
def test_absurd_port_map_values_are_diagnostics(edits, code, words, tmp_path):
    """A part_size of 0 divided by zero (exit 3 in validate and run)."""
    path = _subgraph(tmp_path, "loop_concat", *edits)
    result = _run("validate", path)
    assert result.returncode == 1 and f"{code} " in result.stdout and words in result.stdout
    assert result.stdout.count(f" {code} ") == 1
    assert "Traceback" not in result.stderr


TI_INPUT = ('<input axis="1" external_port_id="0" internal_layer_id="0" start="-1" end="0" '
            'stride="-1" part_size="1" />')
TI_OUTPUT = ('<output axis="1" external_port_id="1" internal_layer_id="3" start="-1" end="0" '
             'stride="-1" part_size="1" />')


@pytest.mark.parametrize("edits, code, words", [
    ([(TI_INPUT, TI_INPUT.replace('end="0"', 'end="1000000000000"'))], "IR110", "outside its 4"),
    ([(TI_INPUT, TI_INPUT.replace('start="-1"', 'start="-1000000000000"'))], "IR110",
     "outside its 4"),
    ([(TI_INPUT, TI_INPUT.replace('part_size="1"', 'part_size="0"'))], "IR110",
     "part_size must be at least 1"),
    ([(TI_INPUT, TI_INPUT.replace('axis="1"', 'axis="1000000000000000000"'))], "IR306",
     "out of range"),
    # No sliced input: the concatenated output's start and end count the iterations.
    ([(TI_INPUT, '<input external_port_id="0" internal_layer_id="0" />'),
      (TI_OUTPUT, TI_OUTPUT.replace('start="-1" end="0"', 'start="0" end="1000000000000"'))],
     "IR115", "runs 1000000000000 iterations"),
])
def test_tensor_iterator_slices_outside_their_dim_are_refused(edits, code, words, tmp_path):
    """An end of 10**12 on a dim of 4 ran 10**12 iterations; a part_size of 0 was exit 3."""
    path = _subgraph(tmp_path, "tensor_iterator_reverse", *edits)
    for command in ("validate", "run"):
        result, seconds = _timed(_run, command, path)
        assert result.returncode == 1, (command, result.stdout, result.stderr)
        said = result.stdout if command == "validate" else result.stderr
        assert words in said and (command == "run" or f" {code} " in said), said
        assert "Traceback" not in result.stderr and seconds < 30


def test_tensor_iterator_with_nothing_to_count_runs_no_iteration(tmp_path):
    """Neither a sliced input nor a concatenated output: OpenVINO's count stays -1 and its
    reference runs no iteration; irexec ran the body forever."""
    path = _subgraph(tmp_path, "tensor_iterator_reverse",
                     (TI_INPUT, '<input external_port_id="0" internal_layer_id="0" />'),
                     (TI_OUTPUT, '<output external_port_id="1" internal_layer_id="3" />'))
    from irexec.ops.infrastructure import subgraph

    model = irexec.read_model(path) if False else None  # noqa: F841 (the body's dims differ)
    runs = []

    class Body:  # what the kernel sees of a body, counting its runs
        body = type("B", (), {"inputs": [], "outputs": [], "back_edges": []})()
        input_position, output_position, num_outputs = {}, {}, 0

        def __call__(self, values):
            runs.append(values)
            return {}

        def loop_code(self):  # no fast path: one call per iteration
            return None

    _, seconds = _timed(subgraph.run_iterations, (), Body())
    assert runs == [] and seconds < 5


@pytest.mark.parametrize("trip, words", [(10**15, "runs 1000000000000000 iterations"),
                                         (-1, "never ends"), (-5, "never ends")])
def test_loop_with_a_huge_or_negative_trip_count_is_refused_at_once(trip, words, tmp_path):
    """The body's condition is a constant true: the trip count alone says how long it runs (a
    10**15 trip count, or -1, hung `irexec run` and grew its memory without end)."""
    path = _subgraph(tmp_path, "loop_concat")
    result, seconds = _timed(_run, "run", path, "-i", _scalar_npy(tmp_path, "trip", trip,
                                                                   np.int64))
    assert result.returncode == 1, result.stderr
    assert words in result.stderr and "IREXEC_MAX_ITERATIONS" in result.stderr or \
        words == "never ends"
    assert "Traceback" not in result.stderr and seconds < 30
    assert result.stdout.count("error") + result.stderr.count("error:") == 1


def test_loop_whose_body_never_says_stop_hits_the_iteration_limit(tmp_path):
    """loop_early_exit doubles x until it passes the limit: x = 0 never does. The limit (here
    500) stops it, counted across nested loops; the memory budget stops its growing
    concatenated output first when that is smaller."""
    feeds = ["-i", _scalar_npy(tmp_path, "x", [0], np.float32),
             "-i", _scalar_npy(tmp_path, "limit", 1, np.float32)]
    model = SUBGRAPHS / "loop_early_exit.xml"
    result, seconds = _timed(lambda: _run("run", model, *feeds,
                                          env={"IREXEC_MAX_ITERATIONS": "500"}))
    assert result.returncode == 1 and "more than 500 body iterations" in result.stderr
    assert seconds < 30
    result = _run("run", model, *feeds, "--memory-budget", "1K")
    assert result.returncode == 1 and "memory budget" in result.stderr
    assert "after 257 iterations" in result.stderr  # 257 f32 values pass 1 KiB
    # The limit holds whatever the nesting: an inner loop's iterations count for the outer.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(budget.ITERATIONS_ENV, "10")
        with budget.counting_iterations() as outer:
            assert [outer() for _ in range(4)] == [None] * 4
            with budget.counting_iterations() as inner:
                assert [inner() for _ in range(6)] == [None] * 6
                assert "more than 10 body iterations" in inner()
        with budget.counting_iterations() as fresh:
            assert fresh() is None


@pytest.mark.parametrize("value", ["0", "-3", "lots", "1e6", "\uff15"])
def test_a_bad_iteration_limit_is_a_usage_error(value, tmp_path):
    path = _subgraph(tmp_path, "loop_concat")
    result = _run("run", path, env={"IREXEC_MAX_ITERATIONS": value})
    assert result.returncode == 2 and "IREXEC_MAX_ITERATIONS" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("edges, words", [
    ('<edge from-layer="7" to-layer="1" /><edge from-layer="8" to-layer="1" />',
     "is fed by the back edge from 7 already"),
    ('<edge from-layer="7" to-layer="1" /><edge from-layer="8" to-layer="0" />',
     "current iteration"),
    ('<edge from-layer="7" to-layer="1" /><edge from-layer="7" to-layer="1" />', None),
])
def test_back_edges_that_make_no_sense(edges, words, tmp_path):
    path = _subgraph(tmp_path, "loop_concat", ('<edge from-layer="7" to-layer="1" />', edges))
    from irexec.api import validate_file

    diags = validate_file(path)
    if words is None:  # the same edge twice says nothing new
        assert [d.code for d in diags] == []
        return
    assert [d.code for d in diags] == ["IR111"] and words in diags[0].message


@pytest.mark.parametrize("kind", ["port_map", "back_edges"])
def test_port_map_and_back_edge_floods_read_in_linear_time_with_one_summary(kind, tmp_path):
    """100,000 bad entries: five diagnostics one by one, then one line counting the rest."""
    text = (SUBGRAPHS / "loop_concat.xml").read_text(encoding="utf-8")
    if kind == "port_map":
        flood = '<input external_port_id="2" internal_layer_id="99" />' * 100_000
        text = text.replace("<port_map>", "<port_map>" + flood, 1)
    else:
        flood = "".join(f'<edge from-layer="{i}" to-layer="1" />' for i in range(100, 100_100))
        text = text.replace("<back_edges>", "<back_edges>" + flood, 1)
    path = _write(tmp_path, text, "m", (SUBGRAPHS / "loop_concat.bin").read_bytes())
    from irexec.api import validate_file

    diags, seconds = _timed(validate_file, path)
    assert len(diags) == 6 and "99995 more" in diags[-1].message
    assert seconds < 20
