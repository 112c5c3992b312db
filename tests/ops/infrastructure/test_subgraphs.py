"""TensorIterator, Loop and If: bodies read with their port maps and back edges, inferred, run,
written back; checked against plain numpy loops and (where installed) OpenVINO's CPU plugin.

The models in tests/data/subgraphs/ were written by OpenVINO's Python API (make.py there)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import irexec
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
