"""OpenVINO's Python API, the names its users type first (issue 14, item 9; README's table):
one test per name, each asking OpenVINO the same question where it is installed, so that the
names mean what they mean there."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import irexec
from irexec.runtime.inputs import make_inputs

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
CHAIN = SAMPLES / "convert_reverse_chain.xml"  # inputs data i32 [5,4,3], seq_lengths i64 [4]
SINGLE = SAMPLES / "reverse_mask.xml"  # one input, one output


def openvino():
    ov = pytest.importorskip("openvino")
    return ov, ov.Core()


def chain_inputs(seed=0):
    rng = np.random.default_rng(seed)
    return {"data": rng.integers(-50, 50, (5, 4, 3)).astype(np.int32),
            "seq_lengths": rng.integers(1, 6, 4).astype(np.int64)}


def error_type(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001
        return type(e)
    return None


# --- Core ----------------------------------------------------------------------------------------

def test_core_available_devices():
    assert irexec.Core().available_devices == ["CPU"]
    assert irexec.Core().get_available_devices() == ["CPU"]
    ov = pytest.importorskip("openvino")
    assert "CPU" in ov.Core().available_devices  # the one device both have


def test_core_read_model():
    model = irexec.Core().read_model(CHAIN)
    assert isinstance(model, irexec.Model)
    assert [p.get_any_name() for p in model.inputs] == ["data", "seq_lengths"]
    weights = irexec.Core().read_model(str(CHAIN), str(CHAIN.with_suffix(".bin")))
    assert [n.name for n in weights.nodes] == [n.name for n in model.nodes]


def test_core_compile_model():
    core = irexec.Core()
    inputs = chain_inputs()
    from_path = core.compile_model(str(CHAIN))
    from_model = core.compile_model(core.read_model(CHAIN), "CPU", {"INFERENCE_PRECISION_HINT":
                                                                     "f32"})
    auto = core.compile_model(core.read_model(CHAIN), "AUTO")
    a, b, c = from_path(inputs), from_model(inputs), auto(inputs)
    assert all(np.array_equal(a[k], b[k]) and np.array_equal(a[k], c[k]) for k in a)


@pytest.mark.parametrize("compile_", ["core", "function"])
def test_compile_model_on_an_unknown_device_names_the_devices(compile_):
    model = irexec.read_model(CHAIN)
    call = irexec.Core().compile_model if compile_ == "core" else irexec.compile_model
    with pytest.raises(RuntimeError) as caught:
        call(model, "FOO")
    assert str(caught.value) == ("device 'FOO' is not available: irexec runs models with numpy "
                                 "on the CPU; its devices are 'CPU' (and 'AUTO', which picks it)")
    ov, core = openvino()  # OpenVINO refuses it with RuntimeError too
    assert error_type(lambda: core.compile_model(core.read_model(str(CHAIN)), "FOO")) \
        is RuntimeError


# --- CompiledModel -----------------------------------------------------------------------------

def test_compiled_input_and_output():
    compiled = irexec.compile_model(CHAIN)
    assert compiled.input(0) is compiled.inputs[0] and compiled.input(1) is compiled.inputs[1]
    assert compiled.input("seq_lengths") is compiled.inputs[1]
    assert compiled.output(1) is compiled.outputs[1]
    assert compiled.output("reversed_sequences") is compiled.outputs[0]
    single = irexec.compile_model(SINGLE)
    assert single.input() is single.inputs[0] and single.output() is single.outputs[0]
    ov, core = openvino()
    theirs = core.compile_model(core.read_model(str(CHAIN)), "CPU")
    for key in (0, 1, "seq_lengths"):
        assert compiled.input(key).get_any_name() == theirs.input(key).get_any_name()
    for key in (0, 1, "flipped"):
        assert compiled.output(key).get_any_name() == theirs.output(key).get_any_name()
    # the same failures: input() of a model of two inputs, an index past the end, a bad name
    for call in (lambda m: m.input(), lambda m: m.input(5), lambda m: m.input("nope"),
                 lambda m: m.input(-1), lambda m: m.output(2), lambda m: m.output("nope")):
        assert error_type(lambda: call(compiled)) is error_type(lambda: call(theirs))


def test_results_indexed_by_port_index_and_name():
    compiled = irexec.compile_model(CHAIN)
    inputs = chain_inputs()
    results = compiled(inputs)
    for i, port in enumerate(compiled.outputs):
        name = port.get_any_name()
        assert results[i] is results[name] is results[port] is results[compiled.output(i)]
    assert list(results) == ["reversed_sequences", "flipped"]  # ports that are also the names
    assert [p.get_node().get_type_name() for p in results] == ["Result", "Result"]
    assert results[-1] is results["flipped"]  # from the end, as OpenVINO's results
    for bad in (2, -3, "nope", compiled.inputs[0]):
        with pytest.raises(KeyError):
            results[bad]
    assert results.get(7) is None and 0 in results and "nope" not in results
    ov, core = openvino()
    theirs = core.compile_model(core.read_model(str(CHAIN)), "CPU",
                                {"INFERENCE_PRECISION_HINT": "f32"})
    expected = theirs(inputs)
    for i, port in enumerate(theirs.outputs):
        np.testing.assert_array_equal(results[i], expected[i])
        np.testing.assert_array_equal(results[port.get_any_name()], expected[port])
    np.testing.assert_array_equal(results[-1], expected[-1])
    for bad in (2, -3, "nope"):
        assert error_type(lambda: expected[bad]) is KeyError


def test_infer_new_request():
    compiled = irexec.compile_model(CHAIN)
    inputs = chain_inputs(1)
    results = compiled.infer_new_request(inputs)
    expected = compiled(inputs)
    assert all(np.array_equal(results[k], expected[k]) for k in expected)
    assert np.array_equal(results[0], expected[0])
    ov, core = openvino()
    theirs = core.compile_model(core.read_model(str(CHAIN)), "CPU",
                                {"INFERENCE_PRECISION_HINT": "f32"}).infer_new_request(inputs)
    np.testing.assert_array_equal(results[1], theirs[1])


# --- InferRequest ------------------------------------------------------------------------------

def test_infer_request_set_tensor_then_infer():
    compiled = irexec.compile_model(CHAIN)
    inputs = chain_inputs(2)
    request = compiled.create_infer_request()
    request.set_tensor("data", irexec.Tensor(inputs["data"]))
    request.set_tensor(compiled.input(1), inputs["seq_lengths"])  # a port; an array too
    results = request.infer()
    expected = compiled(inputs)
    assert all(np.array_equal(results[k], expected[k]) for k in expected)
    with pytest.raises(irexec.IRError) as caught:  # checked when set, as OpenVINO does
        request.set_tensor("data", irexec.Tensor(np.zeros((2, 2), np.int32)))
    assert caught.value.code == "IR604"
    with pytest.raises(RuntimeError):
        request.set_tensor("nope", irexec.Tensor(np.zeros(3)))


def test_infer_request_get_tensor():
    compiled = irexec.compile_model(CHAIN)
    request = compiled.create_infer_request()
    data = request.get_tensor("data")  # not set yet: zeros of its type and shape, to fill
    assert data.shape == [5, 4, 3] and data.data.dtype == np.int32
    inputs = chain_inputs(3)
    data.data[:] = inputs["data"]
    request.get_tensor(compiled.input(1)).data[:] = inputs["seq_lengths"]
    request.infer()
    expected = compiled(inputs)
    for i, name in enumerate(["reversed_sequences", "flipped"]):
        np.testing.assert_array_equal(request.get_tensor(name).data, expected[name])
        np.testing.assert_array_equal(request.get_tensor(compiled.output(i)).data,
                                      expected[name])
    ov, core = openvino()
    theirs = core.compile_model(core.read_model(str(CHAIN)), "CPU",
                                {"INFERENCE_PRECISION_HINT": "f32"}).create_infer_request()
    fresh = theirs.get_tensor("data")
    assert list(fresh.shape) == data.shape and fresh.data.dtype == data.data.dtype
    theirs.get_tensor("data").data[:] = inputs["data"]
    theirs.get_tensor("seq_lengths").data[:] = inputs["seq_lengths"]
    theirs.infer()
    np.testing.assert_array_equal(theirs.get_tensor("flipped").data,
                                  request.get_tensor("flipped").data)


def test_infer_request_start_async_and_wait():
    compiled = irexec.compile_model(CHAIN)
    inputs = chain_inputs(4)
    request = compiled.create_infer_request()
    gate = threading.Event()
    original = compiled.__class__._infer

    def slow(self, *args, **kwargs):
        gate.wait(5)
        return original(self, *args, **kwargs)

    compiled.__class__._infer = slow
    try:
        assert request.start_async(inputs) is None
        with pytest.raises(RuntimeError, match="busy"):
            request.start_async(inputs)
        gate.set()
        assert request.wait() is None
    finally:
        compiled.__class__._infer = original
    expected = compiled(inputs)
    assert all(np.array_equal(request.results[k], expected[k]) for k in expected)
    # an input never given is refused when the run starts (OpenVINO runs on what its tensor
    # happens to hold: docs/compatibility.md); one given in an earlier run is used again
    fresh = compiled.create_infer_request()
    with pytest.raises(irexec.IRError) as caught:
        fresh.start_async({"data": inputs["data"]})
    assert caught.value.code == "IR602"
    request.start_async({"data": inputs["data"]})
    request.wait()
    assert np.array_equal(request.results[0], expected[0])
    ov, core = openvino()
    theirs = core.compile_model(core.read_model(str(CHAIN)), "CPU",
                                {"INFERENCE_PRECISION_HINT": "f32"}).create_infer_request()
    assert theirs.start_async(inputs) is None and theirs.wait() is None
    np.testing.assert_array_equal(theirs.get_tensor("flipped").data, expected["flipped"])


def test_tensor():
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    tensor = irexec.Tensor(array)
    assert tensor.shape == tensor.get_shape() == [2, 3]
    assert tensor.element_type == tensor.get_element_type() == irexec.ElementType.f32
    assert tensor.size == tensor.get_size() == 6
    assert tensor.byte_size == tensor.get_byte_size() == 24
    array[0, 0] = 9  # a copy by default, as OpenVINO's Tensor(array)
    assert tensor.data[0, 0] == 0
    shared = irexec.Tensor(array, shared_memory=True)
    array[0, 1] = 7
    assert shared.data[0, 1] == 7 and np.asarray(shared) is array
    zeros = irexec.Tensor(irexec.ElementType.i64, [4])
    assert zeros.data.dtype == np.int64 and not zeros.data.any()
    ov = pytest.importorskip("openvino")
    theirs = ov.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert list(theirs.shape) == tensor.shape and theirs.size == tensor.size \
        and theirs.byte_size == tensor.byte_size
    assert theirs.get_element_type().get_type_name() == str(tensor.element_type)


# --- Model -----------------------------------------------------------------------------------

def test_model_get_parameters_results_and_ops():
    model = irexec.read_model(CHAIN)
    assert [p.get_friendly_name() for p in model.get_parameters()] == ["data", "seq_lengths"]
    assert [r.get_friendly_name() for r in model.get_results()] == ["sequences_out",
                                                                    "flipped_out"]
    ops = Counter(n.get_type_name() for n in model.get_ops())
    assert ops == Counter({"Parameter": 2, "Result": 2, "Convert": 1, "ReverseSequence": 1,
                           "Constant": 1, "Reverse": 1})
    ov, core = openvino()
    theirs = core.read_model(str(CHAIN))
    assert [p.get_friendly_name() for p in theirs.get_parameters()] == \
        [p.get_friendly_name() for p in model.get_parameters()]
    assert [r.get_friendly_name() for r in theirs.get_results()] == \
        [r.get_friendly_name() for r in model.get_results()]
    assert Counter(o.get_type_name() for o in theirs.get_ops()) == ops


def test_model_inputs_outputs_input_output():
    model = irexec.read_model(CHAIN)
    assert model.input(0) is model.inputs[0] and model.input("seq_lengths") is model.inputs[1]
    assert model.output(1) is model.outputs[1] and model.output("flipped") is model.outputs[1]
    single = irexec.read_model(SINGLE)
    assert single.input() is single.inputs[0] and single.output() is single.outputs[0]
    ov, core = openvino()
    theirs = core.read_model(str(CHAIN))
    assert [p.get_any_name() for p in theirs.inputs] == [p.get_any_name() for p in model.inputs]
    assert [p.get_any_name() for p in theirs.outputs] == \
        [p.get_any_name() for p in model.outputs]
    for call in (lambda m: m.input(), lambda m: m.input(2), lambda m: m.input("nope"),
                 lambda m: m.input(-1), lambda m: m.output(), lambda m: m.output(9)):
        assert error_type(lambda: call(model)) is error_type(lambda: call(theirs))


def test_model_reshape_and_is_dynamic():
    model = irexec.read_model(CHAIN)
    assert model.is_dynamic() is False
    model.reshape({"data": [5, 2, 3], 1: [2]})  # by name and by index
    assert [p.get_shape() for p in model.inputs] == [[5, 2, 3], [2]]
    assert [p.get_shape() for p in model.outputs] == [[5, 2, 3], [5, 2, 3]]
    model.reshape({model.input(0): [5, -1, 3], "seq_lengths": [-1]})  # by port; dynamic
    assert model.is_dynamic() is True
    assert str(model.output(0).get_partial_shape()) == "[5,?,3]"
    out = irexec.compile_model(model)({"data": np.zeros((5, 7, 3), np.int32),
                                       "seq_lengths": np.ones(7, np.int64)})
    assert out[0].shape == (5, 7, 3)
    with pytest.raises(irexec.IRError):  # 3 lengths for a batch of 2: refused, nothing changed
        model.reshape({"data": [5, 2, 3], "seq_lengths": [3]})
    assert str(model.input(0).get_partial_shape()) == "[5,?,3]"
    single = irexec.read_model(SINGLE)
    single.reshape([2, 3, 4])  # one input: the shape alone
    assert single.output().get_shape() == [2, 3, 4]
    ov, core = openvino()
    theirs = core.read_model(str(CHAIN))
    assert theirs.is_dynamic() is False
    theirs.reshape({"data": [5, 2, 3], "seq_lengths": [2]})
    assert [list(p.get_shape()) for p in theirs.outputs] == [[5, 2, 3], [5, 2, 3]]
    theirs.reshape({"data": [5, -1, 3], "seq_lengths": [-1]})
    assert theirs.is_dynamic() is True
    assert str(theirs.output(0).get_partial_shape()).replace(" ", "") == "[5,?,3]"


# --- ports and layers ------------------------------------------------------------------------

def test_port_get_shape_and_shape():
    model = irexec.read_model(CHAIN)
    port = model.input(0)
    assert port.get_shape() == port.shape == [5, 4, 3]
    assert port.get_partial_shape() == irexec.PartialShape([5, 4, 3])
    assert port.get_names() == {"data"} and port.any_name == "data"
    assert port.get_index() == 0 and port.get_node() is model.get_parameters()[0]
    model.reshape({"data": [5, -1, 3], "seq_lengths": [-1]})
    with pytest.raises(RuntimeError):
        model.input(0).get_shape()
    ov, core = openvino()
    theirs = core.read_model(str(CHAIN))
    assert list(theirs.input(0).get_shape()) == list(theirs.input(0).shape) == [5, 4, 3]
    assert theirs.input(0).get_names() == {"data"} and theirs.input(0).any_name == "data"
    theirs.reshape({"data": [5, -1, 3], "seq_lengths": [-1]})
    assert error_type(lambda: theirs.input(0).get_shape()) is RuntimeError


def test_layer_names_types_and_outputs():
    model = irexec.read_model(CHAIN)
    rs = next(n for n in model.get_ops() if n.get_type_name() == "ReverseSequence")
    assert rs.get_friendly_name() == "reversed_sequences" and rs.get_output_size() == 1
    assert rs.output(0) is rs.outputs[0]
    assert rs.get_output_partial_shape(0) == irexec.PartialShape([5, 4, 3])
    assert rs.get_output_element_type(0) == irexec.ElementType.f32
    ov, core = openvino()
    theirs = next(o for o in core.read_model(str(CHAIN)).get_ops()
                  if o.get_type_name() == "ReverseSequence")
    assert theirs.get_friendly_name() == rs.get_friendly_name()
    assert theirs.get_output_size() == rs.get_output_size()
    assert str(theirs.get_output_partial_shape(0)).replace(" ", "") == \
        str(rs.get_output_partial_shape(0))
    assert theirs.get_output_element_type(0).get_type_name() == \
        str(rs.get_output_element_type(0))


def test_generated_inputs_run_through_every_way_in():
    """compiled(), infer_new_request(), a request's infer() and start_async() agree."""
    compiled = irexec.compile_model(CHAIN)
    inputs = make_inputs(compiled.model, {}, 5)
    ways = [compiled(inputs), compiled.infer_new_request(inputs),
            compiled.create_infer_request().infer(inputs)]
    request = compiled.create_infer_request()
    request.start_async(inputs)
    request.wait()
    ways.append(request.results)
    for other in ways[1:]:
        assert all(np.array_equal(ways[0][k], other[k]) for k in ways[0])
