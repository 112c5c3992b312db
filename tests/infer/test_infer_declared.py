"""The dims and precision each port declares in the XML against the inferred shapes and element
types (IR401, IR402)."""

import numpy as np
import pytest

import irexec
import irexec.api
from irexec.ir import element_type
from irexec.ir.shape import PartialShape
from tests.helpers_ir import (
    layer, line_of, net, parameter, read_error, result, the_diagnostic, write_ir)

from .models import reverse


def _param_result(shape, param_dims, result_dims):
    return net([parameter(0, "x", shape, dims=param_dims), result(1, "out", result_dims)],
               [(0, 0, 1, 0)])


@pytest.mark.parametrize("shape, dims", [
    ("2,3", [-1, -1]), ("2,3", [2, -1]), ("2..5,?", [-1, -1]), ("?", [-1]), ("2,3", [2, 3]),
])
def test_minus_one_matches_anything(tmp_path, shape, dims):
    model = irexec.read_model(write_ir(tmp_path, _param_result(shape, dims, dims)))
    assert model.diagnostics == []


def test_wrong_dim_is_ir401_naming_layer_port_declared_and_inferred(tmp_path):
    path = write_ir(tmp_path, _param_result("2,3", [2, 4], [2, 3]))
    diag = the_diagnostic(read_error(path), "IR401")
    assert diag.location.layer_name == "x"
    assert diag.location.line == line_of(path, 'name="x"') + 3  # the <port> line
    assert "output port 0" in diag.message
    assert "[2,4]" in diag.message and "[2,3]" in diag.message


def test_wrong_rank_is_ir401(tmp_path):
    path = write_ir(tmp_path, _param_result("2,3", [2, 3, 1], [2, 3]))
    diag = the_diagnostic(read_error(path), "IR401")
    assert diag.location.layer_name == "x"
    assert "[2,3,1]" in diag.message and "[2,3]" in diag.message


def test_input_port_dims_are_compared_with_what_arrives(tmp_path):
    path = write_ir(tmp_path, _param_result("2,3", [2, 3], [3, 2]))
    diag = the_diagnostic(read_error(path), "IR401")
    assert diag.location.layer_name == "out"
    assert diag.location.line == line_of(path, 'name="out"') + 2  # the <port> line
    assert "input port 0" in diag.message and "'x'" in diag.message
    assert "[3,2]" in diag.message and "[2,3]" in diag.message


def test_op_output_dims_are_compared_with_its_inference(tmp_path):
    xml, weights = reverse("2,3", "1", values=[0], out_dims=[3, 2])
    path = write_ir(tmp_path, xml, weights)
    error = read_error(path)
    diag = [d for d in error.diagnostics if d.location.layer_name == "op"]
    assert [d.code for d in diag] == ["IR401"]
    assert "output port 2" in diag[0].message
    assert "[3,2]" in diag[0].message and "[2,3]" in diag[0].message


def test_dynamic_rank_matches_any_declared_dims(tmp_path):
    model = irexec.read_model(write_ir(tmp_path, _param_result("...", [5, 6], [7])))
    assert not model.nodes[0].outputs[0].partial_shape.rank_is_static


def test_declared_dims_do_not_narrow_the_inferred_shape(tmp_path):
    # -1 on the port is only a check: the shape stays what the Parameter says.
    model = irexec.read_model(write_ir(tmp_path, _param_result("2..5", [-1], [-1])))
    assert model.outputs[0].partial_shape == PartialShape([(2, 5)])
    compiled = irexec.compile_model(model)
    assert compiled({"x": np.zeros(4, np.float32)})["out"].shape == (4,)


# --- precision (IR402) --------------------------------------------------------------------------

def _convert_to(destination_type, precision):
    return net([parameter(0, "x", "2", dims=[2]),
                layer(1, "cvt", "Convert", data={"destination_type": destination_type},
                      inputs=[[2]], outputs=[[2]], precision=precision),
                result(2, "out", [2])],
               [(0, 0, 1, 0), (1, 1, 2, 0)])


@pytest.mark.parametrize("destination_type, precision", [
    ("i32", "FP32"), ("f32", "I64"), ("f16", "FP32"), ("boolean", "U8"), ("u8", "BOOL"),
    ("f32", "f64"),
])
def test_output_precision_other_than_the_inferred_type_is_warning_ir402(tmp_path,
                                                                         destination_type,
                                                                         precision):
    path = write_ir(tmp_path, _convert_to(destination_type, precision))
    model = irexec.read_model(path)
    assert [d.code for d in model.diagnostics] == ["IR402"]
    diag = model.diagnostics[0]
    assert diag.severity == "warning" and diag.info.name == "precision-mismatch"
    assert diag.location.layer_name == "cvt"
    port_line = line_of(path, f'<port id="1" precision="{precision}">')  # cvt's output
    assert diag.location.line == port_line
    assert diag.location.column == path.read_text().splitlines()[port_line - 1].index("<port") + 1
    declared = element_type.from_precision(precision).precision  # f64 is named FP64
    assert declared in diag.message and destination_type in diag.message
    # Only a warning: the tensor has the inferred type, not the declared precision.
    assert model.by_id[1].outputs[0].element_type.name == destination_type


@pytest.mark.parametrize("destination_type, precision", [
    ("i32", "I32"), ("i32", "i32"), ("f32", "FP32"), ("f32", "f32"), ("boolean", "BOOL"),
    ("boolean", "boolean"), ("bf16", "BF16"), ("i64", "UNSPECIFIED"), ("i64", "dynamic"),
    ("i64", None),
])
def test_matching_dynamic_or_absent_precision_gives_no_ir402(tmp_path, destination_type,
                                                             precision):
    model = irexec.read_model(write_ir(tmp_path, _convert_to(destination_type, precision)))
    assert model.diagnostics == []


def test_parameter_precision_is_compared_with_its_element_type(tmp_path):
    xml = net([parameter(0, "x", "2", "i64", dims=[2], precision="FP32"), result(1, "out", [2])],
              [(0, 0, 1, 0)])
    path = write_ir(tmp_path, xml)
    diag = the_diagnostic(irexec.read_model(path).diagnostics, "IR402")
    assert diag.location.layer_name == "x"
    assert "FP32" in diag.message and "i64" in diag.message


def test_input_port_precision_is_not_compared(tmp_path):
    # OpenVINO ignores input precisions; so does irexec (no IR402 for them).
    xml = _param_result("2", [2], [2]).replace('<port id="0"><dim>2</dim></port>',
                                               '<port id="0" precision="I8"><dim>2</dim></port>')
    assert 'precision="I8"' in xml
    assert irexec.read_model(write_ir(tmp_path, xml)).diagnostics == []


def test_precision_and_dims_mismatch_on_one_port_are_both_reported(tmp_path):
    xml = net([parameter(0, "x", "2", "i32", dims=[3], precision="FP32"), result(1, "out", [-1])],
              [(0, 0, 1, 0)])
    path = write_ir(tmp_path, xml)
    _, diags = irexec.api.check_model(path)
    port_line = line_of(path, 'precision="FP32"')
    assert sorted((d.code, d.location.line) for d in diags) == [("IR401", port_line),
                                                                ("IR402", port_line)]
