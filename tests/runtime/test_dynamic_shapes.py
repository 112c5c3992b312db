"""Dynamic shapes from the IR file to the result: Parameters with ``?``, intervals and dynamic
rank are read, inferred as tightly as the ops allow, checked against the arrays given at run
time, and one compiled model runs every shape that fits."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec.runtime import compiled_model
from irexec.runtime import plan as plan_module
from tests.helpers_ir import const, layer, net, parameter, result, write_ir
from tests.ops.support import reverse_sequence_loop


def _batch_model(tmp_path, data_shape="?,3,4", lengths_shape="?"):
    """Reverse along axis 2 (a Const), then ReverseSequence (batch 0, seq 1) with lengths given
    at run time. Ports carry -1 where the dims are dynamic, as OpenVINO writes them."""
    dims = [-1, 3, 4]
    layers = [
        parameter(0, "data", data_shape, "f32", dims=dims),
        parameter(1, "lengths", lengths_shape, "i32", dims=[-1]),
        const(2, "axes", "i64", "1", 0, 8, dims=[1]),
        layer(3, "flip", "Reverse", inputs=[dims, [1]], outputs=[dims], data={"mode": "index"}),
        layer(4, "rs", "ReverseSequence", inputs=[dims, [-1]], outputs=[dims],
              data={"batch_axis": 0, "seq_axis": 1}),
        result(5, "out", dims),
    ]
    edges = [(0, 0, 3, 0), (2, 0, 3, 1), (3, 2, 4, 0), (1, 0, 4, 1), (4, 2, 5, 0)]
    return write_ir(tmp_path, net(layers, edges), np.array([2], np.int64).tobytes())


def test_question_mark_batch_runs_with_batch_1_7_and_64_from_one_compile(tmp_path, monkeypatch):
    compiled = irexec.compile_model(_batch_model(tmp_path))
    plan = compiled.plan
    plans = []  # planning again would go through one of these names
    monkeypatch.setattr(plan_module, "compile_plan", lambda *a: plans.append(a))
    monkeypatch.setattr(compiled_model, "compile_plan", lambda *a: plans.append(a))
    rng = np.random.default_rng(0)
    for batch in (1, 7, 64):
        data = rng.standard_normal((batch, 3, 4)).astype(np.float32)
        lengths = rng.integers(0, 4, size=batch).astype(np.int32)
        out = compiled({"data": data, "lengths": lengths})
        (y,) = out.values()
        expected = reverse_sequence_loop(data[:, :, ::-1], lengths, 0, 1)
        assert y.shape == (batch, 3, 4)
        np.testing.assert_array_equal(y, expected)
    assert plans == [] and compiled.plan is plan  # nothing was planned again


def test_inferred_output_shape_keeps_the_dynamic_batch(tmp_path):
    model = irexec.read_model(_batch_model(tmp_path))
    assert str(model.outputs[0].partial_shape) == "[?,3,4]"


@pytest.mark.parametrize("data_shape, lengths_shape, merged", [
    ("?,3,4", "5", "[5,3,4]"),  # the lengths' length fixes the batch
    ("2..9,3,4", "4..20", "[4..9,3,4]"),  # intervals meet
    ("?,3,4", "..6", "[..6,3,4]"),
    ("7,3,4", "?", "[7,3,4]"),
])
def test_reverse_sequence_merges_the_batch_dim_with_the_lengths(tmp_path, data_shape,
                                                                lengths_shape, merged):
    model = irexec.read_model(_batch_model(tmp_path, data_shape, lengths_shape))
    assert str(model.outputs[0].partial_shape) == merged


def test_batch_dims_that_cannot_meet_are_ir307(tmp_path):
    with pytest.raises(irexec.IRError) as e:
        irexec.read_model(_batch_model(tmp_path, "2..4,3,4", "5..9"))
    assert e.value.code == "IR307"


@pytest.mark.parametrize("batch", [0, 9])
def test_a_shape_outside_the_interval_is_ir604_naming_both_shapes(tmp_path, batch):
    compiled = irexec.compile_model(_batch_model(tmp_path, "1..8,3,4", "1..8"))
    data = np.zeros((batch, 3, 4), np.float32)
    with pytest.raises(irexec.IRError) as e:
        compiled({"data": data, "lengths": np.zeros(batch, np.int32)})
    d = e.value.diagnostics[0]
    assert d.code == "IR604" and d.location.layer_name == "data"
    assert "'data'" in d.message and "[1..8,3,4]" in d.message and f"[{batch},3,4]" in d.message


def test_lengths_whose_length_differs_from_the_batch_at_run_time_are_ir307(tmp_path):
    compiled = irexec.compile_model(_batch_model(tmp_path))
    with pytest.raises(irexec.IRError) as e:
        compiled({"data": np.zeros((4, 3, 4), np.float32), "lengths": np.ones(3, np.int32)})
    assert e.value.code == "IR307" and "3 entries" in str(e.value)


def test_dynamic_rank_runs_any_rank(tmp_path):
    layers = [
        parameter(0, "data", "...", "i16"),
        parameter(1, "mask", "?", "boolean", dims=[-1]),
        layer(2, "flip", "Reverse", inputs=[None, [-1]], outputs=[None], data={"mode": "mask"}),
        result(3, "out"),
    ]
    path = write_ir(tmp_path, net(layers, [(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 3, 0)]))
    model = irexec.read_model(path)
    assert not model.outputs[0].partial_shape.rank_is_static
    compiled = irexec.compile_model(model)
    for shape, mask in [((5,), [True]), ((2, 3), [False, True]), ((2, 3, 4), [True, False, True]),
                        ((), [])]:
        data = np.arange(int(np.prod(shape)), dtype=np.int16).reshape(shape)
        (y,) = compiled({"data": data, "mask": np.array(mask, np.bool_)}).values()
        axes = tuple(i for i, m in enumerate(mask) if m)
        np.testing.assert_array_equal(y, np.flip(data, axes))
    with pytest.raises(irexec.IRError) as e:  # the mask's length must be the data's rank
        compiled({"data": np.zeros((2, 3), np.int16), "mask": np.array([True])})
    assert e.value.code == "IR314"


def test_interval_dims_in_the_middle(tmp_path):
    layers = [
        parameter(0, "x", "2,1..5,?", "u8", dims=[2, -1, -1]),
        const(1, "axes", "i32", "2", 0, 8, dims=[2]),
        layer(2, "flip", "Reverse", inputs=[[2, -1, -1], [2]], outputs=[[2, -1, -1]],
              data={"mode": "index"}),
        result(3, "out", [2, -1, -1]),
    ]
    path = write_ir(tmp_path, net(layers, [(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 3, 0)]),
                    np.array([1, 2], np.int32).tobytes())
    model = irexec.read_model(path)
    assert str(model.outputs[0].partial_shape) == "[2,1..5,?]"
    compiled = irexec.compile_model(model)
    for middle, last in [(1, 0), (5, 9), (3, 100)]:
        x = np.arange(2 * middle * last, dtype=np.uint8).reshape(2, middle, last)
        (y,) = compiled({"x": x}).values()
        np.testing.assert_array_equal(y, x[:, ::-1, ::-1])
    with pytest.raises(irexec.IRError) as e:
        compiled({"x": np.zeros((2, 6, 1), np.uint8)})
    assert e.value.code == "IR604" and "[2,1..5,?]" in str(e.value)
