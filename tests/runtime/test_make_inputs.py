"""runtime.inputs.make_inputs: generated inputs respect each consumer's value domain."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder
from irexec.ir.element_type import from_name
from irexec.ir.shape import Dimension, PartialShape
from irexec.runtime.inputs import make_inputs
from tests.runtime.runtime_irxml import L

SEEDS = range(25)


def reverse_model(data_shape, axes_shape, mode="index", axes_type="i64", data_type="f32"):
    b = ModelBuilder()
    data = b.parameter("data", data_type, PartialShape(data_shape))
    axes = b.parameter("axes", axes_type if mode == "index" else "boolean",
                       PartialShape(axes_shape))
    b.result(b.op("Reverse", data, axes, mode=mode, name="rev"), "out")
    return b.build()


def rs_model(data_shape, lengths_shape, batch_axis=0, seq_axis=1, lengths_type="i32"):
    b = ModelBuilder()
    data = b.parameter("data", "f32", PartialShape(data_shape))
    lengths = b.parameter("lengths", lengths_type, PartialShape(lengths_shape))
    b.result(b.op("ReverseSequence", data, lengths, batch_axis=batch_axis, seq_axis=seq_axis,
                  name="rs"), "out")
    return b.build()


def runs(model, values):
    """The generated values are accepted by the model and run without error."""
    return irexec.compile_model(model)(values)


def signed_axes(values: np.ndarray) -> np.ndarray:
    """Axis values as the Reverse specification reads them (unsigned as two's complement)."""
    v = values.reshape(-1)
    return v.astype(np.uint64).view(np.int64) if v.dtype.kind == "u" else v.astype(np.int64)


# --- Reverse ------------------------------------------------------------------------------------

@pytest.mark.parametrize("axes_type", ["i8", "i16", "i32", "i64"])
@pytest.mark.parametrize("axes_shape", [[2], [-1], [1], [Dimension(1, 5)]])
def test_reverse_index_axes_are_valid_axis_numbers(axes_type, axes_shape):
    model = reverse_model([2, 3, 4], axes_shape, axes_type=axes_type)
    seen = set()
    for seed in SEEDS:
        values = make_inputs(model, {}, seed)
        axes = values["axes"]
        assert axes.dtype == np.dtype({"i8": np.int8, "i16": np.int16, "i32": np.int32,
                                       "i64": np.int64}[axes_type])
        assert axes.ndim == 1 and PartialShape(axes_shape).contains(axes.shape)
        assert ((axes >= -3) & (axes <= 2)).all()
        seen |= set(axes.tolist())
        runs(model, values)
    assert min(seen) < 0 <= max(seen)  # both negative and non-negative axes are exercised


@pytest.mark.parametrize("axes_type", ["u8", "u16", "u32", "u64"])
def test_reverse_index_unsigned_axes_are_valid(axes_type):
    model = reverse_model([2, 3, 4], [2], axes_type=axes_type)
    for seed in SEEDS:
        values = make_inputs(model, {}, seed)
        axes = signed_axes(values["axes"])
        assert ((axes >= -3) & (axes <= 2)).all(), values["axes"]
        out = runs(model, values)["rev"]
        expected = np.flip(values["data"], tuple(sorted({int(a) % 3 for a in axes})))
        np.testing.assert_array_equal(out, expected)


def test_reverse_index_axes_follow_the_data_rank_when_it_is_dynamic():
    model = reverse_model(None, [-1])
    for seed in SEEDS:
        values = make_inputs(model, {}, seed)
        rank = values["data"].ndim
        assert ((values["axes"] >= -rank) & (values["axes"] < rank)).all()
        runs(model, values)


def test_reverse_index_axes_follow_a_given_data_shape():
    model = reverse_model(None, [-1])
    given = {"data": np.zeros((2, 2, 2, 2, 2), np.float32)}
    for seed in SEEDS:
        values = make_inputs(model, given, seed)
        assert set(values) == {"axes"}  # given inputs are not made again
        assert ((values["axes"] >= -5) & (values["axes"] <= 4)).all()
        runs(model, {**given, **values})


@pytest.mark.parametrize("data_shape, rank", [([2, 3, 4], 3), ([5], 1), ([-1, -1], 2),
                                              ([1, 1, 1, 1, 1, 1], 6)])
@pytest.mark.parametrize("mask_shape", [[-1], "rank"])
def test_reverse_mask_has_one_boolean_per_axis(data_shape, rank, mask_shape):
    model = reverse_model(data_shape, [rank] if mask_shape == "rank" else mask_shape, "mask")
    patterns = set()
    for seed in SEEDS:
        values = make_inputs(model, {}, seed)
        mask = values["axes"]
        assert mask.dtype == np.bool_ and mask.shape == (rank,)
        patterns.add(tuple(mask.tolist()))
        out = runs(model, values)["rev"]
        np.testing.assert_array_equal(out, np.flip(values["data"], tuple(np.flatnonzero(mask))))
    assert len(patterns) > 1


def test_reverse_mask_follows_a_dynamic_rank():
    model = reverse_model(None, [-1], "mask")
    for seed in SEEDS:
        values = make_inputs(model, {}, seed)
        assert values["axes"].shape == (values["data"].ndim,)
        runs(model, values)


# --- ReverseSequence ---------------------------------------------------------------------------

def check_lengths(values, batch_axis, seq_axis):
    data, lengths = values["data"], values["lengths"]
    b, s = batch_axis % data.ndim, seq_axis % data.ndim
    assert lengths.shape == (data.shape[b],)
    as_int = np.trunc(lengths.astype(np.float64))
    assert (as_int == lengths).all()  # whole numbers even in float types
    assert ((as_int >= 1) & (as_int <= data.shape[s])).all(), (lengths, data.shape)


@pytest.mark.parametrize("data_shape, lengths_shape, batch_axis, seq_axis", [
    ([4, 10, 3], [4], 0, 1),
    ([4, 10, 3], [-1], 0, 1),
    ([5, 4, 3], [4], 1, 0),
    ([6, 2, 7], [7], -1, -3),
    ([3, 9], [3], -2, 1),
    ([-1, -1, -1], [-1], 0, 1),  # dynamic data dims and a Parameter seq_lengths
    ([-1, -1], [-1], 1, 0),
    (None, [-1], 0, 1),  # dynamic rank
    ([Dimension(2, 10), Dimension(5, 8)], [-1], 0, 1),
    ([Dimension(2, 10), Dimension(5, 8)], [Dimension(2, 10)], 1, 0),
])
@pytest.mark.parametrize("lengths_type", ["i32", "i64", "u8", "f32", "f16"])
def test_sequence_lengths_are_within_one_and_the_dimension(data_shape, lengths_shape, batch_axis,
                                                          seq_axis, lengths_type):
    model = rs_model(data_shape, lengths_shape, batch_axis, seq_axis, lengths_type)
    seen = set()
    for seed in SEEDS:
        values = make_inputs(model, {}, seed)
        assert PartialShape(data_shape).contains(values["data"].shape)
        assert values["lengths"].dtype == from_name(lengths_type).dtype
        check_lengths(values, batch_axis, seq_axis)
        seen |= set(values["lengths"].tolist())
        runs(model, values)
    assert len(seen) > 1


def test_sequence_lengths_follow_a_given_data_shape():
    model = rs_model([-1, -1, -1], [-1], batch_axis=2, seq_axis=0)
    given = {"data": np.zeros((7, 2, 5), np.float32)}
    for seed in SEEDS:
        values = make_inputs(model, given, seed)
        assert set(values) == {"lengths"}
        check_lengths({**given, **values}, 2, 0)
    assert {int(v) for seed in SEEDS for v in make_inputs(model, given, seed)["lengths"]} == set(
        range(1, 8))  # every length from 1 to dim(seq_axis) comes up


def test_sequence_lengths_from_a_hand_written_file(ir_file):
    """The same through read_model: data [?,?,?] (written -1) and seq_lengths [?]."""
    layers = [
        L(0, "data", "Parameter", {"shape": "?,?,?", "element_type": "f32"}, [],
          [([-1, -1, -1], "FP32", "data")]),
        L(1, "lengths", "Parameter", {"shape": "-1", "element_type": "i64"}, [],
          [([-1], "I64", "lengths")]),
        L(2, "rs", "ReverseSequence", {"batch_axis": "1", "seq_axis": "2"},
          [[-1, -1, -1], [-1]], [([-1, -1, -1], "FP32", None)]),
        L(3, "out", "Result", {}, [[-1, -1, -1]]),
    ]
    model = irexec.read_model(ir_file(layers, [(0, 0, 2, 0), (1, 0, 2, 1), (2, 0, 3, 0)]))
    for seed in SEEDS:
        values = make_inputs(model, {}, seed)
        check_lengths(values, 1, 2)
        runs(model, values)


def test_sequence_lengths_pinned_by_a_static_lengths_shape():
    """data [?, ?] is free, but seq_lengths [4] fixes data's batch dim to 4."""
    model = rs_model([-1, -1], [4], batch_axis=0, seq_axis=1)
    for seed in SEEDS:
        values = make_inputs(model, {}, seed)
        assert values["data"].shape[0] == 4
        check_lengths(values, 0, 1)
        runs(model, values)


def test_mask_pinned_by_a_static_mask_shape():
    """data has a dynamic rank, but the mask [4] fixes it to 4."""
    model = reverse_model(None, [4], "mask")
    for seed in SEEDS:
        values = make_inputs(model, {}, seed)
        assert values["data"].ndim == 4
        runs(model, values)


# --- seeds and shapes ---------------------------------------------------------------------------

def all_equal(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        a[k].dtype == b[k].dtype and a[k].shape == b[k].shape and np.array_equal(a[k], b[k])
        for k in a)


@pytest.mark.parametrize("make", [lambda: rs_model([-1, 6, 3], [-1], 1, 0),
                                  lambda: reverse_model([3, 4], [2]),
                                  lambda: reverse_model([3, 4], [2], "mask")])
def test_same_seed_same_values_other_seed_other_values(make):
    model = make()
    assert all_equal(make_inputs(model, {}, 7), make_inputs(model, {}, 7))
    assert all_equal(make_inputs(make(), {}, 7), make_inputs(model, {}, 7))  # not model state
    assert not all_equal(make_inputs(model, {}, 7), make_inputs(model, {}, 8))
    distinct = {make_inputs(model, {}, s)["data"].tobytes() for s in range(10)}
    assert len(distinct) == 10


def test_dynamic_dims_get_sizes_within_their_bounds():
    shape = PartialShape([-1, Dimension(2, 10), Dimension(5, None), Dimension(0, 2),
                          Dimension(4, 4), Dimension(7, 9)])
    b = ModelBuilder()
    x = b.parameter("x", "f32", shape)
    b.result(b.op("Convert", x, destination_type="f64", name="conv"), "out")
    model = b.build()
    for seed in range(5):
        x = make_inputs(model, {}, seed)["x"]
        assert shape.contains(x.shape), x.shape
        assert all(d > 0 for d in x.shape[:3])  # a dynamic dim is not made empty
        runs(model, {"x": x})


@pytest.mark.parametrize("et, dtype", [("boolean", np.bool_), ("i8", np.int8), ("u8", np.uint8),
                                       ("i16", np.int16), ("u16", np.uint16),
                                       ("i32", np.int32), ("u32", np.uint32),
                                       ("i64", np.int64), ("u64", np.uint64),
                                       ("f16", np.float16), ("f32", np.float32),
                                       ("f64", np.float64)])
def test_free_inputs_have_the_parameter_element_type(et, dtype):
    b = ModelBuilder()
    x = b.parameter("x", et, [4, 5])
    b.result(b.op("Convert", x, destination_type="f64", name="conv"), "out")
    model = b.build()
    x = make_inputs(model, {}, 0)["x"]
    assert x.dtype == np.dtype(dtype) and x.shape == (4, 5)
    assert np.isfinite(x.astype(np.float64)).all()
    if dtype is not np.bool_:
        assert len(np.unique(x)) > 1
    runs(model, {"x": x})


def test_every_parameter_is_made_and_nothing_else():
    model = rs_model([4, 10, 3], [4])
    values = make_inputs(model, {}, 0)
    assert set(values) == {"data", "lengths"}
    assert make_inputs(model, {"data": np.zeros((4, 10, 3), np.float32),
                               "lengths": np.ones(4, np.int32)}, 0) == {}


def test_a_dynamic_element_type_cannot_be_made(ir_file):
    layers = [
        L(0, "x", "Parameter", {"shape": "2", "element_type": "dynamic"}, [], [([2], "FP32", None)]),
        L(1, "out", "Result", {}, [[2]]),
    ]
    model = irexec.read_model(ir_file(layers, [(0, 0, 1, 0)]))
    with pytest.raises(irexec.IRError) as e:
        make_inputs(model, {}, 0)
    (d,) = e.value.diagnostics
    assert d.code == "IR602" and d.location.layer_name == "x" and "--input x=" in d.message


def test_a_domain_that_only_checks_asks_for_the_input(registry_sandbox):
    """A user's op whose input domain has no generator: the input cannot be made from the seed,
    and the one error says which input to give and how (IR602)."""
    from dataclasses import dataclass

    from irexec.ops.domains import Domain
    from irexec.ops.spec import INTEGER, Input, Op, OpSpec, Output

    @dataclass(frozen=True)
    class CheckedOnly(Domain):
        of: int = 0

    class IrxTestChecked(Op):
        spec = OpSpec(type="IrxTestChecked", since=1,
                      inputs=(Input("data", INTEGER), Input("index", INTEGER,
                                                             domain=CheckedOnly(0))),
                      outputs=(Output("output", "the data"),))
        kernel = staticmethod(lambda data, index: data)

    irexec.register_op(IrxTestChecked)
    b = ModelBuilder()
    b.result(b.op("IrxTestChecked", b.parameter("data", "i32", [3]),
                  b.parameter("index", "i32", [1]), version="opset1"), "out")
    with pytest.raises(irexec.IRError) as caught:
        make_inputs(b.build(), {}, 0)
    (d,) = caught.value.diagnostics
    assert d.code == "IR602"
    assert d.message.startswith("cannot make a value for input 'index': IrxTestChecked ")
    assert d.message.endswith(": CheckedOnly values cannot be generated; give it with --input "
                              "index=FILE.npy")


@pytest.mark.parametrize("element_type", ["f32", "i32", "u8", "f16"])
def test_sorted_inputs_are_made_sorted(element_type):
    """SearchSorted's sequence and Bucketize's boundaries are made sorted (they were random:
    the binary search then finds whatever it finds, and OpenVINO's answer differs)."""
    from irexec.builder import ModelBuilder

    b = ModelBuilder()
    seq = b.parameter("seq", element_type, [3, 6])
    b.result(b.op("SearchSorted", seq, b.parameter("v", element_type, [3, 2]),
                  version="opset15"), "a")
    b.result(b.op("Bucketize", b.parameter("d", element_type, [4]),
                  b.parameter("edges", element_type, [-1]), version="opset3"), "b")
    made = make_inputs(b.build(), {}, 7)
    for name in ("seq", "edges"):
        values = made[name].astype(np.float64)
        assert values.shape[-1] > 1 and (np.diff(values, axis=-1) >= 0).all(), (name, values)
