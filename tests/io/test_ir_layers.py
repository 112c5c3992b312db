"""<layer> elements: mandatory attributes, ids, and which op serves a (type, version) pair."""

from pathlib import Path

import numpy as np
import pytest

import irexec
import irexec.api
from tests.helpers_ir import (
    const, layer, line_of, net, parameter, read_error, result, the_diagnostic, write_ir)


def _reverse_model(rev_type="Reverse", rev_version="opset1"):
    """data[2,3] and Const axes [1] -> Reverse -> Result, with the Reverse's type/version given."""
    xml = net([parameter(0, "data", "2,3", dims=[2, 3]),
               const(1, "axes", "i64", "1", 0, 8, dims=[1], precision="I64"),
               layer(2, "rev", rev_type, version=rev_version, data={"mode": "index"},
                     inputs=[[2, 3], [1]], outputs=[[2, 3]]),
               result(3, "out", [2, 3])],
              [(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 3, 0)])
    return xml, np.array([1], "<i8").tobytes()


@pytest.mark.parametrize("missing", ["id", "name", "type", "version"])
def test_missing_mandatory_layer_attribute_is_ir101(tmp_path, missing):
    attrs = {"id": "0", "name": "x", "type": "Parameter", "version": "opset1"}
    del attrs[missing]
    text = " ".join(f'{k}="{v}"' for k, v in attrs.items())
    xml = net([f'<layer {text}>\n<data shape="2" element_type="f32"/>\n'
               f'<output><port id="0" precision="FP32"><dim>2</dim></port></output>\n</layer>'],
              [])
    path = write_ir(tmp_path, xml)
    diag = the_diagnostic(read_error(path), "IR101")
    assert missing in diag.message
    assert diag.location.file == str(path)
    assert diag.location.line == line_of(path, "<layer ")
    assert diag.location.layer_name == attrs.get("name")


@pytest.mark.parametrize("bad_id", ["a1", "-1", "1.5", ""])
def test_non_numeric_layer_id_is_ir101(tmp_path, bad_id):
    xml = net([parameter(0, "x", "2", dims=[2]).replace('id="0" name="x"',
                                                        f'id="{bad_id}" name="x"')], [])
    path = write_ir(tmp_path, xml)
    diag = the_diagnostic(read_error(path), "IR101")
    assert f"'{bad_id}'" in diag.message
    assert diag.location.line == line_of(path, 'name="x"')
    assert diag.location.layer_name == "x"


def test_duplicate_layer_id_is_ir102_at_the_second_layer(tmp_path):
    xml = net([parameter(0, "first", "2", dims=[2]), parameter(0, "second", "2", dims=[2])], [])
    path = write_ir(tmp_path, xml)
    diag = the_diagnostic(read_error(path), "IR102")
    assert diag.location.layer_name == "second"
    assert diag.location.line == line_of(path, 'name="second"')
    first_line = line_of(path, 'name="first"')
    assert "'first'" in diag.message and f"line {first_line}" in diag.message


def test_unknown_type_is_ir103_naming_type_version_and_the_closest(tmp_path):
    xml, weights = _reverse_model(rev_type="Reverze")
    path = write_ir(tmp_path, xml, weights)
    diag = the_diagnostic(read_error(path), "IR103")
    assert "'Reverze' (opset1)" in diag.message
    assert "did you mean 'Reverse'" in diag.message  # the closest names, not every one
    assert "Abs" not in diag.message and len(diag.message) < 200
    assert diag.location.layer_name == "rev"
    assert diag.location.line == line_of(path, 'name="rev"')


@pytest.mark.parametrize("version", ["opset2", "opset8", "opset16"])
def test_reverse_exists_only_in_opset1(tmp_path, version):
    xml, weights = _reverse_model(rev_version=version)
    path = write_ir(tmp_path, xml, weights)
    diag = the_diagnostic(read_error(path), "IR103")
    assert "Reverse" in diag.message
    assert version in diag.message
    assert "opset1" in diag.message  # the registered version
    assert diag.location.layer_name == "rev"


@pytest.mark.parametrize("version", ["extension", "experimental", "opset", "", "opsetX"])
def test_version_that_is_not_an_opset_is_ir103(tmp_path, version):
    xml, weights = _reverse_model(rev_version=version)
    path = write_ir(tmp_path, xml, weights)
    diag = the_diagnostic(read_error(path), "IR103")
    assert f"'{version}'" in diag.message
    assert "Reverse" in diag.message


def _reverse_sequence_model(version):
    return net([parameter(0, "data", "2,3", dims=[2, 3]),
                parameter(1, "len", "2", "i32", dims=[2], precision="I32"),
                layer(2, "rs", "ReverseSequence", version=version,
                      inputs=[[2, 3], [2]], outputs=[[2, 3]]),
                result(3, "out", [2, 3])],
               [(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 3, 0)])


@pytest.mark.parametrize("version", ["opset1", "opset9", "opset16"])
def test_reverse_sequence_is_in_opset1_to_opset16(tmp_path, version):
    model = irexec.read_model(write_ir(tmp_path, _reverse_sequence_model(version)))
    assert model.nodes[2].type == "ReverseSequence"
    assert model.nodes[2].version == version


def test_reverse_sequence_opset17_is_ir103(tmp_path):
    path = write_ir(tmp_path, _reverse_sequence_model("opset17"))
    diag = the_diagnostic(read_error(path), "IR103")
    assert "ReverseSequence" in diag.message and "opset17" in diag.message
    assert "opset16" in diag.message  # the last opset that holds it


@pytest.mark.parametrize("spelling", ["reverse", "REVERSE", "rEvErSe"])
def test_type_lookup_is_case_insensitive(tmp_path, spelling):
    xml, weights = _reverse_model(rev_type=spelling)
    model = irexec.read_model(write_ir(tmp_path, xml, weights))
    assert model.nodes[2].type == "Reverse"


@pytest.mark.parametrize("spelling", ["Const", "CONST", "const", "Constant"])
def test_const_is_the_ir_spelling_of_constant(tmp_path, spelling):
    xml, weights = _reverse_model()
    xml = xml.replace('type="Const"', f'type="{spelling}"')
    model = irexec.read_model(write_ir(tmp_path, xml, weights))
    axes = model.nodes[1]
    assert axes.type == "Constant"
    assert axes.value.tolist() == [1]


def test_convert_opset1_serves_later_opsets(tmp_path):
    # One rule: the highest registered version <= the requested opset serves the layer.
    xml = net([parameter(0, "x", "2", dims=[2]),
               layer(1, "cvt", "Convert", version="opset13", data={"destination_type": "i32"},
                     inputs=[[2]], outputs=[[2]], precision="I32"),
               result(2, "out", [2])],
              [(0, 0, 1, 0), (1, 1, 2, 0)])
    model = irexec.read_model(write_ir(tmp_path, xml))
    assert model.nodes[1].type == "Convert"
    assert model.nodes[1].outputs[0].element_type.name == "i32"


def _named_result(version, where):
    """x (tensor name t) -> Result r carrying output_names="y,z" on <layer> or in <data>."""
    on_layer = ' output_names="y,z"' if where == "layer" else ""
    data = '<data output_names="y,z"/>\n' if where == "data" else ""
    res = (f'<layer id="1" name="r" type="Result" version="opset1"{on_layer}>\n{data}'
           f'<input><port id="0"><dim>2</dim></port></input>\n</layer>')
    return net([parameter(0, "x", "2", dims=[2], names="t"), res], [(0, 0, 1, 0)],
               version=version)


@pytest.mark.parametrize("version, where, expected", [
    (11, "layer", "y"),   # where OpenVINO's serializer writes it and its reader reads it
    (11, "data", "t"),    # OpenVINO ignores output_names inside <data>
    (10, "layer", "t"),   # IR v10 has no output_names
    (11, None, "t"),
])
def test_result_output_names(tmp_path, version, where, expected):
    model = irexec.read_model(write_ir(tmp_path, _named_result(version, where)))
    result_node = model.results[0]
    assert model.output_name(result_node) == expected
    out = irexec.compile_model(model)({"x": np.zeros(2, np.float32)})
    assert list(out) == [expected]
    if where == "data":  # kept as written, so a save loses nothing; and flagged
        assert result_node.extra_attrs == {"output_names": "y,z"}
        assert [d.code for d in model.diagnostics] == ["IR310"]
        diag = model.diagnostics[0]
        assert "'output_names'" in diag.message and "<layer>" in diag.message
        assert diag.location.layer_name == "r"
        assert diag.location.line == line_of(Path(model.path), "<data output_names")
        assert diag.location.column == 1
    else:
        assert model.diagnostics == []


def _convert_with(data: dict) -> str:
    return net([parameter(0, "x", "2", dims=[2]),
                layer(1, "cvt", "Convert", data=data, inputs=[[2]], outputs=[[2]]),
                result(2, "out", [2])],
               [(0, 0, 1, 0), (1, 1, 2, 0)])


def test_unknown_data_attribute_is_warning_ir310_at_the_data_element(tmp_path):
    path = write_ir(tmp_path, _convert_with({"destination_type": "f32", "colour": "red"}))
    model = irexec.read_model(path)
    assert [d.code for d in model.diagnostics] == ["IR310"]
    diag = model.diagnostics[0]
    assert diag.severity == "warning" and diag.info.name == "unknown-attribute"
    assert "'colour'" in diag.message and "destination_type" in diag.message  # names the known
    assert diag.location.layer_name == "cvt"
    line = line_of(path, "destination_type=")
    assert diag.location.line == line
    assert diag.location.column == path.read_text().splitlines()[line - 1].index("<data") + 1
    assert model.by_id[1].extra_attrs == {"colour": "red"}  # kept for writing back


def test_each_unknown_attribute_is_reported(tmp_path):
    path = write_ir(tmp_path, _convert_with({"a": "1", "destination_type": "f32", "b": "2"}))
    diags = irexec.read_model(path).diagnostics
    assert [d.code for d in diags] == ["IR310", "IR310"]
    assert "'a'" in diags[0].message and "'b'" in diags[1].message


def test_unknown_attribute_is_reported_beside_an_error_in_the_same_layer(tmp_path):
    path = write_ir(tmp_path, _convert_with({"destination_type": "f17", "colour": "red"}))
    _, diags = irexec.api.check_model(path)
    assert sorted(d.code for d in diags) == ["IR302", "IR310"]
    assert {d.location.line for d in diags} == {line_of(path, "destination_type=")}


def test_known_attributes_give_no_ir310(tmp_path):
    xml = net([parameter(0, "x", "2,3", dims=[2, 3]),
               parameter(1, "n", "2", "i32", dims=[2]),
               layer(2, "rs", "ReverseSequence", data={"batch_axis": 0, "seq_axis": 1},
                     inputs=[[2, 3], [2]], outputs=[[2, 3]]),
               result(3, "out", [2, 3])],
              [(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 3, 0)])
    assert irexec.read_model(write_ir(tmp_path, xml)).diagnostics == []


# --- a Parameter without element_type (IR112) -------------------------------------------------

def _identity(data: str, dims=(2, 3)) -> str:
    """x -> Result, with the Parameter's <data> element given as text ('' for none)."""
    x = layer(0, "x", "Parameter", outputs=[list(dims)])
    return net([x.replace("<output>", data + "\n<output>"), result(1, "out", list(dims))],
               [(0, 0, 1, 0)])


def test_parameter_without_element_type_is_warning_ir316_at_its_data(tmp_path):
    path = write_ir(tmp_path, _identity('<data shape="2,3"/>'))
    model = irexec.read_model(path)  # a warning: the model reads
    diag = the_diagnostic(model.diagnostics, "IR112")
    assert diag.severity == "warning" and "'element_type'" in diag.message
    assert diag.location.line == line_of(path, '<data shape="2,3"/>')
    assert model.inputs[0].element_type.is_dynamic


def test_parameter_without_data_is_warning_ir316_at_the_layer(tmp_path):
    path = write_ir(tmp_path, _identity("", dims=()))  # a scalar, as OpenVINO reads it
    diag = the_diagnostic(irexec.read_model(path).diagnostics, "IR112")
    assert diag.location.line == line_of(path, 'name="x"')


def test_an_explicit_dynamic_element_type_is_no_warning(tmp_path):
    path = write_ir(tmp_path, _identity('<data shape="2,3" element_type="dynamic"/>'))
    assert irexec.read_model(path).diagnostics == []


def test_parameter_without_element_type_runs_when_the_input_is_given(tmp_path):
    from tests.cli.inproc import irexec_cli

    path = write_ir(tmp_path, _identity('<data shape="2,3"/>'))
    x = np.arange(6, dtype=np.int16).reshape(2, 3)
    out = irexec.compile_model(path)({"x": x})["out"]
    assert out.dtype == np.int16 and np.array_equal(out, x)
    np.save(tmp_path / "x.npy", x)
    status, stdout, err = irexec_cli("run", path, "--input", f"x={tmp_path / 'x.npy'}")
    assert status == 0, err
    (warning,) = err.splitlines()
    assert warning.startswith("warning: ") and "'element_type' is absent" in warning
    assert "i16" in stdout
