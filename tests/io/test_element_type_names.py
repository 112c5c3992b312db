"""Element type names in IR files: ``element_type`` attributes take the IR names in any case, as
OpenVINO does; ports' ``precision`` also takes the legacy upper-case names (FP32, BOOL, BIN ...),
which on ``element_type`` are an error (OpenVINO: "FP32" is not a member of enum)."""

from __future__ import annotations

import pytest

import irexec
from irexec.ir import element_type as et_table
from tests.helpers_ir import net, parameter, result, write_ir
from tests.ops.support import TYPE_NAMES

LEGACY = {et.name: et.precision for et in et_table.SUPPORTED
          if et.precision.lower() != et.name}  # FP32, BOOL, BIN, FP16, FP64 ...


def _model(tmp_path, element_type, precision):
    layers = [parameter(0, "x", "2", element_type, dims=[2], precision=precision),
              result(1, "out", [2])]
    return write_ir(tmp_path, net(layers, [(0, 0, 1, 0)]))


@pytest.mark.parametrize("type_name", TYPE_NAMES)
def test_every_type_reads_with_its_serializer_precision(tmp_path, type_name):
    et = et_table.from_name(type_name)
    model = irexec.read_model(_model(tmp_path, type_name.upper(), et.precision))
    assert model.diagnostics == []
    assert model.inputs[0].element_type == et


def test_the_legacy_names_are_the_ones_openvino_writes():
    assert LEGACY == {"boolean": "BOOL", "f16": "FP16", "f32": "FP32", "f64": "FP64",
                      "u1": "BIN"}


@pytest.mark.parametrize("type_name, legacy", sorted(LEGACY.items()))
def test_legacy_name_on_element_type_is_an_error_naming_the_ir_name(tmp_path, type_name, legacy):
    with pytest.raises(irexec.IRError) as e:
        irexec.read_model(_model(tmp_path, legacy, legacy))
    assert e.value.code == "IR302"
    assert f"'{legacy}' is a port precision name" in str(e.value) and f"'{type_name}'" in str(e.value)
