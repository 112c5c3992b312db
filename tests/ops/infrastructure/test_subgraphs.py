"""TensorIterator, Loop and If: bodies read with their port maps and back edges, inferred, run,
written back; checked against plain numpy loops and (where installed) OpenVINO's CPU plugin.

The models in tests/data/subgraphs/ were written by OpenVINO's Python API (make.py there)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import irexec
from irexec.api import validate_file
from tests.helpers_ir import write_ir

DATA = Path(__file__).resolve().parents[2] / "data" / "subgraphs"


def _model(name: str):
    return irexec.read_model(DATA / f"{name}.xml")


def _run(name: str, inputs: dict):
    return list(irexec.compile_model(_model(name))(inputs).values())


def _loop_reference(x, acc0, trip):
    acc, its = acc0, []
    for i in range(trip):
        acc = np.concatenate([acc, x], axis=0)
        its.append(np.float32(i))
    return acc, np.array(its, np.float32)


@pytest.mark.parametrize("trip", [0, 1, 3, 5])
def test_loop_grows_a_back_edge_value_and_concatenates_iterations(trip):
    x = np.arange(3, dtype=np.float32).reshape(1, 3)
    acc0 = np.full((1, 3), -1, np.float32)
    last, iters = _run("loop_concat", {"x": x, "acc0": acc0, "trip": np.array(trip)})
    want_last, want_iters = _loop_reference(x, acc0, trip)
    np.testing.assert_array_equal(last, want_last)  # 0 iterations: the initial value
    np.testing.assert_array_equal(iters, want_iters)


def test_loop_shapes_widen_where_the_back_edge_changes_them():
    model = _model("loop_concat")
    assert str(model.outputs[0].partial_shape) == "[1..,3]"
    assert str(model.outputs[1].partial_shape) == "[?]"


def _ti_reference(X):
    lengths = [3, 2]
    steps = []
    for t in reversed(range(X.shape[1])):  # stride -1: from the last slice to the first
        part = X[:, t:t + 1, :].copy()
        for b, n in enumerate(lengths):
            part[b, 0, :n] = part[b, 0, :n][::-1]
        steps.append(part)
    every = np.concatenate(steps[::-1], axis=1)  # concatenated back in slice order
    return every, steps[-1]


def test_tensor_iterator_walks_slices_backwards_and_concatenates_in_order():
    X = np.random.default_rng(0).standard_normal((2, 4, 3)).astype(np.float32)
    every, last = _run("tensor_iterator_reverse", {"X": X})
    want_every, want_last = _ti_reference(X)
    np.testing.assert_array_equal(every, want_every)
    np.testing.assert_array_equal(last, want_last)
    model = _model("tensor_iterator_reverse")
    assert [str(p.partial_shape) for p in model.outputs] == ["[2,4,3]", "[2,1,3]"]


@pytest.mark.parametrize("cond", [True, False])
def test_if_runs_the_chosen_body(cond):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    (out,) = _run("if_branches", {"c": np.array(cond), "a": a})
    want = np.stack([a[0, 1::-1].tolist() + [a[0, 2]], a[1, ::-1]]) if cond else a
    np.testing.assert_array_equal(out, want)


def test_body_layers_report_with_the_path_of_enclosing_layers(tmp_path):
    text = (DATA / "loop_concat.xml").read_text()
    bad = text.replace('<data shape="?,3" element_type="f32" />',
                       '<data shape="?,3" element_type="f32" bogus="1" />', 1)
    assert bad != text
    shutil.copy(DATA / "loop_concat.bin", tmp_path / "m.bin")
    (tmp_path / "m.xml").write_text(bad)
    model = irexec.read_model(tmp_path / "m.xml")
    (warning,) = [d for d in model.diagnostics if d.code == "IR310"]
    assert warning.location.layer_name.endswith("/body/bacc")
    assert warning.location.layer_name.startswith("Loop_")
    assert warning.location.line == bad[:bad.index('bogus="1"')].count("\n") + 1


@pytest.mark.parametrize("edit, code", [
    (('internal_layer_id="1" />', 'internal_layer_id="9" />'), "IR110"),
    (('<edge from-layer="7" to-layer="1" />', '<edge from-layer="7" to-layer="3" />'), "IR111"),
])
def test_bad_port_maps_and_back_edges_are_one_diagnostic(tmp_path, edit, code):
    text = (DATA / "loop_concat.xml").read_text()
    assert edit[0] in text, edit[0]
    (tmp_path / "m.xml").write_text(text.replace(edit[0], edit[1], 1))
    shutil.copy(DATA / "loop_concat.bin", tmp_path / "m.bin")
    with pytest.raises(irexec.IRError) as info:
        irexec.read_model(tmp_path / "m.xml")
    assert [d.code for d in info.value.diagnostics] == [code]


@pytest.mark.parametrize("name", ["loop_concat", "tensor_iterator_reverse", "if_branches"])
def test_written_back_reads_and_runs_the_same(tmp_path, name):
    model = _model(name)
    irexec.save_model(model, tmp_path / "m.xml")
    again = irexec.read_model(tmp_path / "m.xml")
    assert again.diagnostics == []
    assert [str(p.partial_shape) for p in again.outputs] == \
        [str(p.partial_shape) for p in model.outputs]
    rng = np.random.default_rng(1)
    inputs = {}
    for p in model.parameters:
        shape = p.outputs[0].partial_shape
        dims = [d.min if d.is_static else 2 for d in shape]
        et = p.attrs["element_type"]
        inputs[p.name] = (np.array(2) if p.name == "trip" else np.array(True)
                          if et.name == "boolean" else
                          rng.standard_normal(dims).astype(et.dtype))
    a = irexec.compile_model(model)(inputs)
    b = irexec.compile_model(again)(inputs)
    for x, y in zip(a.values(), b.values()):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("name", ["loop_concat", "tensor_iterator_reverse", "if_branches"])
def test_openvino_agrees(name):
    ov = pytest.importorskip("openvino")

    rng = np.random.default_rng(2)
    feeds = {
        "loop_concat": {"x": rng.standard_normal((1, 3)).astype(np.float32),
                        "acc0": rng.standard_normal((1, 3)).astype(np.float32),
                        "trip": np.array(4)},
        "tensor_iterator_reverse": {"X": rng.standard_normal((2, 4, 3)).astype(np.float32)},
        "if_branches": {"c": np.array(False), "a": rng.standard_normal((2, 3)).astype(np.float32)},
    }
    ours = list(irexec.compile_model(_model(name))(feeds[name]).values())
    core = ov.Core()
    compiled = core.compile_model(core.read_model(DATA / f"{name}.xml"), "CPU",
                                  {"INFERENCE_PRECISION_HINT": "f32"})
    result = compiled(feeds[name])
    theirs = [result[o] for o in compiled.outputs]
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _stateful_calls(call, xs):
    return [next(iter(call({"x": x}).values())) for x in xs]


def test_variables_persist_per_request_and_reset():
    compiled = irexec.compile_model(_model("stateful"))
    xs = [np.full(2, i, np.float32) for i in (1, 2, 3)]
    a, b = compiled.create_infer_request(), compiled.create_infer_request()
    outs = _stateful_calls(a.infer, xs)
    np.testing.assert_array_equal(outs[0], [0, 0, 1, 1])  # the initial value, then x
    np.testing.assert_array_equal(outs[2], [2, 2, 3, 3])
    np.testing.assert_array_equal(_stateful_calls(b.infer, xs[:1])[0], [0, 0, 1, 1])  # its own
    (variable,) = a.query_state()
    assert variable.name == "prev"
    np.testing.assert_array_equal(variable.state, [3, 3])
    a.reset_state()
    np.testing.assert_array_equal(_stateful_calls(a.infer, xs[:1])[0], [0, 0, 1, 1])
    variable = a.query_state()[0]
    variable.reset()  # no value until the next run starts it from its initial value; it
    np.testing.assert_array_equal(variable.state.data, [0, 0])  # reads as zeros, as OpenVINO's
    # Calls without a request keep the compiled model's own state.
    np.testing.assert_array_equal(_stateful_calls(compiled, xs)[1], [1, 1, 2, 2])


def test_assign_runs_though_no_result_needs_it():
    model = _model("stateful")
    assert not [d for d in model.diagnostics if d.code == "IR205"]
    assert any(step.type == "Assign" for step in irexec.compile_model(model).plan.steps)


def test_variables_agree_with_openvino():
    ov = pytest.importorskip("openvino")
    core = ov.Core()
    request = core.compile_model(core.read_model(DATA / "stateful.xml"), "CPU").create_infer_request()
    xs = [np.random.default_rng(i).standard_normal(2).astype(np.float32) for i in range(3)]
    theirs = [request.infer({"x": x})[0].copy() for x in xs]
    ours = _stateful_calls(irexec.compile_model(_model("stateful")).create_infer_request().infer,
                           xs)
    for a, b in zip(ours, theirs):
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("x, limit", [(1.5, 20.0), (30.0, 20.0), (0.25, 1000.0)])
def test_loop_body_condition_stops_an_unlimited_loop(x, limit):
    last, every = _run("loop_early_exit", {"x": np.array([x], np.float32),
                                           "limit": np.array(limit, np.float32)})
    values = [x * 2]
    while values[-1] < limit:  # the body's condition is checked after each iteration
        values.append(values[-1] * 2)
    np.testing.assert_array_equal(every, np.array(values, np.float32))
    np.testing.assert_array_equal(last, [values[-1]])


def test_loop_early_exit_agrees_with_openvino():
    ov = pytest.importorskip("openvino")
    core = ov.Core()
    compiled = core.compile_model(core.read_model(DATA / "loop_early_exit.xml"), "CPU",
                                  {"INFERENCE_PRECISION_HINT": "f32"})
    feed = {"x": np.array([0.7], np.float32), "limit": np.array(50, np.float32)}
    result = compiled(feed)
    ours = list(irexec.compile_model(_model("loop_early_exit"))(feed).values())
    for a, o in zip(ours, compiled.outputs):
        assert a.tobytes() == result[o].tobytes()


@pytest.mark.parametrize("edit, layer, fragment", [
    # the Assign writes another variable: both layers are unpaired
    ('<data variable_id="prev" />', None, None),
    # the Assign removed: the ReadValue's variable is never written
    ("drop assign", "ReadValue_73", "no layer writes the variable 'prev'"),
])
def test_unpaired_variables_are_ir208(tmp_path, edit, layer, fragment):
    """OpenVINO refuses an Assign whose variable no ReadValue declares ("map::at"); a variable
    that nothing writes is an error too (tests/validate/fixtures/IR208.xml is the first)."""
    import re

    text = (DATA / "stateful.xml").read_text()
    if edit == "drop assign":
        text = re.sub(r'\s*<layer id="4" name="Assign_75".*?</layer>', "", text, flags=re.S)
        text = text.replace('<edge from-layer="0" from-port="0" to-layer="4" to-port="0" />', "")
    else:
        text = text.replace(edit, '<data variable_id="other" />')
    (tmp_path / "m.xml").write_text(text)
    shutil.copy(DATA / "stateful.bin", tmp_path / "m.bin")
    diags = [d for d in validate_file(tmp_path / "m.xml") if d.is_error]
    assert {d.code for d in diags} == {"IR208"}
    if layer is None:
        assert {d.location.layer_name for d in diags} == {"ReadValue_73", "Assign_75"}
        (write,) = [d for d in diags if d.location.layer_name == "Assign_75"]
        assert "'other'" in write.message and "OpenVINO refuses" in write.message
    else:
        (d,) = diags
        assert d.location.layer_name == layer and fragment in d.message


ASSIGN_FIRST = """<net name="state" version="11">
  <layers>
    <layer id="0" name="x" type="Parameter" version="opset1">
      <data shape="2" element_type="f32"/>
      <output><port id="0" precision="FP32" names="x"><dim>2</dim></port></output>
    </layer>
    <layer id="1" name="twice" type="Multiply" version="opset1">
      <input><port id="0" precision="FP32"><dim>2</dim></port><port id="1" precision="FP32"><dim>2</dim></port></input>
      <output><port id="2" precision="FP32" names="twice"><dim>2</dim></port></output>
    </layer>
    <layer id="2" name="save" type="Assign" version="opset6">
      <data variable_id="state"/>
      <input><port id="0" precision="FP32"><dim>2</dim></port></input>
      <output><port id="1" precision="FP32"><dim>2</dim></port></output>
    </layer>
    <layer id="3" name="y" type="Result" version="opset1">
      <input><port id="0" precision="FP32"><dim>2</dim></port></input>
    </layer>
    <layer id="4" name="load" type="ReadValue" version="opset6">
      <data variable_id="state" variable_type="f32" variable_shape="2"/>
      <output><port id="0" precision="FP32" names="previous"><dim>2</dim></port></output>
    </layer>
    <layer id="5" name="previous" type="Result" version="opset1">
      <input><port id="0" precision="FP32"><dim>2</dim></port></input>
    </layer>
  </layers>
  <edges>
    <edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>
    <edge from-layer="0" from-port="0" to-layer="1" to-port="1"/>
    <edge from-layer="1" from-port="2" to-layer="2" to-port="0"/>
    <edge from-layer="1" from-port="2" to-layer="3" to-port="0"/>
    <edge from-layer="4" from-port="0" to-layer="5" to-port="0"/>
  </edges>
</net>
"""


def test_an_assign_listed_before_its_read_value_sets_the_next_call(tmp_path):
    """The Assign comes first in the file and no path orders the two: irexec ran it first, and
    the ReadValue gave this call's value instead of the last call's (OpenVINO: the last)."""
    path = tmp_path / "assign_first.xml"
    path.write_text('<?xml version="1.0"?>\n' + ASSIGN_FIRST)
    request = irexec.compile_model(irexec.read_model(path)).create_infer_request()
    xs = [np.array(v, np.float32) for v in ([1, 2], [3, 4], [5, 6])]
    got = [request.infer({"x": x})["previous"].tolist() for x in xs]
    assert got == [[0, 0], [1, 4], [9, 16]]  # zeros, then the previous call's x * x
    ov = pytest.importorskip("openvino")
    compiled = ov.Core().compile_model(ov.Core().read_model(str(path)), "CPU",
                                       {"INFERENCE_PRECISION_HINT": "f32"})
    theirs = compiled.create_infer_request()
    previous = next(o for o in compiled.outputs if "previous" in o.get_names())
    assert [theirs.infer({0: x})[previous].tolist() for x in xs] == got


def test_a_call_that_fails_leaves_the_variables_as_they_were(tmp_path, monkeypatch):
    """The Assign has run when the ReadValue (after it in the file) fails: its write is not
    kept."""
    from irexec.errors import OpError
    from irexec.ops.infrastructure import variables

    path = tmp_path / "assign_first.xml"
    path.write_text('<?xml version="1.0"?>\n' + ASSIGN_FIRST)
    real, calls = variables.ReadValue6.kernel, []

    def second_call_fails(*args, **kwargs):
        calls.append(None)
        if len(calls) == 2:
            raise OpError("made to fail", code="IR308")
        return real(*args, **kwargs)

    monkeypatch.setattr(variables.ReadValue6, "kernel", staticmethod(second_call_fails))
    request = irexec.compile_model(irexec.read_model(path)).create_infer_request()
    request.infer({"x": np.array([1, 2], np.float32)})
    with pytest.raises(irexec.IRError):
        request.infer({"x": np.array([5, 6], np.float32)})
    assert request.infer({"x": np.array([3, 4], np.float32)})["previous"].tolist() == [1, 4]
