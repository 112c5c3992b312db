"""``irexec compare``: every layer against OpenVINO, the first diverging layer named, and a clear
message instead of a crash when OpenVINO is missing or cannot run the model."""

from __future__ import annotations

import builtins

import numpy as np
import pytest

from irexec.ops.movement.reverse import Reverse
from irexec.ops.movement.reverse_sequence import ReverseSequence
from tests.cli.conftest import SAMPLES, one_error, run_cli
from tests.cli.inproc import SAMPLE_MODELS, irexec_cli, sample_ids
from tests.cli.ov_converted import ov_converted  # noqa: F401  (fixture)

CHAIN = SAMPLES / "convert_reverse_chain.xml"
OPENVINO_SAMPLES = [p for p in SAMPLE_MODELS if p.stem != "reverse_subsequences"]


def rows(out: str) -> dict[str, list[str]]:
    """The per-layer table: {layer: [type, output type, output shape, result, ...]}."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:4] == ["layer", "type",
                                                                           "output", "result"])
    table = {}
    for line in lines[start + 1:]:
        if not line.startswith("  "):
            break
        name, *rest = line.split()
        table[name] = rest
    return table


@pytest.mark.parametrize("path", OPENVINO_SAMPLES, ids=sample_ids)
def test_every_sample_is_bit_exact(path):
    pytest.importorskip("openvino")
    code, out, err = irexec_cli("compare", path)
    assert code == 0, out + err
    table = rows(out)
    assert table and all(r[3] == "bit-exact" for r in table.values()), out
    assert out.splitlines()[-1] == (f"{len(table)} layer output{'s' * (len(table) > 1)} "
                                    f"compared: {len(table)} bit-exact")


def test_openvino_converted_ir_is_bit_exact(ov_converted):
    code, out, err = irexec_cli("compare", ov_converted)
    assert code == 0, out + err
    table = rows(out)
    assert sorted(r[0] for r in table.values()) == ["Convert", "Convert", "ReverseSequence"]
    assert {"y", "out_i32"} <= set(table) and all(r[3] == "bit-exact" for r in table.values())


def _off_by_one(kernel):
    def altered(*args, **kwargs):
        out = np.array(kernel(*args, **kwargs))
        out.reshape(-1)[7] += 1
        return out
    return staticmethod(altered)


def test_an_altered_kernel_is_named_as_the_first_wrong_layer(monkeypatch):
    pytest.importorskip("openvino")
    monkeypatch.setattr(ReverseSequence, "kernel", _off_by_one(ReverseSequence.kernel))
    code, out, _ = irexec_cli("compare", CHAIN)
    assert code == 1
    table = rows(out)
    assert table["to_f32"][3] == "bit-exact"
    assert table["reversed_sequences"][3:6] == ["DIFFERS", "1", "1"]  # max abs 1, 1 of 60
    assert table["flipped"][3] == "DIFFERS"  # downstream: OpenVINO flips its own values
    assert out.splitlines()[-1].startswith(
        f"first diverging layer: 'reversed_sequences' (ReverseSequence) at {CHAIN}:39: "
        f"1 of 60 elements differ, max abs diff 1")


def test_an_altered_last_kernel(monkeypatch):
    pytest.importorskip("openvino")
    monkeypatch.setattr(Reverse, "kernel", _off_by_one(Reverse.kernel))
    code, out, _ = irexec_cli("compare", CHAIN)
    assert code == 1 and "first diverging layer: 'flipped' (Reverse)" in out


def test_data_movement_is_bit_exact_whatever_the_tolerance(monkeypatch, tmp_path):
    pytest.importorskip("openvino")

    original = ReverseSequence.kernel

    def negative_zero(*args, **kwargs):
        out = np.array(original(*args, **kwargs))
        out[out == 0] = -0.0  # equal values, other bits
        return out

    given = np.zeros((5, 4, 3), np.int32)
    monkeypatch.setattr(ReverseSequence, "kernel", staticmethod(negative_zero))
    np.save(tmp_path / "data.npy", given)
    code, out, _ = irexec_cli("compare", CHAIN, "--input", f"data={tmp_path / 'data.npy'}",
                              "--atol", "1")
    assert code == 1
    row = rows(out)["reversed_sequences"]
    assert row[3] == "DIFFERS" and "data movement must be bit-exact" in " ".join(row)


def test_tolerances_let_computed_layers_be_close(monkeypatch):
    pytest.importorskip("openvino")
    from irexec.ops.type.convert import Convert

    original = Convert.kernel

    def nudged(*args, **kwargs):
        out = np.array(original(*args, **kwargs))
        if out.dtype == np.float32:
            out.reshape(-1)[0] += np.float32(1e-3)
        return out

    monkeypatch.setattr(Convert, "kernel", staticmethod(nudged))
    code, out, _ = irexec_cli("compare", CHAIN, "--atol", "0.01")
    assert rows(out)["to_f32"][3] == "close"
    # ReverseSequence then moves irexec's nudged value: it differs from OpenVINO's by exactly
    # what its input does, which data movement may carry but not add to
    row = rows(out)["reversed_sequences"]
    assert row[3] == "close" and "moves its inputs' difference" in " ".join(row) and code == 0
    assert float(row[4]) == float(rows(out)["to_f32"][4])


def test_data_movement_may_not_add_to_its_inputs_difference(monkeypatch):
    pytest.importorskip("openvino")
    from irexec.ops.type.convert import Convert

    convert, reverse = Convert.kernel, ReverseSequence.kernel

    def nudged(*args, **kwargs):
        out = np.array(convert(*args, **kwargs))
        if out.dtype == np.float32:
            out.reshape(-1)[0] += np.float32(1e-3)
        return out

    def nudged_more(*args, **kwargs):
        out = np.array(reverse(*args, **kwargs))
        out.reshape(-1)[-1] += np.float32(2e-3)
        return out

    monkeypatch.setattr(Convert, "kernel", staticmethod(nudged))
    monkeypatch.setattr(ReverseSequence, "kernel", staticmethod(nudged_more))
    code, out, _ = irexec_cli("compare", CHAIN, "--atol", "0.01")
    assert rows(out)["to_f32"][3] == "close"
    row = rows(out)["reversed_sequences"]
    assert row[3] == "DIFFERS" and "added to its inputs' difference" in " ".join(row)
    assert code == 1


def test_without_openvino_it_explains(monkeypatch):
    real_import = builtins.__import__

    def no_openvino(name, *args, **kwargs):
        if name == "openvino" or name.startswith("openvino."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_openvino)
    code, out, err = irexec_cli("compare", CHAIN)
    assert code == 1 and out == ""
    (line,) = err.splitlines()
    assert "needs OpenVINO" in line and "pip install openvino" in line


def test_a_model_openvino_cannot_run_is_explained():
    proc = run_cli("compare", SAMPLES / "reverse_subsequences.xml")
    if proc.returncode == 1 and "needs OpenVINO" in proc.stderr:
        pytest.importorskip("openvino")
    one_error(proc, SAMPLES / "reverse_subsequences.xml", None, None, None,
              "'reversed' (ReverseSubsequences-irexec1)", "not an OpenVINO opset")


def test_bad_model_is_one_line_exit_1(edited):
    bad = edited({'seq_axis="0"': 'seq_axis="1"'})
    one_error(run_cli("compare", bad), bad, 39, "reversed_sequences", "ReverseSequence")


@pytest.mark.parametrize("flag", ["--rtol=-1", "--atol=nan", "--with=onnxruntime"])
def test_bad_options_are_usage_errors(flag):
    proc = run_cli("compare", CHAIN, flag)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def _flip_model(tmp_path, type_name):
    import irexec
    from irexec.builder import ModelBuilder

    b = ModelBuilder(f"flip_{type_name}")
    x = b.parameter("x", type_name, [3, 5])
    b.result(b.op("Reverse", x, b.constant(np.array([1], np.int64)), mode="index", name="y"),
             "out")
    path = tmp_path / f"{type_name}.xml"
    irexec.save_model(b.build(), path)
    return path


@pytest.mark.parametrize("type_name", ["bf16", "f8e4m3", "f8e5m2", "f8e8m0", "i4", "u4",
                                       "boolean"])
def test_narrow_and_ml_dtypes_types_go_to_openvino_bit_for_bit(tmp_path, type_name):
    pytest.importorskip("openvino")
    code, out, err = irexec_cli("compare", _flip_model(tmp_path, type_name))
    assert code == 0, out + err
    assert rows(out)["y"][3] == "bit-exact"


@pytest.mark.parametrize("type_name", ["u2", "nf4", "f4e2m1"])
def test_openvinos_wrong_reverse_of_narrow_types_is_named(tmp_path, type_name):
    """OpenVINO's CPU plugin gets Reverse on these wrong (docs/compatibility.md)."""
    pytest.importorskip("openvino")
    code, out, err = irexec_cli("compare", _flip_model(tmp_path, type_name))
    assert code == 1 and "first diverging layer: 'y' (Reverse)" in out + err


def test_types_openvino_refuses_or_crashes_on_are_one_line(tmp_path):
    pytest.importorskip("openvino")
    one_error(run_cli("compare", _flip_model(tmp_path, "u1")), None, None, None, None,
              "Input image format u1 is not supported")
    one_error(run_cli("compare", _flip_model(tmp_path, "string")), None, None, None, None,
              "aborts the process")


STATEFUL = SAMPLES.parent / "tests" / "data" / "subgraphs" / "stateful.xml"


def test_a_stateful_model_is_compared_without_its_sinks():
    """OpenVINO refused every stateful model ("Incorrect output port number for node
    Assign_75"): a Result was added after each Assign. The ReadValue and what reads it are
    compared; the Assign (a sink) is not a row."""
    pytest.importorskip("openvino")
    code, out, err = irexec_cli("compare", STATEFUL)
    assert code == 0, out + err
    table = rows(out)
    assert table["ReadValue_73"][3] == "bit-exact" and table["Concat_74"][3] == "bit-exact"
    assert "Assign_75" not in table


def _crash_in_child(*args):
    """Stands for an OpenVINO that dies of SIGFPE (as its CPU plugin did on a FloorMod of
    INT64_MIN by -1 on some hosts); run in the command's own process it refuses instead, so
    that without the child process this test fails rather than kills pytest."""
    import multiprocessing
    import os
    import signal

    if multiprocessing.parent_process() is None:
        raise AssertionError("OpenVINO ran in the command's own process")
    os.kill(os.getpid(), signal.SIGFPE)


def test_openvino_dying_of_a_signal_is_one_line(monkeypatch):
    import types

    from irexec.cli import compare

    monkeypatch.setattr(compare, "_openvino", lambda: types.SimpleNamespace(
        get_version=lambda: "0"))
    monkeypatch.setattr(compare, "_openvino_job", _crash_in_child)
    code, out, err = irexec_cli("compare", CHAIN)
    assert code == 1
    (line,) = err.splitlines()
    assert line.startswith(f"error: {CHAIN}: OpenVINO was killed by SIGFPE")
    assert "floating point exception" in line and "nothing to compare with" in line


def test_openvino_failing_in_the_child_keeps_its_message():
    pytest.importorskip("openvino")
    from irexec.cli import compare

    with pytest.raises(compare.OracleError, match="OpenVINO cannot read the model"):
        compare.run_openvino_apart(str(SAMPLES / "no_such_model.xml"), None, {}, [])
