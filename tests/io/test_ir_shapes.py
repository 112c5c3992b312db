"""Parameter <data shape=... element_type=...>: the partial-shape syntax of the IR."""

import pytest

import irexec
from irexec.ir.element_type import ElementType
from irexec.ir.shape import Dimension, PartialShape
from tests.helpers_ir import line_of, net, parameter, read_error, result, the_diagnostic, write_ir

DYN = Dimension.dynamic()


def _model(shape, rank, element_type="f32"):
    """A Parameter with ``shape`` feeding a Result; ports declare -1 for every dim."""
    dims = None if rank is None else [-1] * rank
    return net([parameter(0, "x", shape, element_type, dims=dims), result(1, "out", dims)],
               [(0, 0, 1, 0)])


@pytest.mark.parametrize("text, expected", [
    ("1,3,224,224", PartialShape([1, 3, 224, 224])),
    ("?", PartialShape([DYN])),
    ("-1", PartialShape([DYN])),
    ("2..10", PartialShape([Dimension(2, 10)])),
    ("..8", PartialShape([Dimension(0, 8)])),
    ("3..", PartialShape([Dimension(3, None)])),
    ("1,?,2..10,..8,3..,-1", PartialShape([1, DYN, Dimension(2, 10), Dimension(0, 8),
                                           Dimension(3, None), DYN])),
    ("[1,2]", PartialShape([1, 2])),
    (" [ 1 , 2 ] ", PartialShape([1, 2])),
    ("0", PartialShape([0])),
    ("4..4", PartialShape([4])),
    ("", PartialShape([])),
    ("...", PartialShape.dynamic()),
    ("[...]", PartialShape.dynamic()),
])
def test_parameter_shape_strings(tmp_path, text, expected):
    rank = len(expected) if expected.rank_is_static else None
    model = irexec.read_model(write_ir(tmp_path, _model(text, rank)))
    param = model.nodes[0]
    assert param.attrs["shape"] == expected
    assert param.outputs[0].partial_shape == expected
    assert model.outputs[0].partial_shape == expected


def test_dynamic_rank_is_not_a_scalar(tmp_path):
    model = irexec.read_model(write_ir(tmp_path, _model("...", None)))
    shape = model.nodes[0].outputs[0].partial_shape
    assert not shape.rank_is_static
    assert shape != PartialShape([])


@pytest.mark.parametrize("text", ["2,,3", "1,2,", "abc", "-2", "3..1", "1.5", "1..2..3", "?..4",
                                  "-1..3"])
def test_bad_shape_string_is_ir302(tmp_path, text):
    path = write_ir(tmp_path, _model(text, 1))
    diag = the_diagnostic(read_error(path), "IR302")
    assert "'shape'" in diag.message
    assert diag.location.layer_name == "x"
    assert diag.location.line == line_of(path, "<data ")
    # The message says what went wrong in words, not just "invalid".
    assert any(w in diag.message for w in ("empty", "not a dimension", "negative", "below",
                                           "not an integer"))


@pytest.mark.parametrize("text, expected", [
    ("f32", ElementType.f32), ("F32", ElementType.f32), ("boolean", ElementType.boolean),
    ("I64", ElementType.i64), ("bf16", ElementType.bf16), ("dynamic", ElementType.dynamic),
    ("undefined", ElementType.dynamic),
])
def test_parameter_element_type_is_case_insensitive(tmp_path, text, expected):
    model = irexec.read_model(write_ir(tmp_path, _model("2", 1, text)))
    assert model.nodes[0].outputs[0].element_type == expected


@pytest.mark.parametrize("text", ["FP32", "BOOL", "float32", "bool", "xyz"])
def test_legacy_precision_names_are_not_element_types(tmp_path, text):
    # facts (c), Parameter: element_type is an enum name; FP32/BOOL/float32/bool are rejected.
    path = write_ir(tmp_path, _model("2", 1, text))
    diag = the_diagnostic(read_error(path), "IR302")
    assert "'element_type'" in diag.message and text in diag.message


def test_missing_shape_is_a_scalar_and_missing_type_is_dynamic(tmp_path):
    xml = net(['<layer id="0" name="x" type="Parameter" version="opset1">\n<data/>\n'
               '<output><port id="0" precision="FP32"/></output>\n</layer>',
               result(1, "out", None)], [(0, 0, 1, 0)])
    model = irexec.read_model(write_ir(tmp_path, xml))
    port = model.nodes[0].outputs[0]
    assert port.partial_shape == PartialShape([])
    assert port.element_type == ElementType.dynamic


@pytest.mark.parametrize("shape", [PartialShape.dynamic(), PartialShape([])])
def test_writing_a_dynamic_rank_or_a_scalar_port(tmp_path, shape):
    """The writer took a port's inferred shape `or` its declared dims: a dynamic rank raised
    ValueError (it has no length) and a scalar's empty shape fell through to the declared dims."""
    import irexec
    from irexec.builder import ModelBuilder

    b = ModelBuilder()
    b.result(b.op("Relu", b.parameter("x", "f32", shape)), "out")
    xml = tmp_path / "m.xml"
    irexec.save_model(b.build(), xml)
    back = irexec.read_model(xml)
    assert str(back.results[0].inputs[0].source.partial_shape) == str(shape)
