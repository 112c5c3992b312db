"""Hostile input beyond the corpus (tests/test_hostile.py): entity attacks that must read no file,
inputs too big to keep in the repository, the memory budget, output files that must never be
half-written or written over the run's inputs, and one CompiledModel called from many threads."""

from __future__ import annotations

import os
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
sys.path.insert(0, {str(ROOT)!r})
import irexec.cli.run as run
real = run._write_npz
def half(f, arrays):
    f.write(b"PK" + bytes(1000))
    f.flush()
    os.kill(os.getpid(), signal.SIGINT)
    real(f, arrays)
run._write_npz = half
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
