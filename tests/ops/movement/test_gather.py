"""Gather-1/7/8, GatherElements-6 and GatherND-5/8: the specifications' examples, negative and
out-of-range indices by version, batch dims, numpy properties, bad values both ways."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.ir.shape import PartialShape
from tests.ops.movement.cases import (Const, Param, read_error, run, same_error_both_ways,
                                      shape_of)
from tests.ops.support import TYPE_NAMES, assert_same_bits, random_values

A = np.array


def f32(values):
    return np.array(values, np.float32)


# --- Gather: the specification's examples (Gather-8 page; 1 to 5 hold for Gather-7 too) --------

EXAMPLES = [
    (0, 0, [1, 2, 3, 4, 5], [0, 0, 4], [1, 1, 5]),
    (1, 1, [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]], [[0, 0, 4], [4, 0, 0]], [[1, 1, 5], [10, 6, 6]]),
    (2, 2, np.arange(1, 21).reshape(2, 2, 5), [[[0, 0, 4], [4, 0, 0]], [[1, 2, 4], [4, 3, 2]]],
     [[[1, 1, 5], [10, 6, 6]], [[12, 13, 15], [20, 19, 18]]]),
    (1, 2, np.arange(1, 41).reshape(2, 1, 5, 4), [[1, 2, 4], [4, 3, 2]],
     [[[[5, 6, 7, 8], [9, 10, 11, 12], [17, 18, 19, 20]]],
      [[[37, 38, 39, 40], [33, 34, 35, 36], [29, 30, 31, 32]]]]),
    (-1, 1, [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]], [[0, 0, 4], [4, 0, 0]],
     [[1, 1, 5], [10, 6, 6]]),
]


@pytest.mark.parametrize("version", ["opset7", "opset8"])
@pytest.mark.parametrize("batch_dims, axis, data, indices, expected", EXAMPLES)
def test_spec_examples(version, batch_dims, axis, data, indices, expected):
    out = run("Gather", Param(f32(data)), A(indices), A(axis), version=version,
              batch_dims=batch_dims)
    assert_same_bits(out, f32(expected))


def test_spec_example_6_negative_indices():
    out = run("Gather", Param(f32([1, 2, 3, 4, 5])), A([0, -2, -1]), A(0), version="opset8")
    assert_same_bits(out, f32([1, 4, 5]))


@pytest.mark.parametrize("as_param", [False, True])
def test_spec_example_7_out_of_range_gives_zeros(as_param):
    indices = A([3, 10, -20])
    out = run("Gather", Param(f32([1, 2, 3, 4, 5])), Param(indices) if as_param else indices,
              A(0), version="opset8")
    assert_same_bits(out, f32([4, 0, 0]))


def test_gather_1_spec_example_shape():
    data = Param(np.zeros((6, 12, 10, 24), np.float32))
    assert shape_of("Gather", data, np.zeros((15, 4, 20, 28), np.int64), A(1),
                    version="opset1") == PartialShape([6, 15, 4, 20, 28, 10, 24])


def test_out_of_range_zeros_for_strings_are_empty():
    words = np.array(["a", "b", "c"], dtype=object)
    out = run("Gather", Param(words), A([2, 5, -1]), A(0), version="opset8")
    assert out.tolist() == ["c", "", "c"]


@pytest.mark.parametrize("version", ["opset1", "opset7"])
@pytest.mark.parametrize("index", [-1, 5, 100])
def test_gather_1_and_7_refuse_indices_outside_0_to_dim(version, index):
    data = f32([1, 2, 3, 4, 5])
    message = same_error_both_ways("Gather", [Param(data), A([0, index]), A(0)],
                                   [Param(data), Param(A([0, index])), A(0)], "IR325",
                                   version=version)
    assert str(index) in message and "[0, 4]" in message


@pytest.mark.parametrize("batch_dims", [3, -4])
def test_batch_dims_out_of_range(batch_dims):
    error = read_error("Gather", Param(np.zeros((2, 3), np.float32)), np.zeros((2, 2), np.int64),
                       A(1), batch_dims=batch_dims)
    assert error.code == "IR302"


def test_batch_dims_above_axis():
    error = read_error("Gather", Param(np.zeros((2, 3, 4), np.float32)),
                       np.zeros((2, 3), np.int64), A(0), batch_dims=1)
    assert error.code == "IR302"


def test_batch_dims_that_differ():
    error = read_error("Gather", Param(np.zeros((2, 3), np.float32)), np.zeros((3, 2), np.int64),
                       A(1), batch_dims=1)
    assert error.code == "IR307"


@pytest.mark.parametrize("axis", [2, -3])
def test_axis_out_of_range(axis):
    data = np.zeros((2, 3), np.float32)
    same_error_both_ways("Gather", [Param(data), A([0]), A(axis)],
                         [Param(data), A([0]), Param(A(axis))], "IR306")


def test_axis_of_two_values():
    assert read_error("Gather", Param(np.zeros((2, 3), np.float32)), A([0]),
                      A([0, 1])).code == "IR308"


def test_dynamic_shapes():
    data = Param(np.zeros((2, 3), np.float32), shape=[-1, 3])
    assert shape_of("Gather", data, Param(A([[0, 1]]), shape=[1, -1]), A(1)) == PartialShape(
        [-1, 1, -1])
    assert shape_of("Gather", data, A([0]), Param(A(1))) == PartialShape([-1, -1])


@pytest.mark.parametrize("type_name", TYPE_NAMES)
def test_every_element_type(type_name):
    x = random_values(type_name, (3, 4), np.random.default_rng(2))
    out = run("Gather", Param(x, type_name=type_name), A([[3, -1], [0, 9]]), A(1))
    expected = np.take(x, [[3, 3], [0, 0]], axis=1)
    expected[:, 1, 1] = np.zeros((), x.dtype) if x.dtype != object else ""
    assert_same_bits(out, expected)


@pytest.mark.parametrize("index_type", ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64",
                                        "i4", "u4"])
def test_indices_of_every_integer_type(index_type):
    x = f32(np.arange(12).reshape(3, 4))
    out = run("Gather", Param(x), Const(A([2, 0, 3]), index_type), A(1))
    assert_same_bits(out, x[:, [2, 0, 3]])


@st.composite
def gather_cases(draw):
    rank = draw(st.integers(1, 4))
    shape = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    axis = draw(st.integers(0, rank - 1))
    b = draw(st.integers(0, axis))
    ishape = shape[:b] + draw(st.lists(st.integers(0, 3), max_size=2))
    dim = shape[axis]
    indices = np.array(draw(st.lists(st.integers(-dim - 2, dim + 1), min_size=int(
        np.prod(ishape)), max_size=int(np.prod(ishape)))), np.int64).reshape(ishape)
    return shape, axis, b, indices, draw(st.booleans()), draw(st.booleans())


def gather_reference(x, indices, axis, b):
    """The Gather-8 formula, element by element."""
    dim = x.shape[axis]
    out_shape = x.shape[:axis] + indices.shape[b:] + x.shape[axis + 1:]
    out = np.zeros(out_shape, x.dtype)
    for where in np.ndindex(*out_shape):
        p = where[:axis]
        i = where[axis:axis + indices.ndim - b]
        rest = where[axis + indices.ndim - b:]
        k = int(indices[p[:b] + i])
        if -dim <= k < dim:
            out[where] = x[p + (k % dim,) + rest]
    return out


@settings(max_examples=60, deadline=None)
@given(gather_cases())
def test_property_gather_8(case):
    shape, axis, b, indices, as_param, negative_axis = case
    x = f32(np.arange(int(np.prod(shape))).reshape(shape) + 1)
    axis_value = A(axis - len(shape) if negative_axis else axis)
    out = run("Gather", Param(x), Param(indices) if as_param else indices, axis_value,
              batch_dims=b)
    assert_same_bits(out, gather_reference(x, indices, axis, b))


@settings(max_examples=40, deadline=None)
@given(gather_cases())
def test_property_gather_1_equals_np_take(case):
    shape, axis, _, indices, as_param, _ = case
    indices = np.clip(indices, 0, shape[axis] - 1)
    x = f32(np.arange(int(np.prod(shape))).reshape(shape))
    out = run("Gather", Param(x), Param(indices) if as_param else indices, A(axis),
              version="opset1")
    assert_same_bits(out, np.take(x, indices, axis=axis))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=4), st.data(),
       st.sampled_from(TYPE_NAMES))
def test_property_staged_take_equals_np_take(shape, draw, type_name):
    """The kernel's staged path (slabs copied into cache first) with its sizes shrunk so that
    small arrays take it, in groups with a partial last one; every element type, indices
    negative and out of range (Gather-8), of any shape."""
    from irexec.ops.movement import gather as module

    axis = draw.draw(st.integers(0, len(shape) - 1))
    dim = shape[axis]
    ishape = draw.draw(st.lists(st.integers(0, 9), max_size=2))
    indices = np.array(draw.draw(st.lists(st.integers(-dim - 1, dim), min_size=int(
        np.prod(ishape)), max_size=int(np.prod(ishape)))), np.int64).reshape(ishape)
    x = random_values(type_name, shape, np.random.default_rng(len(shape)))
    inside = (indices >= -dim) & (indices < dim)
    expected = np.array(np.take(x, np.where(inside, indices % dim, 0), axis=axis), x.dtype)
    outside = np.broadcast_to(~inside.reshape((1,) * axis + inside.shape + (1,) * (
        len(shape) - axis - 1)), expected.shape)
    expected[outside] = "" if x.dtype == object else np.zeros((), x.dtype)
    saved = module.STAGE, module.PIECE
    module.STAGE = draw.draw(st.sampled_from([8, 64, 256, 1024]))
    module.PIECE = 1 << 20
    try:
        out = module.gather(x, indices, np.array(axis), zeros_out_of_range=True)
    finally:
        module.STAGE, module.PIECE = saved
    assert_same_bits(out, expected)


# --- GatherElements ------------------------------------------------------------------------------

@pytest.mark.parametrize("data, indices, axis, expected", [
    ([[1, 2], [3, 4]], [[0, 1], [0, 0]], 0, [[1, 4], [1, 2]]),
    ([[1, 7], [4, 3]], [[1, 1, 0], [1, 0, 1]], 1, [[7, 7, 1], [3, 4, 3]]),
    ([[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[1, 0, 1], [1, 2, 0]], 0, [[4, 2, 6], [4, 8, 3]]),
])
def test_gather_elements_spec_examples(data, indices, axis, expected):
    out = run("GatherElements", Param(f32(data)), A(indices), axis=axis)
    assert_same_bits(out, f32(expected))


def test_gather_elements_negative_indices_count_from_the_end():
    out = run("GatherElements", Param(f32([[1, 2, 3]])), A([[-1, -3, 0]]), axis=1)
    assert_same_bits(out, f32([[3, 1, 1]]))


@pytest.mark.parametrize("index", [3, -4])
def test_gather_elements_out_of_range(index):
    data = f32([[1, 2, 3]])
    same_error_both_ways("GatherElements", [Param(data), A([[0, index]])],
                         [Param(data), Param(A([[0, index]]))], "IR325", axis=1)


def test_gather_elements_shapes_must_agree_but_on_the_axis():
    assert read_error("GatherElements", Param(np.zeros((2, 3), np.float32)),
                      np.zeros((3, 3), np.int64), axis=1).code == "IR307"


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_property_gather_elements_equals_take_along_axis(shape, draw):
    axis = draw.draw(st.integers(0, len(shape) - 1))
    ishape = list(shape)
    ishape[axis] = draw.draw(st.integers(0, 4))
    rng = np.random.default_rng(draw.draw(st.integers(0, 1000)))
    idx = rng.integers(-shape[axis], shape[axis], size=ishape)
    x = f32(np.arange(int(np.prod(shape))).reshape(shape))
    out = run("GatherElements", Param(x), Param(idx), axis=axis - len(shape))
    assert_same_bits(out, np.take_along_axis(x, idx % shape[axis], axis=axis))


# --- GatherND ------------------------------------------------------------------------------------

ND = [
    (0, [[0, 0], [1, 0]], [[1, 2], [3, 4]], [1, 3]),
    (0, [[1], [0]], [[1, 2], [3, 4]], [[3, 4], [1, 2]]),
    (0, [[[1]], [[0]]], [[1, 2], [3, 4]], [[[3, 4]], [[1, 2]]]),
    (1, [[1], [0]], [[1, 2], [3, 4]], [2, 3]),
    (1, [[1], [0]], np.arange(1, 25).reshape(2, 3, 4), [[5, 6, 7, 8], [13, 14, 15, 16]]),
]


@pytest.mark.parametrize("version", ["opset5", "opset8"])
@pytest.mark.parametrize("b, indices, data, expected", ND)
def test_gather_nd_spec_examples(version, b, indices, data, expected):
    out = run("GatherND", Param(f32(data)), A(indices), version=version, batch_dims=b)
    assert_same_bits(out, f32(expected))


def test_gather_nd_batch_dims_2_fused_in_5_kept_in_8():
    data = f32(np.arange(1, 25).reshape(2, 3, 4))
    indices = A([[[1], [0], [2]], [[0], [2], [2]]]).reshape(2, 3, 1, 1)
    out8 = run("GatherND", Param(data), indices, version="opset8", batch_dims=2)
    assert_same_bits(out8, f32([[[2], [5], [11]], [[13], [19], [23]]]))
    out5 = run("GatherND", Param(data), indices, version="opset5", batch_dims=2)
    assert_same_bits(out5, f32([[2], [5], [11], [13], [19], [23]]))


def test_gather_nd_negative_indices():
    out = run("GatherND", Param(f32([[1, 2], [3, 4]])), A([[-1, -2]]))
    assert_same_bits(out, f32([3]))


@pytest.mark.parametrize("version", ["opset5", "opset8"])
def test_gather_nd_out_of_range(version):
    data = f32([[1, 2, 3], [4, 5, 6]])
    message = same_error_both_ways("GatherND", [Param(data), A([[0, 3]])],
                                   [Param(data), Param(A([[0, 3]]))], "IR325", version=version)
    assert "[-3, 2]" in message


def test_gather_nd_tuple_too_long():
    assert read_error("GatherND", Param(np.zeros((2, 3), np.float32)),
                      np.zeros((1, 3), np.int64)).code == "IR307"


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=4), st.data())
def test_property_gather_nd(shape, draw):
    b = draw.draw(st.integers(0, len(shape) - 1))
    k = draw.draw(st.integers(1, len(shape) - b))
    middle = draw.draw(st.lists(st.integers(1, 3), max_size=2))
    rng = np.random.default_rng(draw.draw(st.integers(0, 1000)))
    idx = np.stack([rng.integers(-shape[b + j], shape[b + j], size=shape[:b] + middle)
                    for j in range(k)], axis=-1)
    x = f32(np.arange(int(np.prod(shape))).reshape(shape))
    out = run("GatherND", Param(x), Param(idx), version="opset8", batch_dims=b)
    expected = np.empty(tuple(shape[:b]) + tuple(middle) + tuple(shape[b + k:]), np.float32)
    for where in np.ndindex(*(shape[:b] + middle)):
        tup = tuple(int(v) for v in idx[where])
        expected[where] = x[where[:b] + tup]
    assert_same_bits(out, expected)


# --- where an out-of-range index sits, in plain numbers ------------------------------------------

DATA = np.arange(12, dtype=np.float32).reshape(3, 4)
BAD = A([[0, 7]], np.int64)  # 7 is outside every dim of DATA


@pytest.mark.parametrize("op_type, inputs, attrs", [
    ("Gather", lambda i: (DATA, i, A(1)), {"batch_dims": 0, "version": "opset7"}),
    ("GatherElements", lambda i: (DATA, i), {"axis": 1}),
    ("GatherND", lambda i: (DATA, i), {"batch_dims": 0}),
    ("ScatterUpdate", lambda i: (DATA, i, np.zeros((1, 2, 4), np.float32), A(0)), {}),
    ("ScatterElementsUpdate", lambda i: (DATA, i, np.zeros((1, 2), np.float32), A(0)), {}),
    ("ScatterNDUpdate", lambda i: (DATA, i, np.zeros((1,), np.float32)), {}),
])
def test_the_bad_index_is_named_in_plain_numbers(op_type, inputs, attrs):
    """The six messages said ``indices[np.int64(0), np.int64(1)]``."""
    bad = np.pad(BAD, ((0, 2), (0, 0))) if op_type == "GatherElements" else BAD
    const, param = inputs(bad), inputs(Param(bad))
    message = same_error_both_ways(op_type, const, param, "IR325", **attrs)
    assert "np." not in message and "indices[0, 1] = 7" in message, message


# --- one index: a view of the slab, inside a model; the caller still owns its result -------------

@pytest.mark.parametrize("version", ["opset1", "opset7", "opset8"])
@pytest.mark.parametrize("axis, index", [(0, 1), (1, 2), (2, 0), (-1, 3), (0, -1), (1, 7),
                                         (1, -5)])
def test_one_index(version, axis, index):
    import irexec
    from irexec.builder import ModelBuilder

    value = np.arange(3 * 5 * 4, dtype=np.float32).reshape(3, 5, 4) - 20
    dim = value.shape[axis]
    legal = 0 <= index < dim or (version == "opset8" and -dim <= index < 0)
    b = ModelBuilder()
    t = b.op("Relu", b.parameter("x", "f32", [3, 5, 4]), name="t")
    g = b.op("Gather", t, b.constant(np.array(index)), b.constant(np.array(axis)),
             version=version, name="g")
    b.result(b.op("Multiply", g, b.constant(np.float32(2)), name="m"), "twice")
    b.result(g, "out")
    if not legal and version != "opset8":
        return  # Gather-1/7 refuse such an index (the tests above)
    seen = {}
    twice, out = irexec.compile_model(b.build())(
        {"x": value}, trace=lambda layer, port, array: seen.setdefault(layer.name, array)).values()
    want = np.take(np.maximum(value, 0), index, axis=axis) if legal else \
        np.zeros(np.delete(value.shape, axis % 3), np.float32)  # Gather-8: zeros
    assert out.shape == want.shape and np.array_equal(out, want)
    assert np.array_equal(twice, want * 2)
    # a view of the slab, no copy, where the slab is a good part of its block (a quarter or more)
    assert np.shares_memory(seen["g"], seen["t"]) == (legal and 4 * want.nbytes >= value.nbytes)
    assert not np.shares_memory(out, twice)


def test_one_index_of_the_callers_input_is_copied():
    import irexec
    from irexec.builder import ModelBuilder

    value = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = ModelBuilder()
    b.result(b.op("Gather", b.parameter("x", "f32", [3, 4]), b.constant(np.array(1)),
                  b.constant(np.array(0)), version="opset8"), "out")
    (out,) = irexec.compile_model(b.build())({"x": value}).values()
    assert np.array_equal(out, value[1]) and not np.shares_memory(out, value)


def test_one_index_of_a_large_block_is_its_own_array():
    # A one-index Gather is a view of its data where the view is a good part of it (ViT's
    # query, key and value out of one tensor); one token's row of a large block is copied, so
    # that a result (or a state) does not keep the whole block alive.
    from irexec.ops.movement.gather import gather

    block = np.arange(197 * 64, dtype=np.float32).reshape(1, 197, 64)
    row = gather(block, np.array(0), np.array(1), 0, True)
    assert np.array_equal(row, block[:, 0, :]) and not np.shares_memory(row, block)
    qkv = np.arange(3 * 4 * 8, dtype=np.float32).reshape(3, 4, 8)
    q = gather(qkv, np.array(1), np.array(0), 0, True)
    assert np.array_equal(q, qkv[1]) and np.shares_memory(q, qkv)
