"""The shared kernel irexec.kernels.reverse_subsequences, called directly.

Its contract: ``lengths`` are integers in [0, dim(seq_axis)], the axes distinct and non-negative;
lengths 0 and 1 leave a slice unchanged; the input is never modified and the output never
aliases it.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.kernels.reverse_subsequences import reverse_subsequences

from .support import (TYPE_NAMES, assert_same_bits, random_values, reverse_sequence_loop,
                      special_values)


def test_the_onnx_time_major_example():
    data = np.array([[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]], np.float32)
    out = reverse_subsequences(data, np.array([4, 3, 2, 1]), batch_axis=1, seq_axis=0)
    assert out.tolist() == [[3, 6, 9, 12], [2, 5, 8, 13], [1, 4, 10, 14], [0, 7, 11, 15]]


def test_input_is_not_modified_and_not_aliased():
    data = np.arange(12).reshape(3, 4)
    before = data.copy()
    out = reverse_subsequences(data, np.array([4, 4, 4]), 0, 1)
    assert_same_bits(data, before)
    assert not np.shares_memory(out, data)
    identity = reverse_subsequences(data, np.array([0, 1, 0]), 0, 1)
    assert_same_bits(identity, data)
    assert not np.shares_memory(identity, data)


def test_many_rows_sharing_few_lengths():
    """More than four rows per distinct length takes the grouped path; same answer as the loop."""
    rng = np.random.default_rng(3)
    data = rng.integers(-1000, 1000, size=(40, 6, 3)).astype(np.int32)
    lengths = rng.choice([0, 2, 6], size=40)
    out = reverse_subsequences(data, lengths, 0, 1)
    assert_same_bits(out, reverse_sequence_loop(data, lengths, 0, 1))


def test_batch_axis_after_seq_axis_and_inner_axes():
    rng = np.random.default_rng(4)
    data = rng.standard_normal((5, 2, 3, 4))
    lengths = np.array([1, 5, 3, 2])
    out = reverse_subsequences(data, lengths, batch_axis=3, seq_axis=0)
    assert_same_bits(out, reverse_sequence_loop(data, lengths, 3, 0))


def test_non_contiguous_input():
    base = np.arange(96, dtype=np.int64).reshape(8, 12)
    view = base[::2, ::3].T  # shape (4, 4), strided and transposed
    lengths = np.array([4, 3, 0, 2])
    out = reverse_subsequences(view, lengths, 0, 1)
    assert_same_bits(out, reverse_sequence_loop(np.ascontiguousarray(view), lengths, 0, 1))


@pytest.mark.parametrize("type_name", TYPE_NAMES)
def test_bits_survive_for_every_type(type_name):
    values = special_values(type_name)
    data = np.stack([values, values[::-1]])
    out = reverse_subsequences(data, np.array([len(values), 3]), 0, 1)
    assert_same_bits(out[0], values[::-1])
    assert_same_bits(out[1, :3], values[::-1][2::-1])
    assert_same_bits(out[1, 3:], values[::-1][3:])


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
    assert_same_bits(reverse_subsequences(data, lengths, b, s),
                     reverse_sequence_loop(data, lengths, b, s))


@settings(max_examples=60, deadline=None)
@given(kernel_cases(max_length=1))
def test_property_lengths_at_most_one_is_the_identity(case):
    shape, b, s, lengths, type_name, seed = case
    data = random_values(type_name, shape, np.random.default_rng(seed))
    out = reverse_subsequences(data, lengths, b, s)
    assert_same_bits(out, data)
    assert not np.shares_memory(out, data) or data.size == 0


@settings(max_examples=60, deadline=None)
@given(kernel_cases())
def test_property_twice_is_the_identity(case):
    shape, b, s, lengths, type_name, seed = case
    data = random_values(type_name, shape, np.random.default_rng(seed))
    once = reverse_subsequences(data, lengths, b, s)
    assert_same_bits(reverse_subsequences(once, lengths, b, s), data)
