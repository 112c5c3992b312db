"""Const layers and the .bin file: required attributes, bounds, sizes and how values are stored."""

import ml_dtypes
import numpy as np
import pytest

import irexec
from tests.helpers_ir import (
    const, line_of, net, parameter, read_error, result, the_diagnostic, write_ir)


def _const_model(element_type="i64", shape="2", offset=0, size=16, dims=(2,), extra_layers=()):
    dims = list(dims)
    return net([const(0, "c", element_type, shape, offset, size, dims=dims),
                result(1, "out", dims), *extra_layers],
               [(0, 0, 1, 0)])


@pytest.mark.parametrize("missing", ["element_type", "shape", "offset", "size"])
def test_missing_const_attribute_is_ir301(tmp_path, missing):
    xml = _const_model().replace(f'{missing}="', 'ignored_' + f'{missing}="', 1)
    path = write_ir(tmp_path, xml, bytes(16))
    diag = the_diagnostic(read_error(path), "IR301")
    assert f"'{missing}'" in diag.message
    assert diag.location.layer_name == "c"
    assert diag.location.line == line_of(path, "<data ")


def test_offset_plus_size_beyond_the_bin_is_ir502(tmp_path):
    path = write_ir(tmp_path, _const_model(offset=8, size=16), bytes(20))
    diag = the_diagnostic(read_error(path), "IR502")
    assert "8" in diag.message and "16" in diag.message and "20" in diag.message
    assert diag.location.layer_name == "c"
    assert diag.location.line == line_of(path, "<data ")


def test_const_against_an_empty_bin_is_ir502(tmp_path):
    path = write_ir(tmp_path, _const_model(), b"")
    assert the_diagnostic(read_error(path), "IR502").location.layer_name == "c"


def test_size_smaller_than_the_shape_needs_is_ir503(tmp_path):
    path = write_ir(tmp_path, _const_model(size=15), bytes(16))  # [2] x i64 needs 16 bytes
    diag = the_diagnostic(read_error(path), "IR503")
    assert "15" in diag.message and "16" in diag.message
    assert diag.location.layer_name == "c"
    assert diag.location.line == line_of(path, "<data ")


def test_size_larger_than_needed_is_accepted_with_warning_ir504(tmp_path):
    data = np.array([7, -8, 99], "<i8").tobytes()
    path = write_ir(tmp_path, _const_model(size=24), data)
    model = irexec.read_model(path)
    assert model.nodes[0].value.tolist() == [7, -8]
    assert [d.code for d in model.diagnostics] == ["IR504"]
    diag = model.diagnostics[0]
    assert diag.severity == "warning" and diag.info.name == "weights-larger-than-needed"
    assert "24" in diag.message and "16" in diag.message
    assert diag.location.layer_name == "c"
    assert diag.location.line == line_of(path, "<data ")
    text = path.read_text().splitlines()[diag.location.line - 1]
    assert diag.location.column == text.index("<data ") + 1


@pytest.mark.parametrize("element_type, shape, dims, size", [
    ("i64", "2", (2,), 16), ("u8", "3", (3,), 3), ("f16", "2,2", (2, 2), 8), ("i32", "", (), 4),
    ("boolean", "5", (5,), 5), ("i64", "0", (0,), 0),
])
def test_size_exactly_as_needed_gives_no_warning(tmp_path, element_type, shape, dims, size):
    path = write_ir(tmp_path, _const_model(element_type, shape, size=size, dims=dims), bytes(16))
    assert irexec.read_model(path).diagnostics == []


def test_missing_bin_is_ir501_when_a_const_needs_it(tmp_path):
    path = write_ir(tmp_path, _const_model(), bin=None)
    diag = the_diagnostic(read_error(path), "IR501")
    assert str(tmp_path / "model.bin") in diag.message
    assert diag.location.layer_name == "c"
    assert diag.location.line == line_of(path, "<data ")


def test_model_without_const_needs_no_bin(tmp_path):
    xml = net([parameter(0, "x", "2", dims=[2]), result(1, "out", [2])], [(0, 0, 1, 0)])
    path = write_ir(tmp_path, xml, bin=None)
    assert not (tmp_path / "model.bin").exists()
    model = irexec.read_model(path)
    out = irexec.compile_model(model)({"x": np.array([1, 2], np.float32)})
    assert out["out"].tolist() == [1, 2]


def test_weights_path_given_by_the_caller(tmp_path):
    path = write_ir(tmp_path, _const_model(), bin=None)
    other = tmp_path / "elsewhere.weights"
    other.write_bytes(np.array([5, 6], "<i8").tobytes())
    assert irexec.read_model(path, other).nodes[0].value.tolist() == [5, 6]
    assert irexec.read_model(str(path), str(other)).nodes[0].value.tolist() == [5, 6]


# element type name, little-endian dtype to write the bytes with, the values
VALUES = [
    ("i8", "<i1", [-128, -1, 0, 127]),
    ("i16", "<i2", [-32768, -2, 1, 32767]),
    ("i32", "<i4", [-2**31, -3, 2, 2**31 - 1]),
    ("i64", "<i8", [-2**63, -4, 3, 2**63 - 1]),
    ("u8", "<u1", [0, 1, 128, 255]),
    ("u16", "<u2", [0, 1, 2**15, 2**16 - 1]),
    ("u32", "<u4", [0, 1, 2**31, 2**32 - 1]),
    ("u64", "<u8", [0, 1, 2**63, 2**64 - 1]),
    ("f16", "<f2", [0.5, -2.0, 65504.0, float("-inf")]),
    ("f32", "<f4", [1.5, -0.0, 3.4028234663852886e38, float("inf")]),
    ("f64", "<f8", [1e300, -1e-300, 0.1, -7.25]),
]


@pytest.mark.parametrize("element_type, dtype, values", VALUES, ids=[v[0] for v in VALUES])
def test_const_values_for_each_element_type(tmp_path, element_type, dtype, values):
    data = np.array(values, dtype).tobytes()
    model = irexec.read_model(write_ir(tmp_path, _const_model(element_type, "4", 0, len(data),
                                                              (4,)), data))
    value = model.nodes[0].value
    assert value.dtype == np.dtype(dtype).newbyteorder("=")
    assert value.shape == (4,)
    assert value.tolist() == values


def test_bf16_values_are_little_endian_bfloat16(tmp_path):
    data = bytes([0x80, 0x3F, 0x00, 0xC0])  # 1.0 = 0x3f80, -2.0 = 0xc000
    model = irexec.read_model(write_ir(tmp_path, _const_model("bf16", "2", 0, 4), data))
    value = model.nodes[0].value
    assert value.dtype == np.dtype(ml_dtypes.bfloat16)
    assert value.astype(np.float32).tolist() == [1.0, -2.0]


def test_f16_bytes_are_little_endian_ieee_half(tmp_path):
    data = bytes([0x00, 0x3C, 0x00, 0xC0])  # 1.0 = 0x3c00, -2.0 = 0xc000
    model = irexec.read_model(write_ir(tmp_path, _const_model("f16", "2", 0, 4), data))
    assert model.nodes[0].value.tolist() == [1.0, -2.0]


def test_boolean_bytes_any_nonzero_is_true(tmp_path):
    data = bytes([0x00, 0x01, 0x02, 0xFF])
    model = irexec.read_model(write_ir(tmp_path, _const_model("boolean", "4", 0, 4, (4,)), data))
    value = model.nodes[0].value
    assert value.dtype == np.bool_
    assert value.tolist() == [False, True, True, True]


def test_unaligned_offset(tmp_path):
    data = b"\xaa\xbb\xcc" + np.array([-5, 2**40 + 3], "<i8").tobytes()
    model = irexec.read_model(write_ir(tmp_path, _const_model("i64", "2", 3, 16), data))
    assert model.nodes[0].value.tolist() == [-5, 2**40 + 3]


def test_consts_packed_back_to_back(tmp_path):
    a = np.array([1, 2], "<i8").tobytes()
    b = np.array([3.5], "<f4").tobytes()
    c = bytes([1, 0, 1])
    xml = net([const(0, "a", "i64", "2", 0, 16, dims=[2]),
               const(1, "b", "f32", "1", 16, 4, dims=[1]),
               const(2, "c", "boolean", "3", 20, 3, dims=[3]),
               result(3, "ra", [2]), result(4, "rb", [1]), result(5, "rc", [3])],
              [(0, 0, 3, 0), (1, 0, 4, 0), (2, 0, 5, 0)])
    model = irexec.read_model(write_ir(tmp_path, xml, a + b + c))
    assert [n.value.tolist() for n in model.nodes[:3]] == [[1, 2], [3.5], [True, False, True]]


@pytest.mark.parametrize("shape, dims, expected_shape", [("0", (0,), (0,)),
                                                         ("2,0", (2, 0), (2, 0))])
def test_zero_size_const(tmp_path, shape, dims, expected_shape):
    model = irexec.read_model(write_ir(tmp_path, _const_model("f32", shape, 0, 0, dims),
                                       bytes(4)))
    value = model.nodes[0].value
    assert value.shape == expected_shape and value.size == 0


def test_zero_size_const_at_the_end_of_the_bin(tmp_path):
    model = irexec.read_model(write_ir(tmp_path, _const_model("i32", "0", 8, 0, (0,)),
                                       bytes(8)))
    assert model.nodes[0].value.shape == (0,)


def test_scalar_const(tmp_path):
    model = irexec.read_model(write_ir(tmp_path, _const_model("i32", "", 0, 4, ()),
                                       np.array([-9], "<i4").tobytes()))
    value = model.nodes[0].value
    assert value.shape == () and int(value) == -9


@pytest.mark.parametrize("element_type, dtype", [(v[0], v[1]) for v in VALUES])
def test_numeric_const_is_a_read_only_view_of_the_bin(tmp_path, element_type, dtype):
    data = np.zeros(4, dtype).tobytes()
    model = irexec.read_model(write_ir(tmp_path, _const_model(element_type, "4", 0, len(data),
                                                              (4,)), data))
    value = model.nodes[0].value
    assert not value.flags.writeable
    assert not value.flags.owndata  # a view of the bytes read from the .bin, not a copy
    with pytest.raises(ValueError):
        value[0] = 1


@pytest.mark.parametrize("shape", ["?", "2..3", "...", "-1"])
def test_const_shape_must_be_static(tmp_path, shape):
    path = write_ir(tmp_path, _const_model(shape=shape), bytes(16))
    diag = the_diagnostic(read_error(path), "IR302")
    assert "'shape'" in diag.message and diag.location.layer_name == "c"


def test_const_of_a_type_ir_cannot_hold_is_ir505(tmp_path):
    path = write_ir(tmp_path, _const_model("complex64", "2", 0, 16), bytes(16))
    diag = the_diagnostic(read_error(path), "IR505")
    assert "complex64" in diag.message and diag.location.layer_name == "c"


@pytest.mark.parametrize("attr, text", [("offset", "-1"), ("size", "x"), ("offset", "1.5")])
def test_bad_offset_or_size_is_ir302(tmp_path, attr, text):
    xml = _const_model().replace(f'{attr}="', f'{attr}="{text}" old_{attr}="', 1)
    path = write_ir(tmp_path, xml, bytes(16))
    diag = the_diagnostic(read_error(path), "IR302")
    assert f"'{attr}'" in diag.message and diag.location.layer_name == "c"


def test_unreadable_bin_is_ir501_not_a_crash(tmp_path, monkeypatch):
    # Running as root defeats chmod, so the operating system's refusal is simulated.
    import errno

    from irexec.io import files

    real = files.open_regular

    def refusing(path):
        if str(path).endswith(".bin"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(path)

    monkeypatch.setattr(files, "open_regular", refusing)
    path = write_ir(tmp_path, _const_model(), bytes(16))
    diag = the_diagnostic(read_error(path), "IR501")
    assert "Permission denied" in diag.message and diag.location.layer_name == "c"


def test_inference_opens_the_weights_file_once_and_leaves_it_closed(tmp_path, monkeypatch):
    """Inference reads every small Const a Reverse chain names (its axes): the .bin is opened
    once for all of them (``weights.held_open``), and no descriptor stays open after reading."""
    import os
    from irexec.builder import ModelBuilder
    from irexec.io import files

    b = ModelBuilder("chain")
    x = b.parameter("data", "f32", [2, 3])
    for i in range(40):
        x = b.op("Reverse", x, b.constant(np.array([i % 2], np.int64), name=f"axes_{i}"),
                 mode="index", name=f"reverse_{i}")
    b.result(x, name="out")
    xml = tmp_path / "chain.xml"
    irexec.save_model(b.build(), str(xml))
    opened = []
    real = files.open_regular
    monkeypatch.setattr(files, "open_regular", lambda path: opened.append(os.fspath(path))
                        or real(path))
    before = len(os.listdir("/proc/self/fd"))
    model = irexec.read_model(str(xml))
    assert len(os.listdir("/proc/self/fd")) == before
    assert opened.count(str(tmp_path / "chain.bin")) <= 2  # once to read, once to infer
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    (out,) = irexec.compile_model(model)({"data": data}).values()
    np.testing.assert_array_equal(out, data)  # 40 flips: 20 of each axis
