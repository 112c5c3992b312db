"""<port> elements: free ids mapped by order, <dim> values, precision, tensor names."""

import numpy as np
import pytest

import irexec
import irexec.api
from irexec.ir.shape import Dimension, PartialShape
from tests.helpers_ir import (
    const, layer, line_of, net, parameter, read_error, result, the_diagnostic, write_ir)

AXES_1 = np.array([1], "<i8").tobytes()


def _reverse(in_ids=None, out_ids=None, in_dims=([2, 3], [1])):
    return layer(2, "rev", "Reverse", data={"mode": "index"}, inputs=list(in_dims),
                 outputs=[[2, 3]], in_ids=in_ids, out_ids=out_ids)


def test_port_ids_are_free_numbers(tmp_path):
    # Input ports 5 and 7, output port 9: the edges use the same ids.
    xml = net([parameter(0, "data", "2,3", dims=[2, 3]),
               const(1, "axes", "i64", "1", 0, 8, dims=[1], precision="I64"),
               _reverse(in_ids=[5, 7], out_ids=[9]),
               result(3, "out", [2, 3])],
              [(0, 0, 2, 5), (1, 0, 2, 7), (2, 9, 3, 0)])
    path = write_ir(tmp_path, xml, AXES_1)
    model = irexec.read_model(path)
    rev = model.nodes[2]
    diag = the_diagnostic(model.diagnostics, "IR108")  # accepted, with a warning
    assert [d.code for d in model.diagnostics] == ["IR108"]
    assert diag.severity == "warning" and diag.location.layer_name == "rev"
    assert diag.location.line == line_of(path, 'name="rev"')
    assert "5,7" in diag.message and "9" in diag.message
    assert [(p.index, p.port_id) for p in rev.inputs] == [(0, 5), (1, 7)]
    assert [(p.index, p.port_id) for p in rev.outputs] == [(0, 9)]
    assert rev.inputs[0].source.node.name == "data"
    assert rev.inputs[1].source.node.name == "axes"
    assert model.results[0].inputs[0].source is rev.outputs[0]


def test_input_index_follows_port_order_not_port_id(tmp_path):
    # The <port> elements are listed as id 1 then id 0: id 1 is input 0 (data), id 0 is the axes.
    xml = net([parameter(0, "data", "2,3", dims=[2, 3]),
               const(1, "axes", "i64", "1", 0, 8, dims=[1], precision="I64"),
               _reverse(in_ids=[1, 0], out_ids=[2]),
               result(3, "out", [2, 3])],
              [(0, 0, 2, 1), (1, 0, 2, 0), (2, 2, 3, 0)])
    model = irexec.read_model(write_ir(tmp_path, xml, AXES_1))
    rev = model.nodes[2]
    assert [(d.code, d.location.layer_name) for d in model.diagnostics] == [("IR108", "rev")]
    assert [p.port_id for p in rev.inputs] == [1, 0]
    assert rev.inputs[0].source.node.name == "data"
    assert rev.inputs[1].source.node.name == "axes"
    assert rev.outputs[0].partial_shape == PartialShape([2, 3])


@pytest.mark.parametrize("in_ids, out_ids", [
    ([0, 1], [3]),      # a gap before the output
    ([1, 2], [3]),      # inputs not from 0
    ([0, 2], [1]),      # output numbered between the inputs
    ([0, 1], [0]),      # output reusing an input's id
])
def test_port_ids_out_of_the_writers_order_are_warning_ir108(tmp_path, in_ids, out_ids):
    edges = [(0, 0, 2, in_ids[0]), (1, 0, 2, in_ids[1]), (2, out_ids[0], 3, 0)]
    xml = net([parameter(0, "data", "2,3", dims=[2, 3]),
               const(1, "axes", "i64", "1", 0, 8, dims=[1]),
               _reverse(in_ids=in_ids, out_ids=out_ids), result(3, "out", [2, 3])], edges)
    path = write_ir(tmp_path, xml, AXES_1)
    model = irexec.read_model(path)
    assert [d.code for d in model.diagnostics] == ["IR108"]
    diag = model.diagnostics[0]
    assert diag.severity == "warning" and diag.info.name == "port-id-order"
    assert diag.location.layer_name == "rev"
    assert diag.location.line == line_of(path, 'name="rev"')
    assert diag.location.column == 1


def test_port_ids_in_the_writers_order_give_no_warning(tmp_path):
    xml = net([parameter(0, "data", "2,3", dims=[2, 3]),
               const(1, "axes", "i64", "1", 0, 8, dims=[1]),
               _reverse(), result(3, "out", [2, 3])],
              [(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 3, 0)])
    assert irexec.read_model(write_ir(tmp_path, xml, AXES_1)).diagnostics == []


def test_a_layer_with_a_bad_port_id_gets_no_follow_on_warnings(tmp_path):
    # rev's edges are not connected (its ports are ambiguous), but that is the IR104 problem:
    # no IR108 for its ids, and no IR205 "unused" for rev or for the axes feeding it.
    xml = net([parameter(0, "data", "2,3", dims=[2, 3]),
               const(1, "axes", "i64", "1", 0, 8, dims=[1]),
               _reverse(in_ids=[0, 0]), result(3, "out", [2, 3])],
              [(0, 0, 2, 0), (1, 0, 2, 0), (2, 2, 3, 0)])
    _, diags = irexec.api.check_model(write_ir(tmp_path, xml, AXES_1))
    assert [d.code for d in diags] == ["IR104"]  # errors and warnings


@pytest.mark.parametrize("port_attr", ['id="x"', 'id="-1"', 'id=""', ""])
def test_bad_port_id_is_ir104(tmp_path, port_attr):
    xml = net([parameter(0, "x", "2", dims=[2]).replace('<port id="0"', f"<port {port_attr}")],
              [])
    path = write_ir(tmp_path, xml)
    diag = the_diagnostic(read_error(path), "IR104")
    assert diag.location.layer_name == "x"
    assert diag.location.line == line_of(path, "<port")


def test_duplicate_port_id_is_ir104(tmp_path):
    xml = net([parameter(0, "data", "2,3", dims=[2, 3]),
               const(1, "axes", "i64", "1", 0, 8, dims=[1], precision="I64"),
               _reverse(in_ids=[0, 0]),
               result(3, "out", [2, 3])],
              [(0, 0, 2, 0), (2, 2, 3, 0)])
    path = write_ir(tmp_path, xml, AXES_1)
    diag = the_diagnostic(read_error(path), "IR104")
    assert "0" in diag.message and "twice" in diag.message
    assert diag.location.layer_name == "rev"
    # The second <port id="0"> of rev's <input> (output ports carry a precision, so the first
    # bare <port id="0"> is rev's first input).
    assert diag.location.line == line_of(path, '<port id="0">', nth=2)


@pytest.mark.parametrize("text", ["abc", "-2", "1..10", "", "2.5", " ", "??", "?1"])
def test_bad_dim_is_ir105_at_the_dim_line(tmp_path, text):
    xml = net([parameter(0, "x", "2", dims=[2]).replace("<dim>2</dim>", f"\n<dim>{text}</dim>")],
              [])
    path = write_ir(tmp_path, xml)
    error = read_error(path)
    assert [d.code for d in error.diagnostics] == ["IR105"]
    diag = error.diagnostics[0]
    assert diag.location.layer_name == "x"
    assert diag.location.line == line_of(path, "<dim>")
    assert diag.location.column == 1  # the <dim> starts its line
    assert "-1" in diag.message  # says what is allowed


@pytest.mark.parametrize("text", ["?", " ? "])
def test_question_mark_dim_is_ir107_at_the_dim(tmp_path, text):
    xml = net([parameter(0, "x", "2,2", dims=[2, 2]).replace("<dim>2</dim><dim>2</dim>",
                                                           f"<dim>2</dim><dim>{text}</dim>")],
              [])
    path = write_ir(tmp_path, xml)
    error = read_error(path)
    assert [d.code for d in error.diagnostics] == ["IR107"]  # not IR105 as well
    diag = error.diagnostics[0]
    assert diag.severity == "error" and diag.info.name == "question-mark-dim"
    assert diag.location.layer_name == "x"
    line = line_of(path, "<dim>")
    assert diag.location.line == line
    text_line = path.read_text().splitlines()[line - 1]
    assert diag.location.column == text_line.index("<dim>", text_line.index("<dim>") + 1) + 1
    assert "-1" in diag.message


def test_each_question_mark_dim_is_reported(tmp_path):
    xml = net([parameter(0, "x", "2,2", dims=["?", "?"]), result(1, "out", ["?", 2])],
              [(0, 0, 1, 0)])
    path = write_ir(tmp_path, xml)
    lines = path.read_text().splitlines()
    x_line, out_line = line_of(path, "<dim>"), line_of(path, "<dim>", nth=2)
    x_text = lines[x_line - 1]
    first = x_text.index("<dim>")
    assert [(d.code, d.location.layer_name, d.location.line, d.location.column)
            for d in read_error(path).diagnostics] == [
        ("IR107", "x", x_line, first + 1),
        ("IR107", "x", x_line, x_text.index("<dim>", first + 1) + 1),
        ("IR107", "out", out_line, lines[out_line - 1].index("<dim>") + 1)]


@pytest.mark.parametrize("text, dim", [("-1", Dimension.dynamic()), ("0", Dimension.static(0)),
                                       (" 7 ", Dimension.static(7))])
def test_dim_values(tmp_path, text, dim):
    xml = net([parameter(0, "x", "?", dims=[text])], [])
    model = irexec.read_model(write_ir(tmp_path, xml))
    assert model.nodes[0].outputs[0].declared == PartialShape([dim])


@pytest.mark.parametrize("precision", ["fp32", "XYZ", "", "float32"])
def test_bad_output_precision_is_ir106(tmp_path, precision):
    xml = net([parameter(0, "x", "2", dims=[2], precision=precision)], [])
    path = write_ir(tmp_path, xml)
    diag = the_diagnostic(read_error(path), "IR106")
    assert diag.location.layer_name == "x"
    assert diag.location.line == line_of(path, "<port")


@pytest.mark.parametrize("precision, name", [
    ("FP32", "f32"), ("f32", "f32"), ("BOOL", "boolean"), ("boolean", "boolean"),
    ("I64", "i64"), ("FP16", "f16"), ("BF16", "bf16"), ("U8", "u8"), ("BIN", "u1"),
    ("U1", "u1"), ("UNSPECIFIED", "dynamic"), ("undefined", "dynamic"), ("dynamic", "dynamic"),
])
def test_output_precision_spellings(tmp_path, precision, name):
    # facts (c): the legacy-aware parser takes IR names and the legacy upper-case names.
    model = irexec.read_model(write_ir(tmp_path, net([parameter(0, "x", "2", dims=[2],
                                                                precision=precision)], [])))
    assert model.nodes[0].outputs[0].precision.name == name


def test_input_precision_is_ignored(tmp_path):
    xml = net([parameter(0, "x", "2", dims=[2]),
               result(1, "out", [2]).replace('<port id="0">', '<port id="0" precision="XYZ">')],
              [(0, 0, 1, 0)])
    model = irexec.read_model(write_ir(tmp_path, xml))
    assert model.nodes[1].inputs[0].precision is None


@pytest.mark.parametrize("names, expected", [
    ("a", ["a"]),
    ("a,b", ["a", "b"]),
    (r"a\,b,c", ["a,b", "c"]),
    ("x y, z ", ["x y", " z "]),
    (r"\,", [","]),
])
def test_tensor_names(tmp_path, names, expected):
    xml = net([parameter(0, "x", "2", dims=[2], names=names), result(1, "out", [2])],
              [(0, 0, 1, 0)])
    model = irexec.read_model(write_ir(tmp_path, xml))
    assert model.inputs[0].names == expected


def test_tensor_name_with_comma_names_the_output(tmp_path):
    xml = net([parameter(0, "x", "2", dims=[2], names=r"a\,b,c"), result(1, "out", [2])],
              [(0, 0, 1, 0)])
    compiled = irexec.compile_model(irexec.read_model(write_ir(tmp_path, xml)))
    outputs = compiled({"a,b": np.zeros(2, np.float32)})
    assert list(outputs) == ["a,b"]
