"""Reverse-1 (seeds/000, 003): index and mask modes, edge cases, every element type, np.flip."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec.errors import OpError
from irexec.builder import ModelBuilder
from irexec.ops.movement.reverse import Reverse

from tests.ops.support import (INT_TYPE_NAMES, NARROW_RANGES, TYPE_NAMES, assert_same_bits, dtype_of, normalized_axes,
                      random_values, reverse, special_values)

RNG_SEED = 20240601


def _data(shape, dtype=np.float32):
    return np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape).astype(dtype)


# --- the specification's example ----------------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, 2, 3])
def test_spec_example_shape_3_10_100_200(axis):
    """The spec's IR example: data [3,10,100,200], a one-element axes tensor, same output shape."""
    data = np.random.default_rng(RNG_SEED).standard_normal((3, 10, 100, 200)).astype(np.float32)
    out = reverse(data, np.array([axis], np.int64))
    assert out.shape == (3, 10, 100, 200) and out.dtype == np.float32
    index = [slice(None)] * 4
    index[axis] = slice(None, None, -1)
    assert_same_bits(out, data[tuple(index)])


def test_spec_example_as_written_in_xml(tmp_path):
    """The spec's layer, with the ports numbered 0, 1 -> 2 as in the example, read from XML."""
    xml = tmp_path / "reverse.xml"
    xml.write_text("""<?xml version="1.0"?>
<net name="spec" version="11">
  <layers>
    <layer id="0" name="data" type="Parameter" version="opset1">
      <data shape="3,10,100,200" element_type="f32"/>
      <output><port id="0" precision="FP32"><dim>3</dim><dim>10</dim><dim>100</dim><dim>200</dim></port></output>
    </layer>
    <layer id="1" name="axis" type="Parameter" version="opset1">
      <data shape="1" element_type="i64"/>
      <output><port id="0" precision="I64"><dim>1</dim></port></output>
    </layer>
    <layer id="2" name="reverse" type="Reverse" version="opset1">
      <data mode="index"/>
      <input>
        <port id="0"><dim>3</dim><dim>10</dim><dim>100</dim><dim>200</dim></port>
        <port id="1"><dim>1</dim></port>
      </input>
      <output><port id="2" precision="FP32"><dim>3</dim><dim>10</dim><dim>100</dim><dim>200</dim></port></output>
    </layer>
    <layer id="3" name="out" type="Result" version="opset1">
      <input><port id="0"><dim>3</dim><dim>10</dim><dim>100</dim><dim>200</dim></port></input>
    </layer>
  </layers>
  <edges>
    <edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>
    <edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>
    <edge from-layer="2" from-port="2" to-layer="3" to-port="0"/>
  </edges>
</net>
""")
    compiled = irexec.compile_model(irexec.read_model(xml))
    data = np.random.default_rng(RNG_SEED).standard_normal((3, 10, 100, 200)).astype(np.float32)
    (out,) = compiled({"data": data, "axis": np.array([1], np.int64)}).values()
    assert_same_bits(out, data[:, ::-1])


# --- index mode ---------------------------------------------------------------------------------

def test_index_mode_flips_the_named_axes():
    data = _data((2, 3, 4))
    assert_same_bits(reverse(data, np.array([0, 2], np.int32)), data[::-1, :, ::-1])


@pytest.mark.parametrize("axes, expected", [([-1], (2,)), ([-3], (0,)), ([-2, 0], (0, 1)),
                                            ([-3, 1, -1], (0, 1, 2))])
def test_negative_axes_count_from_the_end(axes, expected):
    data = _data((2, 3, 4))
    out = reverse(data, np.array(axes, np.int64))
    assert_same_bits(out, np.flip(data, expected))


@pytest.mark.parametrize("axes", [[1, 1], [1, -2], [1, 1, 1], [-2, 1, -2, 1], [0, 2, 0, -1, 2]])
def test_repeated_axes_flip_once(axes):
    data = _data((2, 3, 4))
    out = reverse(data, np.array(axes, np.int16))
    assert_same_bits(out, np.flip(data, normalized_axes(axes, 3)))


@pytest.mark.parametrize("axes_type", INT_TYPE_NAMES)
@pytest.mark.parametrize("as_input", [False, True], ids=["const", "param"])
def test_axes_of_every_integer_type(axes_type, as_input):
    data = _data((2, 3, 4))
    last = min(2, NARROW_RANGES.get(axes_type, (0, 2))[1])  # u1 holds 0 and 1 only
    axes = np.array([last, 0], np.int64).astype(dtype_of(axes_type))
    out = reverse(data, axes, axes_input=as_input, axes_type=axes_type)
    assert_same_bits(out, np.flip(data, (0, last)))


@pytest.mark.parametrize("as_input", [False, True], ids=["const", "param"])
def test_u64_axis_max_acts_as_minus_one(as_input):
    """OpenVINO reads unsigned axes as signed 64-bit: 2**64-1 is -1 (facts (a), runtime)."""
    data = _data((2, 3, 4))
    out = reverse(data, np.array([2**64 - 1], np.uint64), axes_input=as_input)
    assert_same_bits(out, data[:, :, ::-1])
    out = reverse(data, np.array([2**64 - 3], np.uint64), axes_input=as_input)
    assert_same_bits(out, data[::-1])


@pytest.mark.parametrize("mode", ["index", "mask"])
def test_no_axes_returns_a_copy(mode):
    data = _data((2, 3))
    axes = np.zeros(0, np.int64) if mode == "index" else np.zeros(2, np.bool_)
    out = reverse(data, axes, mode, axes_input=True)
    assert_same_bits(out, data)
    assert out is not data and not np.shares_memory(out, data)
    out[0, 0] = 99
    assert data[0, 0] == 0


def test_empty_const_axes_returns_a_copy():
    data = _data((2, 3))
    out = reverse(data, np.zeros(0, np.int32))
    assert_same_bits(out, data)
    assert not np.shares_memory(out, data)


def test_result_never_aliases_the_input():
    data = _data((2, 3))
    out = reverse(data, np.array([1], np.int64), axes_input=True)
    assert not np.shares_memory(out, data)


@pytest.mark.parametrize("shape, axes", [((0, 3), [0, 1]), ((3, 0), [1]), ((2, 0, 4), [0, -1]),
                                         ((0,), [0])])
def test_zero_size_tensors(shape, axes):
    data = np.zeros(shape, np.float32)
    out = reverse(data, np.array(axes, np.int32), axes_input=True)
    assert out.shape == shape and out.dtype == np.float32


def test_scalar_data_with_no_axes():
    data = np.array(7.5, np.float32)
    out = reverse(data, np.zeros(0, np.int64))
    assert out.shape == () and out == 7.5


@pytest.mark.parametrize("axis", [3, -4, 100, -100, 2**31 - 1])
def test_out_of_range_runtime_axis_is_an_error_naming_it(axis):
    data = _data((2, 3, 4))
    with pytest.raises(irexec.IRError) as info:
        reverse(data, np.array([0, axis], np.int64), axes_input=True)
    assert info.value.code == "IR306"
    assert str(axis) in str(info.value)


def test_out_of_range_u64_axis_is_an_error():
    data = _data((2, 3))
    with pytest.raises(irexec.IRError) as info:
        reverse(data, np.array([2**63], np.uint64), axes_input=True)  # -2**63 when signed
    assert info.value.code == "IR306"
    assert str(-(2**63)) in str(info.value)


def test_i64_axis_2_pow_32_is_an_error_not_axis_0():
    """OpenVINO's CPU narrows i64 axes to i32 and flips axis 0 for 2**32 (facts (a)); the op's
    rule says it is out of range."""
    data = _data((2, 3))
    with pytest.raises(irexec.IRError) as info:
        reverse(data, np.array([2**32], np.int64), axes_input=True)
    assert info.value.code == "IR306" and str(2**32) in str(info.value)


@pytest.mark.parametrize("axis", [2, -3, 7])
def test_out_of_range_const_axis_is_an_error_at_build(axis):
    b = ModelBuilder()
    x = b.parameter("data", "f32", [2, 3])
    b.result(b.op("Reverse", x, b.constant(np.array([axis], np.int64)), mode="index"))
    with pytest.raises(irexec.IRError) as info:
        b.build()
    assert info.value.code == "IR306" and str(axis) in str(info.value)


# --- mask mode ----------------------------------------------------------------------------------

@pytest.mark.parametrize("mask", [[True, False, True], [False, True, False], [True] * 3])
@pytest.mark.parametrize("as_input", [False, True], ids=["const", "param"])
def test_mask_mode(mask, as_input):
    data = _data((2, 3, 4))
    out = reverse(data, np.array(mask), "mask", axes_input=as_input)
    assert_same_bits(out, np.flip(data, tuple(i for i, m in enumerate(mask) if m)))


@pytest.mark.parametrize("length", [2, 4, 0])
def test_mask_of_wrong_length_at_run_time_is_an_error(length):
    data = _data((2, 3, 4))
    with pytest.raises(irexec.IRError) as info:
        reverse(data, np.ones(length, np.bool_), "mask", axes_input=True, axes_shape=[-1])
    assert info.value.code == "IR314"
    assert str(length) in str(info.value) and "rank 3" in str(info.value)


def test_mask_of_wrong_length_as_const_is_an_error_at_build():
    with pytest.raises(irexec.IRError) as info:
        reverse(_data((2, 3, 4)), np.ones(2, np.bool_), "mask")
    assert [d.code for d in info.value.diagnostics] == ["IR314"]
    assert "2 entries" in str(info.value) and "rank 3" in str(info.value)


def test_mode_is_read_case_insensitively():
    data = _data((2, 3))
    assert_same_bits(reverse(data, np.array([True, False]), "MASK"), data[::-1])
    assert_same_bits(reverse(data, np.array([1], np.int8), "Index"), data[:, ::-1])


# --- element types ------------------------------------------------------------------------------

@pytest.mark.parametrize("type_name", TYPE_NAMES)
@pytest.mark.parametrize("mode", ["index", "mask"])
def test_every_element_type_is_exact(type_name, mode):
    values = special_values(type_name)
    rng = np.random.default_rng(RNG_SEED)
    data = np.stack([values, values[::-1], random_values(type_name, values.shape, rng)])
    axes = np.array([1, 0], np.int64) if mode == "index" else np.array([True, True])
    out = reverse(data, axes, mode, axes_input=True, data_type=type_name)
    assert_same_bits(out, data[::-1, ::-1])


@pytest.mark.parametrize("type_name, value", [("i64", 2**40 + 3), ("i64", -(2**62) - 7),
                                              ("u64", 2**64 - 2), ("i32", 2**31 - 1),
                                              ("u32", 2**32 - 1), ("f64", 1e300),
                                              ("f64", 2.0**-1074)])
def test_wide_values_survive(type_name, value):
    dtype = dtype_of(type_name)
    data = np.array([value, 0, 7], dtype=dtype)
    out = reverse(data, np.array([0], np.int64), axes_input=True)
    assert out.dtype == dtype and out[2] == np.array(value, dtype) and out[0] == 7


# --- the kernel directly ------------------------------------------------------------------------

def test_kernel_directly_index_and_mask():
    data = _data((3, 4))
    assert_same_bits(Reverse.kernel(data, np.array([-1, 1]), mode="index"), data[:, ::-1])
    assert_same_bits(Reverse.kernel(data, np.array([True, True]), mode="mask"), data[::-1, ::-1])
    copy = Reverse.kernel(data, np.array([False, False]), mode="mask")
    assert_same_bits(copy, data)
    assert not np.shares_memory(copy, data)


def test_kernel_on_a_non_contiguous_view():
    base = _data((4, 6))
    view = base[::2, 1::2]
    assert_same_bits(Reverse.kernel(view, np.array([0, 1]), mode="index"), view[::-1, ::-1])


# --- properties ---------------------------------------------------------------------------------

@st.composite
def reverse_cases(draw):
    rank = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank)))
    type_name = draw(st.sampled_from(TYPE_NAMES))
    axes = draw(st.lists(st.integers(-rank, rank - 1), max_size=6)) if rank else []
    low, high = min(axes, default=0), max(axes, default=0)
    axes_type = draw(st.sampled_from([
        t for t in INT_TYPE_NAMES if t not in NARROW_RANGES
        and (low >= 0 or t.startswith("i")) or t in NARROW_RANGES
        and NARROW_RANGES[t][0] <= low and high <= NARROW_RANGES[t][1]]))
    seed = draw(st.integers(0, 2**32 - 1))
    return shape, type_name, axes, axes_type, seed


@settings(max_examples=80, deadline=None)
@given(reverse_cases(), st.booleans())
def test_property_index_mode_equals_np_flip(case, as_input):
    shape, type_name, axes, axes_type, seed = case
    data = random_values(type_name, shape, np.random.default_rng(seed))
    given_ = np.array(axes, dtype=np.int64).astype(dtype_of(axes_type))
    out = reverse(data, given_, axes_input=as_input, data_type=type_name, axes_type=axes_type)
    # np.flip of a 0-d array is a scalar: keep the array (and the object dtype of strings)
    assert_same_bits(out, np.array(np.flip(data, normalized_axes(axes, data.ndim)), data.dtype))


@settings(max_examples=50, deadline=None)
@given(reverse_cases(), st.data())
def test_property_mask_mode_equals_np_flip(case, draw):
    shape, type_name, _, _, seed = case
    data = random_values(type_name, shape, np.random.default_rng(seed))
    mask = np.array(draw.draw(st.lists(st.booleans(), min_size=len(shape),
                                       max_size=len(shape))), np.bool_)
    out = reverse(data, mask, "mask", axes_input=True, data_type=type_name)
    assert_same_bits(out, np.array(np.flip(data, tuple(np.flatnonzero(mask).tolist())),
                                   data.dtype))
