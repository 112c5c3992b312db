"""The spec's rules checked against each call's inputs where the model left them open (dynamic
shapes or element types, checked values given at run time): the same code and message as when
the same values are known at read time, and no check at all where everything was known."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder


def _read_time_error(build) -> irexec.IRError:
    with pytest.raises(irexec.IRError) as info:
        build().build()
    return info.value


def _run_time_error(compiled, inputs) -> irexec.IRError:
    with pytest.raises(irexec.IRError) as info:
        compiled(inputs)
    return info.value


def _same(read: irexec.IRError, run: irexec.IRError) -> None:
    assert [(d.code, d.message) for d in run.diagnostics] == \
        [(d.code, d.message) for d in read.diagnostics]


def test_reverse_axis_out_of_range_same_at_read_and_run_time():
    def static():
        b = ModelBuilder()
        x = b.parameter("x", "f32", [2, 3])
        b.result(b.op("Reverse", x, b.constant(np.array([0, -3], np.int64)), mode="index",
                      name="rev"))
        return b

    b = ModelBuilder()
    x = b.parameter("x", "f32", [2, 3])
    axes = b.parameter("axes", "i64", [2])
    b.result(b.op("Reverse", x, axes, mode="index", name="rev"))
    compiled = irexec.compile_model(b.build())
    run = _run_time_error(compiled, [np.zeros((2, 3), np.float32), np.array([0, -3])])
    assert run.code == "IR306"
    _same(_read_time_error(static), run)


def test_reverse_mask_length_same_at_read_and_run_time():
    def static():
        b = ModelBuilder()
        x = b.parameter("x", "f32", [2, 3, 4])
        mask = b.parameter("mask", "boolean", [2])
        b.result(b.op("Reverse", x, mask, mode="mask", name="rev"))
        return b

    b = ModelBuilder()
    x = b.parameter("x", "f32", [2, 3, 4])
    mask = b.parameter("mask", "boolean", [-1])
    b.result(b.op("Reverse", x, mask, mode="mask", name="rev"))
    compiled = irexec.compile_model(b.build())
    run = _run_time_error(compiled, [np.zeros((2, 3, 4), np.float32), np.ones(2, bool)])
    assert run.code == "IR314"
    _same(_read_time_error(static), run)


def test_reverse_sequence_batch_mismatch_same_at_read_and_run_time():
    def static():
        b = ModelBuilder()
        x = b.parameter("x", "f32", [2, 3])
        lengths = b.parameter("lengths", "i32", [3])
        b.result(b.op("ReverseSequence", x, lengths, name="rs"))
        return b

    b = ModelBuilder()
    x = b.parameter("x", "f32", [-1, -1])
    lengths = b.parameter("lengths", "i32", [-1])
    b.result(b.op("ReverseSequence", x, lengths, name="rs"))
    compiled = irexec.compile_model(b.build())
    run = _run_time_error(compiled, [np.zeros((2, 3), np.float32), np.ones(3, np.int32)])
    assert run.code == "IR307"
    _same(_read_time_error(static), run)


def test_reverse_sequence_lengths_checked_at_run_time_as_constants_are_at_read_time():
    def static():
        b = ModelBuilder()
        x = b.parameter("x", "f32", [2, 3])
        b.result(b.op("ReverseSequence", x, b.constant(np.array([1, 4], np.int32)), name="rs"))
        return b

    b = ModelBuilder()
    x = b.parameter("x", "f32", [2, 3])
    lengths = b.parameter("lengths", "i32", [2])
    b.result(b.op("ReverseSequence", x, lengths, name="rs"))
    compiled = irexec.compile_model(b.build())
    run = _run_time_error(compiled, [np.zeros((2, 3), np.float32), np.array([1, 4], np.int32)])
    assert run.code == "IR308"
    _same(_read_time_error(static), run)


def test_dynamic_element_type_checked_against_the_type_rule_at_run_time():
    b = ModelBuilder()
    x = b.parameter("x", "f32", [2, 3])
    lengths = b.parameter("lengths", "dynamic", [2])
    b.result(b.op("ReverseSequence", x, lengths, name="rs"))
    compiled = irexec.compile_model(b.build())
    out = compiled([np.arange(6, dtype=np.float32).reshape(2, 3), np.array([2, 1], np.int64)])
    np.testing.assert_array_equal(out["rs"], [[1, 0, 2], [3, 4, 5]])
    run = _run_time_error(compiled, [np.zeros((2, 3), np.float32), np.ones(2, bool)])
    assert run.code == "IR304" and "boolean" in str(run)


def test_dynamic_rank_axis_checked_when_the_rank_is_known():
    b = ModelBuilder()
    x = b.parameter("x", "f32", None)
    lengths = b.parameter("lengths", "u32", None)
    b.result(b.op("ReverseSubsequences", x, lengths, axis=2, name="rss"))
    compiled = irexec.compile_model(b.build())
    run = _run_time_error(compiled, [np.zeros((2, 3), np.float32), np.ones((2, 1), np.uint32)])
    assert run.code == "IR306" and run.diagnostics[0].location.layer_name == "rss"


def test_negative_axis_against_a_dynamic_rank_is_refused_at_read_time():
    """OpenVINO refuses the model at read time (its shape inference needs a static rank to
    resolve a negative axis); so does irexec, with its own code (IR315)."""
    b = ModelBuilder()
    x = b.parameter("x", "f32", None)
    lengths = b.parameter("lengths", "i32", [-1])
    b.result(b.op("ReverseSequence", x, lengths, batch_axis=0, seq_axis=-1, name="rs"))
    error = _read_time_error(lambda: b)
    assert error.code == "IR315" and "seq_axis -1" in str(error)


def test_only_layers_with_open_rules_are_checked_per_call():
    b = ModelBuilder()
    x = b.parameter("x", "f32", [2, 3])
    flipped = b.op("Reverse", x, b.constant(np.array([1], np.int64)), mode="index", name="rev")
    lengths = b.parameter("lengths", "i32", [2])
    b.result(b.op("ReverseSequence", flipped, lengths, name="rs"))
    plan = irexec.compile_model(b.build()).plan
    checked = {step.layer for step in plan.steps if step.check is not None}
    assert checked == {"rs"}  # its lengths arrive at run time; Reverse's axes are a constant
    assert "checked per call" in str(plan)
