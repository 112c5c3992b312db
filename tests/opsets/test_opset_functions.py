"""``irexec.opsetN``: OpenVINO's Python opset functions building irexec models.

Without OpenVINO: the functions' signatures as the table records them, models built with them
computing what numpy computes, errors naming the function and the argument, and
``Model(results, parameters, name)``. With OpenVINO (the oracle): the table is what the
installed OpenVINO's modules say (tools/make_opset_api.py --check), every function has the
signature of OpenVINO's, and a built model saved by irexec runs in OpenVINO to irexec's results.
"""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import irexec
from tests.opsets.saving import save_exact
from irexec.opsets.graph import ArgumentError
from irexec.opsets.signatures import OPSETS

ROOT = Path(__file__).resolve().parents[2]
OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"}


def test_every_opset_module_imports_and_irexec_names_them():
    for n in range(1, 18):
        module = importlib.import_module(f"irexec.opset{n}")
        assert getattr(irexec, f"opset{n}") is module
        assert module.__all__ and all(callable(getattr(module, f)) for f in module.__all__)
    assert sorted(irexec.opset17.__all__) == ["erfinv", "grouped_matmul"]  # partial, as OV's


def test_signatures_are_openvinos_as_recorded():
    from irexec import opset13

    sig = inspect.signature(opset13.convolution)
    assert list(sig.parameters) == ["data", "filters", "strides", "pads_begin", "pads_end",
                                    "dilations", "auto_pad", "name"]
    assert sig.parameters["auto_pad"].default == "EXPLICIT"
    assert list(inspect.signature(opset13.add).parameters) == [
        "left_node", "right_node", "auto_broadcast", "name"]
    assert list(inspect.signature(opset13.parameter).parameters) == ["shape", "dtype", "name"]
    assert inspect.signature(opset13.topk).parameters["index_element_type"].default == "i32"
    # The op version follows the module that defines the function, as in OpenVINO.
    x = opset13.parameter([1, 3, 8, 8], np.float32)
    assert opset13.interpolate(x, np.array([4, 4], np.int64), "nearest", "sizes",
                               axes=np.array([2, 3], np.int64)).version == "opset11"
    assert irexec.opset10.interpolate(  # Interpolate-4, written as OpenVINO writes it
        x, np.array([4, 4], np.int64), np.array([0.5, 0.5], np.float32), "nearest", "sizes",
        axes=np.array([2, 3], np.int64)).version == "opset4"
    assert irexec.opset16.gelu(x, "tanh").version == "opset7"
    assert irexec.opset4.interpolate(  # OpenVINO's opset4 module keeps opset1's function
        x, np.array([4, 4], np.int64), {"axes": [2, 3], "mode": "nearest"}).version == "opset1"


def test_a_convolution_model_computes_what_numpy_computes():
    from irexec import opset13 as ops

    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    data = ops.parameter([1, 2, 5, 5], np.float32, name="data")
    conv = ops.convolution(data, w, [1, 1], [0, 0], [0, 0], [1, 1])
    assert conv.get_output_partial_shape(0) == irexec.PartialShape([1, 3, 3, 3])
    out = ops.relu(ops.add(conv, np.float32(0.5)))
    model = irexec.Model([out], [data], "conv")
    got = irexec.compile_model(model)({"data": x})
    expected = np.zeros((1, 3, 3, 3), np.float64)
    for o in range(3):
        for i in range(3):
            for j in range(3):
                expected[0, o, i, j] = np.sum(x[0, :, i:i + 3, j:j + 3] * w[o])
    expected = np.maximum(expected + 0.5, 0)
    np.testing.assert_allclose(list(got.values())[0], expected, rtol=1e-5, atol=1e-5)


def test_inputs_may_be_nodes_outputs_arrays_and_numbers():
    from irexec import opset13 as ops

    a = ops.parameter([2, 3], np.int64, name="a")
    split = ops.split(a, 1, 3)  # a node of three outputs: all three feed concat
    joined = ops.concat([split, split.output(0)], 1)
    assert joined.get_output_partial_shape(0) == irexec.PartialShape([2, 4])
    plus = ops.add(joined, 7)  # a Python int: an i64 Constant, as OpenVINO makes it
    model = irexec.Model(plus, [a])
    value = np.arange(6, dtype=np.int64).reshape(2, 3)
    got = list(irexec.compile_model(model)({"a": value}).values())[0]
    np.testing.assert_array_equal(got, np.concatenate([value, value[:, :1]], 1) + 7)


def test_layers_answer_openvinos_outputs_and_inputs_methods():
    from irexec import opset13 as ops

    x = ops.parameter([2, 6], np.float32, name="x")
    split = ops.split(x, 1, 2)
    assert len(split.outputs()) == 2 and split.outputs() == list(split.outputs)
    assert split.inputs()[0].source is x.outputs[0]
    model = irexec.Model(split.outputs(), [x])  # OpenVINO's idiom
    got = irexec.compile_model(model)({"x": np.arange(12, dtype=np.float32).reshape(2, 6)})
    assert [v.shape for v in got.values()] == [(2, 3), (2, 3)]


def test_tensor_names_set_as_openvino_sets_them():
    from irexec import opset13 as ops

    x = ops.parameter([2], np.float32, name="x")
    x.output(0).set_names({"pixels", "image"})
    y = ops.relu(x)
    y.output(0).get_tensor().add_names({"scores"})
    assert x.output(0).get_any_name() == "image" and x.output(0).get_names() == {"image",
                                                                                 "pixels"}
    model = irexec.Model([y], [x])
    got = irexec.compile_model(model)({"pixels": np.array([-1, 2], np.float32)})
    assert got["scores"].tolist() == [0, 2]


def test_values_known_while_building_reach_later_layers():
    from irexec import opset13 as ops

    x = ops.parameter([2, 3, 4], np.float32, name="x")
    shape = ops.shape_of(x)
    target = ops.concat([ops.gather(shape, [0], 0), np.array([-1], np.int64)], 0)
    flat = ops.reshape(x, target, special_zero=False)
    assert flat.get_output_partial_shape(0) == irexec.PartialShape([2, 12])


def test_a_wrong_kind_of_argument_is_one_error_naming_the_function_and_argument():
    from irexec import opset13 as ops

    x = ops.parameter([1, 3, 4, 4], np.float32)
    with pytest.raises(ArgumentError, match=r"^relu: argument 'node' must be a node"):
        ops.relu("x")
    with pytest.raises(ArgumentError, match=r"^avg_pool: argument 'kernel_shape' .*AvgPool"):
        ops.avg_pool(x, [1, 1], [0, 0], [0, 0], "big", False)
    with pytest.raises(ArgumentError, match=r"^concat: argument 'nodes' must be a list"):
        ops.concat(x, 0)
    with pytest.raises(ArgumentError, match=r"^convert: argument 'destination_type'"):
        ops.convert(x, "float99")
    with pytest.raises(ArgumentError, match=r"^parameter: argument 'shape' must be a shape"):
        ops.parameter("1,x")
    assert str(ops.parameter("?,3,1..8").outputs[0].partial_shape) == "[?,3,1..8]"
    with pytest.raises(ArgumentError, match=r"^convolution: missing a required argument"):
        ops.convolution(x)
    assert issubclass(ArgumentError, TypeError)


def test_a_layer_that_breaks_its_rules_is_refused_where_it_is_made():
    from irexec import opset13 as ops

    x = ops.parameter([2, 3], np.float32)
    with pytest.raises(irexec.IRError, match="same element type"):
        ops.add(x, np.ones(3))  # a float64 Constant against f32, refused as OpenVINO does
    with pytest.raises(irexec.IRError):
        ops.matmul(x, np.ones((4, 2), np.float32), False, False)
    assert x.outputs[0].consumers == []  # the refused layers feed nothing


def test_model_needs_every_parameter_its_results_read():
    from irexec import opset13 as ops

    x = ops.parameter([2], np.float32, name="x")
    y = ops.parameter([2], np.float32, name="y")
    with pytest.raises(irexec.IRError, match="Parameter 'y'"):
        irexec.Model([ops.add(x, y)], [x], "m")


def test_model_takes_results_outputs_and_keeps_parameter_order():
    from irexec import opset13 as ops

    x = ops.parameter([2], np.float32, name="x")
    y = ops.parameter([2], np.float32, name="y")
    top = ops.topk(ops.add(x, y), 1, 0, "max", "value")
    result = ops.result(top.output(1), name="index")
    model = irexec.Model([top.output(0), result], [y, x], "pair")
    assert [p.name for p in model.parameters] == ["y", "x"]
    assert len(model.results) == 2 and model.results[1] is result
    got = irexec.compile_model(model)({"x": np.array([1, 5], np.float32),
                                       "y": np.array([1, 1], np.float32)})
    values = list(got.values())
    assert values[0].tolist() == [6.0] and values[1].tolist() == [1]


def test_built_model_saves_validates_and_reads_back(tmp_path):
    from irexec import opset8 as ops

    x = ops.parameter([1, 4, 6], np.float32, name="x")
    y = ops.softmax(ops.multiply(x, np.float32(2.0)), 2)
    model = irexec.Model([y], [x], "m")
    xml = tmp_path / "m.xml"
    save_exact(model, xml)
    run = subprocess.run([sys.executable, "-m", "irexec", "validate", str(xml)],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0 and "0 errors, 0 warnings" in run.stdout, run.stdout + run.stderr
    value = np.random.default_rng(1).standard_normal((1, 4, 6)).astype(np.float32)
    again = list(irexec.compile_model(irexec.read_model(xml))({"x": value}).values())[0]
    e = np.exp(2 * value - (2 * value).max(axis=2, keepdims=True))
    np.testing.assert_allclose(again, e / e.sum(axis=2, keepdims=True), rtol=1e-5)


# --- with OpenVINO ------------------------------------------------------------------------------

def test_the_table_is_what_the_installed_openvino_says():
    pytest.importorskip("openvino")
    run = subprocess.run([sys.executable, "tools/make_opset_api.py", "--check"],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr


def test_every_function_has_openvinos_signature():
    pytest.importorskip("openvino")
    from openvino import Type

    checked = 0
    for n in range(1, 18):
        theirs = importlib.import_module(f"openvino.opset{n}")
        ours = importlib.import_module(f"irexec.opset{n}")
        for name in ours.__all__:
            if OPSETS[n][name] == "handwritten":
                continue
            expected = inspect.signature(getattr(theirs, name))
            got = inspect.signature(getattr(ours, name))
            assert list(got.parameters) == list(expected.parameters), (n, name)
            for p in expected.parameters.values():
                default = p.default
                if isinstance(default, Type):
                    default = default.get_type_name()
                elif isinstance(default, type):
                    continue  # a numpy type: recorded by its element type's name
                assert got.parameters[p.name].default == default, (n, name, p.name)
            checked += 1
    assert checked >= 200


def test_a_built_model_runs_in_openvino_to_irexecs_results(tmp_path):
    ov = pytest.importorskip("openvino")
    from irexec import opset13 as ops

    rng = np.random.default_rng(2)
    x = ops.parameter([1, 3, 8, 8], np.float32, name="x")
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    conv = ops.convolution(x, w, [2, 2], [1, 1], [1, 1], [1, 1])
    pooled = ops.max_pool(ops.relu(conv), [1, 1], [1, 1], [0, 0], [0, 0], [2, 2])
    top = ops.topk(ops.reduce_mean(pooled.output(0), [2, 3], True), 2, 1, "max", "value")
    model = irexec.Model([top.output(0), top.output(1)], [x], "net")
    xml = tmp_path / "net.xml"
    save_exact(model, xml)
    value = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    ours = list(irexec.compile_model(model)({"x": value}).values())
    core = ov.Core()
    theirs = core.compile_model(core.read_model(str(xml)), "CPU", OV_CONFIG)(value)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(ours[1], theirs[1])


def test_state_with_read_value_and_assign():
    from irexec import opset13 as ops

    x = ops.parameter([2], np.float32, name="x")
    read = ops.read_value(np.array([10, 20], np.float32), "acc")
    total = ops.add(read, x)
    model = irexec.Model([total], [ops.assign(total, "acc")], [x], "acc")  # OpenVINO's order
    request = irexec.compile_model(model).create_infer_request()
    outs = [list(request.infer({"x": np.array([1, 2], np.float32)}).values())[0].tolist()
            for _ in range(3)]
    assert outs == [[11, 22], [12, 24], [13, 26]]
    zeros = ops.read_value("fresh", np.float32, [3])  # the form without an initial value
    assert str(zeros.outputs[0].partial_shape) == "[3]"
    with pytest.raises(ArgumentError, match="read_value: argument 'variable_id'"):
        ops.read_value(x, 5)


def test_stateful_built_model_runs_in_openvino(tmp_path):
    ov = pytest.importorskip("openvino")
    from irexec import opset13 as ops

    x = ops.parameter([2], np.float32, name="x")
    total = ops.multiply(ops.read_value(np.ones(2, np.float32), "p"), x)
    model = irexec.Model([total], [x], sinks=[ops.assign(total, "p")])
    xml = tmp_path / "state.xml"
    save_exact(model, xml)
    request = ov.Core().compile_model(str(xml), "CPU", OV_CONFIG).create_infer_request()
    ours = irexec.compile_model(model).create_infer_request()
    for _ in range(3):
        value = np.array([2, 3], np.float32)
        np.testing.assert_array_equal(list(ours.infer({"x": value}).values())[0],
                                      request.infer({0: value})[0])


def test_a_model_of_another_models_results_and_parameters():
    from irexec import opset13 as ops

    x = ops.parameter([3], np.float32, name="x")
    first = irexec.Model([ops.result(ops.relu(x), name="out")], [x], "first")
    second = irexec.Model(first.results, first.get_parameters(), "second")
    assert [r.name for r in second.results] == ["out"]
    got = irexec.compile_model(second)({"x": np.array([-1, 0, 2], np.float32)})
    assert list(got.values())[0].tolist() == [0, 0, 2]
