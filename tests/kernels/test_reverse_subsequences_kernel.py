"""The shared kernel irexec.kernels.reverse_subsequences, called directly.

Its contract: ``lengths`` broadcast to the data with 1 at ``axis`` (per-batch lengths of
ReverseSequence are the special case with one non-1 dim, DirectML's per-fibre lengths the general
one); integers in [0, dim(axis)], anything else a ValueError; lengths 0 and 1 leave a fibre
unchanged; the input is never modified and the output never aliases it.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec.kernels
from irexec.kernels.reverse_subsequences import reverse_subsequences

from tests.ops.support import (TYPE_NAMES, assert_same_bits, random_values, reverse, reverse_fibres_loop,
                      reverse_sequence_loop, special_values)


def per_batch(data, lengths, batch_axis, seq_axis):
    """ReverseSequence's call: 1-D lengths reshaped along batch_axis."""
    shape = [data.shape[batch_axis] if d == batch_axis else 1 for d in range(data.ndim)]
    return reverse_subsequences(data, np.asarray(lengths).reshape(shape), seq_axis)


def test_the_public_name_is_the_kernel():
    assert irexec.kernels.reverse_subsequences is reverse_subsequences


def test_the_onnx_time_major_example():
    data = np.array([[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]], np.float32)
    out = per_batch(data, np.array([4, 3, 2, 1]), batch_axis=1, seq_axis=0)
    assert out.tolist() == [[3, 6, 9, 12], [2, 5, 8, 13], [1, 4, 10, 14], [0, 7, 11, 15]]


def test_the_directml_examples():
    data = np.arange(1, 13, dtype=np.float32).reshape(1, 1, 3, 4)
    out = reverse_subsequences(data, np.array([2, 4, 3], np.uint32).reshape(1, 1, 3, 1), 3)
    assert out.reshape(3, 4).tolist() == [[2, 1, 3, 4], [8, 7, 6, 5], [11, 10, 9, 12]]
    out = reverse_subsequences(data, np.array([2, 3, 1, 0], np.uint32).reshape(1, 1, 1, 4), 2)
    assert out.reshape(3, 4).tolist() == [[5, 10, 3, 4], [1, 6, 7, 8], [9, 2, 11, 12]]


def test_input_is_not_modified_and_not_aliased():
    data = np.arange(12).reshape(3, 4)
    before = data.copy()
    for lengths in ([4, 4, 4], [0, 1, 0], [2, 2, 2], [0, 0, 0], [3, 4, 2]):
        out = per_batch(data, np.array(lengths), 0, 1)
        assert_same_bits(data, before)
        assert not np.shares_memory(out, data)
        assert out.flags.c_contiguous
    assert_same_bits(per_batch(data, np.array([0, 1, 0]), 0, 1), data)


def test_many_rows_sharing_few_lengths():
    """More than four rows per distinct length takes the grouped path; same answer as the loop."""
    rng = np.random.default_rng(3)
    data = rng.integers(-1000, 1000, size=(40, 6, 3)).astype(np.int32)
    lengths = rng.choice([0, 2, 6], size=40)
    assert_same_bits(per_batch(data, lengths, 0, 1), reverse_sequence_loop(data, lengths, 0, 1))


@pytest.mark.parametrize("choices", [[0, 2, 5], list(range(6))], ids=["grouped", "per-fibre"])
def test_lengths_varying_along_several_dims(choices):
    """Both paths, with lengths that vary along dims on both sides of the axis and are broadcast
    along another."""
    rng = np.random.default_rng(5)
    data = rng.standard_normal((7, 3, 5, 4, 6))
    lengths = rng.choice(choices, size=(7, 1, 1, 4, 6)).astype(np.uint64)
    out = reverse_subsequences(data, lengths, 2)
    assert_same_bits(out, reverse_fibres_loop(data, lengths, 2))


def test_lengths_of_lower_rank_broadcast_as_numpy_does():
    data = np.arange(24).reshape(2, 3, 4)
    lengths = np.array([[3], [0], [2]])  # shape (3, 1) -> (1, 3, 1)
    assert_same_bits(reverse_subsequences(data, lengths, 2),
                     reverse_fibres_loop(data, lengths, 2))
    assert_same_bits(reverse_subsequences(data, np.array(2), -1),
                     reverse_fibres_loop(data, np.array(2), 2))


def test_batch_axis_after_seq_axis_and_inner_axes():
    rng = np.random.default_rng(4)
    data = rng.standard_normal((5, 2, 3, 4))
    lengths = np.array([1, 5, 3, 2])
    assert_same_bits(per_batch(data, lengths, 3, 0), reverse_sequence_loop(data, lengths, 3, 0))


def test_non_contiguous_input():
    base = np.arange(96, dtype=np.int64).reshape(8, 12)
    view = base[::2, ::3].T  # shape (4, 4), strided and transposed
    lengths = np.array([4, 3, 0, 2])
    out = per_batch(view, lengths, 0, 1)
    assert_same_bits(out, reverse_sequence_loop(np.ascontiguousarray(view), lengths, 0, 1))


@pytest.mark.parametrize("type_name", TYPE_NAMES)
def test_bits_survive_for_every_type(type_name):
    values = special_values(type_name)
    data = np.stack([values, values[::-1]])
    out = per_batch(data, np.array([len(values), 3]), 0, 1)
    assert_same_bits(out[0], values[::-1])
    assert_same_bits(out[1, :3], values[::-1][2::-1])
    assert_same_bits(out[1, 3:], values[::-1][3:])


def test_object_arrays_such_as_strings():
    data = np.array([["a", "bb", "", "ccc"], ["x", "y", "z", "w"]], dtype=object)
    out = per_batch(data, np.array([4, 2]), 0, 1)
    assert out.tolist() == [["ccc", "", "bb", "a"], ["y", "x", "z", "w"]]


@pytest.mark.parametrize("shape", [(5,), (2, 3), (4, 1, 3), (2, 3, 4, 5)])
def test_full_lengths_are_np_flip_and_reverse_1_on_each_axis(shape):
    """Reverse-1 keeps np.flip; it equals this kernel with every length = the axis size."""
    data = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    for axis in range(len(shape)):
        full = np.full([1 if d == axis else n for d, n in enumerate(shape)], shape[axis])
        out = reverse_subsequences(data, full.astype(np.uint32), axis)
        assert_same_bits(out, np.flip(data, axis))
        assert_same_bits(out, reverse(data, np.array([axis], np.int64)))


@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 4)])
def test_empty_data(shape):
    data = np.zeros(shape, np.float32)
    for axis in range(len(shape)):
        lengths = np.zeros([1 if d == axis else n for d, n in enumerate(shape)], np.int64)
        out = reverse_subsequences(data, lengths, axis)
        assert out.shape == shape and not np.shares_memory(out, data)


@pytest.mark.parametrize("data, lengths, axis, message", [
    (np.float32(1), np.array(1), 0, "scalar"),
    (np.zeros((2, 3)), np.array([[1, 1, 1]]), 2, "out of range"),
    (np.zeros((2, 3)), np.array([[1, 1, 1]]), -3, "out of range"),
    (np.zeros((2, 3)), np.array([[1, 1, 1]]), 1.0, "not an integer"),
    (np.zeros((2, 3)), np.array([[1.0], [2.0]]), 1, "integer dtype"),
    (np.zeros((2, 3)), np.array([1, 2]), 1, "do not broadcast"),  # (1, 2), not (2, 1)
    (np.zeros((2, 3)), np.array([[1, 1, 1], [1, 1, 1]]), 1, "do not broadcast"),
    (np.zeros((2, 3)), np.ones((1, 2, 1), np.int64), 1, "more dims"),
    (np.zeros((2, 3)), np.array([[1], [4]]), 1, "length 4 is not in [0, 3]"),
    (np.zeros((2, 3)), np.array([[1], [-1]]), 1, "length -1 is not in [0, 3]"),
])
def test_contract_violations_are_value_errors(data, lengths, axis, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        reverse_subsequences(data, lengths, axis)


@st.composite
def kernel_cases(draw, max_length=None):
    rank = draw(st.integers(2, 4))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=rank, max_size=rank)))
    b, s = draw(st.permutations(range(rank)))[:2]
    top = shape[s] if max_length is None else min(shape[s], max_length)
    lengths = draw(st.lists(st.integers(0, top), min_size=shape[b], max_size=shape[b]))
    type_name = draw(st.sampled_from(TYPE_NAMES))
    seed = draw(st.integers(0, 2**32 - 1))
    return shape, b, s, np.array(lengths, np.int64), type_name, seed


@settings(max_examples=100, deadline=None)
@given(kernel_cases())
def test_property_equals_a_per_slice_loop(case):
    shape, b, s, lengths, type_name, seed = case
    data = random_values(type_name, shape, np.random.default_rng(seed))
    assert_same_bits(per_batch(data, lengths, b, s), reverse_sequence_loop(data, lengths, b, s))


@settings(max_examples=60, deadline=None)
@given(kernel_cases(max_length=1))
def test_property_lengths_at_most_one_is_the_identity(case):
    shape, b, s, lengths, type_name, seed = case
    data = random_values(type_name, shape, np.random.default_rng(seed))
    out = per_batch(data, lengths, b, s)
    assert_same_bits(out, data)
    assert not np.shares_memory(out, data) or data.size == 0


@settings(max_examples=60, deadline=None)
@given(kernel_cases())
def test_property_twice_is_the_identity(case):
    shape, b, s, lengths, type_name, seed = case
    data = random_values(type_name, shape, np.random.default_rng(seed))
    once = per_batch(data, lengths, b, s)
    assert_same_bits(per_batch(once, lengths, b, s), data)


@st.composite
def fibre_cases(draw):
    """Per-fibre lengths, each dim of the lengths either the data's or 1 (broadcast)."""
    rank = draw(st.integers(1, 5))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank)))
    axis = draw(st.integers(-rank, rank - 1))
    a = axis % rank
    lshape = [1 if d == a or draw(st.booleans()) else n for d, n in enumerate(shape)]
    few = draw(st.booleans())  # few distinct values: the grouped path
    top = shape[a]
    values = st.sampled_from(sorted({0, top})) if few else st.integers(0, top)
    lengths = np.array(draw(st.lists(values, min_size=int(np.prod(lshape)),
                                     max_size=int(np.prod(lshape)))),
                       dtype=draw(st.sampled_from([np.uint32, np.uint64, np.int64])))
    type_name = draw(st.sampled_from(TYPE_NAMES))
    seed = draw(st.integers(0, 2**32 - 1))
    return shape, axis, lengths.reshape(lshape), type_name, seed


@settings(max_examples=150, deadline=None)
@given(fibre_cases())
def test_property_per_fibre_equals_a_per_fibre_loop(case):
    shape, axis, lengths, type_name, seed = case
    data = random_values(type_name, shape, np.random.default_rng(seed))
    out = reverse_subsequences(data, lengths, axis)
    assert_same_bits(out, reverse_fibres_loop(data, lengths, axis))
    assert_same_bits(reverse_subsequences(out, lengths, axis), data)


@st.composite
def innermost_row_cases(draw):
    """Per-row lengths along the innermost axis with rows long enough for the blocked path
    (rows reversed a block at a time, prefixes moved by memoryview), blocks of any size."""
    type_name = draw(st.sampled_from(TYPE_NAMES))
    itemsize = max(1, random_values(type_name, (1,), np.random.default_rng(0)).dtype.itemsize)
    dim = draw(st.integers(1, 80)) if draw(st.booleans()) else draw(st.integers(64, 300))
    lead = tuple(draw(st.lists(st.integers(1, 6), min_size=1, max_size=3)))
    rows = int(np.prod(lead))
    lengths = np.array(draw(st.lists(st.integers(0, dim), min_size=rows, max_size=rows)),
                       np.int64).reshape(lead + (1,))
    block = draw(st.sampled_from([1, 64, 1000, dim * itemsize * 3, 1 << 20]))
    min_row = draw(st.sampled_from([0, 64]))
    seed = draw(st.integers(0, 2**32 - 1))
    return lead + (dim,), lengths, type_name, block, min_row, seed


@settings(max_examples=150, deadline=None)
@given(innermost_row_cases())
def test_property_innermost_rows_in_blocks_equal_a_loop(case):
    import importlib

    kernel = importlib.import_module("irexec.kernels.reverse_subsequences")
    shape, lengths, type_name, block, min_row, seed = case
    data = random_values(type_name, shape, np.random.default_rng(seed))
    saved = kernel._ROWS_BLOCK_BYTES, kernel._MIN_ROW_BYTES
    kernel._ROWS_BLOCK_BYTES, kernel._MIN_ROW_BYTES = block, min_row
    try:
        out = reverse_subsequences(data, lengths, -1)
    finally:
        kernel._ROWS_BLOCK_BYTES, kernel._MIN_ROW_BYTES = saved
    assert_same_bits(out, reverse_fibres_loop(data, lengths, data.ndim - 1))
    assert out.flags.c_contiguous and not np.shares_memory(out, data)


@pytest.mark.parametrize("type_name", TYPE_NAMES)
def test_large_innermost_rows_every_type(type_name):
    """A [70, 4099] tensor: several blocks, rows that are not a whole number of words."""
    rng = np.random.default_rng(11)
    data = random_values(type_name, (70, 4099), rng)
    lengths = rng.integers(0, 4100, 70).reshape(70, 1)
    out = reverse_subsequences(data, lengths, 1)
    assert_same_bits(out, reverse_fibres_loop(data, lengths, 1))


@st.composite
def strided_fibre_cases(draw):
    """Lengths varying along a dim after the axis (the fibres are strided): the row gather."""
    rank = draw(st.integers(2, 4))
    shape = draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank))
    axis = draw(st.integers(0, rank - 2))
    after = draw(st.integers(axis + 1, rank - 1))
    shape[after] = max(2, shape[after])
    shape = tuple(shape)
    others = draw(st.lists(st.booleans(), min_size=rank, max_size=rank))
    lshape = tuple(1 if d == axis else n if d == after or others[d] else 1
                   for d, n in enumerate(shape))
    seed = draw(st.integers(0, 2**32 - 1))
    type_name = draw(st.sampled_from(TYPE_NAMES))
    return shape, axis, lshape, type_name, seed


def _forced_gather(data, lengths, axis):
    """The kernel with the row gather taken for rows of any size; fails if it is not taken."""
    import importlib

    kernel = importlib.import_module("irexec.kernels.reverse_subsequences")
    saved = kernel._MIN_GATHER_ROW_BYTES, kernel._MIN_GATHER_BYTES, kernel._gather_rows
    gather = kernel._gather_rows
    calls = []
    kernel._MIN_GATHER_ROW_BYTES = kernel._MIN_GATHER_BYTES = 0
    kernel._gather_rows = lambda *args: calls.append(1) or gather(*args)
    try:
        out = reverse_subsequences(data, lengths, axis)
    finally:
        kernel._MIN_GATHER_ROW_BYTES, kernel._MIN_GATHER_BYTES, kernel._gather_rows = saved
    return out, bool(calls)


@settings(max_examples=200, deadline=None)
@given(strided_fibre_cases())
def test_property_row_gather_equals_a_loop(case):
    shape, axis, lshape, type_name, seed = case
    rng = np.random.default_rng(seed)
    data = random_values(type_name, shape, rng)
    # 0, 1 and the full length among the values
    lengths = rng.choice([0, 1, shape[axis], *range(shape[axis] + 1)], size=lshape)
    before = data.copy()
    out, gathered = _forced_gather(data, lengths, axis)
    expect_gather = np.unique(lengths).size > 1 and type_name != "string"
    assert gathered == expect_gather
    assert_same_bits(out, reverse_fibres_loop(data, lengths, axis))
    assert_same_bits(data, before)
    assert out.flags.c_contiguous and not np.shares_memory(out, data)


@pytest.mark.parametrize("type_name", TYPE_NAMES)
def test_row_gather_every_type_odd_shapes(type_name):
    """Lengths varying on both sides of the axis, rows of 7 elements, lengths 0, 1 and full."""
    rng = np.random.default_rng(12)
    data = random_values(type_name, (3, 13, 5, 7), rng)
    lengths = rng.choice([0, 1, 13, 6, 12], size=(3, 1, 5, 1))
    out, gathered = _forced_gather(data, lengths, 1)
    assert gathered == (type_name != "string")  # object arrays keep the slice copies
    assert_same_bits(out, reverse_fibres_loop(data, lengths, 1))


def test_row_gather_output_is_placed_apart_from_the_input():
    """A large b1 s0 case (2 KiB rows, the ReverseSequence bench shape scaled down): the output
    is 64-byte aligned, at a page offset at least 256 bytes from the input's (4K aliasing), and
    a new array."""
    rng = np.random.default_rng(13)
    data = rng.standard_normal((64, 16, 512), dtype=np.float32)  # 2 MiB
    lengths = rng.integers(0, 65, 16)
    lengths[:3] = [0, 1, 64]
    out = per_batch(data, lengths, 1, 0)
    assert_same_bits(out, reverse_sequence_loop(data, lengths, 1, 0))
    assert out.ctypes.data % 64 == 0
    assert 256 <= (out.ctypes.data - data.ctypes.data) % 4096 <= 4096 - 256
    assert out.flags.c_contiguous and out.flags.writeable and not np.shares_memory(out, data)
