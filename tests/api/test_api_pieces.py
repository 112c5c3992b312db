"""The pieces of OpenVINO's API one at a time: shapes and types against OpenVINO's answers
(or the literal answers where it is not installed), f16 compression against the file OpenVINO
writes, clone, request and queue errors, properties."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder
from irexec.ir import element_type as et_table

SHAPES = {  # text: (printed, rank or None, static, min shape, max shape or None)
    "?,3,224,224": ("[?,3,224,224]", 4, False, [0, 3, 224, 224], None),
    "[1,3,224,224]": ("[1,3,224,224]", 4, True, [1, 3, 224, 224], [1, 3, 224, 224]),
    "1..8,3": ("[1..8,3]", 2, False, [1, 3], [8, 3]),
    "-1, 2": ("[?,2]", 2, False, [0, 2], None),
    "...": ("[...]", None, False, None, None),
    "": ("[]", 0, True, [], []),
    "..5,3..": ("[..5,3..]", 2, False, [0, 3], None),
}


@pytest.mark.parametrize("text", sorted(SHAPES))
def test_partial_shape_text(text):
    printed, rank, static, low, high = SHAPES[text]
    shape = irexec.PartialShape(text)
    assert str(shape) == printed and shape.is_static == static and shape.is_dynamic != static
    assert (shape.rank.get_length() if rank is not None else None) == rank
    if low is not None:
        assert list(shape.get_min_shape()) == low
    if high is not None:
        assert list(shape.get_max_shape()) == high
    try:
        ov = __import__("openvino")
    except ImportError:
        return
    theirs = ov.PartialShape(text)
    assert str(theirs) == printed and theirs.is_static == static
    if low is not None:
        assert list(theirs.get_min_shape()) == low
        assert list(shape.get_max_shape()) == list(theirs.get_max_shape())


def test_dimension_forms_and_order():
    d = irexec.Dimension
    assert [str(x) for x in (d(), d(5), d(-1), d(1, 8), d(1, -1), d("2..6"))] == \
        ["?", "5", "?", "1..8", "1..", "2..6"]
    assert d(2, 4).refines(d(1, 8)) and d(1, 8).relaxes(d(2, 4)) and not d(1, 8).refines(d(2, 4))
    assert d(3) == 3 and d(1, 8).get_max_length() == 8 and d().get_max_length() == -1
    shape = irexec.PartialShape([1, 2])
    shape[0] = -1
    assert str(shape) == "[?,2]"
    port_shape = irexec.read_model("samples/reverse_mask.xml").input(0)
    copy = port_shape.get_partial_shape()
    copy[0] = 7  # a copy: the model keeps its shape
    assert str(port_shape.get_partial_shape()) == "[2,3,4]"


OV_TYPES = [et.name for et in et_table.SUPPORTED if et.name not in ("u3", "u6")]


@pytest.mark.parametrize("name", OV_TYPES)
def test_type_answers_as_openvinos(name):
    ours = getattr(irexec.Type, name)
    assert irexec.Type(name) is ours and ours.get_type_name() == name
    ov = pytest.importorskip("openvino")
    theirs = getattr(ov.Type, name)
    assert ours.get_size() == theirs.get_size() and ours.bitwidth == theirs.bitwidth
    assert ours.is_real() == theirs.is_real() and ours.is_signed() == theirs.is_signed()
    assert ours.is_integral_number() == theirs.is_integral_number()
    assert ours.is_quantized() == theirs.is_quantized()
    assert ours.integral == theirs.integral and ours.real == theirs.real


def test_flags_read_both_ways():
    f32 = irexec.Type.f32
    assert f32.is_real and f32.is_real() and not irexec.Type.i8.is_real
    assert (f32.is_real == True) and (irexec.Type.i8.is_real == False)  # noqa: E712


def _with_constants():
    b = ModelBuilder("consts")
    x = b.parameter("x", "f32", [4])
    y = b.op("Add", x, b.constant(np.array([0.1, 1e6, -3.5, 1e-9], np.float32), name="mixed"),
             name="add1")
    y = b.op("Multiply", y, b.constant(np.full(4, 1e7, np.float32), name="huge"), name="mul")
    y = b.op("Add", y, b.constant(np.array([1, 2, 3, 4], np.float32), name="plain"), name="add2")
    y.names = ["y"]
    z = b.op("Convert", y, destination_type="f64", name="wide")
    z = b.op("Add", z, b.constant(np.array([0.5, 0.25, 2.0, 8.0]), name="double"), name="add3")
    z.names = ["out"]
    b.result(y, "y/sink")
    b.result(z, "out/sink")
    return b.build()


def _layers(xml):
    import xml.etree.ElementTree as ET

    root = ET.parse(xml).getroot()
    out = {}
    for layer in root.iter("layer"):
        data = layer.find("data")
        out[layer.get("name")] = (layer.get("type"), None if data is None else
                                  data.get("element_type") or data.get("destination_type"))
    return out


def test_compress_to_fp16_writes_what_openvino_writes(tmp_path):
    model = _with_constants()
    irexec.save_model(model, tmp_path / "ours.xml", compress_to_fp16=True)
    layers = _layers(tmp_path / "ours.xml")
    assert layers["mixed_compressed"] == ("Const", "f16") and layers["mixed"] == ("Convert", "f32")
    assert layers["huge"] == ("Const", "f32")  # every value beyond f16: kept
    assert layers["double_compressed"] == ("Const", "f16") and layers["double"] == ("Convert", "f64")
    again = irexec.read_model(tmp_path / "ours.xml")
    convert = next(n for n in again.nodes if n.name == "mixed")
    assert convert.has_rt_info("decompression")
    x = np.array([1, 2, 3, 4], np.float32)
    mixed = np.array([0.1, 65504.0, -3.5, 0.0], np.float32).astype(np.float16).astype(np.float32)
    want = (x + mixed) * np.float32(1e7) + np.float32([1, 2, 3, 4])  # f16 values, f32 math
    got = irexec.compile_model(again)(x)
    np.testing.assert_array_equal(got["y"], want)
    np.testing.assert_array_equal(got["out"], want.astype(np.float64) + [0.5, 0.25, 2.0, 8.0])
    assert [n.type for n in model.nodes].count("Convert") == 1  # the model itself unchanged
    ov = pytest.importorskip("openvino")
    irexec.save_model(model, tmp_path / "plain.xml")  # irexec's default: as it is
    core = ov.Core()
    ov.save_model(core.read_model(str(tmp_path / "plain.xml")), str(tmp_path / "theirs.xml"))
    assert all(t != "Convert" or n == "wide" for n, (t, _) in _layers(tmp_path / "plain.xml")
               .items())  # nothing compressed without asking
    assert _layers(tmp_path / "theirs.xml") == layers
    theirs = core.compile_model(str(tmp_path / "theirs.xml"), "CPU",
                                {"INFERENCE_PRECISION_HINT": "f32"})(x)
    # the same model read from the same weights; OpenVINO's CPU folds the constants of
    # (x + a) * b + c into x * b + (a * b + c), a rounding apart
    np.testing.assert_allclose(got["y"], theirs["y"], rtol=1e-6)


def test_clone_of_a_deep_model_is_independent():
    b = ModelBuilder("deep")
    y = b.parameter("x", "f32", [2])
    for i in range(3000):
        y = b.op("Relu", y, name=f"r{i}")
    b.result(y)
    model = b.build()
    twin = model.clone()
    twin.reshape([5])
    assert str(model.input(0).get_partial_shape()) == "[2]"
    assert str(twin.output(0).get_partial_shape()) == "[5]"
    assert irexec.compile_model(twin)(np.full(5, -1, np.float32))[0].tolist() == [0] * 5


def _one_relu():
    b = ModelBuilder()
    b.result(b.op("Relu", b.parameter("x", "f32", [2]), name="y"))
    return irexec.compile_model(b.build())


def test_request_wait_for_times_out_and_errors_reach_wait():
    compiled = _one_relu()
    request = compiled.create_infer_request()
    gate = threading.Event()
    original = type(compiled)._infer

    def slow(self, *args, **kwargs):
        gate.wait(10)
        return original(self, *args, **kwargs)

    type(compiled)._infer = slow
    try:
        request.start_async(np.ones(2, np.float32))
        assert request.wait_for(1) is False
        with pytest.raises(RuntimeError, match="busy"):
            request.infer(np.ones(2, np.float32))
        gate.set()
        assert request.wait_for(-1) is True
    finally:
        type(compiled)._infer = original
    assert request.results[0].tolist() == [1, 1]


def test_queue_raises_a_runs_error_from_wait_all_and_stays_usable():
    compiled = _one_relu()
    queue = irexec.AsyncInferQueue(compiled, 2)
    seen = []
    queue.set_callback(lambda request, userdata: seen.append(userdata))

    def broken(self, *args, **kwargs):
        raise irexec.IRError.make("IR605", "injected")

    original = type(compiled)._infer
    type(compiled)._infer = broken
    try:
        queue.start_async(np.ones(2, np.float32), "bad")
        with pytest.raises(irexec.IRError, match="injected"):
            queue.wait_all()
    finally:
        type(compiled)._infer = original
    for i in range(4):
        queue.start_async(np.full(2, i, np.float32), i)
    queue.wait_all()
    assert sorted(seen) == [0, 1, 2, 3] and queue.is_ready()


def test_properties_set_on_the_core_are_defaults_and_read_only_ones_refuse():
    import irexec.properties as props
    import irexec.properties.hint as hints

    core = irexec.Core()
    core.set_property("CPU", {hints.performance_mode: hints.PerformanceMode.THROUGHPUT})
    compiled = core.compile_model("samples/reverse_mask.xml", "CPU",
                                  dict([props.num_streams(2)]))
    assert compiled.get_property("PERFORMANCE_HINT") == hints.PerformanceMode.THROUGHPUT
    assert compiled.get_property(props.num_streams()) == 2
    assert compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS") == 2
    assert core.get_property("CPU", "FULL_DEVICE_NAME").startswith("irexec")
    assert "PERF_COUNT" in core.get_property("CPU", props.supported_properties())
    with pytest.raises(RuntimeError, match="read-only"):
        compiled.set_property({"OPTIMAL_NUMBER_OF_INFER_REQUESTS": 4})
    with pytest.raises(RuntimeError):
        compiled.get_property("NO_SUCH_PROPERTY")
    with pytest.raises(RuntimeError, match="not available"):
        core.get_property("GPU", "FULL_DEVICE_NAME")
    precise = irexec.compile_model("samples/reverse_mask.xml", "CPU",
                                   dict([hints.inference_precision(irexec.Type.f64)]))
    assert precise.precision == "f64"


def test_get_attributes_gives_plain_values_as_openvino():
    model = irexec.read_model("samples/reverse_sequence.xml")
    by_type = {n.get_type_name(): n.get_attributes() for n in model.nodes}
    assert by_type["Parameter"] == {"shape": [4, 10, 100, 200], "element_type": "f32"}
    assert by_type["Constant"] == {"element_type": "i32", "shape": [4]}
    assert by_type["ReverseSequence"] == {"batch_axis": 0, "seq_axis": 1}
    model.reshape({"data": "?,10,100,200"})
    assert model.get_parameters()[0].get_attributes()["shape"] == [-1, 10, 100, 200]
    ov = pytest.importorskip("openvino")
    theirs = ov.Core().read_model("samples/reverse_sequence.xml")
    for node in theirs.get_ordered_ops():
        if node.get_type_name() in ("Parameter", "ReverseSequence"):
            assert node.get_attributes() == by_type[node.get_type_name()]


def test_reset_state_starts_again_from_readvalues_init_subgraph(tmp_path):
    b = ModelBuilder("init_subgraph")
    x = b.parameter("x", "f32", [2])
    init = b.op("Multiply", x, b.constant(np.float32(3.0)), name="init")
    read = b.op("ReadValue", init, version="opset6", variable_id="v", variable_type="f32",
                variable_shape=[2], name="read")
    total = b.op("Add", read, x, name="total")
    b.op("Assign", total, version="opset6", variable_id="v", name="write")
    b.result(total)
    irexec.save_model(b.build(), tmp_path / "m.xml")

    def script(ov):
        request = ov.compile_model(str(tmp_path / "m.xml"), "CPU",
                                   {"INFERENCE_PRECISION_HINT": "f32"}).create_infer_request()
        one, two = np.ones(2, np.float32), np.full(2, 2.0, np.float32)
        runs = [request.infer({0: one})[0].copy(), request.infer({0: one})[0].copy()]
        (state,) = request.query_state()
        state.reset()
        after_reset = state.state.data.copy()
        runs.append(request.infer({0: two})[0].copy())
        return runs, after_reset

    runs, after_reset = script(irexec)
    assert [r.tolist() for r in runs] == [[4, 4], [5, 5], [8, 8]]  # 3x + x, then + x, then 3x + x
    assert after_reset.tolist() == [0, 0]  # no value until the next run: read as zeros
    ov = pytest.importorskip("openvino")
    theirs, theirs_after = script(ov)
    assert [r.tolist() for r in theirs] == [r.tolist() for r in runs]
    assert theirs_after.tolist() == after_reset.tolist()


def test_a_list_of_values_for_a_one_input_model_reads_as_openvinos():
    # One number alone in a list is the list of inputs (a scalar for a rank-0 input); a longer
    # list of numbers is the one input's value.
    from irexec import opset13 as ops
    for shape, given, expected in [([], [np.float32(1.5)], np.float32(1.5)),
                                   ([3], [1.0, -2.0, 3.0], np.float32([1.0, 0.0, 3.0])),
                                   ([1], [2.5], np.float32([2.5]))]:
        x = ops.parameter(shape, np.float32, name="x")
        compiled = irexec.compile_model(irexec.Model([ops.relu(x)], [x]))
        out = compiled(given)[0]
        assert out.shape == tuple(shape)
        np.testing.assert_array_equal(out, expected)
