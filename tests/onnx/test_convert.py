"""``irexec convert model.onnx -o model.xml``: the written IR, run by OpenVINO, gives ONNX
Runtime's outputs on the original model; and irexec reads it back as an OpenVINO-ops model."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

import irexec  # noqa: E402
from irexec.cli.main import main  # noqa: E402
from tests.onnx.models import chain_inputs, chain_model, reverse_sequence_model  # noqa: E402


def _convert(model, tmp_path, name="m"):
    src, dst = tmp_path / f"{name}.onnx", tmp_path / f"{name}.xml"
    onnx.save(model, str(src))
    assert main(["convert", str(src), "-o", str(dst)]) == 0
    return src, dst


def test_converted_ir_uses_openvino_ops(tmp_path, capsys):
    _, xml = _convert(chain_model(), tmp_path)
    assert "wrote" in capsys.readouterr().out
    model = irexec.read_model(xml)
    assert [(n.type, n.version) for n in model.nodes] == [
        ("Parameter", "opset1"), ("Parameter", "opset1"), ("ReverseSequence", "opset1"),
        ("Convert", "opset1"), ("Result", "opset1"), ("Result", "opset1")]
    rs = model.nodes[2]
    assert (rs.attrs["batch_axis"], rs.attrs["seq_axis"]) == (0, 1)
    assert rs.outputs[0].names == ["y", "y_copy"]  # Identity removed, its name kept
    assert [model.output_name(r) for r in model.results] == ["out_i32", "y"]
    inputs = chain_inputs(1)
    want = irexec.compile_model(irexec.read_model(chain_model()))(inputs)
    got = irexec.compile_model(model)(inputs)
    for k in want:
        np.testing.assert_array_equal(got[k], want[k])


def test_constant_lengths_go_to_the_bin(tmp_path):
    _, xml = _convert(reverse_sequence_model([4, 3], lens=[0, 4, 2]), tmp_path)
    assert (tmp_path / "m.bin").stat().st_size == 3 * 8
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = irexec.compile_model(str(xml))({"x": x})["y"]
    want = irexec.compile_model(irexec.read_model(reverse_sequence_model([4, 3],
                                                                         lens=[0, 4, 2])))
    np.testing.assert_array_equal(out, want({"x": x})["y"])


def test_convert_refuses_other_files(tmp_path, capsys):
    assert main(["convert", "samples/convert_reverse_chain.xml", "-o", str(tmp_path / "a.xml")]) \
        == 2
    assert "not an ONNX model" in capsys.readouterr().err


@pytest.mark.parametrize("case", ["chain", "time_major_const", "batch_major_int"])
def test_openvino_on_converted_ir_equals_onnxruntime(tmp_path, case):
    ov = pytest.importorskip("openvino")
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(7)
    if case == "chain":
        model, inputs = chain_model(), chain_inputs(2)
    elif case == "time_major_const":
        model = reverse_sequence_model([5, 3, 2], lens=[5, 1, 3])
        inputs = {"x": rng.standard_normal((5, 3, 2)).astype(np.float32)}
    else:
        model = reverse_sequence_model([3, 6], onnx.TensorProto.INT32, batch_axis=0,
                                       time_axis=1)
        inputs = {"x": rng.integers(-9, 9, (3, 6)).astype(np.int32),
                  "lens": np.array([6, 2, 4], np.int64)}
    src, xml = _convert(model, tmp_path)
    session = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"])
    want = session.run(None, inputs)
    compiled = ov.Core().compile_model(ov.Core().read_model(str(xml)), "CPU")
    result = compiled(inputs)
    got = [result[compiled.output(i)] for i in range(len(compiled.outputs))]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_seeded_inputs_are_the_same_for_the_onnx_model_and_its_conversion(tmp_path):
    """Generated inputs depend on each input's name, type, shape and domain, not on where the model
    came from: the ONNX file and the IR `irexec convert` wrote get the same inputs, so the same
    outputs, from one seed (and another seed gives other inputs)."""
    from irexec.runtime.inputs import make_inputs

    src, xml = _convert(chain_model(), tmp_path)
    for seed in (0, 3):
        from_onnx = make_inputs(irexec.read_model(src), {}, seed)
        from_ir = make_inputs(irexec.read_model(xml), {}, seed)
        assert set(from_onnx) == set(from_ir) == {"x", "lens"}
        for name in from_onnx:
            np.testing.assert_array_equal(from_onnx[name], from_ir[name])
    outs = {}
    for path in (src, xml):
        out = tmp_path / f"{path.suffix[1:]}.npz"
        assert main(["run", str(path), "--seed", "3", "-o", str(out)]) == 0
        with np.load(out) as saved:
            outs[path.suffix] = {k: saved[k] for k in saved.files}
    assert outs[".onnx"].keys() == outs[".xml"].keys()
    for name in outs[".onnx"]:
        np.testing.assert_array_equal(outs[".onnx"][name], outs[".xml"][name])
    other = make_inputs(irexec.read_model(xml), {}, 4)
    assert not np.array_equal(other["x"], make_inputs(irexec.read_model(xml), {}, 3)["x"])
