"""Transpose-1, Split-1 and VariadicSplit-1: examples, numpy properties, bad values at read
and run time, views and the tiled copy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.ir.shape import PartialShape
from irexec.kernels.strided_copy import copy_into
from tests.ops.movement.cases import Param, read_error, run, same_error_both_ways, shape_of
from tests.ops.support import TYPE_NAMES, assert_same_bits, random_values


def data(*shape, dtype=np.float32):
    return np.arange(int(np.prod(shape))).reshape(shape).astype(dtype)


# --- Transpose ----------------------------------------------------------------------------------

def test_transpose_order_and_empty_order():
    x = data(2, 3, 4)
    assert_same_bits(run("Transpose", Param(x), np.array([2, 0, 1])), x.transpose(2, 0, 1))
    assert_same_bits(run("Transpose", Param(x), np.zeros(0, np.int64)), x.transpose())
    assert shape_of("Transpose", Param(x), np.array([2, 0, 1])) == PartialShape([4, 2, 3])


def test_transpose_unknown_order_gives_the_hull_of_the_dims():
    assert shape_of("Transpose", Param(data(2, 5)), Param(np.array([1, 0]))) == PartialShape(
        [(2, 5), (2, 5)])


@pytest.mark.parametrize("order, code", [([0, 1], "IR307"), ([0, 1, 3], "IR306"),
                                         ([0, 1, -1], "IR306"), ([0, 1, 1], "IR333")])
def test_transpose_bad_orders(order, code):
    x = data(2, 3, 4)
    same_error_both_ways("Transpose", [Param(x), np.array(order)],
                         [Param(x), Param(np.array(order), shape=[-1])], code)


def test_identity_order_copies():
    from irexec.ops.movement.transpose import Transpose

    x = data(2, 3)
    out = Transpose.kernel(x, np.array([0, 1]))
    assert_same_bits(out, x) and not np.shares_memory(out, x)
    assert not np.shares_memory(run("Transpose", Param(x), np.array([0, 1])), x)


@pytest.mark.parametrize("shape, order", [((300, 700), (1, 0)), ((2, 64, 40, 48), (0, 2, 3, 1)),
                                          ((3, 130, 9, 70), (3, 1, 0, 2)),
                                          ((1, 3, 256, 256), (0, 2, 3, 1))])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.float64])
def test_tiled_copy_of_large_transposes(shape, order, dtype):
    x = np.random.default_rng(0).integers(0, 200, size=shape).astype(dtype)
    out = np.empty([shape[a] for a in order], dtype)
    copy_into(out, x.transpose(order))
    assert_same_bits(out, x.transpose(order))
    reversed_view = x[::-1]  # negative strides too
    copy_into(out, reversed_view.transpose(order))
    assert_same_bits(out, reversed_view.transpose(order))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 23), min_size=2, max_size=4), st.data(),
       st.sampled_from(TYPE_NAMES))
def test_property_tiled_copy_equals_numpy(shape, draw, type_name):
    """The tiled paths with their sizes shrunk so that small arrays take them: partial tiles
    at every edge, padded scratch rows, short output rows copied band by band, negative
    strides, every element type."""
    from irexec.kernels import strided_copy

    order = draw.draw(st.permutations(range(len(shape))))
    flips = tuple(slice(None, None, -1) if draw.draw(st.booleans()) else slice(None)
                  for _ in shape)
    x = random_values(type_name, shape, np.random.default_rng(len(shape)))[flips]
    expected = np.ascontiguousarray(x.transpose(order))
    sizes = dict(SMALL=0, TILE=draw.draw(st.sampled_from([1, 64, 512])),
                 EDGE=draw.draw(st.integers(1, 9)), RUN=draw.draw(st.integers(1, 9)),
                 NARROW=draw.draw(st.integers(1, 6)), BAND=draw.draw(st.sampled_from([1, 50, 400])))
    saved = {k: getattr(strided_copy, k) for k in sizes}
    try:
        for k, v in sizes.items():
            setattr(strided_copy, k, v)
        out = np.empty(expected.shape, expected.dtype)
        copy_into(out, x.transpose(order))
    finally:
        for k, v in saved.items():
            setattr(strided_copy, k, v)
    assert_same_bits(out, expected)


@pytest.mark.parametrize("type_name", TYPE_NAMES)
def test_transpose_every_element_type(type_name):
    x = random_values(type_name, (2, 3, 4), np.random.default_rng(5))
    out = run("Transpose", Param(x, type_name=type_name), np.array([1, 2, 0]))
    assert_same_bits(out, np.ascontiguousarray(x.transpose(1, 2, 0)))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=0, max_size=5), st.data())
def test_property_transpose_equals_numpy(shape, draw):
    x = data(*shape)
    order = draw.draw(st.permutations(range(len(shape))))
    as_param = draw.draw(st.booleans())
    values = np.array(order, np.int64)
    out = run("Transpose", Param(x), Param(values) if as_param else values)
    assert_same_bits(out, x.transpose(order))


# --- Split and VariadicSplit --------------------------------------------------------------------

def test_split_spec_example():
    x = data(6, 12, 10, 24)
    parts = run("Split", Param(x), np.array(1), outputs=3, num_splits=3)
    for part, expected in zip(parts, np.split(x, 3, axis=1)):
        assert_same_bits(part, expected)


def test_split_negative_axis_and_runtime_axis():
    x = data(2, 6)
    parts = run("Split", Param(x), Param(np.array(-1)), outputs=2, num_splits=2)
    assert_same_bits(parts[1], x[:, 3:])


def test_split_uneven_is_an_error_both_ways():
    x = data(2, 5)
    message = same_error_both_ways("Split", [Param(x), np.array(1)],
                                   [Param(x), Param(np.array(1))], "IR329", outputs=2,
                                   num_splits=2)
    assert "5" in message


def test_split_zero_parts_is_an_attribute_error():
    assert read_error("Split", Param(data(2)), np.array(0), outputs=1, num_splits=0).code == \
        "IR302"


def test_split_parts_are_views():
    from irexec.ops.movement.split import Split
    from irexec.ops.movement.variadic_split import VariadicSplit

    x = data(4, 3)
    parts = Split.kernel(x, np.array(0), num_splits=2)
    assert all(np.shares_memory(p, x) and p.flags.c_contiguous for p in parts)
    parts = VariadicSplit.kernel(x, np.array(0), np.array([1, -1]))
    assert all(np.shares_memory(p, x) for p in parts)


@pytest.mark.parametrize("lengths, expected", [([1, 2, -1], [1, 2, 3]), ([0, 6], [0, 6]),
                                               ([-1], [6])])
def test_variadic_split(lengths, expected):
    x = data(2, 6)
    parts = run("VariadicSplit", Param(x), np.array(1), np.array(lengths), outputs=len(lengths))
    parts = parts if isinstance(parts, tuple) else (parts,)
    assert [p.shape[1] for p in parts] == expected
    assert_same_bits(np.concatenate(parts, axis=1), x)


@pytest.mark.parametrize("lengths, code", [([1, -1, -1], "IR327"), ([2, -3, 7], "IR327"),
                                           ([2, 2], "IR329"), ([5, 5, -1], "IR329")])
def test_variadic_split_bad_lengths(lengths, code):
    x = data(2, 6)
    same_error_both_ways("VariadicSplit", [Param(x), np.array(1), np.array(lengths)],
                         [Param(x), np.array(1), Param(np.array(lengths))], code,
                         outputs=len(lengths))


def test_variadic_split_dynamic_dim():
    x = Param(data(2, 6), shape=[2, -1])
    shapes = shape_of("VariadicSplit", x, np.array(1), np.array([2, -1]), outputs=2)
    assert shapes == [PartialShape([2, 2]), PartialShape([2, -1])]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_property_variadic_split_equals_numpy(shape, draw):
    x = data(*shape)
    axis = draw.draw(st.integers(-len(shape), len(shape) - 1))
    dim = shape[axis]
    cuts = sorted(draw.draw(st.lists(st.integers(0, dim), max_size=3)))
    lengths = np.diff([0, *cuts, dim]).tolist()
    if draw.draw(st.booleans()):
        lengths[draw.draw(st.integers(0, len(lengths) - 1))] = -1
    parts = run("VariadicSplit", Param(x), np.array(axis), np.array(lengths),
                outputs=len(lengths))
    parts = parts if isinstance(parts, tuple) else (parts,)
    expected = np.split(x, np.cumsum(np.diff([0, *cuts, dim]))[:-1], axis=axis)
    for part, e in zip(parts, expected):
        assert_same_bits(part, e)
