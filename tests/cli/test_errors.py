"""``irexec run`` on broken models and bad inputs: exit 1, one line per problem, no traceback.

Line numbers are found in the files themselves (``line_of``), never copied from irexec's output.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.cli.conftest import line_of, one_error, parse_errors, run_cli

LAYER = {  # a snippet that finds each layer's line in the chain sample
    "data": 'name="data" type="Parameter"',
    "seq_lengths": 'name="seq_lengths" type="Parameter"',
    "to_f32": 'name="to_f32"',
    "reversed_sequences": 'name="reversed_sequences"',
    "last_axis": 'name="last_axis"',
    "flipped": 'name="flipped"',
}


def layer_span(path, name) -> range:
    """The lines of the <layer> element named ``name``: from its start to its </layer>."""
    start = line_of(path, LAYER.get(name, f'name="{name}"'))
    lines = path.read_text().splitlines()
    end = next(i for i in range(start, len(lines) + 1) if "</layer>" in lines[i - 1])
    return range(start, end + 1)


# --- the model file ----------------------------------------------------------------------------

def test_missing_model_file(tmp_path):
    path = tmp_path / "absent.xml"
    m = one_error(run_cli("run", path), path)
    assert m["layer"] is None
    assert "No such file" in m["message"] or "not exist" in m["message"]


def test_model_path_is_a_directory(tmp_path):
    one_error(run_cli("run", tmp_path), tmp_path)


def test_malformed_xml_names_the_line(tmp_path):
    path = tmp_path / "broken.xml"
    path.write_text('<?xml version="1.0"?>\n<net name="x" version="11">\n  <layers>\n'
                    '    <layer id="0" name="a" type="Parameter" version="opset1">\n'
                    '      <data shape="2" element_type="f32">\n'  # never closed
                    '    </layer>\n  </layers>\n</net>\n')
    m = one_error(run_cli("run", path), path, 6)  # the mismatched </layer>
    assert "XML" in m["message"]


def test_empty_file(tmp_path):
    path = tmp_path / "empty.xml"
    path.write_text("")
    one_error(run_cli("run", path), path)


def test_not_an_ir_file(tmp_path):
    path = tmp_path / "html.xml"
    path.write_text("<html><body/></html>\n")
    m = one_error(run_cli("run", path), path, 1)
    assert "<html>" in m["message"]


@pytest.mark.parametrize("version", ["9", "12", "eleven"])
def test_unsupported_ir_version(edited, version):
    path = edited({'version="11"': f'version="{version}"'})
    m = one_error(run_cli("run", path), path, line_of(path, "<net "))
    assert version in m["message"] and "10" in m["message"] and "11" in m["message"]


def test_unknown_op(edited):
    path = edited({'type="Reverse"': 'type="Frobnicate"'})
    one_error(run_cli("run", path), path, line_of(path, LAYER["flipped"]), "flipped",
              "Frobnicate", "'Frobnicate' (opset1) is unknown", "`irexec ops` lists")


def test_unknown_op_version(edited):
    path = edited({'type="Reverse" version="opset1"': 'type="Reverse" version="opset3"'})
    one_error(run_cli("run", path), path, line_of(path, LAYER["flipped"]), "flipped", "Reverse",
              "opset3", "Reverse-1")


@pytest.mark.parametrize("old, new, layer, type_, fragments", [
    ('mode="index"', 'mode="sideways"', "flipped", "Reverse", ("mode", "sideways", "index")),
    ('mode="index"', "", "flipped", "Reverse", ("mode", "required")),
    ('batch_axis="1"', 'batch_axis="one"', "reversed_sequences", "ReverseSequence",
     ("batch_axis", "one")),
    ('destination_type="f32"', 'destination_type="q77"', "to_f32", "Convert",
     ("destination_type", "q77")),
    ('shape="5,4,3" element_type="i32"', 'shape="5,x,3" element_type="i32"', "data", "Parameter",
     ("shape",)),
])
def test_bad_attribute(edited, old, new, layer, type_, fragments):
    path = edited({old: new})
    m = one_error(run_cli("run", path), path, None, layer, type_, *fragments)
    assert int(m["line"]) in layer_span(path, layer)


def test_const_beyond_the_end_of_the_bin(edited):
    path = edited({'offset="0" size="8"': 'offset="4" size="8"'})
    m = one_error(run_cli("run", path), path, None, "last_axis", "Constant", "8 bytes")
    assert int(m["line"]) in layer_span(path, "last_axis")


def test_const_larger_than_its_bin(edited):
    path = edited({}, bin=b"\x00" * 4)
    m = one_error(run_cli("run", path), path, None, "last_axis", "Constant")
    assert int(m["line"]) in layer_span(path, "last_axis")


def test_missing_bin(edited):
    path = edited({})
    path.with_suffix(".bin").unlink()
    m = one_error(run_cli("run", path), path, None, "last_axis", "Constant",
                  str(path.with_suffix(".bin").name))
    assert int(m["line"]) in layer_span(path, "last_axis")


def test_weights_option_points_at_another_bin(edited, tmp_path):
    path = edited({})
    other = tmp_path / "elsewhere.bin"
    path.with_suffix(".bin").rename(other)
    assert run_cli("run", path, "--weights", other).returncode == 0


@pytest.mark.parametrize("axis", [3, -4, 100])
def test_reverse_axis_out_of_range(edited, axis):
    path = edited({}, bin=np.array([axis], np.int64).tobytes())
    one_error(run_cli("run", path), path, line_of(path, LAYER["flipped"]), "flipped", "Reverse",
              str(axis), "[-3, 2]")


@pytest.mark.parametrize("attr, value", [("batch_axis", "3"), ("seq_axis", "-4")])
def test_reverse_sequence_axis_out_of_range(edited, attr, value):
    old = {"batch_axis": 'batch_axis="1"', "seq_axis": 'seq_axis="0"'}[attr]
    path = edited({old: f'{attr}="{value}"'})
    one_error(run_cli("run", path), path, line_of(path, LAYER["reversed_sequences"]),
              "reversed_sequences", "ReverseSequence", attr, value, "[-3, 2]")


def test_declared_dims_disagreeing_with_inference(edited):
    text_old = ('<port id="2" precision="FP32" names="flipped">\n          <dim>5</dim>\n'
                '          <dim>4</dim>')
    path = edited({text_old: text_old.replace("<dim>4</dim>", "<dim>7</dim>")})
    m = one_error(run_cli("run", path), path, None, "flipped", "Reverse", "[5,7,3]", "[5,4,3]")
    assert int(m["line"]) in layer_span(path, "flipped")  # the layer's or the port's line


def test_several_problems_give_one_line_each(edited):
    path = edited({'mode="index"': 'mode="sideways"',
                   'destination_type="f32"': 'destination_type="q77"',
                   '<layer id="4" name="last_axis" type="Const"':
                   '<layer id="4" name="last_axis" type="Konst"'})
    proc = run_cli("run", path)
    assert proc.returncode == 1
    errors = parse_errors(proc)
    assert len(errors) == 3, proc.stderr
    found = {(m["layer"], m["type"]) for m in errors}
    assert found == {("to_f32", "Convert"), ("flipped", "Reverse"), ("last_axis", "Konst")}
    for m in errors:
        assert m["file"] == str(path) and int(m["line"]) in layer_span(path, m["layer"])
    assert proc.stdout == ""


def test_several_inference_problems_give_one_line_each(edited):
    """Reverse reads the Convert directly, so the two broken layers are independent: both are
    reported, each once."""
    path = edited({'batch_axis="1"': 'batch_axis="5"',
                   '<edge from-layer="3" from-port="2" to-layer="5" to-port="0"/>':
                   '<edge from-layer="2" from-port="1" to-layer="5" to-port="0"/>'},
                  bin=np.array([9], np.int64).tobytes())
    proc = run_cli("run", path)
    assert proc.returncode == 1
    errors = parse_errors(proc)
    assert [(m["layer"], int(m["line"])) for m in errors] == [
        ("reversed_sequences", line_of(path, LAYER["reversed_sequences"])),
        ("flipped", line_of(path, LAYER["flipped"]))]
    assert "batch_axis 5" in errors[0]["message"] and "axis 9" in errors[1]["message"]


def test_a_cycle_and_an_unrelated_error_give_one_line_each(edited):
    """The cycle does not stop the reader: the Const's weights are checked too."""
    path = edited({'<edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>':
                   '<edge from-layer="5" from-port="2" to-layer="2" to-port="0"/>',
                   'offset="0" size="8"': 'offset="8" size="8"'})
    proc = run_cli("run", path)
    assert proc.returncode == 1
    errors = parse_errors(proc)
    assert len(errors) == 2, proc.stderr
    cycle = next(m for m in errors if "cycle" in m["message"])
    assert cycle["layer"] in ("to_f32", "reversed_sequences", "flipped")
    assert all(f"'{n}'" in cycle["message"] for n in ("to_f32", "reversed_sequences", "flipped"))
    assert int(cycle["line"]) == line_of(path, LAYER[cycle["layer"]])
    weights = next(m for m in errors if m is not cycle)
    assert (weights["layer"], weights["type"]) == ("last_axis", "Constant")
    assert int(weights["line"]) == line_of(path, 'offset="8" size="8"')
    assert proc.stdout == ""


# --- bad --input -------------------------------------------------------------------------------

@pytest.fixture
def npy(tmp_path):
    def save(name, array):
        path = tmp_path / f"{name}.npy"
        np.save(path, np.asarray(array))
        return path

    return save


def test_input_with_an_unknown_name(chain, npy):
    m = one_error(run_cli("run", chain, "--input", f"nope={npy('x', [1])}"), chain, None, None,
                  None, "'nope'", "data", "seq_lengths")
    assert m["layer"] is None


def test_input_file_missing(chain, tmp_path):
    path = tmp_path / "absent.npy"
    m = one_error(run_cli("run", chain, "--input", f"data={path}"))
    assert str(path) in m.string and "data" in m["message"]


@pytest.mark.parametrize("content", [b"hello, world\n", b"", b"\x93NUMPY\x01\x00garbage"])
def test_input_file_that_is_not_a_npy(chain, tmp_path, content):
    path = tmp_path / "bad.npy"
    path.write_bytes(content)
    m = one_error(run_cli("run", chain, "--input", f"data={path}"))
    assert str(path) in m.string


def test_input_file_that_is_an_npz_of_several_arrays(chain, tmp_path):
    path = tmp_path / "several.npz"
    np.savez(path, a=np.zeros(3), b=np.zeros(3))
    m = one_error(run_cli("run", chain, "--input", f"data={path}"))
    assert "archive of 2 arrays" in m["message"] and ".npy" in m["message"]


def test_input_file_that_is_an_npz_of_one_array_is_that_array(chain, tmp_path):
    """An .npz holding one array is not "several arrays": its one array is the input."""
    data = np.arange(60, dtype=np.int32).reshape(5, 4, 3)
    np.savez(tmp_path / "one.npz", anything=data)
    np.save(tmp_path / "one.npy", data)
    by_npz = run_cli("run", chain, "--input", f"data={tmp_path / 'one.npz'}")
    by_npy = run_cli("run", chain, "--input", f"data={tmp_path / 'one.npy'}")
    assert by_npz.returncode == 0, by_npz.stderr
    assert by_npz.stdout == by_npy.stdout
    np.savez(tmp_path / "wrong.npz", anything=np.zeros(3))
    m = one_error(run_cli("run", chain, "--input", f"data={tmp_path / 'wrong.npz'}"))
    assert "several arrays" not in m["message"] and "expects element type i32" in m["message"]


def test_input_file_holding_objects_is_refused(chain, tmp_path):
    path = tmp_path / "objects.npy"
    np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    m = one_error(run_cli("run", chain, "--input", f"data={path}"))
    assert "pickle" not in m.string  # never advise loading untrusted pickles


def test_input_of_the_wrong_element_type(chain, npy):
    path = npy("d64", np.zeros((5, 4, 3), np.int64))
    one_error(run_cli("run", chain, "--input", f"data={path}"), chain,
              line_of(chain, LAYER["data"]), "data", "Parameter", "i32", "i64")


def test_input_of_the_wrong_shape(chain, npy):
    path = npy("d", np.zeros((4, 5, 3), np.int32))
    one_error(run_cli("run", chain, "--input", f"data={path}"), chain,
              line_of(chain, LAYER["data"]), "data", "Parameter", "[5,4,3]", "[4,5,3]")


def test_lengths_of_the_wrong_shape(chain, npy):
    path = npy("n", np.ones(5, np.int64))
    one_error(run_cli("run", chain, "--input", f"seq_lengths={path}"), chain,
              line_of(chain, LAYER["seq_lengths"]), "seq_lengths", "Parameter", "[4]")


@pytest.mark.parametrize("spec", ["data", "=x.npy", "data="])
def test_input_not_in_name_equals_file_form(chain, spec):
    proc = run_cli("run", chain, "--input", spec)
    assert proc.returncode == 2  # a usage error, like argparse's own
    assert "NAME=FILE.npy" in proc.stderr and "Traceback" not in proc.stderr


def test_the_same_input_given_twice(chain, npy, edited):
    model = edited({'names="data"': 'names="pixels"'})
    d = npy("d", np.zeros((5, 4, 3), np.int32))
    for second in ("data", "pixels"):
        m = one_error(run_cli("run", model, "--input", f"data={d}", "--input", f"{second}={d}"))
        assert "twice" in m["message"] and "data" in m["message"]


@pytest.mark.parametrize("lengths, index, value", [([1, 6, 2, 3], 1, "6"),
                                                   ([1, 2, 3, -1], 3, "-1")])
def test_runtime_seq_lengths_out_of_range(chain, npy, lengths, index, value):
    path = npy("n", np.array(lengths, np.int64))
    proc = run_cli("run", chain, "--input", f"seq_lengths={path}")
    one_error(proc, chain, line_of(chain, LAYER["reversed_sequences"]), "reversed_sequences",
              "ReverseSequence", f"seq_lengths[{index}]", value)
    assert "outputs" not in proc.stdout


def test_runtime_float_lengths_nan(edited, npy):
    path = edited({'<data shape="4" element_type="i64"/>': '<data shape="4" element_type="f32"/>',
                   'precision="I64" names="seq_lengths"': 'precision="FP32" names="seq_lengths"'})
    lengths = npy("n", np.array([1, np.nan, 2, 3], np.float32))
    one_error(run_cli("run", path, "--input", f"seq_lengths={lengths}"), path,
              line_of(path, LAYER["reversed_sequences"]), "reversed_sequences", "ReverseSequence",
              "seq_lengths[1]", "nan")


def test_lines_past_65535_are_exact(tmp_path):
    """libxml2 keeps element lines in 16 bits; in a file of more lines than that, a layer's
    diagnostic still names the line and column of its start tag (found from the bytes)."""
    from irexec.builder import ModelBuilder

    import irexec
    b = ModelBuilder("long")
    x = b.parameter("x", "f32", [2, 3])
    for i in range(5000):
        x = b.op("Relu", x, name=f"r{i}")
    b.result(x, "out")
    path = tmp_path / "long.xml"
    irexec.save_model(b.build(), path)
    text = path.read_text()
    assert text.count("\n") > 70_000
    path.write_text(text.replace('name="r4990" type="Relu"', 'name="r4990" type="Relux"'))
    expected = line_of(path, 'name="r4990"')
    assert expected > 65_535
    proc = run_cli("validate", path)
    assert proc.returncode == 1
    found = [line for line in (proc.stdout + proc.stderr).splitlines() if "IR103" in line]
    assert len(found) == 1 and found[0].startswith(f"{path}:{expected}:5: IR103"), found
