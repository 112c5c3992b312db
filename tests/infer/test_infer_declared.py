"""The dims each port declares in the XML against the inferred shapes (IR401)."""

import numpy as np
import pytest

import irexec
from irexec.ir.shape import PartialShape
from tests.helpers_ir import line_of, net, parameter, read_error, result, the_diagnostic, write_ir

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
