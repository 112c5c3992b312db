"""ReverseSubsequences-1, irexec's own op (version="irexec1") with DirectML's semantics (seeds/002):
one length per fibre along ``axis``, lengths above the axis size clamp, 0 and 1 change nothing,
ranks 1 to 8, u32/u64 lengths, DirectML's data types."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec.builder import ModelBuilder
from irexec.ir.element_type import from_dtype
from irexec.ops import registry
from irexec.ops.own.reverse_subsequences import DATA_TYPES, ReverseSubsequences
from irexec.ops.spec import OpSpec
from irexec.runtime.inputs import make_inputs

from tests.ops.support import (TYPE_NAMES, assert_same_bits, dtype_of, random_values, reverse_fibres_loop,
                      run, special_values)

SAMPLE = Path(__file__).resolve().parents[3] / "samples" / "reverse_subsequences.xml"
DIRECTML_TYPES = list(DATA_TYPES.names)


def lengths_shape(shape, axis):
    return [1 if d == axis else n for d, n in enumerate(shape)]


def rsub(data, lengths, axis, *, lengths_input=True, data_shape=None, lengths_shape=None,
         version="irexec1"):
    """Run ReverseSubsequences on ``data`` (a Parameter, partial shape ``data_shape`` or its own);
    ``lengths`` a Parameter (partial shape ``lengths_shape`` or its own) or a Const."""
    b = ModelBuilder("reverse_subsequences")
    x = b.parameter("data", from_dtype(data.dtype), list(data.shape) if data_shape is None
                    else data_shape)
    inputs = {"data": data}
    if lengths_input:
        n = b.parameter("lengths", from_dtype(lengths.dtype),
                        list(lengths.shape) if lengths_shape is None else lengths_shape)
        inputs["lengths"] = lengths
    else:
        n = b.constant(lengths)
    b.result(b.op("ReverseSubsequences", x, n, version=version, axis=axis, name="y"), "out")
    return run(b, inputs)["y"]


def build_error(data_type, data_shape, lengths_type, lengths_shape, **attrs) -> irexec.IRError:
    b = ModelBuilder("bad")
    x = b.parameter("data", data_type, data_shape)
    n = b.parameter("lengths", lengths_type, lengths_shape)
    with pytest.raises(irexec.IRError) as info:
        b.result(b.op("ReverseSubsequences", x, n, name="y", **attrs), "out")
        b.build()
    return info.value


# --- DirectML's two worked examples (values copied from seeds/002) -------------------------------

DIRECTML_INPUT = [[[[1, 2, 3, 4],
                    [5, 6, 7, 8],
                    [9, 10, 11, 12]]]]


@pytest.mark.parametrize("as_const", [False, True])
def test_directml_example_1(as_const):
    data = np.array(DIRECTML_INPUT, np.float32)
    lengths = np.array([[[[2], [4], [3]]]], np.uint32)
    out = rsub(data, lengths, 3, lengths_input=not as_const)
    assert out.dtype == np.float32 and out.shape == (1, 1, 3, 4)
    assert out.tolist() == [[[[2, 1, 3, 4],
                              [8, 7, 6, 5],
                              [11, 10, 9, 12]]]]


@pytest.mark.parametrize("as_const", [False, True])
def test_directml_example_2_lengths_one_and_zero_are_no_ops(as_const):
    data = np.array(DIRECTML_INPUT, np.float32)
    lengths = np.array([[[[2, 3, 1, 0]]]], np.uint32)
    out = rsub(data, lengths, 2, lengths_input=not as_const)
    assert out.tolist() == [[[[5, 10, 3, 4],
                              [1, 6, 7, 8],
                              [9, 2, 11, 12]]]]


def test_directml_shape_example_2_3_4_5_axis_1():
    """Input sizes {2,3,4,5}, Axis 1 -> lengths sizes {2,1,4,5}."""
    rng = np.random.default_rng(1)
    data = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    lengths = rng.integers(0, 4, size=(2, 1, 4, 5)).astype(np.uint32)
    assert_same_bits(rsub(data, lengths, 1), reverse_fibres_loop(data, lengths, 1))


# --- clamping, zeros, ranks -------------------------------------------------------------------

@pytest.mark.parametrize("lengths_type", ["u32", "u64"])
def test_lengths_above_the_axis_size_clamp(lengths_type):
    dtype = dtype_of(lengths_type)
    data = np.arange(12, dtype=np.int32).reshape(3, 4)
    big = np.iinfo(dtype).max
    lengths = np.array([[5], [big], [4]], dtype)
    out = rsub(data, lengths, 1)
    assert out.tolist() == [[3, 2, 1, 0], [7, 6, 5, 4], [11, 10, 9, 8]]
    assert_same_bits(rsub(data, lengths, 1, lengths_input=False), out)
    # a clamped length equals the full length, on a constant as well as an input
    assert_same_bits(out, rsub(data, np.full((3, 1), 4, dtype), 1))


def test_zero_lengths_change_nothing_and_do_not_alias():
    data = np.random.default_rng(2).standard_normal((3, 4, 5))
    for axis in range(3):
        zeros = np.zeros(lengths_shape(data.shape, axis), np.uint64)
        ones = np.ones(lengths_shape(data.shape, axis), np.uint32)
        assert_same_bits(rsub(data, zeros, axis), data)
        assert_same_bits(rsub(data, ones, axis), data)


def test_rank_1():
    data = np.array([1, 2, 3, 4, 5], np.int8)
    for n, expected in [(0, [1, 2, 3, 4, 5]), (1, [1, 2, 3, 4, 5]), (3, [3, 2, 1, 4, 5]),
                        (5, [5, 4, 3, 2, 1]), (9, [5, 4, 3, 2, 1])]:
        assert rsub(data, np.array([n], np.uint32), 0).tolist() == expected


@pytest.mark.parametrize("rank", [5, 8])
def test_ranks_5_and_8_on_every_axis(rank):
    rng = np.random.default_rng(rank)
    shape = tuple(int(d) for d in rng.integers(1, 4, size=rank))
    data = rng.integers(-100, 100, size=shape).astype(np.int16)
    for axis in range(rank):
        lengths = rng.integers(0, shape[axis] + 3, size=lengths_shape(shape, axis))
        lengths = lengths.astype(np.uint64 if axis % 2 else np.uint32)
        assert_same_bits(rsub(data, lengths, axis), reverse_fibres_loop(data, lengths, axis))


@pytest.mark.parametrize("type_name", DIRECTML_TYPES)
def test_every_directml_type_keeps_its_bits(type_name):
    values = special_values(type_name)
    data = np.stack([values, values[::-1]])
    out = rsub(data, np.array([[len(values)], [3]], np.uint32), 1)
    assert_same_bits(out[0], values[::-1])
    assert_same_bits(out[1, :3], values[::-1][2::-1])
    assert_same_bits(out[1, 3:], values[::-1][3:])


# --- equivalence with a plain loop -----------------------------------------------------------

@st.composite
def op_cases(draw):
    rank = draw(st.integers(1, 8))
    shape = tuple(draw(st.lists(st.integers(1, 3 if rank > 4 else 5), min_size=rank,
                                max_size=rank)))
    axis = draw(st.integers(0, rank - 1))
    lshape = lengths_shape(shape, axis)
    lengths_type = draw(st.sampled_from(["u32", "u64"]))
    top = shape[axis] + 2  # some lengths above the axis size: they clamp
    count = int(np.prod(lshape))
    lengths = draw(st.lists(st.integers(0, top) | st.just(int(np.iinfo(dtype_of(lengths_type))
                                                               .max)),
                            min_size=count, max_size=count))
    type_name = draw(st.sampled_from(DIRECTML_TYPES))
    seed = draw(st.integers(0, 2**32 - 1))
    return (shape, axis, np.array(lengths, dtype_of(lengths_type)).reshape(lshape), type_name,
            seed, draw(st.booleans()))


@settings(max_examples=120, deadline=None)
@given(op_cases())
def test_property_equals_a_plain_loop(case):
    shape, axis, lengths, type_name, seed, as_const = case
    data = random_values(type_name, shape, np.random.default_rng(seed))
    assert_same_bits(rsub(data, lengths, axis, lengths_input=not as_const),
                     reverse_fibres_loop(data, lengths, axis))


# --- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("lengths_type", ["i32", "i64", "u8", "u16", "f32", "boolean"])
def test_lengths_other_than_u32_or_u64_are_ir304(lengths_type):
    e = build_error("f32", [2, 3], lengths_type, [2, 1], axis=1)
    assert e.code == "IR304"
    assert "lengths" in str(e) and "u32, u64" in str(e)


@pytest.mark.parametrize("data_type", sorted(set(TYPE_NAMES) - set(DIRECTML_TYPES)))
def test_data_types_outside_directml_table_are_ir304(data_type):
    e = build_error(data_type, [2, 3], "u32", [2, 1], axis=1)
    assert e.code == "IR304" and "data" in str(e)


@pytest.mark.parametrize("shape", [[], [1] * 9])
def test_data_rank_outside_1_to_8_is_ir305(shape):
    e = build_error("f32", shape, "u32", [1] * len(shape), axis=0)
    assert e.code == "IR305" and "rank 1 to 8" in str(e)


def test_axis_must_be_below_the_rank():
    e = build_error("f32", [2, 3], "u32", [2, 1], axis=2)
    assert e.code == "IR306" and "axis 2" in str(e)


def test_axis_is_required_and_unsigned():
    assert build_error("f32", [2, 3], "u32", [2, 1]).code == "IR301"
    assert build_error("f32", [2, 3], "u32", [2, 1], axis=-1).code == "IR302"


@pytest.mark.parametrize("lengths_shape", [[2], [2, 1, 1], [2, 3], [3, 1], [1, 1], [], [2, 2]])
def test_lengths_of_any_other_shape_are_ir307_naming_expected_and_got(lengths_shape):
    e = build_error("f32", [2, 3], "u32", lengths_shape, axis=1)
    assert e.code == "IR307"
    message = str(e)
    got = "[" + ",".join(map(str, lengths_shape)) + "]"
    assert "[2,1]" in message.replace(" ", "") and got in message.replace(" ", "")


def test_lengths_pin_dynamic_data_dims():
    b = ModelBuilder("pin")
    x = b.parameter("data", "f32", [-1, -1, 4])
    n = b.parameter("lengths", "u32", [2, 1, -1])
    b.result(b.op("ReverseSubsequences", x, n, axis=1, name="y"), "out")
    model = b.build()
    assert str(model.results[0].inputs[0].source.partial_shape) == str(
        irexec.PartialShape([2, -1, 4]))


def test_wrong_lengths_shape_at_run_time_is_an_error_naming_both_shapes():
    data = np.zeros((2, 3), np.float32)
    with pytest.raises(irexec.IRError) as info:
        rsub(data, np.zeros((2, 3), np.uint32), 1, data_shape=[-1, -1], lengths_shape=[-1, -1])
    message = str(info.value).replace(" ", "")
    assert "lengthshasshape[2,3]" in message and "shape[2,1]" in message
    assert info.value.diagnostics[0].location.layer_name == "y"


# --- the version family ----------------------------------------------------------------------

@pytest.mark.parametrize("version", ["irexec1", "irexec2", "irexec99"])
def test_served_for_every_irexec_version(version):
    assert registry.lookup("ReverseSubsequences", version) is ReverseSubsequences
    assert registry.lookup("reversesubsequences", f" {version} ") is ReverseSubsequences


@pytest.mark.parametrize("version", ["opset1", "opset16", "irexec0"])
def test_not_an_openvino_op(version):
    with pytest.raises(registry.LookupFailure) as info:
        registry.lookup("ReverseSubsequences", version)
    assert f"not in {version}" in str(info.value)
    assert "ReverseSubsequences-1 (irexec1 and later)" in str(info.value)


def test_openvino_ops_are_not_in_the_irexec_family():
    with pytest.raises(registry.LookupFailure, match="Reverse is not in irexec1"):
        registry.lookup("Reverse", "irexec1")


@pytest.mark.parametrize("version", ["irexec", "IREXEC1", "foo1", "irexec1a"])
def test_unknown_version_names(version):
    with pytest.raises(registry.LookupFailure) as info:
        registry.lookup("ReverseSubsequences", version)
    assert f"'{version}'" in str(info.value) and "'irexec1'" in str(info.value)


@pytest.fixture
def sandbox():
    with registry.sandbox():
        yield registry


def test_the_family_has_its_own_numbering(sandbox):
    """irexec2 of the same type serves irexec2 and later; opsetN numbers are not involved."""
    base = ReverseSubsequences.spec

    class ReverseSubsequences2(ReverseSubsequences):
        spec = OpSpec(type=base.type, family="irexec", since=2, until=3, attrs=base.attrs,
                      inputs=base.inputs, outputs=base.outputs, doc=base.doc)

    irexec.register_op(ReverseSubsequences2)
    assert sandbox.lookup("ReverseSubsequences", "irexec1") is ReverseSubsequences
    assert sandbox.lookup("ReverseSubsequences", "irexec3") is ReverseSubsequences2
    with pytest.raises(sandbox.LookupFailure, match="not in irexec4"):
        sandbox.lookup("ReverseSubsequences", "irexec4")
    assert ReverseSubsequences2.spec.opsets == "irexec2 to irexec3"
    assert [op.spec.since for op in sandbox.all_ops()
            if op.spec.type == "ReverseSubsequences"] == [1, 2]


def test_a_family_must_be_lower_case_letters(sandbox):
    class Bad(ReverseSubsequences):
        spec = OpSpec(type="IrxBad", family="my-ext", since=1)

    with pytest.raises(ValueError, match="lower-case"):
        irexec.register_op(Bad)


def test_the_builder_defaults_to_the_first_irexec_version():
    assert registry.default_version("ReverseSubsequences") == "irexec1"
    assert registry.default_version("ReverseSequence") == "opset1"
    b = ModelBuilder("default")
    x = b.parameter("data", "f32", [3])
    node = b.op("ReverseSubsequences", x, b.constant(np.array([2], np.uint32)), axis=0).node
    assert node.version == "irexec1"


def test_listed_by_irexec_ops():
    from tests.cli.conftest import run_cli

    listing = run_cli("ops")
    assert listing.returncode == 0
    row = next(line for line in listing.stdout.splitlines()
               if line.startswith("ReverseSubsequences"))
    assert "irexec1 and later" in row
    shown = run_cli("ops", "reversesubsequences")
    assert shown.returncode == 0
    assert shown.stdout.startswith("ReverseSubsequences-1 (irexec1 and later)")
    assert "axis (uint, required)" in shown.stdout and "one of u32, u64" in shown.stdout


# --- the sample, generated inputs, the XML reader ---------------------------------------------

@pytest.mark.parametrize("seed", range(5))
def test_the_sample_runs_on_generated_lengths(seed):
    model = irexec.read_model(SAMPLE)
    assert model.diagnostics == []
    inputs = make_inputs(model, {}, seed)
    lengths = inputs["lengths"]
    assert lengths.dtype == np.uint32 and lengths.shape == (2, 1, 4, 5)
    assert lengths.max() <= 3
    out = irexec.compile_model(model)(inputs)["reversed"]
    assert_same_bits(out, reverse_fibres_loop(inputs["data"], lengths, 1))


def test_generated_lengths_cover_zero_to_the_axis_size():
    model = irexec.read_model(SAMPLE)
    seen = set()
    for seed in range(10):
        seen |= set(make_inputs(model, {}, seed)["lengths"].reshape(-1).tolist())
    assert seen == {0, 1, 2, 3}


def test_generated_data_takes_its_dims_from_the_lengths():
    b = ModelBuilder("pinned")
    x = b.parameter("data", "i32", [-1, -1, -1])
    n = b.parameter("lengths", "u64", [4, 1, 6])
    b.result(b.op("ReverseSubsequences", x, n, axis=1, name="y"), "out")
    model = b.build()
    inputs = make_inputs(model, {}, 0)
    assert inputs["data"].shape[0] == 4 and inputs["data"].shape[2] == 6
    assert inputs["lengths"].shape == (4, 1, 6) and inputs["lengths"].dtype == np.uint64
    assert inputs["lengths"].max() <= inputs["data"].shape[1]
    out = irexec.compile_model(model)(inputs)["y"]
    assert_same_bits(out, reverse_fibres_loop(inputs["data"], inputs["lengths"], 1))


def test_a_static_shape_mismatch_in_an_ir_file_is_ir307_at_the_layer(tmp_path):
    text = SAMPLE.read_text().replace('shape="2,1,4,5"', 'shape="2,3,4,5"')
    text = text.replace("<dim>2</dim>\n          <dim>1</dim>",
                        "<dim>2</dim>\n          <dim>3</dim>")
    path = tmp_path / "bad.xml"
    path.write_text(text)
    with pytest.raises(irexec.IRError) as info:
        irexec.read_model(path)
    (d,) = [d for d in info.value.diagnostics if d.code == "IR307"]
    assert d.location.layer_name == "reversed"
    assert d.location.line == text.splitlines().index(
        next(line for line in text.splitlines() if 'name="reversed"' in line)) + 1
    assert "[2,1,4,5]" in d.message.replace(" ", "") and "[2,3,4,5]" in d.message.replace(" ", "")


@pytest.mark.parametrize("shape, axis", [((0,), 0), ((2, 0), 1), ((0, 3), 1), ((2, 0, 3), 0)])
def test_empty_data_gives_an_empty_result(shape, axis):
    """DirectML forbids size-0 dims; irexec returns the empty tensor (lengths clamp to 0)."""
    data = np.zeros(shape, np.float32)
    lengths = np.full(lengths_shape(shape, axis), 7, np.uint32)
    out = rsub(data, lengths, axis)
    assert out.shape == shape and out.dtype == np.float32
