"""The Python API named as OpenVINO's: Model.inputs/outputs with names, partial shapes and
element types; CompiledModel.create_infer_request() and InferRequest.infer(); save_model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import irexec
from irexec.runtime.inputs import make_inputs

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
CHAIN = SAMPLES / "convert_reverse_chain.xml"


def test_inputs_and_outputs_describe_themselves():
    model = irexec.read_model(CHAIN)
    data, lengths = model.inputs
    assert data.get_any_name() == "data" and data.names == ["data"]
    assert data.get_element_type() == irexec.ElementType.i32
    assert data.get_partial_shape() == irexec.PartialShape([5, 4, 3])
    assert lengths.get_element_type() == irexec.ElementType.i64
    assert [o.get_any_name() for o in model.outputs] == ["reversed_sequences", "flipped"]
    assert all(o.get_element_type() == irexec.ElementType.f32 for o in model.outputs)
    compiled = irexec.compile_model(model)
    assert compiled.inputs == model.inputs and compiled.outputs == model.outputs


def test_infer_request_matches_calling_the_compiled_model():
    compiled = irexec.compile_model(CHAIN)
    inputs = make_inputs(compiled.model, {}, 1)
    request = compiled.create_infer_request()
    results = request.infer(inputs)
    assert request.results is results
    expected = compiled(inputs)
    assert results.keys() == expected.keys()
    assert all(np.array_equal(results[k], expected[k]) for k in expected)


def test_save_model_round_trip(tmp_path):
    model = irexec.read_model(CHAIN)
    irexec.save_model(model, tmp_path / "copy.xml")
    again = irexec.read_model(tmp_path / "copy.xml")
    inputs = make_inputs(model, {}, 2)
    a, b = irexec.compile_model(model)(inputs), irexec.compile_model(again)(inputs)
    assert all(np.array_equal(a[k], b[k]) for k in a)


def test_openvino_reads_the_same_description():
    ov = pytest.importorskip("openvino")
    theirs = ov.Core().read_model(str(CHAIN))
    ours = irexec.read_model(CHAIN)
    for o, t in zip(ours.inputs, theirs.inputs):
        assert o.get_any_name() == t.get_any_name()
        assert str(o.get_partial_shape()) == str(t.get_partial_shape()).replace(" ", "")
        assert str(o.get_element_type()) == t.get_element_type().get_type_name()
