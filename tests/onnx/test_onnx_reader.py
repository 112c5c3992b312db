"""Reading ONNX models: the importer, dispatch by suffix and magic, errors, and the ONNX ops."""

import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

import irexec  # noqa: E402
from irexec.ops import registry  # noqa: E402
from tests.onnx.models import chain_inputs, chain_model, reverse_sequence_model  # noqa: E402


def _save(model, path):
    onnx.save(model, str(path))
    return path


def _reference(x, lens, batch_axis, time_axis):
    out = x.copy()
    for i, n in enumerate(lens):
        for j in range(n):
            src = [slice(None)] * x.ndim
            dst = [slice(None)] * x.ndim
            src[batch_axis] = dst[batch_axis] = i
            src[time_axis], dst[time_axis] = n - 1 - j, j
            out[tuple(dst)] = x[tuple(src)]
    return out


def test_reads_into_the_same_model_kind(tmp_path):
    model = irexec.read_model(_save(chain_model(), tmp_path / "m.onnx"))
    assert [n.type for n in model.nodes] == ["Parameter", "Parameter", "ReverseSequence",
                                             "Identity", "Cast", "Result", "Result"]
    rs = model.nodes[2]
    assert rs.version == "onnx13" and rs.op.spec.family == "onnx" and rs.name == "rs"
    assert rs.outputs[0].names == ["y"]
    assert [model.output_name(r) for r in model.results] == ["out_i32", "y"]
    assert str(model.outputs[0].element_type) == "i32"
    assert str(model.outputs[1].partial_shape) == str(model.inputs[0].partial_shape)


def test_runs_like_a_loop_reference(tmp_path):
    compiled = irexec.compile_model(str(_save(chain_model(), tmp_path / "m.onnx")))
    inputs = chain_inputs()
    out = compiled(inputs)
    want = _reference(inputs["x"], inputs["lens"], 0, 1)
    np.testing.assert_array_equal(out["y"], want)
    np.testing.assert_array_equal(out["out_i32"], np.trunc(want).astype(np.int32))


def test_model_proto_and_magic_dispatch(tmp_path):
    proto = chain_model()
    assert irexec.read_model(proto).nodes[2].type == "ReverseSequence"
    odd = _save(proto, tmp_path / "model.bin")  # no .onnx suffix: recognised by its first byte
    assert len(irexec.read_model(odd).results) == 2


def test_initializers_become_constants(tmp_path):
    model = irexec.read_model(reverse_sequence_model([4, 3], lens=[0, 4, 2]))
    const = next(n for n in model.nodes if n.type == "Constant")
    assert const.outputs[0].names == ["lens"] and const.value.tolist() == [0, 4, 2]
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = irexec.compile_model(model)({"x": x})["y"]
    np.testing.assert_array_equal(out, _reference(x, [0, 4, 2], 1, 0))


def test_constant_node(tmp_path):
    nodes = [helper.make_node("Constant", [], ["lens"], name="c",
                              value=helper.make_tensor("v", TensorProto.INT64, [2], [2, 1])),
             helper.make_node("ReverseSequence", ["x", "lens"], ["y"], batch_axis=0, time_axis=1)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.INT8,
                                                                         [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.INT8, [2, 3])])
    model = irexec.read_model(helper.make_model(graph,
                                                opset_imports=[helper.make_opsetid("", 10)]))
    out = irexec.compile_model(model)({"x": np.array([[1, 2, 3], [4, 5, 6]], np.int8)})
    assert out["y"].tolist() == [[2, 1, 3], [4, 5, 6]]


@pytest.mark.parametrize("batch_axis,time_axis", [(1, 0), (0, 1)])
@pytest.mark.parametrize("shape", [[4, 5], [5, 4, 3], [3, 4, 2, 2]])
def test_reverse_sequence_matches_reference(batch_axis, time_axis, shape):
    rng = np.random.default_rng(len(shape) + batch_axis)
    model = reverse_sequence_model(shape, TensorProto.INT32, batch_axis=batch_axis,
                                   time_axis=time_axis)
    x = rng.integers(-100, 100, size=shape).astype(np.int32)
    lens = rng.integers(0, shape[time_axis] + 1, size=shape[batch_axis])
    out = irexec.compile_model(irexec.read_model(model))({"x": x, "lens": lens})["y"]
    np.testing.assert_array_equal(out, _reference(x, lens, batch_axis, time_axis))


def test_default_axes_are_time_major():
    model = irexec.read_model(reverse_sequence_model([3, 2]))
    node = model.nodes[2]
    assert (node.attrs["batch_axis"], node.attrs["time_axis"]) == (1, 0)


@pytest.mark.parametrize("attrs,code,text", [
    ({"batch_axis": 2, "time_axis": 0}, "IR302", "batch_axis is 2"),
    ({"batch_axis": -1, "time_axis": 0}, "IR302", "batch_axis is -1"),
    ({"batch_axis": 1, "time_axis": 1}, "IR311", "must differ"),
])
def test_bad_axes(attrs, code, text):
    with pytest.raises(irexec.IRError) as e:
        irexec.read_model(reverse_sequence_model([3, 3, 3], **attrs))
    assert e.value.code == code and text in str(e.value)
    assert "layer 'rs' (ReverseSequence)" in str(e.value)


def test_int32_lengths_are_an_error(tmp_path):
    path = _save(reverse_sequence_model([3, 2], lens_type=TensorProto.INT32), tmp_path / "m.onnx")
    with pytest.raises(irexec.IRError) as e:
        irexec.read_model(path)
    assert e.value.code == "IR304" and "sequence_lens" in str(e.value)
    assert str(path) in str(e.value)


def test_wrong_number_of_lengths():
    with pytest.raises(irexec.IRError) as e:
        irexec.read_model(reverse_sequence_model([3, 2], batch_size=3))
    assert e.value.code == "IR307"


def test_constant_length_out_of_range_is_found_when_reading():
    with pytest.raises(irexec.IRError) as e:
        irexec.read_model(reverse_sequence_model([3, 2], lens=[1, 4]))
    assert e.value.code == "IR308" and "sequence_lens[1] = 4 is not in [0, 3]" in str(e.value)


@pytest.mark.parametrize("bad", [-1, 5, 2**32 + 2])
def test_length_out_of_range_at_run_time(bad):
    compiled = irexec.compile_model(irexec.read_model(reverse_sequence_model([4, 2])))
    with pytest.raises(irexec.IRError) as e:
        compiled({"x": np.zeros((4, 2), np.float32), "lens": np.array([1, bad], np.int64)})
    assert e.value.code == "IR308" and f"sequence_lens[1] = {bad} is not in [0, 4]" in str(e.value)


def test_zero_length_reverses_nothing():
    compiled = irexec.compile_model(irexec.read_model(reverse_sequence_model([4, 2])))
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    out = compiled({"x": x, "lens": np.array([0, 4], np.int64)})["y"]
    np.testing.assert_array_equal(out[:, 0], x[:, 0])
    np.testing.assert_array_equal(out[:, 1], x[::-1, 1])


def test_bfloat16_needs_opset_28():
    with pytest.raises(irexec.IRError) as e:
        irexec.read_model(reverse_sequence_model([2, 2], TensorProto.BFLOAT16, opset=13))
    assert e.value.code == "IR304"
    model = irexec.read_model(reverse_sequence_model([2, 2], TensorProto.BFLOAT16, opset=28))
    assert model.nodes[2].op.spec.since == 28


def test_opset_before_10_has_no_reverse_sequence():
    with pytest.raises(irexec.IRError) as e:
        irexec.read_model(reverse_sequence_model([2, 2], opset=9))
    assert e.value.code == "IR103" and "onnx9" in str(e.value)


@pytest.mark.parametrize("onnx_type", [TensorProto.FLOAT8E4M3FN, TensorProto.INT4])
def test_unsupported_data_types_say_so(onnx_type):
    with pytest.raises(irexec.IRError) as e:
        irexec.read_model(reverse_sequence_model([2, 2], onnx_type))
    name = TensorProto.DataType.Name(onnx_type)
    assert e.value.code == "IR505" and f"{name} is not supported by irexec yet" in str(e.value)


def test_every_unsupported_op_in_one_error(tmp_path):
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="r1"),
             helper.make_node("Identity", ["a"], ["b"]),
             helper.make_node("Softmax", ["b"], ["c"]),
             helper.make_node("Relu", ["c"], ["y"], name="r2"),
             helper.make_node("Thing", ["y"], ["z"], domain="com.example")]
    graph = helper.make_graph(nodes, "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2])])
    path = _save(helper.make_model(graph), tmp_path / "m.onnx")
    with pytest.raises(irexec.IRError) as e:
        irexec.read_model(path)
    assert len(e.value.diagnostics) == 1
    msg = str(e.value)
    assert e.value.code == "IR103" and msg.startswith(str(path))
    assert "3 ONNX operation types are not supported" in msg
    assert "Relu (nodes 'r1', 'r2')" in msg and "Softmax (node 'Softmax_2')" in msg
    assert "com.example::Thing" in msg


def test_cast_and_identity():
    nodes = [helper.make_node("Identity", ["x"], ["a"]),
             helper.make_node("Cast", ["a"], ["y"], to=TensorProto.UINT8)]
    graph = helper.make_graph(nodes, "g",
                              [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [5])],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, [5])])
    compiled = irexec.compile_model(irexec.read_model(helper.make_model(graph)))
    x = np.array([0.5, 1.9, 255.0, 300.0, -2.0])
    assert compiled({"x": x})["y"].tolist() == [0, 1, 255, 255, 0]  # irexec saturates


@pytest.mark.parametrize("other, code_from, words", [
    (TensorProto.STRING, "IR302", "strings convert only to string"),
    (TensorProto.COMPLEX64, "IR304", "any type but complex64 and complex128")])
def test_cast_to_or_from_string_or_complex_is_a_clear_error(other, code_from, words):
    for src, dst, code in ((TensorProto.FLOAT, other, "IR302"),
                           (other, TensorProto.FLOAT, code_from)):
        graph = helper.make_graph([helper.make_node("Cast", ["x"], ["y"], to=dst)], "g",
                                  [helper.make_tensor_value_info("x", src, [5])],
                                  [helper.make_tensor_value_info("y", dst, [5])])
        with pytest.raises(irexec.IRError) as e:
            irexec.read_model(helper.make_model(graph))
        assert e.value.code == code and words in str(e.value)


def test_string_and_complex_initializers_and_inputs():
    x = np.array([["a", "bé"], ["", "ccc"], ["d", "e"]], dtype=object)
    model = reverse_sequence_model([3, 2], TensorProto.STRING, lens=[3, 2], opset=10)
    got = irexec.compile_model(irexec.read_model(model))({"x": x})["y"]
    assert got.dtype == object and got.tolist() == [["d", "ccc"], ["", "bé"], ["a", "e"]]
    for onnx_type, value in ((TensorProto.STRING, np.array([b"x", "\u00e9".encode()], object)),
                             (TensorProto.COMPLEX128, np.array([1 + 2j, -3j]))):
        graph = helper.make_graph([helper.make_node("Identity", ["c"], ["y"])], "g", [],
                                  [helper.make_tensor_value_info("y", onnx_type, [2])],
                                  [onnx.numpy_helper.from_array(value, "c")])
        got = irexec.compile_model(irexec.read_model(helper.make_model(graph)))({})["y"]
        want = [v.decode() for v in value] if onnx_type == TensorProto.STRING else value.tolist()
        assert got.tolist() == want and all(type(v) is type(w) for v, w in zip(got.tolist(), want))


def test_string_and_complex_cannot_go_into_ir_files(tmp_path):
    model = irexec.read_model(reverse_sequence_model([2, 2], TensorProto.COMPLEX64))
    with pytest.raises(irexec.IRError) as e:
        irexec.save_model(model, tmp_path / "m.xml")
    assert e.value.code == "IR505" and "cannot be written to an IR file" in str(e.value)


def test_onnx_family_is_registered():
    assert "onnx" in registry.families()
    assert registry.lookup("ReverseSequence", "onnx10").spec.family == "onnx"
    assert registry.lookup("ReverseSequence", "opset1").spec.family == "opset"
    assert registry.registered_types("onnx") == ["Cast", "Identity", "ReverseSequence"]


def test_cli_run_onnx(tmp_path):
    path = _save(chain_model(), tmp_path / "m.onnx")
    run = subprocess.run([sys.executable, "-m", "irexec", "run", str(path), "--seed", "3"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "out_i32" in run.stdout and "lens" in run.stdout


def test_cli_run_onnx_unsupported_op_exits_1(tmp_path):
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    path = _save(helper.make_model(graph), tmp_path / "m.onnx")
    run = subprocess.run([sys.executable, "-m", "irexec", "run", str(path)],
                         capture_output=True, text=True)
    assert run.returncode == 1 and "Relu (node 'Relu_0')" in run.stderr
    assert run.stderr.count("\n") == 1


def test_onnx_is_imported_only_for_onnx_files():
    code = ("import sys, irexec; irexec.read_model('samples/convert_reverse_chain.xml'); "
            "print('onnx' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.stdout.strip() == "False", run.stderr
