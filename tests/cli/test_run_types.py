"""``irexec run`` with inputs and outputs of every element type: what it shows, and files that
round-trip (the file convention of irexec/io/arrays.py: numpy's own dtypes as they are, raw bits
for bf16/f8, codes for f4e2m1/nf4, values for the sub-byte integers, unicode for strings)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import irexec
from irexec.io.arrays import from_file, to_file
from irexec.ir import element_type as et_table
from irexec.builder import ModelBuilder
from tests.cli.conftest import one_error
from tests.cli.inproc import irexec_cli
from tests.ops.support import TYPE_NAMES, random_values

# What each type is stored as in a .npy file.
STORED = {"bf16": np.uint16, "f8e4m3": np.uint8, "f8e5m2": np.uint8, "f8e8m0": np.uint8,
          "f4e2m1": np.uint8, "nf4": np.uint8, "i4": np.int8, "u1": np.uint8, "u2": np.uint8,
          "u3": np.uint8, "u4": np.uint8, "u6": np.uint8}


def _flip_model(tmp_path, type_name):
    b = ModelBuilder(f"flip_{type_name}")
    x = b.parameter("x", type_name, [2, 3])
    b.result(b.op("Reverse", x, b.constant(np.array([1], np.int64)), mode="index", name="y"),
             "out")
    path = tmp_path / f"{type_name}.xml"
    irexec.save_model(b.build(), path)
    return path


@pytest.mark.parametrize("type_name", TYPE_NAMES)
def test_file_form_round_trips(type_name):
    et = et_table.from_name(type_name)
    values = random_values(type_name, (4, 5), np.random.default_rng(3))
    stored = to_file(values)
    if type_name == "string":
        assert stored.dtype.kind == "U"
    else:
        assert stored.dtype == np.dtype(STORED.get(type_name, values.dtype))
    back = from_file(stored, et)
    if type_name == "string":
        assert back.tolist() == values.tolist()
    else:
        assert back.dtype == values.dtype and back.tobytes() == values.tobytes()


@pytest.mark.parametrize("type_name", TYPE_NAMES)
def test_run_saves_and_reads_back_every_type(tmp_path, type_name):
    model = _flip_model(tmp_path, type_name)
    code, out, err = irexec_cli("run", model, "-o", tmp_path / "first.npz")
    assert (code, err) == (0, "")
    assert f"  {type_name}  " in out  # the outputs table names the element type
    with np.load(tmp_path / "first.npz", allow_pickle=False) as saved:
        first = saved["y"]
    # feed the saved output back in: it is flipped back to the generated input
    np.save(tmp_path / "x.npy", first, allow_pickle=False)
    code, out, err = irexec_cli("run", model, "-i", f"x={tmp_path / 'x.npy'}",
                                "-o", tmp_path / "second.npz")
    assert (code, err) == (0, "")
    with np.load(tmp_path / "second.npz", allow_pickle=False) as saved:
        second = saved["y"]
    assert second.dtype == first.dtype
    np.testing.assert_array_equal(second, first[:, ::-1])
    if type_name == "string":
        return
    # and the same values through the Python API, in irexec's in-memory form
    compiled = irexec.compile_model(model)
    et = et_table.from_name(type_name)
    (api_out,) = compiled({"x": from_file(first, et)}).values()
    assert to_file(api_out).tobytes() == second.tobytes()


@pytest.mark.parametrize("type_name", ["bf16", "f8e4m3", "f8e8m0", "f4e2m1"])
def test_ml_dtypes_arrays_saved_by_numpy_are_read_as_raw_bits(tmp_path, type_name):
    """numpy.save writes an ml_dtypes array as raw bytes (|V1, |V2); run reads it back.
    (float8_e5m2 is saved as '<f1', which numpy itself cannot load: give its raw bits.)"""
    et = et_table.from_name(type_name)
    values = random_values(type_name, (2, 3), np.random.default_rng(0))
    np.save(tmp_path / "x.npy", values, allow_pickle=False)
    assert np.load(tmp_path / "x.npy").dtype.kind == "V"
    code, out, err = irexec_cli("run", _flip_model(tmp_path, type_name),
                                "-i", f"x={tmp_path / 'x.npy'}", "-o", tmp_path / "out.npz")
    assert (code, err) == (0, "")
    with np.load(tmp_path / "out.npz", allow_pickle=False) as saved:
        y = from_file(saved["y"], et)
    assert y.tobytes() == np.ascontiguousarray(values[:, ::-1]).tobytes()


@pytest.mark.parametrize("type_name, stored, bad", [
    ("i4", np.int8, 8), ("i4", np.int8, -9), ("u1", np.uint8, 2), ("u3", np.uint8, 8),
    ("u6", np.uint8, 64), ("nf4", np.uint8, 16), ("f4e2m1", np.uint8, 16), ("u2", np.uint8, 4)])
def test_values_that_do_not_fit_are_refused_not_wrapped(tmp_path, type_name, stored, bad):
    np.save(tmp_path / "x.npy", np.array([[0, 1, bad], [0, 0, 0]], stored))
    model = _flip_model(tmp_path, type_name)
    proc_code, out, err = irexec_cli("run", model, "-i", f"x={tmp_path / 'x.npy'}")
    assert proc_code == 1 and err.startswith("error: ") and str(bad) in err
    assert type_name in err and err.count("\n") == 1


def test_wrong_dtype_names_the_stored_form(tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((2, 3), np.float32))
    code, out, err = irexec_cli("run", _flip_model(tmp_path, "f8e4m3"),
                                "-i", f"x={tmp_path / 'x.npy'}")
    assert code == 1 and "f8e4m3" in err and "float32" in err


def test_api_takes_codes_for_u3_u6_nf4_and_ml_dtypes_arrays_for_the_rest(tmp_path):
    compiled = irexec.compile_model(_flip_model(tmp_path, "nf4"))
    codes = np.array([[0, 7, 15], [1, 2, 3]], np.uint8)
    (y,) = compiled({"x": codes}).values()
    assert y.dtype == et_table.from_name("nf4").dtype
    assert y.view(np.uint8).tolist() == [[15, 7, 0], [3, 2, 1]]
    with pytest.raises(irexec.IRError) as e:
        compiled({"x": np.full((2, 3), 16, np.uint8)})
    assert e.value.code == "IR603" and "0 to 15" in str(e.value)
    compiled = irexec.compile_model(_flip_model(tmp_path, "i4"))
    with pytest.raises(irexec.IRError) as e:  # irexec's own check is strict
        compiled.check_input("x", np.zeros((2, 3), np.int8))
    assert e.value.code == "IR603" and "ml_dtypes.int4" in str(e.value)
    # a call converts numbers to the input's type, as OpenVINO's API (whose i4 dtype is int8)
    (y,) = compiled({"x": np.array([[-8, 0, 7], [1, 2, 3]], np.int8)}).values()
    assert y.astype(np.int8).tolist() == [[7, 0, -8], [3, 2, 1]]
    (y,) = compiled({"x": np.array([[-8, 0, 7], [1, 2, 3]], np.int8).astype(ml_dtypes.int4)}).values()
    assert y.astype(np.int8).tolist() == [[7, 0, -8], [3, 2, 1]]


def test_cli_error_for_a_bad_value_is_one_line(tmp_path):
    np.save(tmp_path / "x.npy", np.full((2, 3), 99, np.uint8))
    model = _flip_model(tmp_path, "u4")
    from tests.cli.conftest import run_cli
    proc = run_cli("run", model, "-i", f"x={tmp_path / 'x.npy'}")
    one_error(proc, None, None, None, None, "99", "u4")
