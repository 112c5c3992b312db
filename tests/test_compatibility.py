"""One test per row of docs/compatibility.md: where irexec deliberately differs from OpenVINO.

Each test pins irexec's side of the difference; the OpenVINO side is recorded in the doc with its
source (the facts and the conformance tests, which compare with OpenVINO where it is installed).
Expected values come from the specification or plain numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder
from irexec.kernels.convert import convert
from tests.helpers_ir import const, layer, net, parameter, result, write_ir

BF16 = np.dtype("bfloat16") if hasattr(np, "bfloat16") else None


def codes_of(path) -> list[str]:
    with pytest.raises(irexec.IRError) as info:
        irexec.read_model(path)
    return [d.code for d in info.value.diagnostics]


def reverse_sequence_xml(data_attrs: dict, data_dims=(2, 3), seq_dims=(2,),
                         seq_type="i32") -> str:
    return net([
        parameter(0, "data", ",".join(map(str, data_dims)), dims=data_dims),
        parameter(1, "lengths", ",".join(map(str, seq_dims)), element_type=seq_type,
                  dims=seq_dims),
        layer(2, "rs", "ReverseSequence", inputs=[data_dims, seq_dims], outputs=[data_dims],
              data=data_attrs),
        result(3, "out", data_dims),
    ], [(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 3, 0)])


# --- stricter checks ---------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["1.7", "1abc"])
def test_integer_attribute_with_trailing_text_is_rejected(tmp_path, text):
    path = write_ir(tmp_path, reverse_sequence_xml({"batch_axis": "0", "seq_axis": text}))
    assert codes_of(path) == ["IR302"]


@pytest.mark.parametrize("text", ["1..10", "2.5"])
def test_dim_with_trailing_text_is_rejected(tmp_path, text):
    xml = net([parameter(0, "x", "2", dims=[text]), result(1, "out", [2])], [(0, 0, 1, 0)])
    assert "IR105" in codes_of(write_ir(tmp_path, xml))


@pytest.mark.parametrize("shape", ["-2", "3..1"])
def test_parameter_shape_that_openvino_rewrites_is_rejected(tmp_path, shape):
    xml = net([parameter(0, "x", shape), result(1, "out")], [(0, 0, 1, 0)])
    assert codes_of(write_ir(tmp_path, xml)) == ["IR302"]


def test_two_parameters_sharing_a_name_are_rejected(tmp_path):
    xml = net([parameter(0, "x", "2", dims=[2], names="t"),
               parameter(1, "y", "2", dims=[2], names="t"),
               result(2, "out", [2]), result(3, "out2", [2])],
              [(0, 0, 2, 0), (1, 0, 3, 0)])
    assert codes_of(write_ir(tmp_path, xml)) == ["IR207"]


def test_duplicate_layer_id_is_rejected(tmp_path):
    xml = net([parameter(0, "x", "2"), parameter(0, "y", "2"), result(1, "out")], [(0, 0, 1, 0)])
    assert "IR102" in codes_of(write_ir(tmp_path, xml))


def test_port_dims_contradicting_inference_are_rejected(tmp_path):
    xml = net([parameter(0, "x", "2,3", dims=[2, 3]), result(1, "out", [3, 2])], [(0, 0, 1, 0)])
    assert codes_of(write_ir(tmp_path, xml)) == ["IR401"]


def test_layer_no_result_needs_is_read_checked_and_not_run(tmp_path):
    xml = net([parameter(0, "x", "2", dims=[2]), result(1, "out", [2]),
               parameter(2, "unused", "2", dims=[2]),
               layer(3, "dead", "Convert", inputs=[[2]], outputs=[[2]],
                     data={"destination_type": "i32"}, precision="I32")],
              [(0, 0, 1, 0), (2, 0, 3, 0)])
    model = irexec.read_model(write_ir(tmp_path, xml))
    assert [d.code for d in model.diagnostics] == ["IR205"]
    assert "dead" not in [s.layer for s in irexec.compile_model(model).plan.steps]
    broken = xml.replace('destination_type="i32"', 'destination_type="nonsense"')
    assert codes_of(write_ir(tmp_path, broken, name="broken")) == ["IR302"]


def _reverse_xml(mode_data: dict, axes: np.ndarray, rank_dims=(2, 3)):
    return net([
        parameter(0, "data", ",".join(map(str, rank_dims)), dims=rank_dims),
        const(1, "axes", "i64", str(axes.size), 0, axes.nbytes, dims=[axes.size],
              precision="I64"),
        layer(2, "rev", "Reverse", inputs=[rank_dims, [axes.size]], outputs=[rank_dims],
              data=mode_data),
        result(3, "out", rank_dims),
    ], [(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 3, 0)])


def test_reverse_without_mode_is_rejected(tmp_path):
    axes = np.array([0], np.int64)
    assert codes_of(write_ir(tmp_path, _reverse_xml({}, axes), axes.tobytes())) == ["IR301"]


def test_reverse_negative_constant_axis_below_minus_rank_fails_at_read(tmp_path):
    axes = np.array([-3], np.int64)
    xml = _reverse_xml({"mode": "index"}, axes)
    assert codes_of(write_ir(tmp_path, xml, axes.tobytes())) == ["IR306"]


def test_reverse_sequence_equal_axes_are_rejected(tmp_path):
    xml = reverse_sequence_xml({"batch_axis": "1", "seq_axis": "-1"}, data_dims=(2, 2),
                               seq_dims=(2,))
    assert codes_of(write_ir(tmp_path, xml)) == ["IR311"]


@pytest.mark.parametrize("value, code", [(5.0, "IR308"), (-1.0, "IR308"), (np.nan, "IR308")])
def test_reverse_sequence_bad_constant_lengths_fail_at_read(value, code):
    b = ModelBuilder()
    data = b.parameter("data", "f32", [2, 3])
    lengths = b.constant(np.array([1.0, value], np.float32))
    b.result(b.op("ReverseSequence", data, lengths))
    with pytest.raises(irexec.IRError) as info:
        b.build()
    assert [d.code for d in info.value.diagnostics] == [code]


def test_reverse_sequence_constant_zero_length_warns_and_changes_nothing():
    b = ModelBuilder()
    data = b.parameter("data", "i32", [2, 3])
    b.result(b.op("ReverseSequence", data, b.constant(np.array([0, 3], np.int32)), name="rs"))
    model = b.build()
    assert [d.code for d in model.diagnostics] == ["IR309"]
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = irexec.compile_model(model)({"data": x})["rs"]
    np.testing.assert_array_equal(out, [[0, 1, 2], [5, 4, 3]])


def test_reverse_sequence_zero_size_data_still_checks_lengths():
    b = ModelBuilder()
    data = b.parameter("data", "f32", [2, -1])
    lengths = b.parameter("lengths", "i32", [2])
    b.result(b.op("ReverseSequence", data, lengths, name="rs"))
    compiled = irexec.compile_model(b.build())
    empty = np.zeros((2, 0), np.float32)
    assert compiled([empty, np.zeros(2, np.int32)])["rs"].shape == (2, 0)
    with pytest.raises(irexec.IRError) as info:
        compiled([empty, np.ones(2, np.int32)])
    assert info.value.code == "IR308"


def test_input_of_another_element_type_is_rejected_on_the_command_line(tmp_path):
    b = ModelBuilder()
    b.result(b.parameter("x", "f32", [2]))
    compiled = irexec.compile_model(b.build())
    with pytest.raises(irexec.IRError) as info:  # what `irexec run --input` checks
        compiled.check_input("x", np.zeros(2, np.float64))
    assert info.value.code == "IR603"
    assert "f32" in str(info.value) and "f64" in str(info.value)
    # the Python API converts numbers, as OpenVINO's data dispatcher does (Python lists too)
    assert compiled({"x": np.array([1.5, 2.5])})[0].dtype == np.float32
    assert compiled({"x": [1.5, 2.5]})[0].tolist() == [1.5, 2.5]


def test_a_variable_no_assign_writes_is_rejected(tmp_path):
    """OpenVINO runs a ReadValue without an Assign of its variable (it keeps the initial
    value); irexec reports IR208 (tests/ops/infrastructure/test_subgraphs.py has the rest)."""
    import re
    import shutil
    from pathlib import Path

    data = Path(__file__).parent / "data" / "subgraphs"
    text = (data / "stateful.xml").read_text()
    text = re.sub(r'\s*<layer id="4" name="Assign_75".*?</layer>', "", text, flags=re.S)
    text = text.replace('<edge from-layer="0" from-port="0" to-layer="4" to-port="0" />', "")
    (tmp_path / "m.xml").write_text(text)
    shutil.copy(data / "stateful.bin", tmp_path / "m.bin")
    assert codes_of(tmp_path / "m.xml") == ["IR208"]


# --- reported where OpenVINO is silent (warnings: the file still reads and runs) -------------

def warnings_of(path) -> list[str]:
    model = irexec.read_model(path)
    assert all(not d.is_error for d in model.diagnostics)
    return [d.code for d in model.diagnostics]


def test_output_precision_other_than_the_element_type_is_a_warning(tmp_path):
    xml = net([parameter(0, "x", "2", "i32", dims=[2], precision="FP32"), result(1, "out", [2])],
              [(0, 0, 1, 0)])
    path = write_ir(tmp_path, xml)
    assert warnings_of(path) == ["IR402"]
    assert irexec.read_model(path).outputs[0].element_type == irexec.ElementType.i32


def test_port_ids_out_of_the_writers_order_are_a_warning(tmp_path):
    xml = net([parameter(0, "x", "2", dims=[2]),
               layer(1, "c", "Convert", inputs=[[2]], outputs=[[2]], in_ids=[3], out_ids=[4],
                     data={"destination_type": "f32"}),
               result(2, "out", [2])],
              [(0, 0, 1, 3), (1, 4, 2, 0)])
    assert warnings_of(write_ir(tmp_path, xml)) == ["IR108"]


def test_unknown_data_attribute_is_a_warning_and_kept(tmp_path):
    xml = net([parameter(0, "x", "2", dims=[2]),
               layer(1, "c", "Convert", inputs=[[2]], outputs=[[2]],
                     data={"destination_type": "f32", "colour": "red"}),
               result(2, "out", [2])],
              [(0, 0, 1, 0), (1, 1, 2, 0)])
    path = write_ir(tmp_path, xml)
    assert warnings_of(path) == ["IR310"]
    assert irexec.read_model(path).by_id[1].extra_attrs == {"colour": "red"}


def test_const_size_larger_than_needed_is_a_warning(tmp_path):
    axes = np.array([0, 0], np.int64)  # the second 8 bytes are not needed
    xml = _reverse_xml({"mode": "index"}, axes[:1]).replace('size="8"', 'size="16"')
    path = write_ir(tmp_path, xml, axes.tobytes())
    assert warnings_of(path) == ["IR504"]


@pytest.mark.parametrize("axes, code", [([1, -1], "IR312"), ([0, 1, 0], "IR313")])
def test_reverse_repeated_or_too_many_constant_axes_are_a_warning(tmp_path, axes, code):
    axes = np.array(axes, np.int64)
    path = write_ir(tmp_path, _reverse_xml({"mode": "index"}, axes), axes.tobytes())
    assert warnings_of(path) == [code]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = irexec.compile_model(path)({"data": x})["out"]
    # Each named axis is flipped once: [1, -1] flips axis 1, [0, 1, 0] flips axes 0 and 1.
    np.testing.assert_array_equal(out, x[::-1, ::-1] if code == "IR313" else x[:, ::-1])


# --- lenient where OpenVINO is strict ----------------------------------------------------------

def test_output_port_without_precision_is_accepted(tmp_path):
    xml = net([parameter(0, "x", "2", dims=[2], precision=None), result(1, "out", [2])],
              [(0, 0, 1, 0)])
    model = irexec.read_model(write_ir(tmp_path, xml))
    assert model.outputs[0].element_type == irexec.ElementType.f32


def test_reverse_with_empty_runtime_axes_returns_a_copy():
    b = ModelBuilder()
    data = b.parameter("data", "f32", [2, 3])
    axes = b.parameter("axes", "i64", [-1])
    b.result(b.op("Reverse", data, axes, mode="index", name="rev"))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = irexec.compile_model(b.build())([x, np.zeros(0, np.int64)])["rev"]
    np.testing.assert_array_equal(out, x)
    assert not np.shares_memory(out, x)


# --- exact where OpenVINO's CPU plugin is not ----------------------------------------------------

def _run_single(op, data, second, **attrs):
    b = ModelBuilder()
    d = b.parameter("data", irexec.ElementType.__dict__[_et(data)], list(data.shape))
    s = b.parameter("second", irexec.ElementType.__dict__[_et(second)], list(second.shape))
    b.result(b.op(op, d, s, name="y", **attrs))
    return irexec.compile_model(b.build())([data, second])["y"]


def _et(array) -> str:
    from irexec.ir.element_type import from_dtype

    return from_dtype(array.dtype).name


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.float64])
def test_reverse_keeps_64_bit_values(dtype):
    values = {np.int64: [2**40 + 3, -5, 2**33, 7], np.uint64: [2**63 + 1, 5, 2**40, 1],
              np.float64: [1e300, -1e-300, 1 / 3, 7.0]}[dtype]
    x = np.array(values, dtype=dtype)
    out = _run_single("Reverse", x, np.array([0], np.int64), mode="index")
    assert out.tobytes() == x[::-1].tobytes()


def test_reverse_with_axis_two_to_the_32_is_an_error_not_axis_zero():
    with pytest.raises(irexec.IRError) as info:
        _run_single("Reverse", np.zeros((2, 2), np.float32), np.array([2**32], np.int64),
                    mode="index")
    assert info.value.code == "IR306" and str(2**32) in str(info.value)


@pytest.mark.parametrize("dtype, big", [(np.int32, 2**31 - 1), (np.uint32, 2**32 - 1),
                                        (np.int64, 2**62 + 1), (np.uint64, 2**64 - 1),
                                        (np.float64, 1 + 2**-40)])
def test_reverse_sequence_keeps_full_precision(dtype, big):
    x = np.array([[big, 16777217, 3], [1, 2, big]], dtype=dtype)
    out = _run_single("ReverseSequence", x, np.array([3, 2], np.int32))
    expected = np.array([[3, 16777217, big], [2, 1, big]], dtype=dtype)
    assert out.tobytes() == expected.tobytes()


def test_reverse_sequence_reads_64_bit_lengths_at_full_width():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with pytest.raises(irexec.IRError) as info:
        _run_single("ReverseSequence", x, np.array([2**32 + 1, 1], np.int64))
    assert info.value.code == "IR308" and str(2**32 + 1) in str(info.value)


def test_convert_64_bit_integers_keep_every_bit():
    x = np.array([2**40 + 5, -(2**50) - 1], np.int64)
    assert convert(x, np.uint64).tolist() == [2**40 + 5, 2**64 - 2**50 - 1]
    assert convert(np.array([2**32 - 1], np.uint32), np.int64).tolist() == [2**32 - 1]


def _bf16_round_to_nearest_even(value: int) -> float:
    """Exact reference: bf16 keeps 8 significant bits; round the integer to 8 bits, ties even."""
    if value == 0:
        return 0.0
    sign, m = (-1 if value < 0 else 1), abs(value)
    shift = max(m.bit_length() - 8, 0)
    q, r = divmod(m, 1 << shift)
    half = (1 << shift) // 2 if shift else 0
    if shift and (r > half or (r == half and q % 2 == 1)):
        q += 1
    return float(sign * q * (1 << shift))


@pytest.mark.parametrize("value", [12345, 2**24 + 2**16 + 1, -(2**24 + 2**16 + 1), 65535,
                                   2**63 - 1, -(2**63), 2**53 + 1])
def test_convert_integers_to_bf16_round_once(value):
    import ml_dtypes

    out = convert(np.array([value], np.int64), ml_dtypes.bfloat16)
    assert float(out[0]) == _bf16_round_to_nearest_even(value)


def test_convert_f64_to_bf16_rounds_once():
    import ml_dtypes

    x = np.array([1 + 2**-8 + 2**-30, 1 + 2**-8, -(1 + 2**-8 + 2**-30)], np.float64)
    out = convert(x, ml_dtypes.bfloat16).astype(np.float64)
    assert out.tolist() == [1 + 2**-7, 1.0, -(1 + 2**-7)]


def test_convert_integers_and_f64_to_f64_are_exact():
    x = np.array([16777217, 2**31 - 1], np.int32)
    assert convert(x, np.float64).tolist() == [16777217.0, 2147483647.0]
    y = np.array([1 / 3], np.float64)
    assert convert(y, np.float64).tobytes() == y.tobytes()


def test_convert_f64_to_f16_rounds_once():
    x = np.array([1.0004882812509095], np.float64)  # just above the f16 midpoint 1 + 2**-11
    assert float(convert(x, np.float16)[0]) == 1 + 2**-10


def test_convert_beyond_f32_range_gives_infinity():
    assert convert(np.array([1e300, -1e300]), np.float32).tolist() == [np.inf, -np.inf]
    assert convert(np.array([np.inf], np.float32), np.float64).tolist() == [np.inf]


def test_convert_f32_subnormal_to_bf16_is_not_flushed():
    import ml_dtypes

    x = np.array([2.0**-130], np.float32)
    assert float(convert(x, ml_dtypes.bfloat16)[0]) == 2.0**-130


def test_convert_to_boolean_is_nonzero_and_nan_is_true():
    f = np.array([np.nan, -0.0, 0.5, 0.0], np.float32)
    assert convert(f, np.bool_).tolist() == [True, False, True, False]
    i = np.array([2**32, 2**31], np.int64)
    assert convert(i, np.bool_).tolist() == [True, True]
    assert convert(np.array([2**31], np.uint32), np.bool_).tolist() == [True]


# --- Convert: values outside the target's range ------------------------------------------------

def test_convert_float_to_int_truncates_then_saturates_and_nan_is_zero():
    x = np.array([300.7, -1.5, np.nan, np.inf, -np.inf, 2.9, -2.9], np.float32)
    assert convert(x, np.uint8).tolist() == [255, 0, 0, 255, 0, 2, 0]
    assert convert(x, np.int8).tolist() == [127, -1, 0, 127, -128, 2, -2]
    assert convert(np.array([1e10]), np.int32).tolist() == [2**31 - 1]
    assert convert(np.array([-np.inf]), np.int64).tolist() == [-(2**63)]
    assert convert(np.array([2.0**63]), np.int64).tolist() == [2**63 - 1]


def test_convert_integer_narrowing_wraps():
    assert convert(np.array([300, -1], np.int32), np.uint8).tolist() == [44, 255]
    assert convert(np.array([2**40 + 5], np.int64), np.int32).tolist() == [5]


def test_convert_to_narrow_floats_beyond_range_gives_infinity():
    import ml_dtypes

    assert convert(np.array([70000.0], np.float32), np.float16).tolist() == [np.inf]
    assert float(convert(np.array([1e39]), ml_dtypes.bfloat16)[0]) == np.inf


def test_constant_u64_axis_all_ones_reads_as_minus_one():
    b = ModelBuilder()
    data = b.parameter("data", "i32", [2, 3])
    axes = b.constant(np.array([2**64 - 1], np.uint64))
    b.result(b.op("Reverse", data, axes, mode="index", name="rev"))
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    np.testing.assert_array_equal(irexec.compile_model(b.build())([x])["rev"], x[:, ::-1])


def test_reverse_keeps_f64_values_below_the_f32_range():
    x = np.array([1e-310, -1e-45, 5e-324], np.float64)
    out = _run_single("Reverse", x, np.array([0], np.int64), mode="index")
    assert out.tobytes() == x[::-1].tobytes()


@pytest.mark.parametrize("op", ["Reverse", "ReverseSequence"])
@pytest.mark.parametrize("dtype, bits", [(np.float16, [0x7C01, 0xFC01]),
                                         ("bfloat16", [0x7F81, 0xFF81])])
def test_signalling_nans_are_moved_bit_for_bit(op, dtype, bits):
    import ml_dtypes

    dtype = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    x = np.array([bits], np.uint16).view(dtype)  # shape [1, 2]
    if op == "Reverse":
        out = _run_single(op, x, np.array([1], np.int64), mode="index")
    else:
        out = _run_single(op, x, np.array([2], np.int32))
    assert out.view(np.uint16).tolist() == [bits[::-1]]


def test_parameter_without_data_is_a_dynamic_scalar(tmp_path):
    xml = net([layer(0, "x", "Parameter", outputs=[None], precision="UNSPECIFIED"),
               result(1, "out")], [(0, 0, 1, 0)])
    model = irexec.read_model(write_ir(tmp_path, xml))
    port = model.inputs[0]
    assert port.element_type == irexec.ElementType.dynamic
    assert port.partial_shape == irexec.PartialShape([])


@pytest.mark.parametrize("text", ["1" * 21, str(2**64)])
def test_integers_beyond_64_bits_are_rejected(tmp_path, text):
    path = write_ir(tmp_path, reverse_sequence_xml({"batch_axis": text, "seq_axis": "1"}))
    assert codes_of(path) == ["IR302"]


# --- element types the CPU plugin gets wrong, refuses or crashes on ---------------------------------

def test_u3_const_needs_whole_three_byte_groups(tmp_path):
    xml = net([const(0, "c", "u3", "9", 0, 5, dims=[9]), result(1, "out", [9])], [(0, 0, 1, 0)])
    path = write_ir(tmp_path, xml, bytes(5))
    assert codes_of(path) == ["IR503"]
    xml = xml.replace('size="5"', 'size="6"')
    assert irexec.read_model(write_ir(tmp_path, xml, bytes(6), name="fixed")).diagnostics == []


def _narrow(type_name, shape, seed=0):
    from tests.ops.support import random_values

    return random_values(type_name, shape, np.random.default_rng(seed))


@pytest.mark.parametrize("type_name", ["u2", "nf4", "f4e2m1", "u1", "u3", "u6", "string"])
def test_reverse_on_types_the_cpu_gets_wrong_or_refuses_is_exact(type_name):
    data = _narrow(type_name, (4, 6))
    out = _run_single("Reverse", data, np.array([1], np.int64), mode="index")
    expected = np.empty_like(data)
    for i in range(4):  # a plain loop
        for j in range(6):
            expected[i, j] = data[i, 5 - j]
    assert out.dtype == data.dtype
    assert out.tolist() == expected.tolist() if type_name == "string" else \
        out.tobytes() == expected.tobytes()


@pytest.mark.parametrize("type_name", ["u1", "u2", "u3", "u6", "string"])
def test_reverse_sequence_on_types_the_cpu_refuses_is_exact(type_name):
    from tests.ops.support import reverse_sequence_loop

    data = _narrow(type_name, (6, 4), seed=1)
    lengths = np.array([6, 0, 3, 1], np.int32)
    out = _run_single("ReverseSequence", data, lengths, batch_axis=1, seq_axis=0)
    expected = reverse_sequence_loop(data, lengths, 1, 0)
    assert out.dtype == data.dtype
    assert out.tolist() == expected.tolist() if type_name == "string" else \
        out.tobytes() == expected.tobytes()


def test_convert_to_f8e5m2_just_below_a_power_of_two_rounds_to_nearest():
    x = np.array([0x37FFFFFF, 0xB7FFFFFF, 0x387FFFFF], np.uint32).view(np.float32)
    out = convert(x, irexec.ElementType.f8e5m2).view(np.uint8)
    # 0x37ffffff is just below 2**-15, which e5m2 holds as 0x02: nearest is 0x02 (OpenVINO gives
    # 0x04, twice the value); just below 2**-14 (0x387fffff) both give 0x04
    assert out.tolist() == [0x02, 0x82, 0x04]


def test_convert_nf4_minus_one_to_u8_saturates():
    nf4 = irexec.ElementType.nf4
    from irexec.ir.element_type import from_codes

    out = convert(from_codes(nf4, np.array([0, 15, 7], np.uint8)), irexec.ElementType.u8)
    assert out.tolist() == [0, 1, 0]  # -1.0 saturates at 0 (OpenVINO: 255); 1.0 and 0.0 exact
    out = convert(from_codes(nf4, np.array([0], np.uint8)), irexec.ElementType.u4)
    assert out.astype(np.uint8).tolist() == [15]  # sub-byte targets wrap, as OpenVINO


# --- element-wise operations: the CPU plugin's departures ---------------------------------------

def _elementwise(op_type, *arrays, version=None, **attrs):
    from irexec.ir import element_type as et_table
    b = ModelBuilder()
    ports = [b.parameter(f"in{i}", et_table.from_dtype(a.dtype).name, list(a.shape))
             for i, a in enumerate(arrays)]
    b.result(b.op(op_type, *ports, version=version, **attrs), name="out")
    compiled = irexec.compile_model(b.build())
    (out,) = compiled({f"in{i}": a for i, a in enumerate(arrays)}).values()
    return out


def test_eight_bit_arithmetic_wraps():
    u8 = np.uint8
    assert _elementwise("Subtract", np.array([3], u8), np.array([4], u8)).tolist() == [255]
    assert _elementwise("Multiply", np.array([44], np.int8), np.array([4], np.int8)).tolist() \
        == [-80]
    assert _elementwise("SquaredDifference", np.array([-39], np.int8),
                        np.array([3], np.int8)).tolist() == [(42 * 42) % 256 - 256]


def test_signed_divide_floors_by_default():
    out = _elementwise("Divide", np.array([-7, 7], np.int32), np.array([2, -2], np.int32))
    assert out.tolist() == [-4, -4]


def test_integer_real_functions_compute_in_f64():
    assert _elementwise("Exp", np.array([16], np.int32)).tolist() == [8886111]
    assert _elementwise("Sqrt", np.array([-4], np.int32)).tolist() == [0]
    assert _elementwise("Sin", np.array([4], np.uint16)).tolist() == [0]


def test_negative_on_unsigned_wraps():
    assert _elementwise("Negative", np.array([1, 0], np.uint8)).tolist() == [255, 0]


def test_greater_with_nan_is_false():
    """IEEE 754: an unordered comparison is false (OpenVINO's CPU plugin says true on AVX-512)."""
    a = np.array([np.nan, 1, np.nan], np.float32)
    b = np.array([1, np.nan, np.nan], np.float32)
    assert _elementwise("Greater", a, b).tolist() == [False] * 3
    assert _elementwise("GreaterEqual", a, b).tolist() == [False] * 3
    assert _elementwise("Less", a, b).tolist() == [False] * 3


def test_64_bit_comparisons_and_bitwise_keep_every_bit():
    big = np.array([2**40 + 1], np.int64)
    assert _elementwise("Greater", big, np.array([2], np.int64)).tolist() == [True]
    assert _elementwise("BitwiseAnd", big, np.array([2**40], np.int64),
                        version="opset13").tolist() == [2**40]


def test_shift_counts_out_of_range_shift_every_bit_out():
    a = np.array([3, 3, -8], np.int32)
    n = np.array([33, 32, 40], np.int32)
    assert _elementwise("BitwiseLeftShift", a, n, version="opset15").tolist() == [0, 0, 0]
    assert _elementwise("BitwiseRightShift", a, n, version="opset15").tolist() == [0, 0, -1]


def test_exp_of_nan_is_nan_and_f64_infinities_stay():
    assert np.isnan(_elementwise("Exp", np.array([np.nan], np.float32))[0])
    assert _elementwise("Log", np.array([0.0], np.float64)).tolist() == [-np.inf]


def test_round_half_away_below_a_half():
    x = np.array([0.49999997, -0.49999997, 0.5], np.float32)
    assert _elementwise("Round", x, version="opset5",
                        mode="half_away_from_zero").tolist() == [0, 0, 1]


def test_select_boolean_branches_and_pdpd_run():
    cond = np.array([True, False])
    out = _elementwise("Select", cond, np.array([True, True]), np.array([False, False]))
    assert out.tolist() == [True, False]
    out = _elementwise("Select", np.array([True, False]), np.ones((2, 2), np.float32),
                       np.zeros(2, np.float32), auto_broadcast="pdpd")
    assert out.tolist() == [[1, 0], [1, 0]]


def test_integer_division_by_zero_is_ir316():
    with pytest.raises(irexec.IRError) as info:
        _elementwise("Mod", np.array([1], np.int32), np.array([0], np.int32))
    assert info.value.code == "IR316"


# --- activations, quantization (docs/compatibility.md, last section) ---------------------------

def _one_layer(op, version, type_name, shape, *constants, **attrs):
    b = ModelBuilder()
    x = b.parameter("x", type_name, list(shape))
    b.result(b.op(op, x, *[b.constant(c) for c in constants], version=version, name="y",
                  **attrs))
    return b.build()


def test_clamp_keeps_nan():
    m = _one_layer("Clamp", "opset1", "f32", [2], min=-1.0, max=1.0)
    out = irexec.compile_model(m)({"x": np.float32([np.nan, 5])})["y"]
    assert np.isnan(out[0]) and out[1] == 1


def test_fake_quantize_keeps_nan():
    c = [np.float32(v) for v in (-1, 1, -3, 3)]
    m = _one_layer("FakeQuantize", "opset1", "f32", [2], *c, levels=256)
    out = irexec.compile_model(m)({"x": np.float32([np.nan, 0.5])})["y"]
    assert np.isnan(out[0]) and np.isfinite(out[1])


def test_fake_quantize_with_an_empty_input_range_is_a_step():
    """input_low == input_high: the spec's two comparisons decide every element (x <= low:
    output_low; x > high: output_high), as OpenVINO's reference kernel and its CPU plugin with
    run-time ranges do; the CPU plugin with constant ranges (and levels > 2) gives NaN."""
    x = np.float32([-2, 0, 1, np.nextafter(np.float32(1), np.float32(2)), 5, np.nan])
    for levels in (2, 256):
        c = [np.float32(v) for v in (1, 1, -3, 7)]
        m = _one_layer("FakeQuantize", "opset1", "f32", [6], *c, levels=levels)
        out = irexec.compile_model(m)({"x": x})["y"]
        np.testing.assert_array_equal(out, np.float32([-3, -3, -3, 7, 7, np.nan]))


def test_fake_convert_keeps_nan_and_saturates_infinities():
    m = _one_layer("FakeConvert", "opset13", "f32", [3], np.float32(1),
                   destination_type="f8e5m2")
    out = irexec.compile_model(m)({"x": np.float32([np.nan, np.inf, -np.inf])})["y"]
    assert np.isnan(out[0]) and out[1:].tolist() == [57344.0, -57344.0]


@pytest.mark.parametrize("op,version", [("Sigmoid", "opset1"), ("Elu", "opset1"),
                                        ("Softmax", "opset8")])
def test_integer_activations_are_refused(op, version):
    attrs = {"alpha": 1.0} if op == "Elu" else {"axis": 0} if op == "Softmax" else {}
    with pytest.raises(irexec.IRError) as info:
        _one_layer(op, version, "i32", [2], **attrs)
    assert [d.code for d in info.value.diagnostics] == ["IR304"]


def test_f64_activations_compute_in_f64():
    m = _one_layer("Sigmoid", "opset1", "f64", [1])
    x = np.float64([1e-10])
    out = irexec.compile_model(m)({"x": x})["y"]
    assert out.dtype == np.float64 and out[0] == 1 / (1 + np.exp(-x[0]))  # not an f32 value
    assert out[0] != np.float64(np.float32(out[0]))


# --- shape, sort and generation ops (issue 17) -------------------------------------------------

def _op(type_name, *inputs, version, **attrs):
    from tests.ops.build import run_op
    outs, _ = run_op(type_name, *inputs, version=version, **attrs)
    return outs


def test_an_inferred_shape_over_the_memory_budget_is_ir109_at_read_time():
    """OpenVINO reads the model and allocates when compiling; irexec refuses it when reading, as
    ``validate`` and ``run`` both say (docs/robustness.md, the memory rule)."""
    from irexec import budget

    b = ModelBuilder()
    x = b.parameter("x", "f32", [1])
    b.result(b.op("Broadcast", x, b.constant(np.array([1024, 1024], np.int64)),
                  version="opset3"), "out")
    with budget.limit(1 << 20):
        with pytest.raises(irexec.IRError) as info:
            b.build()
    assert [d.code for d in info.value.diagnostics] == ["IR109"]
    assert "4.0 MiB (4194304 bytes), more than the memory budget of 1.0 MiB" in str(info.value)


def test_topk_larger_k_than_the_axis_is_ir336_at_read_time():
    from tests.ops.build import Const
    with pytest.raises(irexec.IRError) as e:
        _op("TopK", np.zeros((2, 3), np.float32), Const(np.int64(5)), version="opset11",
            axis=1, mode="max", sort="value")
    assert e.value.code == "IR336"


def test_topk_with_k_zero_gives_empty_outputs():
    from tests.ops.build import Const
    values, indices = _op("TopK", np.ones((2, 3), np.float32), Const(np.int64(0)),
                          version="opset11", axis=1, mode="max", sort="value")
    assert values.shape == indices.shape == (2, 0)


def test_topk_stable_index_sort_keeps_the_smaller_index_among_ties():
    from tests.ops.build import Const
    data = np.array([[1, 3, 2, 3, 3]], np.float32)
    _, indices = _op("TopK", data, Const(np.int64(2)), version="opset11", axis=1, mode="max",
                     sort="index", stable=True)
    assert indices.tolist() == [[1, 3]]  # the CPU plugin picks index 4 for the second


def test_range_with_stop_on_the_wrong_side_is_empty():
    out, = _op("Range", np.int64(5), np.int64(0), np.int64(1), version="opset4",
               output_type="i64")
    assert out.shape == (0,)


def test_einsum_diagonal_runs():
    out, = _op("Einsum", np.arange(9, dtype=np.float32).reshape(3, 3), version="opset7",
               equation="ii->i")
    assert out.tolist() == [0, 4, 8]


def test_eye_with_an_empty_batch_shape_is_the_plain_matrix():
    from tests.ops.build import Const
    out, = _op("Eye", Const(np.int64(2)), Const(np.int64(2)), Const(np.int64(0)),
               Const(np.zeros(0, np.int64)), version="opset9", output_type="f32")
    assert out.tolist() == [[1, 0], [0, 1]]


def test_gather_tree_with_length_zero_is_all_end_tokens():
    ids = np.arange(8, dtype=np.int32).reshape(2, 2, 2)
    out, = _op("GatherTree", ids, np.zeros((2, 2, 2), np.int32), np.array([0, 2], np.int32),
               np.int32(9), version="opset1")
    # batch 1 traced back through parent 0: step 0 takes beam 0 for both beams
    assert (out[:, 0] == 9).all() and out[:, 1].tolist() == [[2, 2], [6, 7]]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.float32])
def test_unique_along_axis_one_finds_every_duplicate(dtype):
    from tests.ops.build import Const
    data = np.array([[1, 2, 1, 2], [0, 5, 0, 5]], dtype)
    u, _, rev, counts = _op("Unique", data, Const(np.int64(1)), version="opset10")
    assert u.tolist() == [[1, 2], [0, 5]] and rev.tolist() == [0, 1, 0, 1]
    assert counts.tolist() == [2, 2]


def test_unique_of_zero_size_data_gives_empty_outputs():
    u, first, rev, counts = _op("Unique", np.zeros((0,), np.float32), version="opset10")
    assert u.shape == first.shape == rev.shape == counts.shape == (0,)


def test_range_with_float_inputs_for_an_integer_output_truncates_them_first():
    out, = _op("Range", np.float32(0.3), np.float32(9.7), np.float32(1.7), version="opset4",
               output_type="i8")
    assert out.tolist() == list(range(9))  # 0 to 9 by 1


# --- compute operations --------------------------------------------------------------------------

def _conv_attrs(n=1, **kw):
    at = dict(strides=(1,) * n, dilations=(1,) * n, pads_begin=(0,) * n, pads_end=(0,) * n,
              auto_pad="explicit")
    at.update(kw)
    return at


def test_i8_convolution_sums_in_the_type():
    from tests.ops.compute_support import run_layer
    x = np.array([[[1, 2]]], np.int8)
    y = run_layer("Convolution", x, np.array([[[3, 1]]], np.int8), **_conv_attrs())
    assert y.tolist() == [[[5]]]


def test_u8_sums_wrap_instead_of_saturating():
    from tests.ops.compute_support import run_layer
    y = run_layer("Convolution", np.full((1, 1, 2), 200, np.uint8),
                  np.ones((1, 1, 2), np.uint8), **_conv_attrs())
    assert y.tolist() == [[[400 - 256]]]
    p = run_layer("ReduceProd", np.array([100, 2], np.int8), np.array([0]), consts=(1,))
    assert p == np.int8(200 - 256)


def test_bf16_depthwise_with_two_outputs_per_group_and_dilation_runs():
    from tests.ops.compute_support import run_layer
    bf16 = np.dtype("bfloat16") if BF16 is not None else __import__("ml_dtypes").bfloat16
    x = np.ones((1, 2, 5, 5), bf16)
    w = np.ones((2, 2, 1, 2, 2), bf16)
    y = run_layer("GroupConvolution", x, w, **_conv_attrs(2, dilations=(2, 2)))
    assert y.shape == (1, 4, 3, 3) and float(y[0, 0, 0, 0]) == 4.0


def test_i32_avg_pool_runs_and_rounds_half_to_even():
    from tests.ops.compute_support import run_layer
    y = run_layer("AvgPool", np.array([[[1, 2, 3, 4]]], np.int32), kernel=(2,), strides=(2,),
                  pads_begin=(0,), pads_end=(0,), **{"exclude-pad": True})
    assert y.tolist() == [[[2, 4]]]  # 1.5 -> 2, 3.5 -> 4


def test_avg_pool_window_past_the_padding_is_nan():
    from tests.ops.compute_support import run_layer
    # 8 elements and 1 of end padding: ceil rounding adds a window at 9, past both
    y = run_layer("AvgPool", np.ones((1, 1, 8), np.float32), kernel=(2,), strides=(3,),
                  pads_begin=(0,), pads_end=(1,), rounding_type="ceil",
                  **{"exclude-pad": True})
    assert y.shape == (1, 1, 4) and y[0, 0, :3].tolist() == [1.0, 1.0, 1.0]
    assert np.isnan(y[0, 0, 3])


def test_reduce_min_skips_nan():
    from tests.ops.compute_support import run_layer
    y = run_layer("ReduceMin", np.array([1, np.nan, 3], np.float32), np.array([0]),
                  consts=(1,))
    assert y == 1


def test_f64_matmul_is_computed_in_f64():
    from tests.ops.compute_support import run_layer
    a = np.array([[1.0, 1e-10]])
    y = run_layer("MatMul", a, np.array([[1.0], [1.0]]))
    assert y.tolist() == [[1.0 + 1e-10]]


def test_binary_convolution_counts_matching_bits():
    import ml_dtypes

    from tests.ops.compute_support import run_layer
    # 3 channels x 3x3 taps = 27: every sum of +-1 is odd; data 1 against weight bits 1 matches
    x = np.ones((1, 3, 3, 3), np.float32)
    bits = np.zeros((1, 3, 3, 3), np.uint8)
    bits[0, 0] = 1  # 9 matching taps, 18 not
    y = run_layer("BinaryConvolution", x, bits.astype(ml_dtypes.uint1), consts=(1,),
                  mode="xnor-popcount", pad_value=0.0, **_conv_attrs(2))
    assert y.tolist() == [[[[9.0 - 18.0]]]]


def test_irdft_trims_other_axes_as_numpy_and_allows_an_empty_result():
    from tests.ops.compute_support import run_layer
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3, 2)).astype(np.float32)
    y = run_layer("IRDFT", x, np.array([0, 1], np.int64), np.array([2, 4], np.int64),
                  version="opset9", consts=(1, 2))
    z = x[..., 0].astype(np.float64) + 1j * x[..., 1]
    np.testing.assert_allclose(y, np.fft.irfftn(z, s=[2, 4], axes=(0, 1)), rtol=1e-5,
                               atol=1e-5)
    empty = run_layer("IRDFT", x[:, :1], np.array([1], np.int64), version="opset9",
                      consts=(1,))
    assert empty.shape == (4, 0)


def test_rdft_with_minus_one_signal_size_runs():
    from tests.ops.compute_support import run_layer
    y = run_layer("RDFT", np.array([[1.0, 2.0, 3.0, 4.0]], np.float32),
                  np.array([1], np.int64), np.array([-1], np.int64), version="opset9",
                  consts=(1, 2))
    assert y.tolist() == [[[10.0, 0.0], [-2.0, 2.0], [-2.0, 0.0]]]


def test_inverse_of_a_singular_matrix_is_nan():
    from tests.ops.compute_support import run_layer
    a = np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, 4.0]]], np.float32)
    y = run_layer("Inverse", a, version="opset14", adjoint=False)
    assert np.isnan(y[0]).all() and y[1].tolist() == [[0.5, 0.0], [0.0, 0.25]]


def test_interpolate_1_area_averages_each_share():
    from tests.ops.compute_support import run_layer
    x = np.array([[0.0, 3.0, 6.0]], np.float32)
    y = run_layer("Interpolate", x, np.array([2], np.int64), consts=(1,), axes=(1,),
                  mode="area")
    np.testing.assert_allclose(y, [[1.0, 5.0]], rtol=1e-6)


def _interpolate(x, values, axes, **at):
    from tests.ops.compute_support import run_layer
    attrs = dict(shape_calculation_mode="sizes", coordinate_transformation_mode="half_pixel",
                 nearest_mode="round_prefer_floor", antialias=False, pads_begin=(0,),
                 pads_end=(0,), cube_coeff=-0.75)
    attrs.update(at)
    return run_layer("Interpolate", x, np.array(values), np.array(axes), consts=(1, 2),
                     version="opset11", **attrs)


def test_interpolate_linear_antialias_widens_the_filter():
    x = np.array([[1.0, 4.0, 9.0, 16.0]], np.float32)
    plain = _interpolate(x, [2], [1], mode="linear")
    wide = _interpolate(x, [2], [1], mode="linear", antialias=True)
    assert plain.tolist() == [[2.5, 12.5]] and wide.tolist() != plain.tolist()


@pytest.mark.parametrize("mode", ["linear", "bilinear_pillow", "bicubic_pillow"])
def test_interpolate_nan_reaches_only_outputs_that_weigh_it(mode):
    """A NaN in the data reaches exactly the outputs that read it with a nonzero weight: those
    whose value changes when that element does (found from two finite runs)."""
    x = np.random.default_rng(3).uniform(1, 2, (2, 16)).astype(np.float32)
    x[0, 6] = 0.0
    zero = _interpolate(x, [48], [1], mode=mode)
    x[0, 6] = 1.0
    one = _interpolate(x, [48], [1], mode=mode)
    x[0, 6] = np.nan
    got = _interpolate(x, [48], [1], mode=mode)
    assert np.array_equal(np.isnan(got), zero != one)
    assert 0 < np.isnan(got).sum() < 48


def test_interpolate_nearest_moves_unchanged_axes_too():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = _interpolate(x, [3], [1], mode="nearest",
                     coordinate_transformation_mode="tf_half_pixel_for_nn", nearest_mode="ceil")
    assert y.tolist() == [[4.0, 5.0, 5.0], [4.0, 5.0, 5.0]]  # row 0 -> ceil(0.5) = 1


def test_interpolate_coordinates_are_float64():
    x = np.arange(7, dtype=np.float32).reshape(1, 7)
    y = _interpolate(x, [1], [1], mode="nearest", nearest_mode="floor")
    assert y.tolist() == [[3.0]]


def test_interpolate_integer_linear_rounds_half_away_from_zero():
    y = _interpolate(np.array([[0, 3]], np.int32), [3], [1], mode="linear_onnx",
                     coordinate_transformation_mode="align_corners")
    assert y.tolist() == [[0, 2, 3]]


def test_interpolate_1_leaves_pads_out():
    from tests.ops.compute_support import run_layer
    y = run_layer("Interpolate", np.ones((1, 1, 2, 2), np.float32), np.array([4]), consts=(1,),
                  axes=(3,), mode="nearest", pads_begin=(1,), pads_end=(1,))
    assert y.shape == (1, 1, 2, 4) and (y == 1).all()


@pytest.mark.parametrize("op, attrs, code", [
    ("Convolution", _conv_attrs(1, pads_begin=(-1,)), "IR347"),
    ("LRN", dict(alpha=1.0, beta=0.75, bias=1.0, size=0), "IR347"),
])
def test_stricter_compute_attributes(op, attrs, code):
    from tests.ops.compute_support import layer_error
    f = np.zeros(1, np.float32)
    if op == "LRN":
        e = layer_error(op, f, np.array([1]), consts=(1,), shapes=[[1, 2, 3], None], **attrs)
    else:
        e = layer_error(op, f, f, shapes=[[1, 1, 4], [1, 1, 2]], **attrs)
    assert e.code == code


def test_mvn6_constant_axes_out_of_range_are_an_error():
    from tests.ops.compute_support import layer_error
    e = layer_error("MVN", np.zeros(1, np.float32), np.array([3]), consts=(1,),
                    shapes=[[1, 2, 3], None], version="opset6", eps=1e-5,
                    normalize_variance=True, eps_mode="inside_sqrt")
    assert e.code == "IR306"


def test_pooling_attributes_the_specification_requires():
    from tests.ops.compute_support import layer_error
    e = layer_error("AvgPool", np.zeros(1, np.float32), shapes=[[1, 1, 4]], kernel=(2,),
                    strides=(1,), pads_begin=(0,), pads_end=(0,))
    assert e.code == "IR301"
# --- data movement (docs/compatibility.md, "Data movement") --------------------------------------

def _movement(op_type, *inputs, version="opset16", outputs=None, **attrs):
    from tests.ops.movement.cases import run

    return run(op_type, *inputs, version=version, outputs=outputs, **attrs)


def _movement_error(op_type, *inputs, version="opset16", **attrs) -> str:
    from tests.ops.movement.cases import read_error

    return read_error(op_type, *inputs, version=version, **attrs).code


@pytest.mark.parametrize("version", ["opset1", "opset7"])
@pytest.mark.parametrize("index", [-1, 3])
def test_gather_1_and_7_index_outside_the_dim_is_an_error_not_zeros(version, index):
    from tests.ops.movement.cases import Param

    data = np.array([1, 2, 3], np.float32)
    assert _movement_error("Gather", Param(data), np.array([0, index]), np.array(0),
                           version=version) == "IR325"


def test_gather_nd_index_outside_the_dim_is_an_error():
    from tests.ops.movement.cases import Param

    assert _movement_error("GatherND", Param(np.zeros((2, 3), np.float32)),
                           np.array([[0, 3]])) == "IR325"


def test_reshape_keeping_a_special_zero_but_changing_the_count_is_an_error():
    from tests.ops.movement.cases import Param

    assert _movement_error("Reshape", Param(np.zeros((2, 3), np.float32)), np.array([0, 4]),
                           special_zero=True) == "IR326"


def test_pad_1_negative_pad_is_an_error():
    from tests.ops.movement.cases import Param

    assert _movement_error("Pad", Param(np.zeros((3, 4), np.float32)), np.array([-1, 0]),
                           np.array([0, 1]), version="opset1", pad_mode="constant") == "IR332"


def test_strided_slice_masks_of_different_lengths_are_read():
    from tests.ops.movement.cases import Param

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = _movement("StridedSlice", Param(x), np.array([1, 1]), np.array([2, 3]), version="opset1",
                    begin_mask=[1], end_mask=[0, 0, 0, 1])
    assert out.tolist() == x[:2, 1:3].tolist()


def test_roll_a_scalar_shift_for_several_axes():
    from tests.ops.movement.cases import Param

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = _movement("Roll", Param(x), np.array(1), np.array([0, 1]))
    assert out.tolist() == np.roll(x, (1, 1), (0, 1)).tolist()


def test_squeeze_of_a_dim_that_is_not_one_and_repeated_axes_warn():
    from tests.ops.movement.cases import Param, build

    b, _ = build("Squeeze", [Param(np.zeros((1, 3), np.float32)), np.array([0, 1])], "opset1",
                 None)
    assert [d.code for d in b.build().diagnostics] == ["IR328"]
    b, _ = build("Unsqueeze", [Param(np.zeros((2, 3), np.float32)), np.array([0, -4])], "opset1",
                 None)
    assert [d.code for d in b.build().diagnostics] == ["IR334"]


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_movement_keeps_64_bit_values(dtype):
    from tests.ops.movement.cases import Param

    x = np.array([[2**40 + 3, 2**33], [7, 2**62 + 1]], dtype)
    assert _movement("Transpose", Param(x), np.array([1, 0])).tolist() == x.T.tolist()
    assert _movement("Gather", Param(x), np.array([1]), np.array(0)).tolist() == x[[1]].tolist()


def test_movement_keeps_f8_negative_zero_and_nan_payloads():
    import ml_dtypes

    from tests.ops.movement.cases import Param

    x = np.array([0x80, 0x7D, 0x01], np.uint8).view(ml_dtypes.float8_e5m2)
    out = _movement("Pad", Param(x), np.array([1]), np.array([0]), pad_mode="constant")
    assert out.view(np.uint8).tolist() == [0, 0x80, 0x7D, 0x01]
    out = _movement("ScatterNDUpdate", Param(x), np.array([[2]]), Param(x[:1]),
                    version="opset15")
    assert out.view(np.uint8).tolist() == [0x80, 0x7D, 0x80]


def test_strided_slice_with_shrink_and_new_axis():
    from tests.ops.movement.cases import Param

    x = np.arange(60, dtype=np.float32).reshape(3, 5, 4)
    out = _movement("StridedSlice", Param(x), np.array([1, 1]), np.array([2, 2]),
                    np.array([1, 1]), version="opset1", begin_mask=[0, 0], end_mask=[0, 0],
                    new_axis_mask=[0, 1], shrink_axis_mask=[1, 0])
    assert out.tolist() == x[1, None].tolist()


def test_tile_with_fewer_repeats_than_the_rank():
    from tests.ops.movement.cases import Param

    x = np.arange(36, dtype=np.float32).reshape(3, 2, 3, 2)
    assert _movement("Tile", Param(x), np.array([2, 3, 3])).tolist() == np.tile(
        x, (2, 3, 3)).tolist()


def test_space_to_batch_with_a_dim_smaller_than_its_block():
    from tests.ops.movement.cases import Param

    x = np.arange(8, dtype=np.float32).reshape(2, 1, 4, 1)
    out = _movement("SpaceToBatch", Param(x), np.array([1, 1, 2, 2]), np.zeros(4, np.int64),
                    np.array([0, 0, 0, 1]))
    padded = np.pad(x, ((0, 0), (0, 0), (0, 0), (0, 1)))
    expected = padded.reshape(2, 1, 2, 2, 1, 2).transpose(3, 5, 0, 1, 2, 4).reshape(8, 1, 2, 1)
    assert out.tolist() == expected.tolist()


def test_pad_value_given_at_run_time_and_beyond_2_to_the_24():
    from tests.ops.movement.cases import Param

    x = np.zeros((2,), np.int32)
    value = np.array(2009850080, np.int32)
    out = _movement("Pad", Param(x), np.array([1]), np.array([0]), Param(value),
                    pad_mode="constant")
    assert out.tolist() == [2009850080, 0, 0]


@pytest.mark.parametrize("type_name", ["u1", "u2", "u3", "u6", "nf4", "f4e2m1", "f8e8m0",
                                       "string"])
def test_movement_on_types_the_cpu_refuses_or_breaks(type_name):
    from tests.ops.movement.cases import Param
    from tests.ops.support import random_values

    x = random_values(type_name, (2, 4), np.random.default_rng(1))
    p = Param(x, type_name=type_name)
    out = _movement("Transpose", p, np.array([1, 0]))
    assert out.tolist() == x.T.tolist() if type_name == "string" else \
        out.tobytes() == np.ascontiguousarray(x.T).tobytes()
    parts = _movement("Split", p, np.array(1), outputs=2, num_splits=2)
    assert parts[1].tolist() == x[:, 2:].tolist() if type_name == "string" else \
        np.ascontiguousarray(parts[1]).tobytes() == np.ascontiguousarray(x[:, 2:]).tobytes()


# --- non-maximum suppression (issue 22) ---------------------------------------------------------

def _nms(version, boxes, scores, *inputs, **attrs):
    b = ModelBuilder()
    x = b.parameter("boxes", "f32", list(boxes.shape))
    s = b.parameter("scores", "f32", list(scores.shape))
    out = b.op("NonMaxSuppression", x, s, *(b.constant(v) for v in inputs),
               version=f"opset{version}", **attrs)
    outs = out if isinstance(out, tuple) else (out,)
    for i, o in enumerate(outs):
        b.result(o, f"out{i}")
    return list(irexec.compile_model(b.build())({"boxes": boxes, "scores": scores}).values())


def test_nms_keeps_a_box_whose_iou_equals_the_threshold():
    # box 1 overlaps box 0 by IoU 1/2 exactly; box 2 overlaps nothing
    boxes = np.array([[[0, 0, 1, 2], [0, 0, 1, 1], [5, 5, 6, 6]]], np.float32)
    scores = np.array([[[0.9, 0.8, 0.7]]], np.float32)
    for version in (4, 9):
        out = _nms(version, boxes, scores, np.int64(5), np.float32(0.5), np.float32(0),
                   sort_result_descending=False)
        assert out[0][:3, 2].tolist() == [0, 1, 2]
    out = _nms(9, boxes, scores, np.int64(5), np.float32(0), np.float32(0),
               sort_result_descending=False)
    assert out[0][:, 2].tolist() == [0, 2]  # threshold 0: only the overlapping box drops


def test_nms_versions_1_to_4_keep_their_static_shape_padded_with_minus_one():
    boxes = np.array([[[0, 0, 1, 1], [0, 0, 1, 1], [5, 5, 6, 6]]] * 2, np.float32)
    scores = np.ones((2, 1, 3), np.float32)
    for version, rows in ((1, 3), (3, 3), (4, 6)):
        (out,) = _nms(version, boxes, scores, np.int64(3), np.float32(0.5), np.float32(0))
        # two boxes per batch survive (box 1 duplicates box 0); v1/v3 have room for 3 rows
        want = [[0, 0, 0], [0, 0, 2], [1, 0, 0], [1, 0, 2]][:rows]
        assert out.tolist() == want + [[-1, -1, -1]] * (rows - len(want))


def test_nms_valid_outputs_is_zero_without_selection():
    boxes = np.ones((1, 3, 4), np.float32)
    out = _nms(9, boxes, np.ones((1, 1, 3), np.float32), np.int64(0))
    assert out[2].tolist() == [0] and out[0].shape == (0, 3)


def test_nms_negative_max_output_boxes_is_ir308():
    with pytest.raises(irexec.IRError) as e:
        _nms(9, np.ones((1, 3, 4), np.float32), np.ones((1, 1, 3), np.float32), np.int64(-1))
    assert e.value.code == "IR308"


def test_nms5_soft_ignores_the_iou_threshold():
    boxes = np.array([[[0, 0, 1, 1], [0, 0, 1, 1.1]]], np.float32)  # IoU 1/1.1
    scores = np.array([[[0.9, 0.8]]], np.float32)
    out = _nms(5, boxes, scores, np.int64(5), np.float32(0.5), np.float32(0), np.float32(0.5),
               sort_result_descending=False)
    assert out[0][:, 2].tolist() == [0, 1]
    np.testing.assert_allclose(out[1][1, 2], 0.8 * np.exp(-(1 / 1.1) ** 2), rtol=1e-6)


def test_nms_score_equal_to_the_threshold_is_no_candidate():
    boxes = np.array([[[0, 0, 1, 1], [5, 5, 6, 6]]], np.float32)
    scores = np.array([[[0.5, 0.25]]], np.float32)
    out = _nms(9, boxes, scores, np.int64(5), np.float32(0.5), np.float32(0.25))
    assert out[0][:, 2].tolist() == [0]


def _matrix(boxes, scores, **attrs):
    b = ModelBuilder()
    outs = b.op("MatrixNms", b.parameter("boxes", "f32", list(boxes.shape)),
                b.parameter("scores", "f32", list(scores.shape)), version="opset8", **attrs)
    for i, o in enumerate(outs):
        b.result(o, f"out{i}")
    return list(irexec.compile_model(b.build())({"boxes": boxes, "scores": scores}).values())


def test_matrix_nms_selecting_nothing_is_an_empty_result():
    sel, idx, num = _matrix(np.ones((2, 3, 4), np.float32), np.full((2, 1, 3), 0.1, np.float32),
                            score_threshold=0.5)
    assert sel.shape == (0, 6) and idx.shape == (0, 1) and num.tolist() == [0, 0]


def test_matrix_nms_equal_scores_take_the_smaller_index_first():
    # box 1 and box 2 tie; box 2 overlaps box 1 by 1/2: the one taken later decays
    boxes = np.array([[[9, 9, 10, 10], [0, 0, 1, 1], [0, 0, 2, 1]]], np.float32)
    scores = np.array([[[0.9, 0.5, 0.5]]], np.float32)
    sel, idx, _ = _matrix(boxes, scores)
    assert idx[:, 0].tolist() == [0, 1, 2]
    np.testing.assert_allclose(sel[:, 1], [0.9, 0.5, 0.25], rtol=1e-6)


def test_multiclass_nms_empty_roisnum_image_counts_zero():
    b = ModelBuilder()
    outs = b.op("MulticlassNms", b.parameter("boxes", "f32", [1, 2, 4]),
                b.parameter("scores", "f32", [1, 2]), b.parameter("roisnum", "i32", [2]),
                version="opset9", iou_threshold=0.5)
    for i, o in enumerate(outs):
        b.result(o, f"out{i}")
    boxes = np.array([[[0, 0, 1, 1], [5, 5, 6, 6]]], np.float32)
    out = irexec.compile_model(b.build())({"boxes": boxes, "scores": np.ones((1, 2), np.float32),
                                           "roisnum": np.array([0, 2], np.int32)})
    assert list(out.values())[2].tolist() == [0, 2]


# --- random generation (docs/compatibility.md, "Random generation") -----------------------------

def _random_uniform(shape, lo, hi, output_type, **attrs):
    dtype = np.dtype({"f32": np.float32, "f16": np.float16, "f64": np.float64, "i32": np.int32,
                      "i64": np.int64}[output_type])
    b = ModelBuilder()
    out = b.op("RandomUniform", b.constant(np.array(shape, np.int64)),
               b.constant(np.array(lo, dtype)), b.constant(np.array(hi, dtype)),
               version="opset8", output_type=output_type, **attrs)
    b.result(out, "r")
    return irexec.compile_model(b.build())


def _words(key, op_seed, blocks):
    from irexec.kernels.philox import philox_blocks
    return philox_blocks(key, 0, op_seed, blocks).reshape(-1)


def test_random_uniform_f32_range_rounds_twice():
    got = _random_uniform([4000], -3.5, 7.25, "f32", global_seed=150, op_seed=10)({})[0]
    u = ((_words(150, 10, 1000) & 0x7FFFFF) | 0x3F800000).view(np.float32) - np.float32(1)
    twice = u * np.float32(10.75) + np.float32(-3.5)
    once = (u.astype(np.float64) * 10.75 - 3.5).astype(np.float32)
    np.testing.assert_array_equal(got, twice)
    assert (twice != once).any()  # the case is real: a fused multiply-add differs somewhere


def test_random_uniform_f16_and_f64_use_their_own_bits():
    f16 = _random_uniform([8], 0, 1, "f16", global_seed=150, op_seed=10)({})[0]
    np.testing.assert_array_equal(f16, (_words(150, 10, 2) & 0x3FF).astype(np.float16) / 1024)
    f64 = _random_uniform([2], 0, 1, "f64", global_seed=150, op_seed=10)({})[0]
    w = _words(150, 10, 1).astype(np.uint64)
    mantissa = ((w[0::2] & np.uint64(0xFFFFF)) << np.uint64(32)) | w[1::2]
    np.testing.assert_array_equal(f64, mantissa.astype(np.float64) / 2.0 ** 52)


def test_random_uniform_i64_takes_the_second_word_as_its_high_half():
    got = _random_uniform([2], 5, 2**40, "i64", global_seed=3, op_seed=4)({})[0]
    w = _words(3, 4, 1).astype(object)
    want = [((w[2 * i + 1] << 32) | w[2 * i]) % (2**40 - 5) + 5 for i in range(2)]
    assert got.tolist() == want


def test_random_uniform_full_i32_range_is_unsigned_arithmetic():
    got = _random_uniform([4], -2**31, 2**31 - 1, "i32", global_seed=3, op_seed=4)({})[0]
    want = [((int(x) % (2**32 - 1)) - 2**31) for x in _words(3, 4, 1)]
    assert got.tolist() == want


def test_random_uniform_scalar_shape_is_the_first_value():
    scalar = _random_uniform([], 0, 1, "f32", global_seed=150, op_seed=10)({})[0]
    first = _random_uniform([1], 0, 1, "f32", global_seed=150, op_seed=10)({})[0]
    assert scalar.shape == () and scalar == first[0]


def test_random_uniform_second_call_moves_on_256_per_value():
    from irexec.kernels import philox
    compiled = _random_uniform([7], 0, 1, "f32", global_seed=150, op_seed=10)
    compiled({})
    want = philox.uniform(7, "f32", np.float32(0), np.float32(1), 150, 10, "tensorflow",
                          (7 * 256, 0))
    np.testing.assert_array_equal(compiled({})[0], want)


def test_random_uniform_zero_seeds_differ_every_call():
    compiled = _random_uniform([16], 0, 1, "f32")
    assert not np.array_equal(compiled({})[0], compiled({})[0])


def test_multinomial_samples_are_philox_not_mt19937():
    from irexec.kernels import philox
    probs = np.array([[0.1, 0.2, 0.3, 0.4]], np.float32)
    b = ModelBuilder()
    out = b.op("Multinomial", b.constant(probs), b.constant(np.int64(50)), version="opset13",
               convert_type="i64", with_replacement=True, log_probs=False, global_seed=150,
               op_seed=10)
    b.result(out, "r")
    got = irexec.compile_model(b.build())({})[0]
    u = philox.uniform(50, "f32", np.float32(0), np.float32(1), 150, 10, "tensorflow")
    cdf = np.cumsum(probs[0]) / np.cumsum(probs[0])[-1]
    np.testing.assert_array_equal(got[0], np.searchsorted(cdf, u, side="left"))


@pytest.mark.parametrize("samples, attrs, code", [
    (5, {"with_replacement": False, "convert_type": "i64"}, "IR389"),
    (-1, {"with_replacement": True, "convert_type": "i64"}, "IR389"),
    (2, {"with_replacement": True, "convert_type": "f32"}, "IR302"),
])
def test_multinomial_stricter_than_openvino(samples, attrs, code):
    b = ModelBuilder()
    with pytest.raises(irexec.IRError) as info:
        out = b.op("Multinomial", b.constant(np.ones((1, 4), np.float32)),
                   b.constant(np.int64(samples)), version="opset13", log_probs=False,
                   global_seed=1, **attrs)
        b.result(out, "r")
        irexec.compile_model(b.build())({})
    assert info.value.code == code
# --- sequence, sparse, colour and opset17 operations (issue 22) --------------------------------

def _one(type_name, *arrays, version, **attrs):
    from tests.ops.build import run_op
    return run_op(type_name, *arrays, version=version, **attrs)[0]


def test_embedding_bag_with_an_empty_last_bag_gives_the_default_row():
    table = np.arange(6, dtype=np.float32).reshape(3, 2)
    (out,) = _one("EmbeddingBagOffsets", table, np.array([0, 1], np.int32),
                  np.array([0, 2], np.int32), np.array(2, np.int32), version="opset15")
    assert out.tolist() == [[2, 4], [4, 5]]


def test_integer_embedding_mean_divides_by_the_true_count():
    (out,) = _one("EmbeddingBagPacked", np.array([[1]], np.int8), np.zeros((1, 200), np.int32),
                  version="opset15", reduction="mean")
    assert out.tolist() == [[0]]  # -56 (200 wrapped) / 200


def test_segment_max_of_minus_infinities_and_lowest_fills():
    (out,) = _one("SegmentMax", np.array([-np.inf, -np.inf], np.float32),
                  np.array([0, 0], np.int32), np.array(2, np.int32), version="opset16",
                  fill_mode="lowest")
    assert out[0] == -np.inf and out[1] == np.finfo(np.float32).min
    for dtype in (np.int64, np.float16):
        (out,) = _one("SegmentMax", np.ones(1, dtype), np.array([1], np.int32),
                      version="opset16", fill_mode="lowest")
        lowest = np.iinfo(dtype).min if dtype == np.int64 else np.finfo(dtype).min
        assert out.tolist() == [lowest, 1]


def test_ctc_loss_of_an_empty_label():
    logits = np.log(np.array([[[0.5, 0.5], [0.2, 0.8]]], np.float32))
    (out,) = _one("CTCLoss", logits, np.array([2], np.int32), np.zeros((1, 2), np.int32),
                  np.array([0], np.int32), version="opset4")
    np.testing.assert_allclose(out, [-np.log(0.5 * 0.8)], rtol=1e-6)


def test_yuv_to_rgb_rounds_halfway_values_away_from_zero():
    y = np.full((1, 2, 2, 1), 218, np.uint8)
    uv = np.array([66, 85], np.uint8).reshape(1, 1, 1, 2)
    (out,) = _one("NV12toRGB", y, uv, version="opset8")
    assert out[0, 0, 0, 0] == 167  # 1.164 * 202 + 1.596 * -43 = 166.5


def test_erfinv_f32_is_the_inverse_of_erf():
    import math
    x = np.array([0.999999, -0.5, 0.1], np.float32)
    (out,) = _one("ErfInv", x, version="opset17")
    expected = []
    for v in x.tolist():  # bisection on math.erf, in float64
        lo, hi = -6.0, 6.0
        for _ in range(100):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if math.erf(mid) < v else (lo, mid)
        expected.append(lo)
    assert out.tolist() == np.array(expected, np.float32).tolist()


def test_grouped_matmul_reads_weights_as_openvino_does():
    a = np.ones((2, 3), np.float32)
    b = np.arange(12, dtype=np.float32).reshape(1, 4, 3)  # [G, N, K]
    (out,) = _one("GroupedMatMul", a, b, np.array([2], np.int32), version="opset17")
    assert out.tolist() == [b[0].sum(axis=1).tolist()] * 2
    with pytest.raises(irexec.IRError) as e:
        _one("GroupedMatMul", np.ones((3, 2), np.float32), np.ones((2, 4), np.float32),
             np.array([2], np.int32), version="opset17")
    assert e.value.code == "IR305"


# --- sub-graphs -------------------------------------------------------------------------------

def _loop_every_port(trip, go):
    from pathlib import Path
    path = Path(__file__).parent / "data" / "subgraphs" / "loop_every_port.xml"
    compiled = irexec.compile_model(irexec.read_model(path))
    seq = np.arange(18, dtype=np.float32).reshape(6, 3)
    x = np.ones((2, 3), np.float32)
    out = compiled({"trip": np.array(trip, np.int64), "go": np.array(go), "x": x, "seq": seq,
                    "limit": np.array(1e6, np.float32), "d": np.array(1, np.int64)})
    return x, seq, [np.asarray(v) for v in out.values()]


@pytest.mark.parametrize("trip, go", [(0, True), (3, False)])
def test_a_loop_of_no_iteration_concatenates_nothing(trip, go):
    x, _, (last, sums, iterations) = _loop_every_port(trip, go)
    np.testing.assert_array_equal(last, x)  # the back edge's initial value
    assert sums.shape == (0,) and iterations.shape == (0,)


def test_a_loop_without_trip_count_runs_one_iteration_per_slice():
    x, seq, (last, sums, iterations) = _loop_every_port(-1, True)
    y, expected = x, []
    for row in seq:  # the body, as a plain loop: y = 0.5 y + row + i / d
        y = (y * np.float32(0.5) + row + np.float32(len(expected))).astype(np.float32)
        expected.append(y.sum(dtype=np.float32))
    np.testing.assert_array_equal(iterations, np.arange(6, dtype=np.float32))
    np.testing.assert_allclose(sums, expected, rtol=1e-6)
    np.testing.assert_allclose(last, y, rtol=1e-6)


def test_ctc_greedy_decoder_seq_len_with_no_time_steps_decodes_nothing():
    """Data [N, 0, C]: the decoded lengths are 0 (OpenVINO's CPU plugin leaves them
    uninitialised; tests/ops/test_every_op.py meets it against the plugin)."""
    b = ModelBuilder()
    x = b.parameter("x", "f32", [2, 0, 3])
    outs = b.op("CTCGreedyDecoderSeqLen", x, b.constant(np.array([0, 0], np.int32)),
                version="opset6")
    for i, port in enumerate(outs):
        b.result(port, f"r{i}")
    got = irexec.compile_model(b.build())({"x": np.zeros((2, 0, 3), np.float32)})
    decoded, lengths = list(got.values())
    assert decoded.shape == (2, 0) and lengths.tolist() == [0, 0]


# --- building models in Python -----------------------------------------------------------------

def test_normalize_l2_takes_the_eps_mode_its_argument_names():
    from irexec import opset1 as ops

    x = ops.parameter([1, 3], np.float32, name="x")
    node = ops.normalize_l2(x, np.array([1], np.int64), 4.0, "max")
    assert node.attrs["eps_mode"] == "max"
    value = np.array([[0.5, 1.0, 0.5]], np.float32)  # sum of squares 1.5, below eps
    out = irexec.compile_model(irexec.Model([node], [x]))({"x": value})
    np.testing.assert_allclose(list(out.values())[0], value / np.sqrt(4.0), rtol=1e-6)


def test_constant_keeps_its_own_copy_even_with_shared_memory():
    from irexec import opset13 as ops

    weights = np.ones(3, np.float32)
    x = ops.parameter([3], np.float32, name="x")
    model = irexec.Model([ops.add(x, ops.constant(weights, shared_memory=True))], [x])
    weights[:] = 100
    out = irexec.compile_model(model)({"x": np.zeros(3, np.float32)})
    assert list(out.values())[0].tolist() == [1.0, 1.0, 1.0]
