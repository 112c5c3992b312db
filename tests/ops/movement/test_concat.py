"""Concat-1: numpy's concatenate, checked rules, partial shapes, and OpenVINO bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec.builder import ModelBuilder
from irexec.ir.shape import PartialShape
from tests.ops.support import (PLAIN_TYPE_NAMES, TYPE_NAMES, assert_same_bits, dtype_of,
                               random_values)


def _concat(shapes, axis, type_name="f32"):
    b = ModelBuilder()
    ports = [b.parameter(f"x{i}", type_name, s) for i, s in enumerate(shapes)]
    b.result(b.op("Concat", *ports, axis=axis, name="c"))
    return b


@st.composite
def cases(draw):
    rank = draw(st.integers(1, 4))
    base = draw(st.lists(st.integers(0, 3), min_size=rank, max_size=rank))
    axis = draw(st.integers(0, rank - 1))
    count = draw(st.integers(1, 4))
    sizes = draw(st.lists(st.integers(0, 3), min_size=count, max_size=count))
    shapes = [tuple(n if d == axis else base[d] for d in range(rank)) for n in sizes]
    negative = draw(st.booleans())
    type_name = draw(st.sampled_from(PLAIN_TYPE_NAMES))
    return shapes, axis - rank if negative else axis, type_name, draw(st.integers(0, 2**31))


@settings(max_examples=60, deadline=None)
@given(cases())
def test_equals_numpy_concatenate(case):
    shapes, axis, type_name, seed = case
    rng = np.random.default_rng(seed)
    arrays = [random_values(type_name, s, rng) for s in shapes]
    model = _concat(shapes, axis, type_name).build()
    expected = np.concatenate(arrays, axis=axis)
    assert model.outputs[0].partial_shape == PartialShape(expected.shape)
    out = irexec.compile_model(model)(arrays)["c"]
    assert out.dtype == expected.dtype and out.shape == expected.shape
    assert out.tobytes() == expected.tobytes()


@pytest.mark.parametrize("type_name", TYPE_NAMES)
def test_every_element_type_on_both_axes(type_name):
    rng = np.random.default_rng(3)
    for axis, shapes in ((0, [(3, 5), (1, 5), (2, 5)]), (-1, [(4, 2), (4, 3)])):
        arrays = [random_values(type_name, s, rng) for s in shapes]
        out = irexec.compile_model(_concat(shapes, axis, type_name).build())(arrays)["c"]
        assert_same_bits(out, np.concatenate(arrays, axis=axis))


def test_outputs_of_earlier_calls_stay_as_they_were():
    """The output comes from reused memory (kernels/buffers.py): an output the caller still
    holds is never that memory; one it dropped may be."""
    shapes = [(64, 300), (64, 212)]  # 256 KiB of output: pooled
    compiled = irexec.compile_model(_concat(shapes, 1).build())
    rng = np.random.default_rng(4)
    calls = [[rng.standard_normal(s, dtype=np.float32) for s in shapes] for _ in range(4)]
    kept = [compiled(arrays)["c"] for arrays in calls]
    for arrays, out in zip(calls, kept):
        assert_same_bits(out, np.concatenate(arrays, axis=1))
    del kept
    for arrays in calls:
        assert_same_bits(compiled(arrays)["c"], np.concatenate(arrays, axis=1))


def test_partial_shapes_add_along_the_axis_and_merge_elsewhere():
    model = _concat([[2, -1], [(1, 4), 3]], 0).build()
    assert str(model.outputs[0].partial_shape) == "[3..6,3]"
    model = _concat([None, [2, 3]], 1).build()
    assert str(model.outputs[0].partial_shape) == "[2,3..]"


@pytest.mark.parametrize("shapes, axis, code, words", [
    ([[2, 3], [2, 4]], 0, "IR307", "differs from [2,3] in dim 1"),
    ([[2, 3], [2, 3, 1]], 0, "IR307", "rank 2 and 3"),
    ([[2, 3], [2, 3]], 2, "IR306", "axis 2 is out of range [-2, 1]"),
    ([None, None], -1, "IR315", "axis -1 is negative"),
])
def test_bad_inputs_are_one_diagnostic(shapes, axis, code, words):
    with pytest.raises(irexec.IRError) as info:
        _concat(shapes, axis).build()
    assert [d.code for d in info.value.diagnostics] == [code]
    assert words in str(info.value)


def test_mixed_element_types_are_ir304():
    b = ModelBuilder()
    b.result(b.op("Concat", b.parameter("a", "f32", [1]), b.parameter("b", "i32", [1]), axis=0))
    with pytest.raises(irexec.IRError) as info:
        b.build()
    assert info.value.code == "IR304" and "same element type" in str(info.value)


def test_no_input_is_ir303():
    b = ModelBuilder()
    b.result(b.op("Concat", axis=0, name="c"))
    with pytest.raises(irexec.IRError) as info:
        b.build()
    assert info.value.code == "IR303" and "at least 1" in str(info.value)


def test_dynamic_dims_are_checked_per_call_with_the_read_time_message():
    compiled = irexec.compile_model(_concat([[2, -1], [2, -1]], 0).build())
    with pytest.raises(irexec.IRError) as info:
        compiled([np.zeros((2, 3), np.float32), np.zeros((2, 4), np.float32)])
    static = _concat([[2, 3], [2, 4]], 0)
    with pytest.raises(irexec.IRError) as read:
        static.build()
    assert str(info.value) == str(read.value)


@pytest.mark.parametrize("type_name", PLAIN_TYPE_NAMES)
def test_openvino_agrees_bit_for_bit(tmp_path, type_name):
    ov = pytest.importorskip("openvino")
    from tests.conformance.oracle import run_both, same_bits
    from tests.conformance.test_openvino import safe_data  # values the CPU plugin keeps intact

    rng = np.random.default_rng(7)
    shapes, axis = [(2, 1, 3), (2, 4, 3), (2, 0, 3)], -2
    model = _concat(shapes, axis, type_name).build()
    xml = tmp_path / "concat.xml"
    irexec.save_model(model, xml)
    inputs = {f"x{i}": safe_data("Reverse", type_name, s, rng) for i, s in enumerate(shapes)}
    ours, theirs = run_both(ov, xml, inputs)
    assert same_bits(ours["c"], theirs["c"]), (ours["c"], theirs["c"])
    assert ours["c"].dtype == dtype_of(type_name)
