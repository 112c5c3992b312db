"""``irexec run --trace DIR``, ``--input-dir`` (one result per .npz), the progress bar (on a
terminal only), and ``compiled(inputs, trace=...)`` in the API."""

from __future__ import annotations

import json

import numpy as np
import pytest

import irexec
from irexec.runtime.inputs import make_inputs
from irexec.runtime.trace import load_trace
from tests.cli.conftest import SAMPLES, one_error, parse_errors, run_cli, run_on_terminal
from tests.cli.inproc import SAMPLE_MODELS, irexec_cli, sample_ids
from tests.cli.ov_converted import ov_converted  # noqa: F401  (fixture)
from tests.cli.test_run import crc, tables

CHAIN = SAMPLES / "convert_reverse_chain.xml"


def _check_trace(path, folder) -> None:
    model = irexec.read_model(path)
    compiled = irexec.compile_model(model)
    inputs = make_inputs(model, {}, 0)
    expected = compiled(inputs)
    code, out, err = irexec_cli("run", path, "--trace", folder)
    assert code == 0, err
    assert tables(out)["outputs"] == tables(irexec_cli("run", path)[1])["outputs"]  # unchanged
    index = json.loads((folder / "index.json").read_text())
    needed = model.needed_nodes()  # the inputs first, then every computed layer in order
    computed = [n for n in model.parameters if n.id in needed] + [
        n for n in model.topological_order()
        if n.type not in ("Constant", "Result", "Parameter") and n.id in needed]
    assert [e["layer"] for e in index["layers"]] == [n.name for n in computed]
    traced = load_trace(folder)
    for name, array in inputs.items():
        assert np.array_equal(traced[(name, 0)], array)
    for result, name in zip(model.results, compiled.output_names()):
        source = result.inputs[0].source
        if source.node.type != "Constant":
            got = traced[(source.node.name, source.index)]
            assert got.dtype == expected[name].dtype
            assert np.array_equal(got, expected[name])
    for entry in index["layers"]:
        array = traced[(entry["layer"], entry["port"])]
        assert entry["shape"] == list(array.shape) and entry["crc32"] == crc(array)


@pytest.mark.parametrize("path", SAMPLE_MODELS, ids=sample_ids)
def test_trace_on_every_sample(path, tmp_path):
    _check_trace(path, tmp_path / "trace")


def test_trace_on_openvino_converted_ir(ov_converted, tmp_path):
    _check_trace(ov_converted, tmp_path / "trace")
    files = {e["layer"]: e["file"] for e in
             json.loads((tmp_path / "trace" / "index.json").read_text())["layers"]}
    assert files["y"] == "y.npy"  # named by layer; unsafe characters become '_'


def test_trace_file_names_are_safe_and_unique(edited, tmp_path):
    path = edited({'name="to_f32"': 'name="a/b:0"', 'name="flipped"': 'name="a_b_0"'})
    code, _, err = irexec_cli("run", path, "--trace", tmp_path / "t")
    assert code == 0, err
    files = {e["layer"]: e["file"] for e in
             json.loads((tmp_path / "t" / "index.json").read_text())["layers"]}
    assert files["a/b:0"] == "a_b_0.npy" and files["a_b_0"] == "a_b_0~5.npy"


def test_api_trace_to_a_callable_and_a_folder(tmp_path):
    compiled = irexec.compile_model(CHAIN)
    inputs = make_inputs(compiled.model, {}, 3)
    seen = []
    plain = compiled(inputs)
    traced = compiled(inputs, trace=lambda node, port, array: seen.append((node.name, port)))
    assert seen == [("data", 0), ("seq_lengths", 0), ("to_f32", 0), ("reversed_sequences", 0),
                    ("flipped", 0)]
    assert all(np.array_equal(plain[k], traced[k]) for k in plain)
    compiled(inputs, trace=tmp_path / "t")
    assert np.array_equal(load_trace(tmp_path / "t")[("flipped", 0)], plain["flipped"])
    with pytest.raises(TypeError):
        compiled(inputs, trace=42)


def test_a_run_that_fails_part_way_leaves_an_index_of_what_it_made(tmp_path):
    compiled = irexec.compile_model(CHAIN)
    inputs = make_inputs(compiled.model, {}, 3)
    inputs["seq_lengths"] = np.full_like(inputs["seq_lengths"], 99)  # beyond the sequence axis
    with pytest.raises(irexec.IRError) as e:
        compiled(inputs, trace=tmp_path / "t")
    assert e.value.code == "IR308"
    index = json.loads((tmp_path / "t" / "index.json").read_text())
    assert [entry["layer"] for entry in index["layers"]] == ["data", "seq_lengths", "to_f32"]
    assert set(load_trace(tmp_path / "t")) == {("data", 0), ("seq_lengths", 0), ("to_f32", 0)}


def test_unwritable_trace_folder_is_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    one_error(run_cli("run", CHAIN, "--trace", blocker / "sub"))


@pytest.fixture
def input_dir(tmp_path):
    folder = tmp_path / "inputs"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for i in range(3):
        np.savez(folder / f"case{i}.npz",
                 data=rng.integers(-9, 9, (5, 4, 3)).astype(np.int32),
                 seq_lengths=np.array([5, 1, 3, i + 1], np.int64))
    (folder / "notes.txt").write_text("not an input")
    return folder


def test_input_dir_gives_one_result_per_file(input_dir, tmp_path):
    out_dir = tmp_path / "out"
    code, out, err = irexec_cli("run", CHAIN, "--input-dir", input_dir, "--output-dir", out_dir,
                                "--trace", tmp_path / "trace")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1].split() == ["file", "reversed_sequences", "flipped"]
    compiled = irexec.compile_model(CHAIN)
    for i, line in enumerate(lines[2:5]):
        with np.load(input_dir / f"case{i}.npz") as f:
            expected = compiled(dict(f))
        assert line.split() == [f"case{i}.npz", crc(expected["reversed_sequences"]),
                                crc(expected["flipped"])]
        with np.load(out_dir / f"case{i}.npz") as saved:
            assert all(np.array_equal(saved[k], expected[k]) for k in expected)
        assert (tmp_path / "trace" / f"case{i}" / "index.json").exists()
    assert lines[5].startswith("ran 3 files")
    assert "[" not in err  # not a terminal: no progress bar


def test_input_dir_on_openvino_converted_ir(ov_converted, tmp_path):
    np.savez(tmp_path / "a.npz", x=np.ones((3, 5, 2), np.float32))  # lens made from the seed
    code, out, err = irexec_cli("run", ov_converted, "--input-dir", tmp_path)
    assert code == 0, err
    assert out.splitlines()[2].split()[0] == "a.npz"


def test_input_dir_bad_file_is_one_line(input_dir):
    np.savez(input_dir / "case9.npz", nonsense=np.zeros(3))
    one_error(run_cli("run", CHAIN, "--input-dir", input_dir), input_dir / "case9.npz", None,
              None, None, "array 'nonsense'", "no input of that name")
    (input_dir / "case9.npz").write_bytes(b"garbage")
    one_error(run_cli("run", CHAIN, "--input-dir", input_dir), input_dir / "case9.npz", None,
              None, None, "not a .npz archive")


def test_input_dir_goes_on_after_a_bad_file(input_dir, tmp_path):
    """A bad file is reported and the others still run and are saved; exit 1 with a count.
    --fail-fast stops at the first bad file (sorted order), as the batch did before."""
    np.savez(input_dir / "case1b.npz", nonsense=np.zeros(3))  # sorts between case1 and case2
    (input_dir / "case1c.npz").write_bytes(b"garbage")
    out_dir = tmp_path / "out"
    proc = run_cli("run", CHAIN, "--input-dir", input_dir, "--output-dir", out_dir)
    assert proc.returncode == 1
    assert [m["file"] for m in parse_errors(proc)] == [str(input_dir / "case1b.npz"),
                                                       str(input_dir / "case1c.npz")]
    rows = {line.split()[0]: line.split()[1:] for line in proc.stdout.splitlines()[2:-1]}
    assert rows["case1b.npz"] == rows["case1c.npz"] == ["failed"]
    assert len(rows["case2.npz"]) == 2  # the file after the bad ones ran
    assert sorted(p.name for p in out_dir.iterdir()) == ["case0.npz", "case1.npz", "case2.npz"]
    assert proc.stdout.splitlines()[-1].startswith(
        "ran 5 files; 2 failed (case1b.npz, case1c.npz; errors on stderr)")

    fast_out = tmp_path / "fast"
    proc = run_cli("run", CHAIN, "--input-dir", input_dir, "--output-dir", fast_out,
                   "--fail-fast")
    one_error(proc, input_dir / "case1b.npz")
    assert sorted(p.name for p in fast_out.iterdir()) == ["case0.npz", "case1.npz"]


def test_input_dir_run_time_error_names_the_file(input_dir):
    np.savez(input_dir / "case7.npz", data=np.zeros((5, 4, 3), np.int32),
             seq_lengths=np.array([1, 9, 1, 1], np.int64))  # 9 > the 5 steps of the data
    proc = run_cli("run", CHAIN, "--input-dir", input_dir)
    (m,) = parse_errors(proc)
    assert proc.returncode == 1 and m["layer"] == "reversed_sequences"
    assert m["message"].endswith(f"(inputs from '{input_dir / 'case7.npz'}')")


def test_input_dir_wrong_dtype_names_the_file(input_dir):
    np.savez(input_dir / "case5.npz", data=np.zeros((5, 4, 3), np.float64))
    one_error(run_cli("run", CHAIN, "--input-dir", input_dir), input_dir / "case5.npz", None,
              None, None, "array 'data'", "expects element type i32")


def test_input_dir_missing_or_empty(tmp_path):
    one_error(run_cli("run", CHAIN, "--input-dir", tmp_path / "none"))
    one_error(run_cli("run", CHAIN, "--input-dir", tmp_path), tmp_path, None, None, None,
              "holds no .npz files")


@pytest.mark.parametrize("extra", [["--input", "data=x.npy"], ["--output", "o.npz"]])
def test_input_dir_usage_errors(input_dir, extra):
    proc = run_cli("run", CHAIN, "--input-dir", input_dir, *extra)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_output_dir_needs_input_dir(tmp_path):
    proc = run_cli("run", CHAIN, "--output-dir", tmp_path)
    assert proc.returncode == 2 and "--input-dir" in proc.stderr


def test_progress_bar_on_a_terminal_only(input_dir):
    """stderr on a pseudo-terminal gets a bar redrawn with carriage returns, cleared at the end;
    stdout (piped) gets exactly the lines it gets without a terminal."""
    proc, text = run_on_terminal("run", CHAIN, "--input-dir", input_dir)
    assert proc.returncode == 0
    assert "\r[" in text and "3/3" in text and "case2.npz" in text
    assert text.endswith("\r")  # the bar is wiped when the work is done
    piped = run_cli("run", CHAIN, "--input-dir", input_dir)
    assert proc.stdout.decode() == piped.stdout and piped.stderr == ""


def _one_input_model(tmp_path):
    from irexec.builder import ModelBuilder

    b = ModelBuilder()
    b.result(b.op("Relu", b.parameter("x", "f32", [2, 3]), name="r"), "out")
    path = tmp_path / "one.xml"
    irexec.save_model(b.build(), path)
    return path


def test_npy_files_are_the_input_of_a_model_of_one_input(tmp_path):
    """.npy files in the folder were skipped without a word."""
    model = _one_input_model(tmp_path)
    folder = tmp_path / "in"
    folder.mkdir()
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    np.save(folder / "a.npy", x)
    np.savez(folder / "b.npz", x=x + 1)
    proc = run_cli("run", model, "--input-dir", folder)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    rows = {line.split()[0]: line.split()[1:] for line in proc.stdout.splitlines()[2:-1]}
    assert rows == {"a.npy": [crc(np.maximum(x, 0))], "b.npz": [crc(np.maximum(x + 1, 0))]}


def test_npy_files_for_a_model_of_several_inputs_fail_by_name(input_dir):
    np.save(input_dir / "case9.npy", np.zeros((5, 4, 3), np.int32))
    proc = run_cli("run", CHAIN, "--input-dir", input_dir)
    (m,) = parse_errors(proc)
    assert proc.returncode == 1 and m["file"] == str(input_dir / "case9.npy")
    assert "the model takes 2 inputs" in m["message"] and ".npz" in m["message"]
    assert "1 failed (case9.npy" in proc.stdout.splitlines()[-1]


def test_fail_fast_prints_a_run_time_error_once(input_dir):
    np.savez(input_dir / "case1a.npz", data=np.zeros((5, 4, 3), np.int32),
             seq_lengths=np.array([1, 9, 1, 1], np.int64))  # 9 > the 5 steps of the data
    proc = run_cli("run", CHAIN, "--input-dir", input_dir, "--fail-fast")
    m = one_error(proc)
    assert m["layer"] == "reversed_sequences" and "case1a.npz" in m["message"]
    assert "failed" not in proc.stdout and "case2" not in proc.stdout
