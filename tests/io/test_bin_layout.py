"""The .bin layout of every element type: OpenVINO's own bytes (measured on 2026.4.1, recorded in
the facts) decode to the right values, and every type round-trips through the writer and reader.
The bytes OpenVINO's serializer writes for the same values are compared in
tests/conformance/test_openvino_types.py."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
import irexec.kernels.convert
from irexec.io import bin_layout
from irexec.ir import element_type as et_table
from irexec.builder import ModelBuilder
from tests.ops.support import TYPE_NAMES, random_values

from tests.helpers_ir import write_ir

ET = et_table.from_name


def codes(type_name: str, array: np.ndarray) -> list[int]:
    return et_table.to_codes(ET(type_name), array).tolist()


def decode(type_name: str, raw: bytes, count: int) -> np.ndarray:
    return bin_layout.decode(ET(type_name), raw, 0, len(raw), (count,))


# --- bytes OpenVINO wrote, and what they mean (facts: element types table, exp) -----------------

@pytest.mark.parametrize("type_name, raw, expected", [
    ("u1", "b1c0", [1, 0, 1, 1, 0, 0, 0, 1, 1, 1]),  # first element in the most significant bit
    ("u2", "e4", [0, 1, 2, 3]),  # first element in the lowest two bits
    ("u4", "21f300", [1, 2, 3, 15, 0]),  # first element in the low nibble
    ("u3", "6c6c1e", [1, 2, 3, 4, 5, 6, 7, 0]),
    ("u3", "c00080", [7]),
    ("u3", "000000c00080", [0, 0, 0, 0, 0, 0, 0, 0, 7]),
    ("u6", "f000c0", [63]),
    ("u6", "100000", [1]),
    ("u6", "000040", [16]),
    ("u6", "000000f000c0", [0, 0, 0, 0, 63]),
])
def test_openvinos_bytes_of_unsigned_types(type_name, raw, expected):
    values = decode(type_name, bytes.fromhex(raw), len(expected))
    assert codes(type_name, values) == expected
    assert bin_layout.encode(ET(type_name), values) == bytes.fromhex(raw)


def test_i4_is_twos_complement_low_nibble_first():
    values = decode("i4", bytes.fromhex("e107"), 3)
    assert values.astype(np.int8).tolist() == [1, -2, 7]
    assert bin_layout.encode(ET("i4"), values) == bytes.fromhex("e107")


@pytest.mark.parametrize("type_name, raw, expected", [
    ("nf4", "f0", [-1.0, 1.0]),  # codes 0 and 15 of the codebook
    ("f4e2m1", "72", [1.0, 6.0]),
    ("f8e4m3", "38c0", [1.0, -2.0]),
    ("f8e5m2", "3c", [1.0]),
    ("f8e8m0", "7f80", [1.0, 2.0]),
    ("bf16", "803f", [1.0]),
    ("f16", "003c", [1.0]),
])
def test_openvinos_bytes_of_float_types(type_name, raw, expected):
    values = decode(type_name, bytes.fromhex(raw), len(expected))
    assert irexec.kernels.convert.convert(values, ET("f64")).tolist() == expected
    assert bin_layout.encode(ET(type_name), values) == bytes.fromhex(raw)


def test_boolean_is_any_nonzero_byte():
    values = decode("boolean", bytes.fromhex("000102ff"), 4)
    assert values.tolist() == [False, True, True, True]
    assert bin_layout.encode(ET("boolean"), values) == bytes.fromhex("00010101")


def test_string_table():
    raw = (np.array([3, 0, 2, 2, 5], "<i4").tobytes() + b"abxyz")  # facts: size 25
    values = decode("string", raw, 3)
    assert values.dtype == object and values.tolist() == ["ab", "", "xyz"]
    assert bin_layout.encode(ET("string"), values) == raw


def test_string_bytes_that_are_not_utf8_survive():
    raw = np.array([2, 0, 2, 3], "<i4").tobytes() + b"\xff\xfeA"
    values = decode("string", raw, 2)
    assert bin_layout.encode(ET("string"), values) == raw


@pytest.mark.parametrize("type_name, count, size", [
    ("u1", 10, 2), ("u2", 5, 2), ("u3", 9, 6), ("u3", 8, 3), ("u3", 1, 3), ("u6", 5, 6),
    ("u6", 4, 3), ("u4", 3, 2), ("i4", 3, 2), ("nf4", 3, 2), ("f4e2m1", 3, 2), ("f8e4m3", 3, 3),
    ("string", 0, 8), ("string", 2, 16)])
def test_sizes_match_what_openvino_writes(type_name, count, size):
    assert bin_layout.min_size(ET(type_name), count) == size


# --- round trips --------------------------------------------------------------------------------

@pytest.mark.parametrize("type_name", TYPE_NAMES)
@pytest.mark.parametrize("count", [0, 1, 2, 3, 7, 8, 9, 31])
def test_encode_decode_round_trip(type_name, count):
    values = random_values(type_name, (count,), np.random.default_rng(count))
    raw = bin_layout.encode(ET(type_name), values)
    back = bin_layout.decode(ET(type_name), raw, 0, len(raw), (count,))
    assert back.dtype == values.dtype
    if type_name == "string":
        assert back.tolist() == values.tolist()
    else:
        assert back.tobytes() == values.tobytes()


@pytest.mark.parametrize("type_name", TYPE_NAMES)
def test_padding_bits_are_zero(type_name):
    et = ET(type_name)
    if not et.is_narrow:
        return
    ones = et_table.from_codes(et, np.full(5, et.max_code, np.uint8))
    raw = bin_layout.encode(et, ones)
    bits = np.unpackbits(np.frombuffer(raw, np.uint8))
    assert int(bits.sum()) == 5 * et.bits  # the set bits are the values', nothing more


@pytest.mark.parametrize("type_name", TYPE_NAMES)
def test_const_of_every_type_through_writer_and_reader(tmp_path, type_name):
    values = random_values(type_name, (3, 5), np.random.default_rng(7))
    b = ModelBuilder("consts")
    b.result(b.op("Reverse", b.constant(values, type_name, name="c"),
                  b.constant(np.array([1], np.int64)), mode="index", name="y"), "out")
    irexec.save_model(b.build(), tmp_path / "m.xml")
    model = irexec.read_model(tmp_path / "m.xml")
    assert model.diagnostics == []
    const = next(n for n in model.nodes if n.name == "c")
    assert const.attrs["element_type"] == ET(type_name)
    out = irexec.compile_model(model)({})["y"]
    expected = values[:, ::-1]
    if type_name == "string":
        assert out.tolist() == expected.tolist()
    else:
        assert out.dtype == values.dtype and out.tobytes() == np.ascontiguousarray(expected).tobytes()


# --- broken payloads ----------------------------------------------------------------------------

def _const_xml(type_name: str, shape: str, size: int) -> str:
    return f"""<?xml version="1.0"?>
<net name="m" version="11">
  <layers>
    <layer id="0" name="c" type="Const" version="opset1">
      <data element_type="{type_name}" shape="{shape}" offset="0" size="{size}"/>
      <output><port id="0" precision="{ET(type_name).precision}"><dim>{shape}</dim></port></output>
    </layer>
    <layer id="1" name="out" type="Result" version="opset1">
      <input><port id="0"><dim>{shape}</dim></port></input>
    </layer>
  </layers>
  <edges><edge from-layer="0" from-port="0" to-layer="1" to-port="0"/></edges>
</net>
"""


def _codes(path, weights=None):
    try:
        irexec.read_model(path, weights)
    except irexec.IRError as e:
        return [d.code for d in e.diagnostics], str(e)
    return [], ""


@pytest.mark.parametrize("count, size", [(1, 1), (9, 4), (9, 5)])
def test_u3_needs_whole_groups_of_three_bytes(tmp_path, count, size):
    """OpenVINO accepts ceil(n * 3 / 8) bytes and reads past them (facts); irexec asks for the
    three-byte groups its layout uses."""
    path = write_ir(tmp_path, _const_xml("u3", str(count), size), bytes(size))
    found, message = _codes(path)
    assert found == ["IR503"] and f"needs {3 * -(-count // 8)} bytes" in message


@pytest.mark.parametrize("table, words", [
    (np.array([3, 0, 1, 2], "<i4").tobytes() + b"ab", "holds 3 strings"),
    (np.array([2, 1, 1, 2], "<i4").tobytes() + b"ab", "start at 0"),
    (np.array([2, 0, 2, 1], "<i4").tobytes() + b"ab", "never decrease"),
    (np.array([2, 0, 1, 9], "<i4").tobytes() + b"ab", "end within"),
    (np.array([2, 0, -1, 2], "<i4").tobytes() + b"ab", "never decrease"),
])
def test_broken_string_tables_are_ir506(tmp_path, table, words):
    path = write_ir(tmp_path, _const_xml("string", "2", len(table)), table)
    found, message = _codes(path)
    assert found == ["IR506"] and words in message


def test_string_table_shorter_than_its_header_is_ir503(tmp_path):
    table = np.array([2, 0, 1], "<i4").tobytes()
    path = write_ir(tmp_path, _const_xml("string", "2", len(table)), table)
    assert _codes(path)[0] == ["IR503"]


def test_larger_string_size_than_used_is_a_warning(tmp_path):
    table = np.array([2, 0, 1, 2], "<i4").tobytes() + b"ab" + bytes(6)
    path = write_ir(tmp_path, _const_xml("string", "2", len(table)), table)
    model = irexec.read_model(path)
    assert [d.code for d in model.diagnostics] == ["IR504"]
    const = next(n for n in model.nodes if n.name == "c")
    assert const.value.tolist() == ["a", "b"]
