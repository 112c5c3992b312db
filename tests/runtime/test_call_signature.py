"""Calls like one before skip shape inference (runtime/plan.py ``call_signature``): an LLM's
decode steps differ only in the growing length, so after the first calls no layer is inferred
again; value domains are still checked, and a call a skipped check would have refused still
fails with the rule's own error."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder
from irexec.errors import IRError
from irexec.runtime import plan as plan_module


def _counting(compiled):
    """Count the full checks of the compiled model's steps."""
    counts = {"checks": 0}
    for step in compiled.plan.steps:
        if step.check is not None:
            original = step.check

            def counted(args, original=original):
                counts["checks"] += 1
                return original(args)
            object.__setattr__(step, "check", counted)
    return counts


def _adder():
    b = ModelBuilder("add")
    x = b.parameter("x", "f32", [-1, -1])
    y = b.parameter("y", "f32", [-1, -1])
    b.result(b.op("Relu", b.op("Add", x, y, name="sum")), "out")
    return b.build()


def test_a_call_like_one_before_infers_nothing():
    compiled = irexec.compile_model(_adder())
    counts = _counting(compiled)
    compiled({"x": np.ones((2, 5), np.float32), "y": np.ones((2, 5), np.float32)})
    first = counts["checks"]
    assert first > 0
    for length in (6, 7, 50):  # a growing length: the same signature
        out = compiled({"x": np.ones((2, length), np.float32),
                        "y": np.full((2, length), 2, np.float32)})[0]
        assert out.shape == (2, length) and np.all(out == 3)
    assert counts["checks"] == first
    compiled({"x": np.ones((1, 5), np.float32), "y": np.ones((1, 5), np.float32)})
    assert counts["checks"] > first  # a dim of 1 broadcasts: another signature


def test_a_bad_call_with_a_known_signature_still_gets_the_rule_error():
    compiled = irexec.compile_model(_adder())
    compiled({"x": np.ones((2, 5), np.float32), "y": np.ones((2, 5), np.float32)})
    with pytest.raises(IRError) as e:
        compiled({"x": np.ones((2, 5), np.float32), "y": np.ones((2, 6), np.float32)})
    assert "sum" in str(e.value.diagnostics[0].location.layer_name)


def test_value_domains_are_checked_on_every_call():
    b = ModelBuilder("reshape")
    data = b.parameter("data", "f32", [-1, 4])
    shape = b.parameter("shape", "i64", [2])
    b.result(b.op("Reshape", data, shape, special_zero=False, name="r"), "out")
    compiled = irexec.compile_model(b.build())
    data_value = np.arange(20, dtype=np.float32).reshape(5, 4)
    compiled({"data": data_value, "shape": np.array([10, 2])})
    with pytest.raises(IRError) as e:  # the same signature; 3 x 4 is not 20 elements
        compiled({"data": data_value, "shape": np.array([3, 4])})
    assert e.value.diagnostics[0].location.layer_name == "r"
    out = compiled({"data": data_value, "shape": np.array([2, 10])})[0]
    np.testing.assert_array_equal(out, data_value.reshape(2, 10))


def test_signatures_see_sizes_from_two_up_alike():
    a = [np.zeros((1, 7), np.float32), np.array([3, -1, 0, 1], np.int64)]
    b = [np.zeros((1, 9), np.float32), np.array([8, -1, 0, 1], np.int64)]
    c = [np.zeros((1, 9), np.float32), np.array([8, -1, 1, 1], np.int64)]
    assert plan_module.signature(a) == plan_module.signature(b) != plan_module.signature(c)
    big = np.arange(100, dtype=np.int64)
    assert plan_module.signature([big]) == plan_module.signature([big + 5])  # not by value
