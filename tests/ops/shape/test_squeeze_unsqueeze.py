"""Squeeze-1, Squeeze-15 and Unsqueeze-1: the specification's examples, axes OpenVINO reads in
its own way (a named dim that is not 1, repeated axes), dynamic dims, bad axes, views."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec.builder import ModelBuilder
from irexec.ir.shape import PartialShape
from tests.ops.movement.cases import Param, run, same_error_both_ways, shape_of
from tests.ops.support import TYPE_NAMES, assert_same_bits, random_values


def data(*shape):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


def warnings_of(op_type, *inputs, version="opset16", **attrs):
    from tests.ops.movement.cases import build
    b, _ = build(op_type, inputs, version, None, **attrs)
    return [d.code for d in b.build().diagnostics]


@pytest.mark.parametrize("version", ["opset1", "opset15"])
def test_squeeze_spec_examples(version):
    x = data(1, 3, 1, 2)
    assert_same_bits(run("Squeeze", Param(x), np.array([0, 2]), version=version), x.reshape(3, 2))
    one = np.array([5.0], np.float32)
    out = run("Squeeze", Param(one), np.array([0]), version=version)
    assert out.shape == () and out == 5.0


@pytest.mark.parametrize("version", ["opset1", "opset15"])
def test_squeeze_without_axes_drops_every_one(version):
    x = data(1, 3, 1, 2, 1)
    assert run("Squeeze", Param(x), version=version).shape == (3, 2)
    assert run("Squeeze", Param(x), np.zeros(0, np.int64), version=version).shape == (3, 2)


def test_squeeze_keeps_a_named_dim_that_is_not_one_and_warns():
    x = data(1, 3, 2)
    out = run("Squeeze", Param(x), np.array([0, 1]))
    assert out.shape == (3, 2)
    assert warnings_of("Squeeze", Param(x), np.array([0, 1])) == ["IR328"]


def test_squeeze_repeated_axis_counts_once_and_warns():
    x = data(1, 3)
    assert run("Squeeze", Param(x), np.array([0, -2])).shape == (3,)
    assert warnings_of("Squeeze", Param(x), np.array([0, -2])) == ["IR334"]


def test_squeeze_dynamic_dims():
    x = Param(data(1, 3), shape=[-1, 3])
    assert shape_of("Squeeze", x, np.array([0]), version="opset1") == PartialShape([3])
    assert shape_of("Squeeze", x, np.array([0]), version="opset15",
                    allow_axis_skip=False) == PartialShape([3])
    assert not shape_of("Squeeze", x, np.array([0]), version="opset15",
                        allow_axis_skip=True).rank_is_static
    assert not shape_of("Squeeze", x, version="opset1").rank_is_static
    # a dynamic dim that cannot be 1 is kept without axes
    assert shape_of("Squeeze", Param(data(2, 1), shape=[(2, 5), 1])) == PartialShape([(2, 5)])


def test_squeeze_run_time_axes():
    x = data(1, 3, 1)
    assert run("Squeeze", Param(x), Param(np.array([2]))).shape == (1, 3)
    assert shape_of("Squeeze", Param(x), Param(np.array([2])), version="opset1") == \
        PartialShape([-1, -1])


@pytest.mark.parametrize("axes", [[3], [-4], [0, 7]])
def test_squeeze_axis_out_of_range(axes):
    x = data(1, 3, 1)
    message = same_error_both_ways("Squeeze", [Param(x), np.array(axes)],
                                   [Param(x), Param(np.array(axes))], "IR306")
    assert "out of range" in message


def test_unsqueeze_spec_examples():
    x = data(2, 3)
    assert run("Unsqueeze", Param(x), np.array([0, 3])).shape == (1, 2, 3, 1)
    assert run("Unsqueeze", Param(np.array(2.5, np.float32)), np.array([0])).shape == (1,)


@pytest.mark.parametrize("axes, shape", [([-1], (2, 3, 1)), ([0, -1], (1, 2, 3, 1)),
                                         ([1, 1], (2, 1, 3)), ([3, -1], (2, 3, 1))])
def test_unsqueeze_axes_and_repeats(axes, shape):
    """Axes number the output; a value given twice counts once, and two values naming one
    output dim insert one (OpenVINO's reading: [3, -1] on rank 2 gives rank 3)."""
    out = run("Unsqueeze", Param(data(2, 3)), np.array(axes))
    assert out.shape == shape


def test_unsqueeze_collision_warns():
    assert warnings_of("Unsqueeze", Param(data(2, 3)), np.array([3, -1])) == ["IR334"]


@pytest.mark.parametrize("axes", [[4], [-5], [0, 9]])
def test_unsqueeze_axis_out_of_range(axes):
    x = data(2, 3)
    same_error_both_ways("Unsqueeze", [Param(x), np.array(axes)],
                         [Param(x), Param(np.array(axes))], "IR306")


def test_unsqueeze_empty_axes_is_an_error():
    x = data(2, 3)
    same_error_both_ways("Unsqueeze", [Param(x), np.zeros(0, np.int64)],
                         [Param(x), Param(np.zeros(0, np.int64))], "IR308")


def test_results_are_views():
    from irexec.ops.shape.squeeze import squeeze
    from irexec.ops.shape.unsqueeze import Unsqueeze

    x = data(1, 4, 1)
    assert np.shares_memory(squeeze(x, np.array([0])), x)
    assert np.shares_memory(Unsqueeze.kernel(x, np.array([0])), x)


def test_a_view_of_the_caller_input_is_copied_but_not_a_view_of_an_intermediate():
    b = ModelBuilder()
    x = b.parameter("x", "f32", [1, 4])
    s = b.op("Squeeze", x, b.constant(np.array([0])), name="direct")
    t = b.op("Transpose", x, b.constant(np.array([1, 0])), name="t")
    u = b.op("Squeeze", t, b.constant(np.array([1])), name="of_intermediate")
    b.result(s)
    b.result(u)
    compiled = irexec.compile_model(b.build())
    value = data(1, 4)
    out = compiled({"x": value})
    assert not np.shares_memory(out["direct"], value)
    assert_same_bits(out["of_intermediate"], value.reshape(4))


@pytest.mark.parametrize("type_name", TYPE_NAMES)
def test_every_element_type(type_name):
    x = random_values(type_name, (1, 3, 1), np.random.default_rng(3))
    assert_same_bits(run("Squeeze", Param(x, type_name=type_name), np.array([2])),
                     x.reshape(1, 3))
    assert_same_bits(run("Unsqueeze", Param(x, type_name=type_name), np.array([1])),
                     x.reshape(1, 1, 3, 1))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=0, max_size=4), st.data())
def test_property_unsqueeze_equals_expand_dims(shape, draw):
    x = data(*shape)
    count = draw.draw(st.integers(1, 3))
    rank = len(shape) + count
    axes = draw.draw(st.lists(st.integers(-rank, rank - 1), min_size=count, max_size=count,
                              unique_by=lambda a: a % rank))
    out = run("Unsqueeze", Param(x), np.array(axes))
    assert_same_bits(out, np.expand_dims(x, tuple(axes)))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=5), st.data())
def test_property_squeeze_equals_numpy(shape, draw):
    x = data(*shape)
    ones = [i for i, n in enumerate(shape) if n == 1]
    axes = draw.draw(st.lists(st.sampled_from(ones), unique=True)) if ones else []
    out = run("Squeeze", Param(x), np.array(axes, np.int64), version="opset1")
    assert_same_bits(out, np.squeeze(x, tuple(axes)) if axes else np.squeeze(x))
