"""ConvertLike-1 and ConvertPromoteTypes-14: the target type, values by Convert's rules, and
OpenVINO's promotion table checked pair by pair."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import irexec
from irexec.errors import IRError
from irexec.ir import element_type as et_table
from irexec.builder import ModelBuilder
from irexec.ops.type.convert_promote_types import SUPPORTED, Refused, common_type

ET = et_table.from_name


def _run(op, version, inputs, **attrs):
    b = ModelBuilder()
    ports = [b.parameter(f"p{i}", et_table.from_dtype(a.dtype).name, list(a.shape))
             for i, a in enumerate(inputs)]
    out = b.op(op, *ports, version=version, name="y", **attrs)
    for i, o in enumerate(out if isinstance(out, tuple) else (out,)):
        b.result(o, f"out{i}")
    model = b.build()
    values = irexec.compile_model(model)({f"p{i}": a for i, a in enumerate(inputs)}).values()
    return model, {f"out{i}": v for i, v in enumerate(values)}


def test_convert_like_takes_the_type_of_its_second_input():
    x = np.array([1.7, -2.5, 300.0], np.float32)
    model, out = _run("ConvertLike", "opset1", [x, np.zeros((2, 2), np.int8)])
    # Convert's rules: truncation toward zero; out of range as Convert does it
    expected = irexec.compile_model(_convert_model(x.shape, "i8"))({"x": x})["y"]
    assert out["out0"].dtype == np.int8 and out["out0"].tolist() == expected.tolist()
    assert model.results[0].inputs[0].source.element_type.name == "i8"


def _convert_model(shape, dst):
    b = ModelBuilder()
    b.result(b.op("Convert", b.parameter("x", "f32", list(shape)), destination_type=dst,
                  name="y"))
    return b.build()


def test_convert_like_refuses_what_convert_refuses():
    with pytest.raises(IRError) as e:
        _run("ConvertLike", "opset1", [np.zeros(2, np.float32), np.zeros(2, object)])
    assert e.value.diagnostics[0].code in ("IR302", "IR304")


@pytest.mark.parametrize("a,b,attrs,want", [
    ("i8", "f32", {}, "f32"),
    ("i32", "u8", {}, "i32"),
    ("f16", "i64", {"promote_unsafe": True}, "f16"),
    ("i8", "u8", {"promote_unsafe": True}, "i16"),
    ("f16", "bf16", {"promote_unsafe": True}, "f32"),
    ("f8e4m3", "f8e5m2", {"promote_unsafe": True}, "f16"),
    ("u64", "i8", {"promote_unsafe": True}, "f32"),
    ("u64", "i8", {"promote_unsafe": True, "u64_integer_promotion_target": "i64"}, "i64"),
    ("boolean", "u16", {}, "u16"),
])
def test_the_specs_examples(a, b, attrs, want):
    target = attrs.pop("u64_integer_promotion_target", "f32")
    got = common_type(ET(a), ET(b), promote_unsafe=attrs.get("promote_unsafe", False),
                      pytorch_scalar_promotion=False, u64_integer_promotion_target=ET(target))
    assert got.name == want


def test_pytorch_scalar_promotion():
    got = common_type(ET("i64"), ET("u8"), promote_unsafe=True, pytorch_scalar_promotion=True,
                      u64_integer_promotion_target=ET("f32"), a_scalar=True)
    assert got.name == "u8"
    with pytest.raises(Refused):
        common_type(ET("i64"), ET("u8"), promote_unsafe=False, pytorch_scalar_promotion=True,
                    u64_integer_promotion_target=ET("f32"), a_scalar=True)


def test_values_are_converted_and_both_outputs_share_the_type():
    a = np.array([-3, 7, 127], np.int8)
    b = np.array([200, 0], np.uint8)
    _, out = _run("ConvertPromoteTypes", "opset14", [a, b], promote_unsafe=True)
    assert out["out0"].dtype == out["out1"].dtype == np.int16
    assert out["out0"].tolist() == [-3, 7, 127] and out["out1"].tolist() == [200, 0]


def test_refused_promotion_is_ir323():
    with pytest.raises(IRError) as e:
        _run("ConvertPromoteTypes", "opset14", [np.zeros(2, np.int8), np.zeros(2, np.uint8)])
    (d,) = e.value.diagnostics
    assert d.code == "IR323" and "promote_unsafe" in d.message


def test_every_pair_agrees_with_openvino():
    ov = pytest.importorskip("openvino")
    import openvino.opset16 as ops

    for a, b in itertools.product(SUPPORTED, repeat=2):
        for unsafe, pt, scalar in itertools.product((False, True), repeat=3):
            pa = ops.parameter([] if scalar else [2], getattr(ov.Type, a))
            pb = ops.parameter([2], getattr(ov.Type, b))
            try:
                want = ops.convert_promote_types(pa, pb, unsafe, pt, ov.Type.f32) \
                    .get_output_element_type(0).get_type_name()
            except Exception:  # OpenVINO refuses with its own exception types
                want = "refused"
            try:
                got = common_type(ET(a), ET(b), promote_unsafe=unsafe,
                                  pytorch_scalar_promotion=pt,
                                  u64_integer_promotion_target=ET("f32"), a_scalar=scalar).name
            except Refused:
                got = "refused"
            assert got == want, (a, b, unsafe, pt, scalar)
