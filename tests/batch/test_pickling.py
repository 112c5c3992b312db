"""Model and CompiledModel pickle as their IR (irexec/pickling.py): the round trip gives a model
that writes the same IR, runs to the same outputs (the state of a stateful model carried alike),
and names the file it was first read from; a damaged payload or changed file is refused."""

from __future__ import annotations

import multiprocessing
import pickle
from pathlib import Path

import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder
from irexec.errors import IRError
from irexec.io.ir_writer import ir_bytes
from irexec.ir import element_type as et_table
from irexec.pickling import ModelSource
from irexec.runtime.inputs import make_inputs

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "tests" / "data" / "subgraphs").glob("*.xml")) + \
    sorted((ROOT / "samples").glob("*.xml"))


def _bits(a: np.ndarray):
    a = np.asarray(a)
    if a.dtype.kind == "O":
        return a.tolist()
    return np.ascontiguousarray(a).view(np.uint8).tobytes(), a.dtype, a.shape


def _same_runs(first, second, model, calls: int = 2) -> None:
    """Each of ``calls`` calls (inputs from seeds 0, 1 ...) gives bit-equal outputs."""
    for seed in range(calls):
        inputs = make_inputs(model, {}, seed)
        a, b = first(inputs), second(inputs)
        assert list(a) == list(b)
        for name in a:
            assert _bits(a[name]) == _bits(b[name]), name


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_read_model_round_trips(path):
    model = irexec.read_model(path)
    again = pickle.loads(pickle.dumps(model))
    assert again is not model
    assert ir_bytes(again) == ir_bytes(model)
    assert again.path == model.path  # messages name the file it came from
    assert [n.name for n in again.nodes] == [n.name for n in model.nodes]
    _same_runs(irexec.compile_model(model), irexec.compile_model(again), model)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_compiled_model_round_trips(path):
    compiled = irexec.compile_model(irexec.read_model(path))
    again = pickle.loads(pickle.dumps(compiled))
    assert isinstance(again, irexec.CompiledModel)
    assert again.output_names() == compiled.output_names()
    # A stateful model's second call reads what the first wrote: both copies carry it alike.
    _same_runs(compiled, again, compiled.model, calls=3)


def test_precise_mode_survives_the_trip():
    compiled = irexec.compile_model(irexec.read_model(FILES[0]), config={"precision": "f64"})
    assert pickle.loads(pickle.dumps(compiled)).precision == "f64"


def test_the_decompression_and_fusion_modes_survive_the_trip():
    config = {"decompression": "ir", "fusion": "off"}
    compiled = irexec.compile_model(irexec.read_model(FILES[0]), config=config)
    back = pickle.loads(pickle.dumps(compiled))
    assert (back.decompression, back.fusion, back.precision) == ("ir", "off", "f32")
    default = pickle.loads(pickle.dumps(irexec.compile_model(irexec.read_model(FILES[0]))))
    assert (default.decompression, default.fusion) == ("fused", "on")


def _every_type_model():
    """A Parameter and a Const of every element type, each to a Result."""
    b = ModelBuilder("every_type")
    rng = np.random.default_rng(0)
    for et in et_table.SUPPORTED:
        b.result(b.parameter(f"p_{et.name}", et.name, [2, 3]), f"out_p_{et.name}")
        if et.kind == "string":
            value = np.array([["", "a", "ü\n"], ["long " * 20, "x", "\x00y"]], dtype=object)
        elif et.is_coded:
            value = rng.integers(0, et.max_code + 1, size=(2, 3))
        elif et.dtype == np.bool_:
            value = rng.integers(0, 2, size=(2, 3)).astype(bool)
        else:
            raw = rng.integers(0, 256, size=6 * et.dtype.itemsize, dtype=np.uint8)
            value = raw.view(et.dtype).reshape(2, 3) if et.bits >= 8 else \
                make_inputs(_one_parameter(et), {}, 0)["x"]
        b.result(b.constant(value, et.name, name=f"c_{et.name}"), f"out_c_{et.name}")
    return b.build()


def _one_parameter(et):
    b = ModelBuilder()
    b.result(b.parameter("x", et.name, [2, 3]))
    return b.build()


def test_every_element_type_and_strings_round_trip():
    model = _every_type_model()
    again = pickle.loads(pickle.dumps(model))
    assert ir_bytes(again) == ir_bytes(model)
    _same_runs(irexec.compile_model(model), irexec.compile_model(again), model)
    compiled = pickle.loads(pickle.dumps(irexec.compile_model(model)))
    _same_runs(irexec.compile_model(model), compiled, model, calls=1)


def _unpickle_and_run(payload: bytes, inputs) -> dict:
    compiled = pickle.loads(payload)
    return {k: np.asarray(v) for k, v in compiled(inputs).items()}


def test_a_fresh_interpreter_rebuilds_it():
    """Spawned, so nothing of the parent's objects is inherited: only the pickle."""
    path = ROOT / "tests" / "data" / "subgraphs" / "nested_loops.xml"
    compiled = irexec.compile_model(irexec.read_model(path))
    inputs = make_inputs(compiled.model, {}, 3)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        theirs = pool.apply(_unpickle_and_run, (pickle.dumps(compiled), inputs))
    ours = compiled(inputs)
    for name in ours:
        assert _bits(ours[name]) == _bits(theirs[name])


def test_damaged_bytes_are_refused():
    source = ModelSource.of_model(irexec.read_model(FILES[0]))
    source.xml = source.xml.replace(b"<net", b"<net ", 1)
    with pytest.raises(IRError, match="damaged"):
        source.read()


def test_a_file_source_checks_the_file_on_arrival(tmp_path):
    xml = tmp_path / "m.xml"
    xml.write_bytes(FILES[0].read_bytes())
    (tmp_path / "m.bin").write_bytes(FILES[0].with_suffix(".bin").read_bytes())
    source = pickle.loads(pickle.dumps(ModelSource.of_file(xml)))
    assert source.xml is None  # only the path and digest travel
    assert ir_bytes(source.read()) == ir_bytes(irexec.read_model(xml))
    (tmp_path / "m.bin").write_bytes(b"\x00" + (tmp_path / "m.bin").read_bytes())
    with pytest.raises(IRError, match="differ"):
        source.read()
    (tmp_path / "m.xml").unlink()
    with pytest.raises(IRError, match="cannot read"):
        source.read()
