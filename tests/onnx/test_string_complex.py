"""String and complex data (ONNX models only): input checking, generated inputs, `irexec run`'s
printing and .npz output, and their refusal in IR files."""

import zlib

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto  # noqa: E402

import irexec  # noqa: E402
from irexec.cli.run import checksum, table  # noqa: E402
from irexec.ir import element_type as et_table  # noqa: E402
from irexec.runtime.inputs import make_inputs  # noqa: E402
from tests.cli.conftest import run_cli  # noqa: E402
from tests.onnx.models import reverse_sequence_model  # noqa: E402
from tests.runtime.runtime_irxml import L, ir_xml  # noqa: E402

STRINGS = np.array([["a", "bé"], ["", "ccc"], ["d", "e"]], dtype=object)
LENS = np.array([3, 1], np.int64)


def compiled(onnx_type=TensorProto.STRING):
    return irexec.compile_model(irexec.read_model(reverse_sequence_model([3, 2], onnx_type,
                                                                         opset=10)))


def test_string_input_takes_object_arrays_of_str_and_numpy_unicode():
    model = compiled()
    want = [["d", "bé"], ["", "ccc"], ["a", "e"]]
    assert model({"x": STRINGS, "lens": LENS})["y"].tolist() == want
    got = model({"x": STRINGS.astype(str), "lens": LENS})["y"]
    assert got.dtype == object and got.tolist() == want


@pytest.mark.parametrize("bad", [np.array([[b"a", b"b"]] * 3, dtype=object),
                                 np.array([[1, "b"]] * 3, dtype=object)])
def test_other_object_arrays_are_ir603(bad):
    with pytest.raises(irexec.IRError) as e:
        compiled()({"x": bad, "lens": LENS})
    assert e.value.code == "IR603" and "Python str only" in str(e.value)


def test_string_input_refuses_numbers_and_numbers_refuse_strings():
    with pytest.raises(irexec.IRError) as e:
        compiled()({"x": np.zeros((3, 2), np.float32), "lens": LENS})
    assert e.value.code == "IR603" and "expects element type string" in str(e.value)
    with pytest.raises(irexec.IRError) as e:
        compiled(TensorProto.FLOAT)({"x": STRINGS, "lens": LENS})
    assert e.value.code == "IR603" and "got string" in str(e.value)


@pytest.mark.parametrize("onnx_type, kind", [(TensorProto.STRING, "O"),
                                             (TensorProto.COMPLEX64, "c"),
                                             (TensorProto.COMPLEX128, "c")])
def test_generated_inputs_for_string_and_complex(onnx_type, kind):
    model = irexec.read_model(reverse_sequence_model([3, 2], onnx_type, opset=10))
    made = make_inputs(model, {}, seed=1)
    assert made["x"].dtype.kind == kind and made["x"].shape == (3, 2)
    if kind == "O":
        assert all(type(v) is str for v in made["x"].reshape(-1))
    irexec.compile_model(model)(made)


def test_checksum_of_strings_hashes_utf8_with_lengths():
    a = np.array(["ab", "é"], dtype=object)
    crc = zlib.crc32(b"\x02\x00\x00\x00ab\x02\x00\x00\x00\xc3\xa9")
    assert checksum(a) == f"{crc:08x}"
    assert checksum(np.array(["a", "b"], object)) != checksum(np.array(["ab", ""], object))


def test_table_prints_strings_and_complex():
    lines = table({"s": np.array(["x", "y" * 30], dtype=object),
                   "c": np.array([1 - 2.5j], np.complex64)})
    assert "string" in lines[1] and "['x', 'yyyyyyyyyyyyyyyyyyyy...']" in lines[1]
    assert "complex64" in lines[2] and "[1-2.5j]" in lines[2]


def test_cli_run_prints_strings_and_saves_unicode_npz(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(reverse_sequence_model([3, 2], TensorProto.STRING, opset=10), path)
    x = tmp_path / "x.npy"
    np.save(x, STRINGS.astype(str))
    out = tmp_path / "out.npz"
    proc = run_cli("run", path, "--input", f"x={x}", "--seed", "2", "--output", out)
    assert proc.returncode == 0, proc.stderr
    y_line = next(line for line in proc.stdout.splitlines() if line.strip().startswith("y "))
    assert "string" in y_line and "'bé'" in y_line
    with np.load(out, allow_pickle=False) as saved:
        assert saved["y"].dtype.kind == "U"
        assert saved["y"].shape == (3, 2)  # the lengths are generated: the strings move
        assert sorted(saved["y"].reshape(-1)) == sorted(STRINGS.reshape(-1))
    proc = run_cli("run", path)  # generated strings
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("name, what", [("complex64", "not an OpenVINO element type"),
                                        ("complex128", "not an OpenVINO element type")])
def test_ir_files_refuse_complex(tmp_path, name, what):
    layers = [L(0, "x", "Parameter", {"shape": "2", "element_type": name}, [], [([2], name, None)]),
              L(1, "y", "Result", {}, [[2]], [])]
    path = tmp_path / "m.xml"
    path.write_text(ir_xml(layers, [(0, 0, 1, 0)]))
    with pytest.raises(irexec.IRError) as e:
        irexec.read_model(path)
    assert e.value.code == "IR505" and what in str(e.value)
    assert "complex64" not in str(e.value).split("supported:")[1]


def test_string_parameter_in_ir_runs(tmp_path):
    layers = [L(0, "x", "Parameter", {"shape": "2", "element_type": "string"}, [],
                [([2], "string", None)]),
              L(1, "y", "Result", {}, [[2]], [])]
    path = tmp_path / "m.xml"
    path.write_text(ir_xml(layers, [(0, 0, 1, 0)]))
    out = irexec.compile_model(irexec.read_model(path))({"x": np.array(["a", "\u00e9"])})
    assert list(out.values())[0].tolist() == ["a", "\u00e9"]


def test_table_holds_complex_outside_ir():
    assert [et.name for et in et_table.NOT_IN_IR] == ["complex64", "complex128"]
    assert et_table.from_dtype(object).name == "string"
    assert not et_table.from_name("complex64").is_numeric
