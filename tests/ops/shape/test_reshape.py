"""Reshape-1: the specification's examples, special_zero, -1, the values OpenVINO settles, bad
targets (IR327, IR326) at read time and at run time, views, every element type."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.ir.shape import PartialShape
from tests.ops.movement.cases import Param, read_error, run, same_error_both_ways, shape_of
from tests.ops.support import TYPE_NAMES, assert_same_bits, random_values


def data(*shape):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


@pytest.mark.parametrize("shape, target, special_zero, expected", [
    ((2, 5, 5, 0), [0, 4], False, (0, 4)),  # example 1: an empty tensor
    ((2, 5, 5, 24), [0, -1, 4], True, (2, 150, 4)),  # example 2
    ((2, 2, 3), [0, 0, 1, -1], True, (2, 2, 1, 3)),  # example 3
    ((3, 1, 1), [-1, 0], True, (3, 1)),  # example 4
    ((3, 1, 1), [0, -1], True, (3, 1)),  # example 5
])
def test_spec_examples(shape, target, special_zero, expected):
    x = data(*shape)
    out = run("Reshape", Param(x), np.array(target, np.int64), special_zero=special_zero,
              version="opset1")
    assert out.shape == expected
    assert_same_bits(out, x.reshape(expected))
    assert shape_of("Reshape", Param(x), np.array(target, np.int64),
                    special_zero=special_zero) == PartialShape(expected)


@pytest.mark.parametrize("target, expected", [([0, -1], (0, 1)), ([-1, 0], (1, 0)),
                                              ([2, -1], (2, 0))])
def test_minus_one_beside_a_zero_size_is_one(target, expected):
    """OpenVINO sizes -1 as 1 when the other sizes already make an empty tensor (numpy refuses
    the ambiguous case)."""
    out = run("Reshape", Param(np.zeros((0, 3), np.float32)), np.array(target), special_zero=False)
    assert out.shape == expected


def test_scalar_target_one_makes_a_scalar():
    out = run("Reshape", Param(np.array([7.5], np.float32)), np.array(1, np.int64),
              special_zero=False)
    assert out.shape == () and out == 7.5


@pytest.mark.parametrize("shape_type", ["i8", "i32", "i64", "u8", "u64", "i4"])
def test_shape_of_any_integer_type(shape_type):
    x = data(2, 6)
    from tests.ops.movement.cases import Const
    out = run("Reshape", Param(x), Const(np.array([3, 4]), shape_type), special_zero=False)
    assert_same_bits(out, x.reshape(3, 4))


def test_runtime_target():
    x = data(2, 3, 4)
    out = run("Reshape", Param(x), Param(np.array([4, -1, 2], np.int64)), special_zero=False)
    assert_same_bits(out, x.reshape(4, 3, 2))
    assert shape_of("Reshape", Param(x), Param(np.array([4, -1, 2])),
                    special_zero=False) == PartialShape([-1] * 3)


def test_dynamic_batch_keeps_the_known_dims():
    x = Param(data(2, 12, 64), shape=[-1, 12, 64])
    assert shape_of("Reshape", x, np.array([0, -1]), special_zero=True) == PartialShape([-1, 768])
    assert shape_of("Reshape", x, np.array([-1, 768]), special_zero=False) == PartialShape(
        [-1, 768])
    bounded = Param(data(2, 12, 64), shape=[(1, 8), 12, 64])
    assert shape_of("Reshape", bounded, np.array([-1, 64]), special_zero=False) == PartialShape(
        [(12, 96), 64])


@pytest.mark.parametrize("target, special_zero, code, words", [
    ([-1, -1], False, "IR327", "-1 more than once"),
    ([2, -2, 3], False, "IR327", "holds -2"),
    ([0, 0, 0, 0], True, "IR327", "index 3"),
    ([4, 4], False, "IR326", "16 elements"),
    ([5, -1], False, "IR326", "multiple of 5"),
    ([0, 5], True, "IR326", "5 elements"),
])
def test_bad_targets_same_code_at_read_and_run_time(target, special_zero, code, words):
    x = data(2, 3, 4)
    message = same_error_both_ways(
        "Reshape", [Param(x), np.array(target)], [Param(x), Param(np.array(target))], code,
        special_zero=special_zero)
    assert words in message


def test_bad_scalar_target():
    error = read_error("Reshape", Param(data(2)), np.array(2), special_zero=False)
    assert error.code == "IR327"


def test_result_is_a_view_not_a_copy():
    """Reshape of an intermediate costs no copy; the caller's own input is never aliased."""
    from irexec.ops.shape.reshape import Reshape

    x = data(4, 6)
    out = Reshape.kernel(x, np.array([2, 12]), special_zero=False)
    assert np.shares_memory(out, x)
    returned = run("Reshape", Param(x), np.array([2, 12]), special_zero=False)
    assert not np.shares_memory(returned, x)


@pytest.mark.parametrize("type_name", TYPE_NAMES)
def test_every_element_type(type_name):
    x = random_values(type_name, (2, 3, 4), np.random.default_rng(7))
    out = run("Reshape", Param(x, type_name=type_name), np.array([0, -1]), special_zero=True)
    assert_same_bits(out, x.reshape(2, 12))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_property_equals_numpy_reshape(shape, draw):
    x = data(*shape)
    total = x.size
    # a random factorisation of the element count, one size maybe -1, maybe copied zeros
    sizes = []
    left = total
    while left > 1:
        f = draw.draw(st.sampled_from([d for d in range(2, left + 1) if left % d == 0]))
        sizes.append(f)
        left //= f
    sizes = draw.draw(st.permutations(sizes)) or [1]
    if draw.draw(st.booleans()):
        sizes[draw.draw(st.integers(0, len(sizes) - 1))] = -1
    as_param = draw.draw(st.booleans())
    target = np.array(sizes, np.int64)
    out = run("Reshape", Param(x), Param(target) if as_param else target, special_zero=False)
    assert_same_bits(out, x.reshape(sizes))


def test_a_computed_target_with_minus_one_is_sized_from_bounds():
    """x [1..8, 12, 64] reshaped to Concat(x.shape[1] * x.shape[2], -1): the -1 is the batch,
    1..8 (the target's first value is exact from the static dims; its count bounds the -1)."""
    import irexec
    from irexec.builder import ModelBuilder

    def dim_of(b, x, index):
        shape = b.op("ShapeOf", x, version="opset3")
        return b.op("Gather", shape, b.constant(np.array([index])), b.constant(np.array(0)),
                    version="opset8")

    b = ModelBuilder()
    x = b.parameter("x", "f32", [(1, 8), 12, 64])
    inner = b.op("Multiply", dim_of(b, x, 1), dim_of(b, x, 2))
    target = b.op("Concat", inner, b.constant(np.array([-1])), axis=0)
    b.result(b.op("Reshape", x, target, special_zero=False, name="y"), "out")
    model = b.build()
    assert model.outputs[0].partial_shape == PartialShape([768, (1, 8)])
    out = irexec.compile_model(model)({"x": data(3, 12, 64)})["y"]
    assert out.shape == (768, 3)
