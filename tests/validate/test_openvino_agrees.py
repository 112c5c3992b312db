"""OpenVINO reads the same fixtures: whatever it rejects, irexec reports as an error too, and every
repaired fixture is one OpenVINO accepts.

The converse does not hold on purpose: irexec is stricter than OpenVINO in the ways
docs/compatibility.md lists (duplicate layer ids, port dims that contradict inference ...), so a
fixture OpenVINO accepts and irexec rejects is expected and asserts nothing.
"""

from __future__ import annotations

import pytest

from irexec.api import validate_file
from tests.validate.fixture_files import (all_codes, inputs_path, is_runtime, load_inputs,
                                          run_cli, xml_path)

ov = pytest.importorskip("openvino")

STATIC = [c for c in all_codes() if not is_runtime(c)]
RUNTIME = [c for c in all_codes() if is_runtime(c)]


def openvino_reads(path) -> bool:
    try:
        ov.Core().read_model(str(path))
    except Exception:  # OpenVINO raises RuntimeError subclasses of its own; any failure counts
        return False
    return True


def openvino_runs(code: str) -> bool:
    """compile_model on the CPU and infer with the fixture's inputs. A file that is not an
    array (IR606) cannot be given to OpenVINO at all: that counts as a rejection."""
    inputs = load_inputs(inputs_path(code))
    if inputs is None:
        return False
    core = ov.Core()
    try:
        compiled = core.compile_model(core.read_model(str(xml_path(code))), "CPU")
        compiled.create_infer_request().infer(inputs)
    except Exception:
        return False
    return True


@pytest.mark.parametrize("code", STATIC)
def test_what_openvino_rejects_irexec_rejects(code):
    if openvino_reads(xml_path(code)):
        return  # irexec is stricter here, or the code is a warning
    assert any(d.is_error for d in validate_file(xml_path(code)))


@pytest.mark.parametrize("code", all_codes())
def test_openvino_reads_every_fixed_fixture(code):
    assert openvino_reads(xml_path(code, fixed=True))


@pytest.mark.parametrize("code", RUNTIME)
def test_what_openvino_refuses_to_run_irexec_refuses(code, tmp_path):
    if openvino_runs(code):
        return  # e.g. IR603: OpenVINO converts an array of another element type
    status, error, _ = run_cli(code, fixed=False, workdir=tmp_path)
    assert status == 1 and error is not None


def test_openvino_cpu_cannot_compile_a_parameter_without_element_type():
    # Why IR112 warns: OpenVINO reads the file, but its CPU plugin fails on the dynamic type.
    core = ov.Core()
    model = core.read_model(str(xml_path("IR112")))
    assert model.inputs[0].element_type.is_dynamic()
    with pytest.raises(Exception):
        core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    core.compile_model(core.read_model(str(xml_path("IR112", fixed=True))), "CPU",
                       {"INFERENCE_PRECISION_HINT": "f32"})
