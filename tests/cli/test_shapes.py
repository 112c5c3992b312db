"""`run` and `bench` on models with dynamic dims: they say which sizes they chose for the inputs
they generate, and take `--shape NAME[1,3,224,224]` (benchmark_app's form) or `NAME=[...]`."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder
from tests.cli.conftest import ERROR_LINE, run_cli
from tests.cli.inproc import irexec_cli


@pytest.fixture
def bert_like(tmp_path):
    """Two inputs of shape [?,?] that must agree (input_ids + attention_mask)."""
    b = ModelBuilder()
    ids = b.parameter("input_ids", "i64", [-1, -1])
    mask = b.parameter("attention_mask", "i64", [-1, -1])
    b.result(b.op("Add", ids, mask, name="sum"), "out")
    path = tmp_path / "bert.xml"
    irexec.save_model(b.build(), path)
    return path


@pytest.fixture
def one_input(tmp_path):
    b = ModelBuilder()
    x = b.parameter("x", "f32", [-1, 4])
    weights = b.constant(np.ones((4, 2), np.float32))
    b.result(b.op("MatMul", x, weights, transpose_a=False, transpose_b=False, name="r"), "out")
    path = tmp_path / "one.xml"
    irexec.save_model(b.build(), path)
    return path


def output_shape(out: str) -> str:
    """The shape column of the (first) output's row."""
    rows = out[out.index("outputs:"):].splitlines()
    return rows[2].split()[2]


@pytest.mark.parametrize("command", ["run", "bench"])
def test_the_filled_dims_are_said(bert_like, command):
    extra = ("--runs", "1", "--warmup", "0") if command == "bench" else ()
    code, out, err = irexec_cli(command, bert_like, *extra)
    assert code == 0, err
    assert err.splitlines() == [
        "note: input 'input_ids' [?,?]: dynamic dims filled as [3,3]; give --shape "
        "input_ids[...] to choose",
        "note: input 'attention_mask' [?,?]: dynamic dims filled as [3,3]; give --shape "
        "attention_mask[...] to choose"]
    if command == "run":
        assert output_shape(out) == "[3,3]"


def test_a_given_input_is_not_said(bert_like, tmp_path):
    np.save(tmp_path / "ids.npy", np.ones((3, 3), np.int64))
    code, _, err = irexec_cli("run", bert_like, "--input", f"input_ids={tmp_path / 'ids.npy'}")
    assert code == 0 and len(err.splitlines()) == 1 and "'attention_mask'" in err


@pytest.mark.parametrize("form", ["{}[2,8]", "{}=[2,8]", " {}[ 2, 8 ] "])
@pytest.mark.parametrize("command", ["run", "bench"])
def test_shape_reshapes_the_inputs(bert_like, form, command):
    extra = ("--runs", "1", "--warmup", "0") if command == "bench" else ()
    code, out, err = irexec_cli(command, bert_like, "--shape", form.format("input_ids"),
                                "--shape", form.format("attention_mask"), *extra)
    assert code == 0 and err == "", err
    if command == "run":
        assert output_shape(out) == "[2,8]"


def test_a_shape_alone_for_a_model_of_one_input(one_input):
    code, out, err = irexec_cli("run", one_input, "--shape", "[5,4]")
    assert code == 0 and err == "" and output_shape(out) == "[5,2]"


@pytest.mark.parametrize("bad", ["x[2,a]", "x[2,8", "x=2,8", "x[-1,4]", "x[[2]]", "x", ""])
def test_a_bad_form_is_a_usage_error(one_input, bad):
    proc = run_cli("run", one_input, "--shape", bad)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    last = proc.stderr.splitlines()[-1]
    assert last.startswith("irexec run: error: argument --shape:") and "NAME[1,3,224,224]" in last


@pytest.mark.parametrize("args, fragment", [
    (("--shape", "nope[1,4]"), "the model has no input named 'nope' (inputs: x)"),
    # MatMul's weights take 4 features, not 5
    (("--shape", "x[2,5]"), "--shape x=[2,5]: the model refuses it"),
])
def test_a_shape_the_model_refuses_is_one_line(one_input, args, fragment):
    code, out, err = irexec_cli("run", one_input, *args)
    assert code == 1 and out == ""
    (line,) = err.splitlines()
    assert ERROR_LINE.match(line) and fragment in line, line


def test_naming_no_input_with_several_is_a_usage_error(bert_like):
    code, _, err = irexec_cli("run", bert_like, "--shape", "[2,8]")
    assert code == 2 and "name the one to shape" in err
