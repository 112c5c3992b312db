"""The rows of docs/compatibility.md's "The Python API" section: irexec's side pinned, and
OpenVINO's side shown where it is installed."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder


def one_input(et="f32", shape=(2,)):
    b = ModelBuilder()
    x = b.parameter("x", et, list(shape))
    y = b.op("Convert", x, destination_type="f32", name="y")
    y.names = ["y"]
    b.result(y)
    return b.build()


def test_to_dtype_is_the_dtype_irexec_holds_the_type_in():
    assert irexec.Type.bf16.to_dtype() == np.dtype(ml_dtypes.bfloat16)
    assert irexec.Type.i4.to_dtype() == np.dtype(ml_dtypes.int4)
    assert irexec.Type.f8e4m3.to_dtype() == np.dtype(ml_dtypes.float8_e4m3fn)
    assert irexec.Type.f32.to_dtype() == np.float32
    ov = pytest.importorskip("openvino")
    assert ov.Type.bf16.to_dtype() == np.float16 and ov.Type.i4.to_dtype() == np.int8
    assert ov.Type.f32.to_dtype() == np.float32


def test_a_float16_array_for_a_bf16_input_is_converted_by_value():
    compiled = irexec.compile_model(one_input("bf16"))
    got = compiled(np.array([1.5, -2.0], np.float16))[0]
    assert got.tolist() == [1.5, -2.0]


def test_boolean_is_not_integral_but_is_integral_in_openvinos_sense():
    assert not irexec.Type.boolean.is_integral() and irexec.Type.boolean.integral
    assert irexec.Type.i8.is_integral() and irexec.Type.i8.is_integral_number()
    ov = pytest.importorskip("openvino")
    assert ov.Type.boolean.is_integral() and not ov.Type.boolean.is_integral_number()


def test_lower_precision_hints_are_kept_but_compute_nothing_lower():
    b = ModelBuilder()
    x = b.parameter("x", "f32", [1])
    b.result(b.op("Multiply", x, b.constant(np.float32(1.0 / 3.0))))
    compiled = irexec.compile_model(b.build(), "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
    assert compiled.get_property("INFERENCE_PRECISION_HINT") == irexec.Type.bf16
    x = np.array([1.0], np.float32)
    assert compiled(x)[0][0] == np.float32(1.0) * np.float32(1.0 / 3.0)  # not bf16-rounded
    precise = irexec.compile_model(b.build(), "CPU", {"INFERENCE_PRECISION_HINT": "f64"})
    assert precise.precision == "f64"


def test_result_keys_are_ports_and_names():
    compiled = irexec.compile_model(one_input())
    results = compiled(np.zeros(2, np.float32))
    (key,) = list(results)
    assert key == "y" and key.get_node().get_type_name() == "Result"
    assert key is compiled.output(0) and dict(results)["y"] is results[0]


def test_rt_info_value_prints_as_its_text():
    model = one_input()
    model.set_rt_info(5, "five")
    value = model.get_rt_info("five")
    assert str(value) == "5" and value.astype(int) == 5 and value == "5"


def test_async_queue_has_two_requests_at_least():
    compiled = irexec.compile_model(one_input())
    assert len(irexec.AsyncInferQueue(compiled)) >= 2
    assert compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS") == 1  # latency hint


def test_string_outputs_are_object_arrays_of_str():
    b = ModelBuilder()
    b.result(b.parameter("s", "string", [2]))
    out = irexec.compile_model(b.build())(np.array(["a", "bc"]))[0]
    assert out.dtype == object and out.tolist() == ["a", "bc"]


def test_a_type_prints_as_its_ir_name():
    assert str(irexec.Type.f32) == "f32" == irexec.Type.f32.get_type_name()
    ov = pytest.importorskip("openvino")
    assert str(ov.Type.f32) == "<Type: 'float32'>" and ov.Type.f32.get_type_name() == "f32"


def test_an_input_missing_from_a_call_is_an_error_not_the_last_value():
    b = ModelBuilder()
    a, x = b.parameter("a", "f32", [2]), b.parameter("b", "f32", [2])
    b.result(b.op("Add", a, x))
    compiled = irexec.compile_model(b.build())
    ones = np.ones(2, np.float32)
    assert compiled({"a": ones, "b": ones})[0].tolist() == [2, 2]
    with pytest.raises(irexec.IRError) as e:
        compiled({"a": ones})
    assert e.value.code == "IR602" and "'b'" in str(e.value)
    request = compiled.create_infer_request()
    with pytest.raises(RuntimeError):  # never given: IR602 (an IRError, a RuntimeError)
        request.infer({"a": ones})
    request.infer({"a": ones, "b": ones})
    assert request.infer({"a": ones * 3})[0].tolist() == [4, 4]  # b from the earlier run


def test_save_model_keeps_weights_as_they_are_unless_asked(tmp_path):
    b = ModelBuilder()
    x = b.parameter("x", "f32", [2])
    b.result(b.op("Add", x, b.constant(np.array([0.1, 0.2], np.float32), name="w")))
    model = b.build()
    irexec.save_model(model, tmp_path / "plain.xml")
    irexec.save_model(model, tmp_path / "small.xml", compress_to_fp16=True)
    plain, small = irexec.read_model(tmp_path / "plain.xml"), irexec.read_model(tmp_path / "small.xml")
    assert sorted(n.type for n in plain.nodes) == ["Add", "Constant", "Parameter", "Result"]
    assert "Convert" in [n.type for n in small.nodes]
    x = np.zeros(2, np.float32)
    assert irexec.compile_model(plain)(x)[0].tolist() == np.float32([0.1, 0.2]).tolist()
    assert irexec.compile_model(small)(x)[0].tolist() == \
        np.float16([0.1, 0.2]).astype(np.float32).tolist()
