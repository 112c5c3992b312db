"""``irexec run``: tables of inputs and outputs, seeds, --input, --output."""

from __future__ import annotations

import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

import irexec
from irexec.runtime.inputs import make_inputs
from tests.cli.conftest import SAMPLES, line_of, one_error, parse_errors, run_cli

CHAIN = SAMPLES / "convert_reverse_chain.xml"


def tables(stdout: str) -> dict[str, dict[str, dict]]:
    """The 'inputs' and 'outputs' tables: {table: {name: {type, shape, crc32, values}}}."""
    result: dict[str, dict[str, dict]] = {}
    current = None
    for line in stdout.splitlines():
        if not line.startswith(" "):
            head = line.split(" ", 1)[0].rstrip(":")
            current = head if head in ("inputs", "outputs") else None
            if current:
                result[current] = {}
            continue
        if current is None:
            continue
        name, type_, shape, crc, values = line.split(maxsplit=4)
        if name == "name":
            assert (type_, shape, crc, values) == ("type", "shape", "crc32", "values")
            continue
        result[current][name] = {"type": type_, "shape": shape, "crc32": crc, "values": values}
    return result


def crc(array: np.ndarray) -> str:
    return f"{zlib.crc32(np.ascontiguousarray(array).tobytes()):08x}"


def reference_chain(data: np.ndarray, lengths: np.ndarray) -> dict[str, np.ndarray]:
    """Convert to f32 -> ReverseSequence(batch_axis=1, seq_axis=0) -> Reverse(axis -1)."""
    x = data.astype(np.float32)
    seq = x.copy()
    for b in range(x.shape[1]):
        n = int(lengths[b])
        seq[:n, b, :] = x[:n, b, :][::-1]
    return {"reversed_sequences": seq, "flipped": seq[:, :, ::-1].copy()}


DATA = np.arange(60, dtype=np.int32).reshape(5, 4, 3) * 7 - 100
LENGTHS = np.array([5, 1, 3, 2], np.int64)


@pytest.fixture
def npy(tmp_path):
    def save(name: str, array) -> Path:
        path = tmp_path / f"{name}.npy"
        np.save(path, np.asarray(array))
        return path

    return save


# --- the tables --------------------------------------------------------------------------------

def test_run_sample_prints_inputs_and_outputs():
    proc = run_cli("run", CHAIN)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "Traceback" not in proc.stdout
    t = tables(proc.stdout)
    assert list(t["inputs"]) == ["data", "seq_lengths"]
    assert list(t["outputs"]) == ["reversed_sequences", "flipped"]
    assert {n: (r["type"], r["shape"]) for n, r in t["inputs"].items()} == {
        "data": ("i32", "[5,4,3]"), "seq_lengths": ("i64", "[4]")}
    assert {n: (r["type"], r["shape"]) for n, r in t["outputs"].items()} == {
        "reversed_sequences": ("f32", "[5,4,3]"), "flipped": ("f32", "[5,4,3]")}
    assert proc.stdout.index("inputs") < proc.stdout.index("outputs")
    assert "seed 0" in proc.stdout.splitlines()[0]


def test_printed_outputs_match_a_numpy_reference(npy):
    proc = run_cli("run", CHAIN, "--input", f"data={npy('d', DATA)}",
                   "--input", f"seq_lengths={npy('n', LENGTHS)}")
    assert proc.returncode == 0, proc.stderr
    t = tables(proc.stdout)
    assert t["inputs"]["data"]["crc32"] == crc(DATA)
    assert t["inputs"]["seq_lengths"]["crc32"] == crc(LENGTHS)
    assert t["inputs"]["seq_lengths"]["values"] == "[5, 1, 3, 2]"
    for name, expected in reference_chain(DATA, LENGTHS).items():
        assert t["outputs"][name]["crc32"] == crc(expected), name
        shown = [float(v) for v in t["outputs"][name]["values"].strip("[]., ").split(", ")
                 if v != "..."]
        assert shown == expected.reshape(-1)[:len(shown)].tolist()
        assert len(shown) >= 3


def test_same_seed_same_output_other_seed_other_inputs():
    first = run_cli("run", CHAIN, "--seed", "5")
    second = run_cli("run", CHAIN, "--seed", "5")
    other = run_cli("run", CHAIN, "--seed", "6")
    assert first.returncode == second.returncode == other.returncode == 0
    assert first.stdout == second.stdout
    a, b = tables(first.stdout), tables(other.stdout)
    assert a["inputs"]["data"]["crc32"] != b["inputs"]["data"]["crc32"]
    assert a["outputs"]["flipped"]["crc32"] != b["outputs"]["flipped"]["crc32"]
    assert "seed 5" in first.stdout and "seed 6" in other.stdout


def test_default_seed_is_zero():
    assert run_cli("run", CHAIN).stdout == run_cli("run", CHAIN, "--seed", "0").stdout


def test_generated_inputs_are_what_the_api_makes_and_valid(tmp_path):
    out = tmp_path / "out.npz"
    proc = run_cli("run", CHAIN, "--seed", "3", "--output", out)
    assert proc.returncode == 0, proc.stderr
    model = irexec.read_model(CHAIN)
    inputs = make_inputs(model, {}, 3)
    lengths = inputs["seq_lengths"]
    assert ((lengths >= 1) & (lengths <= 5)).all()  # within [1, dim(seq_axis=0)]
    t = tables(proc.stdout)
    assert t["inputs"]["data"]["crc32"] == crc(inputs["data"])
    assert t["inputs"]["seq_lengths"]["crc32"] == crc(lengths)
    with np.load(out) as saved:
        for name, expected in reference_chain(inputs["data"], lengths).items():
            np.testing.assert_array_equal(saved[name], expected)


# --- --input -----------------------------------------------------------------------------------

def test_input_by_layer_name_is_used_and_reflected(npy):
    proc = run_cli("run", CHAIN, "--input", f"seq_lengths={npy('n', LENGTHS)}")
    assert proc.returncode == 0, proc.stderr
    header = proc.stdout.splitlines()[0]
    assert "data" in header and "seq_lengths" not in header  # only data was generated
    t = tables(proc.stdout)
    assert t["inputs"]["seq_lengths"]["crc32"] == crc(LENGTHS)
    data = make_inputs(irexec.read_model(CHAIN), {"seq_lengths": LENGTHS}, 0)["data"]
    assert t["inputs"]["data"]["crc32"] == crc(data)
    assert t["outputs"]["flipped"]["crc32"] == crc(reference_chain(data, LENGTHS)["flipped"])


def test_input_by_tensor_name(edited, npy):
    model = edited({'names="data"': 'names="pixels,pixels_alias"',
                    'names="seq_lengths"': 'names="lengths"'})
    for data_key, lengths_key in (("pixels_alias", "lengths"), ("data", "seq_lengths"),
                                  ("pixels", "lengths")):
        proc = run_cli("run", model, "--input", f"{data_key}={npy('d', DATA)}",
                       "-i", f"{lengths_key}={npy('n', LENGTHS)}")
        assert proc.returncode == 0, proc.stderr
        t = tables(proc.stdout)
        assert "given" in proc.stdout.splitlines()[0]
        assert list(t["inputs"]) == ["data", "seq_lengths"]  # shown by layer name
        assert t["inputs"]["data"]["crc32"] == crc(DATA)
        expected = reference_chain(DATA, LENGTHS)
        assert t["outputs"]["flipped"]["crc32"] == crc(expected["flipped"])


def test_given_inputs_do_not_depend_on_the_seed(npy):
    args = ("run", CHAIN, "--input", f"data={npy('d', DATA)}", "--input",
            f"seq_lengths={npy('n', LENGTHS)}")
    a, b = run_cli(*args, "--seed", "1"), run_cli(*args, "--seed", "2")
    assert tables(a.stdout) == tables(b.stdout)


# --- --output ----------------------------------------------------------------------------------

def test_output_npz_equals_the_python_api(tmp_path, npy):
    out = tmp_path / "results" / "out.npz"
    out.parent.mkdir()
    proc = run_cli("run", CHAIN, "--input", f"data={npy('d', DATA)}",
                   "--input", f"seq_lengths={npy('n', LENGTHS)}", "--output", out)
    assert proc.returncode == 0, proc.stderr
    assert str(out) in proc.stdout
    api = irexec.compile_model(CHAIN)({"data": DATA, "seq_lengths": LENGTHS})
    expected = reference_chain(DATA, LENGTHS)
    with np.load(out, allow_pickle=False) as saved:
        assert sorted(saved.files) == sorted(api)
        for name in api:
            assert saved[name].dtype == api[name].dtype == np.float32
            np.testing.assert_array_equal(saved[name], api[name])
            np.testing.assert_array_equal(saved[name], expected[name])
    assert sorted(p.name for p in out.parent.iterdir()) == ["out.npz"]  # no temp file left


def test_output_replaces_an_existing_file(tmp_path):
    out = tmp_path / "out.npz"
    out.write_bytes(b"old contents")
    proc = run_cli("run", CHAIN, "-o", out)
    assert proc.returncode == 0, proc.stderr
    with np.load(out) as saved:
        assert set(saved.files) == {"reversed_sequences", "flipped"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.npz"]


@pytest.mark.parametrize("where", ["missing_dir", "under_a_file"])
def test_output_to_an_unwritable_place_is_one_error_line(tmp_path, where):
    if where == "missing_dir":
        out = tmp_path / "no" / "such" / "dir" / "out.npz"
    else:
        (tmp_path / "plain.txt").write_text("x")
        out = tmp_path / "plain.txt" / "out.npz"
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = run_cli("run", CHAIN, "--output", out)
    m = one_error(proc)
    assert str(out) in m.string
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_output_onto_a_directory_fails_and_leaves_no_temp_file(tmp_path):
    target = tmp_path / "out.npz"
    target.mkdir()
    proc = run_cli("run", CHAIN, "--output", target)
    assert proc.returncode == 2 and proc.stdout == ""  # refused before anything runs
    assert proc.stderr.splitlines() == [
        f"irexec run: error: argument --output: '{target}' is a folder, not a file; give a "
        f"file name"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.npz"]
    assert target.is_dir() and not any(target.iterdir())


def test_no_output_file_when_the_run_fails(tmp_path, npy):
    out = tmp_path / "out.npz"
    proc = run_cli("run", CHAIN, "--input", f"seq_lengths={npy('n', [1, 9, 1, 1])}",
                   "--output", out)
    assert proc.returncode == 1
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".npz"]


# --- warnings ---------------------------------------------------------------------------------

def test_warnings_go_to_stderr_and_the_run_succeeds(edited):
    """An unused layer is a warning (IR205): printed with file:line and layer, exit 0."""
    model = edited({'<edge from-layer="5" from-port="2" to-layer="7" to-port="0"/>':
                    '<edge from-layer="3" from-port="2" to-layer="7" to-port="0"/>'})
    proc = run_cli("run", model)
    assert proc.returncode == 0, proc.stderr
    warnings = proc.stderr.splitlines()
    assert warnings and all(w.startswith("warning: ") for w in warnings)
    line = line_of(model, 'name="flipped"')
    assert any(f"{model}:{line}: layer 'flipped' (Reverse)" in w for w in warnings), warnings
    assert "flipped" not in tables(proc.stdout)["outputs"]


def test_a_precision_mismatch_is_a_warning_and_the_run_succeeds(edited):
    model = edited({'precision="FP32" names="to_f32"': 'precision="FP16" names="to_f32"'})
    proc = run_cli("run", model)
    assert proc.returncode == 0, proc.stderr
    warnings = proc.stderr.splitlines()
    assert len(warnings) == 1 and warnings[0].startswith("warning: "), warnings
    line = line_of(model, 'precision="FP16" names="to_f32"')
    assert f"{model}:{line}: layer 'to_f32' (Convert)" in warnings[0]
    assert "FP16" in warnings[0] and "f32" in warnings[0]


# --- entry points ------------------------------------------------------------------------------

def test_console_script_next_to_the_interpreter():
    exe = Path(sys.executable).parent / "irexec"
    if not exe.exists():
        pytest.skip(f"no console script at {exe}")
    proc = run_cli("run", CHAIN, exe=str(exe))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == run_cli("run", CHAIN).stdout
    version = run_cli("--version", exe=str(exe))
    assert version.returncode == 0 and version.stdout.strip() == f"irexec {irexec.__version__}"
    bad = run_cli("run", SAMPLES / "nope.xml", exe=str(exe))
    parse_errors(bad)
    assert bad.returncode == 1


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES.glob("*.xml")))
def test_every_sample_runs(sample):
    proc = run_cli("run", SAMPLES / sample)
    assert proc.returncode == 0, proc.stderr
    assert tables(proc.stdout)["outputs"]
