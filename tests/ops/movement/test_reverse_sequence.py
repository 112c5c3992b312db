"""ReverseSequence-1 (seeds/001), and the ONNX ReverseSequence-10 examples (seeds/004) mapped
onto it.

ONNX ``time_axis`` is OpenVINO's ``seq_axis``; ``batch_axis`` is the same in both.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec.errors import OpError
from irexec.builder import ModelBuilder
from irexec.ops.movement.reverse_sequence import ReverseSequence

from tests.ops.support import (FLOAT_TYPE_NAMES, NUMERIC_TYPE_NAMES, TYPE_NAMES, representable,
                      assert_same_bits, dtype_of, random_values, reverse_sequence,
                      reverse_sequence_loop, special_values)

RNG_SEED = 7


def _data(shape, dtype=np.float32):
    return np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape).astype(dtype)


# --- the ONNX page's two worked examples (values copied from seeds/004) -------------------------

ONNX_EXAMPLE_1 = dict(
    input=[[0.0, 4.0, 8.0, 12.0],
           [1.0, 5.0, 9.0, 13.0],
           [2.0, 6.0, 10.0, 14.0],
           [3.0, 7.0, 11.0, 15.0]],
    sequence_lens=[4, 3, 2, 1], time_axis=0, batch_axis=1,
    output=[[3.0, 6.0, 9.0, 12.0],
            [2.0, 5.0, 8.0, 13.0],
            [1.0, 4.0, 10.0, 14.0],
            [0.0, 7.0, 11.0, 15.0]])

ONNX_EXAMPLE_2 = dict(
    input=[[0.0, 1.0, 2.0, 3.0],
           [4.0, 5.0, 6.0, 7.0],
           [8.0, 9.0, 10.0, 11.0],
           [12.0, 13.0, 14.0, 15.0]],
    sequence_lens=[1, 2, 3, 4], time_axis=1, batch_axis=0,
    output=[[0.0, 1.0, 2.0, 3.0],
            [5.0, 4.0, 6.0, 7.0],
            [10.0, 9.0, 8.0, 11.0],
            [15.0, 14.0, 13.0, 12.0]])


@pytest.mark.parametrize("example", [ONNX_EXAMPLE_1, ONNX_EXAMPLE_2], ids=["time", "batch"])
@pytest.mark.parametrize("as_input", [False, True], ids=["const", "param"])
def test_onnx_examples(example, as_input):
    data = np.array(example["input"], np.float32)
    lengths = np.array(example["sequence_lens"], np.int64)  # ONNX's sequence_lens is int64
    out = reverse_sequence(data, lengths, batch_axis=example["batch_axis"],
                           seq_axis=example["time_axis"], lengths_input=as_input)
    assert_same_bits(out, np.array(example["output"], np.float32))


def test_onnx_backend_variant_with_a_zero_length():
    """onnx's backend test test_reversesequence_batch uses lengths [0,2,3,4]; same output as
    example 2 (facts onnx_tf_dml.md section 1)."""
    data = np.array(ONNX_EXAMPLE_2["input"], np.float32)
    out = reverse_sequence(data, np.array([0, 2, 3, 4], np.int64), batch_axis=0, seq_axis=1)
    assert_same_bits(out, np.array(ONNX_EXAMPLE_2["output"], np.float32))


# --- the OpenVINO specification's example --------------------------------------------------------

@pytest.mark.parametrize("lengths_type", ["i32", "i64", "f32"])
def test_spec_example_4_10_100_200(lengths_type):
    data = np.random.default_rng(RNG_SEED).standard_normal((4, 10, 100, 200)).astype(np.float32)
    lengths = np.array([2, 4, 8, 10], dtype_of(lengths_type))
    out = reverse_sequence(data, lengths, batch_axis=0, seq_axis=1)
    expected = reverse_sequence_loop(data, [2, 4, 8, 10], 0, 1)
    assert_same_bits(out, expected)
    # spelled out for the first batch entry: positions 0 and 1 swap, 2..9 stay
    assert_same_bits(out[0, 0], data[0, 1])
    assert_same_bits(out[0, 1], data[0, 0])
    assert_same_bits(out[0, 2:], data[0, 2:])
    assert_same_bits(out[3], data[3, ::-1])


# --- axes ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("batch_axis, seq_axis", [(0, 1), (1, 0), (2, 0), (0, 2), (-1, -2),
                                                  (-3, -1), (1, -1), (-1, 1), (2, 1)])
def test_axes_including_negative_and_batch_after_seq(batch_axis, seq_axis):
    data = _data((3, 4, 5))
    rank = 3
    b, s = batch_axis % rank, seq_axis % rank
    lengths = (np.arange(data.shape[b]) % (data.shape[s] + 1)).astype(np.int32)
    out = reverse_sequence(data, lengths, batch_axis, seq_axis)
    assert_same_bits(out, reverse_sequence_loop(data, lengths, b, s))


def test_defaults_are_batch_0_seq_1():
    b = ModelBuilder()
    x = b.parameter("data", "i32", [2, 3])
    b.result(b.op("ReverseSequence", x, b.constant(np.array([3, 2], np.int32)), name="y"))
    data = _data((2, 3), np.int32)
    out = irexec.compile_model(b.build())({"data": data})["y"]
    assert out.tolist() == [[2, 1, 0], [4, 3, 5]]


@pytest.mark.parametrize("batch_axis, seq_axis", [(0, 0), (1, -2), (-1, 2)])
def test_equal_axes_are_an_error(batch_axis, seq_axis):
    with pytest.raises(irexec.IRError) as info:
        reverse_sequence(_data((3, 3, 3)), np.ones(3, np.int32), batch_axis, seq_axis)
    assert [d.code for d in info.value.diagnostics] == ["IR311"]


@pytest.mark.parametrize("batch_axis, seq_axis, bad", [(3, 1, 3), (0, -4, -4), (-5, 1, -5)])
def test_out_of_range_axes_are_an_error(batch_axis, seq_axis, bad):
    with pytest.raises(irexec.IRError) as info:
        reverse_sequence(_data((3, 3, 3)), np.ones(3, np.int32), batch_axis, seq_axis)
    assert info.value.code == "IR306" and str(bad) in str(info.value)


def test_dynamic_rank_data_checks_axes_at_run_time():
    data = _data((3, 4))
    lengths = np.array([4, 0, 2], np.int32)
    b = ModelBuilder()
    x = b.parameter("data", "f32", irexec.PartialShape.dynamic())
    n = b.parameter("seq_lengths", "i32", [-1])
    b.result(b.op("ReverseSequence", x, n, batch_axis=0, seq_axis=1, name="y"))
    compiled = irexec.compile_model(b.build())
    assert_same_bits(compiled({"data": data, "seq_lengths": lengths})["y"],
                     reverse_sequence_loop(data, lengths, 0, 1))
    with pytest.raises(irexec.IRError) as info:  # rank 1 at run time
        compiled({"data": np.zeros(3, np.float32), "seq_lengths": lengths})
    assert info.value.code == "IR305"
    b = ModelBuilder()
    x = b.parameter("data", "f32", irexec.PartialShape.dynamic())
    n = b.parameter("seq_lengths", "i32", [-1])
    b.result(b.op("ReverseSequence", x, n, batch_axis=0, seq_axis=2, name="y"))
    with pytest.raises(irexec.IRError) as info:  # seq_axis 2 outside a rank-2 tensor
        irexec.compile_model(b.build())({"data": data, "seq_lengths": lengths})
    assert info.value.code == "IR306" and "seq_axis 2" in str(info.value)


# --- lengths ------------------------------------------------------------------------------------

def test_length_zero_and_one_change_nothing():
    data = _data((3, 5))
    out = reverse_sequence(data, np.array([0, 1, 0], np.int64), lengths_input=True)
    assert_same_bits(out, data)
    assert not np.shares_memory(out, data)


@pytest.mark.parametrize("lengths_type", FLOAT_TYPE_NAMES)
@pytest.mark.parametrize("as_input", [False, True], ids=["const", "param"])
def test_float_lengths_truncate_toward_zero(lengths_type, as_input):
    data = _data((4, 5))
    last = 0.5 if lengths_type == "f8e8m0" else -0.5  # e8m0 holds positive powers of 2 only
    given_ = np.array([4.7, 0.5, 2.75, last], np.float64).astype(dtype_of(lengths_type))
    stored = given_.astype(np.float64)  # the narrow types round 4.7 and 2.75 first
    out = reverse_sequence(data, given_, lengths_input=as_input)
    expected = [int(v) for v in np.trunc(stored)]
    assert expected[1] == 0 and expected[3] == 0
    assert_same_bits(out, reverse_sequence_loop(data, expected, 0, 1))


@pytest.mark.parametrize("lengths_type", NUMERIC_TYPE_NAMES)
@pytest.mark.parametrize("as_input", [False, True], ids=["const", "param"])
def test_lengths_of_every_numeric_type(lengths_type, as_input):
    data = _data((4, 6, 2))
    # u1 holds 0 and 1 only, f4e2m1 no 5, f8e8m0 no 0 (only powers of 2)
    wanted = next(c for c in ([6, 0, 3, 1], [1, 0, 1, 1], [4, 1, 2, 1])
                  if representable(lengths_type, c))
    lengths = np.array(wanted, np.int64).astype(dtype_of(lengths_type))
    out = reverse_sequence(data, lengths, lengths_input=as_input, lengths_type=lengths_type)
    assert_same_bits(out, reverse_sequence_loop(data, wanted, 0, 1))


def test_boolean_lengths_are_rejected():
    with pytest.raises(irexec.IRError) as info:
        reverse_sequence(_data((2, 2)), np.array([True, False]), lengths_input=True)
    assert info.value.code == "IR304"


BAD_LENGTHS = [
    ("i32", [3, -1, 2], 1, "-1"),
    ("i64", [3, 2, 6], 2, "6"),
    ("i8", [-128, 0, 0], 0, "-128"),
    ("f32", [1.0, 2.0, -1.0], 2, "-1"),
    ("f64", [np.nan, 1.0, 1.0], 0, "nan"),
    ("f16", [1.0, np.inf, 1.0], 1, "inf"),
    ("f64", [6.5, 1.0, 1.0], 0, "6.5"),
    ("i64", [1, 2**32 + 1, 1], 1, str(2**32 + 1)),  # not narrowed to 32 bits (OpenVINO gives 1)
    ("u64", [2**64 - 1, 1, 1], 0, str(2**64 - 1)),
    ("u32", [1, 1, 2**32 - 1], 2, str(2**32 - 1)),
]


@pytest.mark.parametrize("lengths_type, lengths, index, shown", BAD_LENGTHS)
def test_bad_runtime_lengths_name_the_batch_index_and_value(lengths_type, lengths, index, shown):
    data = _data((3, 5))
    with pytest.raises(irexec.IRError) as info:
        reverse_sequence(data, np.array(lengths, dtype=dtype_of(lengths_type)),
                         lengths_input=True)
    assert info.value.code == "IR308"
    message = str(info.value)
    assert f"seq_lengths[{index}]" in message and shown in message.lower(), message


@pytest.mark.parametrize("lengths_type, lengths, index, shown", BAD_LENGTHS[:4])
def test_bad_const_lengths_are_an_error_at_build(lengths_type, lengths, index, shown):
    with pytest.raises(irexec.IRError) as info:
        reverse_sequence(_data((3, 5)), np.array(lengths, dtype=dtype_of(lengths_type)))
    assert info.value.code == "IR308"
    assert f"seq_lengths[{index}]" in str(info.value)


def test_fractional_length_just_above_the_dimension_truncates_to_it():
    """5.99 for a dimension of 5 truncates to 5 and is accepted (OpenVINO: 4.5 for 4 is)."""
    data = _data((2, 5))
    out = reverse_sequence(data, np.array([5.99, 5.5], np.float32), lengths_input=True)
    assert_same_bits(out, data[:, ::-1])


def test_length_equal_to_the_dimension_reverses_everything():
    data = _data((2, 5))
    out = reverse_sequence(data, np.array([5, 5], np.uint8), lengths_input=True)
    assert_same_bits(out, data[:, ::-1])


@pytest.mark.parametrize("given_length", [2, 5])
def test_runtime_lengths_of_wrong_size_are_an_error(given_length):
    data = _data((3, 4))
    with pytest.raises(irexec.IRError) as info:
        reverse_sequence(data, np.ones(given_length, np.int32), lengths_input=True,
                         lengths_shape=[-1])
    assert info.value.code == "IR307" and str(given_length) in str(info.value)


def test_const_lengths_of_wrong_size_are_an_error_at_build():
    with pytest.raises(irexec.IRError) as info:
        reverse_sequence(_data((3, 4)), np.ones(2, np.int32))
    assert info.value.code == "IR307"


# --- zero-size tensors --------------------------------------------------------------------------

@pytest.mark.parametrize("shape, batch_axis, seq_axis, lengths", [
    ((0, 4), 0, 1, []),           # no batch entries
    ((3, 0), 0, 1, [0, 0, 0]),    # empty sequences
    ((2, 3, 0), 0, 1, [3, 1]),    # empty trailing axis
    ((0, 2), 1, 0, [0, 0]),
])
def test_zero_size_tensors(shape, batch_axis, seq_axis, lengths):
    data = np.zeros(shape, np.int16)
    out = reverse_sequence(data, np.array(lengths, np.int64), batch_axis, seq_axis,
                           lengths_input=True)
    assert out.shape == shape and out.dtype == np.int16


# --- element types ------------------------------------------------------------------------------

@pytest.mark.parametrize("type_name", TYPE_NAMES)
def test_every_element_type_is_exact(type_name):
    values = special_values(type_name)
    rng = np.random.default_rng(RNG_SEED)
    data = np.stack([values, values[::-1], random_values(type_name, values.shape, rng)], axis=1)
    lengths = np.array([3, 2, 0], np.int32)  # batch along axis 1, sequences along axis 0
    out = reverse_sequence(data, lengths, batch_axis=1, seq_axis=0, lengths_input=True,
                           data_type=type_name)
    expected = np.stack([
        np.concatenate([data[2::-1, 0], data[3:, 0]]),
        np.concatenate([data[1::-1, 1], data[2:, 1]]),
        data[:, 2]], axis=1)
    assert_same_bits(out, expected)


@pytest.mark.parametrize("type_name, value", [("i64", 2**40 + 3), ("i32", 2**31 - 1),
                                              ("i32", 16777217), ("u32", 2**32 - 1),
                                              ("u64", 2**63 + 5), ("f64", 1e300),
                                              ("f64", 1 + 2.0**-52)])
def test_wide_values_survive(type_name, value):
    """OpenVINO's CPU computes ReverseSequence in f32 and loses these (facts (b)); irexec
    must not."""
    dtype = dtype_of(type_name)
    data = np.array([[value, 1, 2], [3, 4, value]], dtype=dtype)
    out = reverse_sequence(data, np.array([3, 2], np.int64), lengths_input=True)
    expected = np.array([[2, 1, value], [4, 3, value]], dtype=dtype)
    assert_same_bits(out, expected)


# --- the kernel directly ------------------------------------------------------------------------

def test_kernel_directly():
    data = _data((3, 4))
    out = ReverseSequence.kernel(data, np.array([4, 2, 0]), batch_axis=0, seq_axis=-1)
    assert_same_bits(out, reverse_sequence_loop(data, [4, 2, 0], 0, 1))


# --- properties ---------------------------------------------------------------------------------

@st.composite
def sequence_cases(draw, type_names=TYPE_NAMES):
    rank = draw(st.integers(2, 4))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=rank, max_size=rank)))
    b, s = draw(st.permutations(range(rank)))[:2]
    batch_axis = b - rank if draw(st.booleans()) else b
    seq_axis = s - rank if draw(st.booleans()) else s
    lengths = draw(st.lists(st.integers(0, shape[s]), min_size=shape[b], max_size=shape[b]))
    type_name = draw(st.sampled_from(type_names))
    lengths_type = draw(st.sampled_from([t for t in NUMERIC_TYPE_NAMES
                                         if representable(t, lengths)]))
    seed = draw(st.integers(0, 2**32 - 1))
    return shape, batch_axis, seq_axis, lengths, type_name, lengths_type, seed


@settings(max_examples=80, deadline=None)
@given(sequence_cases(), st.booleans())
def test_property_equals_a_per_slice_loop(case, as_input):
    shape, batch_axis, seq_axis, lengths, type_name, lengths_type, seed = case
    data = random_values(type_name, shape, np.random.default_rng(seed))
    out = reverse_sequence(data, np.array(lengths, np.int64).astype(dtype_of(lengths_type)),
                           batch_axis, seq_axis, lengths_input=as_input, data_type=type_name,
                           lengths_type=lengths_type)
    assert_same_bits(out, reverse_sequence_loop(data, lengths, batch_axis, seq_axis))


@settings(max_examples=50, deadline=None)
@given(sequence_cases())
def test_property_applying_twice_is_the_identity(case):
    shape, batch_axis, seq_axis, lengths, type_name, _, seed = case
    data = random_values(type_name, shape, np.random.default_rng(seed))
    lengths = np.array(lengths, np.int64)
    b = ModelBuilder()
    x = b.parameter("data", type_name, list(shape))
    n = b.parameter("seq_lengths", "i64", [len(lengths)])
    once = b.op("ReverseSequence", x, n, batch_axis=batch_axis, seq_axis=seq_axis)
    twice = b.op("ReverseSequence", once, n, batch_axis=batch_axis, seq_axis=seq_axis, name="y")
    b.result(twice)
    out = irexec.compile_model(b.build())({"data": data, "seq_lengths": lengths})["y"]
    assert_same_bits(out, data)
