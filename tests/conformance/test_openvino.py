"""Conformance: random IR files run in irexec and in OpenVINO's CPU plugin, compared bit for bit.

Each case builds a model with ModelBuilder, writes it with irexec.save_model, reads the same files
in both runtimes and compares every output as raw bits (NaN payloads and -0.0 count).

OpenVINO's CPU plugin is not exact everywhere (facts (a), (b), docs/compatibility.md): it narrows
i64/u64 data to 32 bits, computes ReverseSequence in f32, f64 in f32, quiets signalling NaNs of
f16 (and bf16 in ReverseSequence) and has several lossy Convert pairs. The random cases draw values
where it is exact (tests/conformance/ov_cpu.py says which); the tests at the end pin each known
difference: irexec gives the exact answer and OpenVINO does not.
"""

from __future__ import annotations

import glob
import math
import os

import numpy as np
import pytest

import irexec
from irexec.ir import element_type
from irexec.builder import ModelBuilder
from irexec.runtime.inputs import make_inputs
from tests.conformance.oracle import bits, run_both, run_irexec, run_openvino, same_bits
from tests.conformance.ov_cpu import convert_ok, data_ok
from tests.ops.convert_reference import expected_in_range, pool
from tests.ops.support import PLAIN_TYPE_NAMES as TYPE_NAMES
from tests.ops.support import dtype_of, random_values, reverse_sequence_loop

# The narrow types (sub-byte, f8, nf4) and strings: tests/conformance/test_openvino_types.py.
INT_TYPE_NAMES = [t for t in TYPE_NAMES if t[0] in "iu"]
NUMERIC_TYPE_NAMES = [t for t in TYPE_NAMES if t != "boolean"]

ov = pytest.importorskip("openvino")

SAMPLES = sorted(p for p in glob.glob(os.path.join(os.path.dirname(__file__), "..", "..",
                                                   "samples", "*.xml"))
                 # irexec's own ops (version="irexec1") are not OpenVINO's: it cannot read those
                 if 'version="irexec' not in open(p, encoding="utf-8").read())


def compare(tmp_path, model, inputs: dict, name: str = "model"):
    """Save, run in both, assert every output has the same bits; return irexec's outputs."""
    xml = tmp_path / f"{name}.xml"
    irexec.save_model(model, xml)
    # irexec's own writer gives exact precisions, port ids in order, known attributes and exact
    # Const sizes. (Warnings about the model's content, such as repeated Reverse axes or zero
    # sequence lengths that the random cases draw on purpose, are not the writer's.)
    writer_warnings = ("IR108", "IR310", "IR402", "IR504")
    assert [str(d) for d in irexec.read_model(xml).diagnostics
            if d.code in writer_warnings] == []
    ours, theirs = run_both(ov, xml, inputs)
    assert set(ours) == set(theirs)
    for key in ours:
        a, b = ours[key], theirs[key]
        if not same_bits(a, b):
            diff = np.flatnonzero(bits(a).reshape(-1) != bits(b).reshape(-1))[:5] if (
                a.shape == b.shape and a.dtype == b.dtype) else []
            pytest.fail(f"output {key}: irexec {a.dtype}{list(a.shape)} vs OpenVINO "
                        f"{b.dtype}{list(b.shape)}; first differing elements "
                        f"{[(a.reshape(-1)[i], b.reshape(-1)[i]) for i in diff]}")
    return ours


# --- values where the CPU plugin is exact -------------------------------------------------------

def _quiet(values: np.ndarray) -> np.ndarray:
    """Signalling NaNs made quiet (the quiet bit set), other values unchanged."""
    if values.dtype not in (np.float16, dtype_of("bf16")):
        return values
    quiet_bit = 0x0200 if values.dtype == np.float16 else 0x0040
    raw = values.view(np.uint16).copy()
    nan = np.isnan(values.astype(np.float32))
    raw[nan] |= quiet_bit
    return raw.view(values.dtype)


def safe_data(op: str, type_name: str, shape, rng: np.random.Generator) -> np.ndarray:
    """Random values that the CPU plugin moves through ``op`` without changing them."""
    if type_name in ("i32", "u32", "i64", "u64") and (op == "ReverseSequence"
                                                     or type_name in ("i64", "u64")):
        lo = 0 if type_name[0] == "u" else -(2**24 if op == "ReverseSequence" else 2**31)
        hi = 2**24 + 1 if op == "ReverseSequence" else 2**31
        values = rng.integers(lo, hi, size=shape, dtype=np.int64).astype(dtype_of(type_name))
    elif type_name == "f64":
        f32 = random_values("f32", shape, rng).astype(np.float32)
        f32[~np.isfinite(f32)] = np.float32(1.5)
        values = f32.astype(np.float64)
    else:
        values = random_values(type_name, shape, rng)
        if type_name == "f16" or (type_name == "bf16" and op == "ReverseSequence"):
            values = _quiet(values)
    assert all(data_ok(op, type_name, x) for x in values.reshape(-1))
    return values


def _shape(rng, rank: int, low: int = 1) -> list[int]:
    shape = [int(d) for d in rng.integers(low, 5, size=rank)]
    if rng.random() < 0.15:
        shape[int(rng.integers(rank))] = 0
    return shape


# --- Reverse ------------------------------------------------------------------------------------

def reverse_case(seed: int):
    rng = np.random.default_rng(1000 + seed)
    type_name = TYPE_NAMES[seed % len(TYPE_NAMES)]
    rank = int(rng.integers(1, 5))
    shape = _shape(rng, rank)
    mode = "mask" if rng.random() < 0.35 else "index"
    axes_as_input = bool(rng.random() < 0.5)
    if mode == "mask":
        axes = rng.random(rank) < 0.5
    else:
        axes_type = INT_TYPE_NAMES[int(rng.integers(len(INT_TYPE_NAMES)))]
        values = [int(a) for a in rng.integers(-rank, rank, size=int(rng.integers(1, rank + 3)))]
        if axes_type.startswith("u"):
            # unsigned: non-negative, except u64 2**64-k, read as -k at run time (OpenVINO
            # rejects such a Const at read time, see test_u64_const_axis_wrapping_to_negative)
            wrap = axes_type == "u64" and axes_as_input
            values = [a + 2**64 if a < 0 and wrap else abs(a) % rank for a in values]
        axes = np.array(values, dtype=dtype_of(axes_type))
    data = safe_data("Reverse", type_name, shape, rng)
    b = ModelBuilder(f"reverse_{seed}")
    x = b.parameter("data", type_name, shape)
    inputs = {"data": data}
    if axes_as_input:
        a = b.parameter("axes", element_type.from_dtype(axes.dtype), list(axes.shape))
        inputs["axes"] = axes
    else:
        a = b.constant(axes, name="axes")
    b.result(b.op("Reverse", x, a, mode=mode, name="reversed"))
    return b.build(), inputs, (data, axes, mode)


@pytest.mark.parametrize("seed", range(40))
def test_random_reverse(tmp_path, seed):
    model, inputs, (data, axes, mode) = reverse_case(seed)
    ours = compare(tmp_path, model, inputs)
    rank = data.ndim
    if mode == "mask":
        flip = tuple(np.flatnonzero(axes).tolist())
    else:
        signed = axes.astype(np.int64) if axes.dtype != np.uint64 else axes.view(np.int64)
        flip = tuple(sorted({int(a) % rank for a in signed}))
    assert same_bits(ours["reversed"], np.flip(data, flip))


# --- ReverseSequence ----------------------------------------------------------------------------

def _lengths(rng, count: int, top: int, type_name: str) -> tuple[np.ndarray, list[int]]:
    """Lengths in [0, top] of the given type; floats get a fractional part. Returns the array and
    the whole lengths they truncate to."""
    whole = [int(v) for v in rng.integers(0, top + 1, size=count)]
    dtype = dtype_of(type_name)
    if dtype.kind != "f" and type_name != "bf16":
        return np.array(whole, dtype=dtype), whole
    given = []
    for n in whole:
        candidate = np.array(n + float(rng.choice([0.0, 0.25, 0.5, 0.75])), dtype=dtype)
        if n == 0 and rng.random() < 0.3:
            candidate = np.array(-0.25, dtype=dtype)  # truncates to 0 in both
        given.append(candidate if math.trunc(float(candidate)) == n or (n == 0 and float(
            candidate) > -1) else np.array(n, dtype=dtype))
    return np.array(given, dtype=dtype), whole


def reverse_sequence_case(seed: int):
    rng = np.random.default_rng(2000 + seed)
    type_name = TYPE_NAMES[seed % len(TYPE_NAMES)]
    rank = int(rng.integers(2, 5))
    shape = _shape(rng, rank)
    b_axis, s_axis = (int(a) for a in rng.permutation(rank)[:2])
    batch_axis = b_axis - rank if rng.random() < 0.4 else b_axis
    seq_axis = s_axis - rank if rng.random() < 0.4 else s_axis
    lengths_type = NUMERIC_TYPE_NAMES[int(rng.integers(len(NUMERIC_TYPE_NAMES)))]
    lengths, whole = _lengths(rng, shape[b_axis], shape[s_axis], lengths_type)
    lengths_as_input = bool(rng.random() < 0.5) or lengths.size == 0
    data = safe_data("ReverseSequence", type_name, shape, rng)
    b = ModelBuilder(f"reverse_sequence_{seed}")
    x = b.parameter("data", type_name, shape)
    inputs = {"data": data}
    if lengths_as_input:
        n = b.parameter("seq_lengths", lengths_type, [len(lengths)])
        inputs["seq_lengths"] = lengths
    else:
        n = b.constant(lengths, name="seq_lengths")
    b.result(b.op("ReverseSequence", x, n, batch_axis=batch_axis, seq_axis=seq_axis,
                  name="reversed"))
    return b.build(), inputs, (data, whole, batch_axis, seq_axis)


@pytest.mark.parametrize("seed", range(40))
def test_random_reverse_sequence(tmp_path, seed):
    model, inputs, (data, whole, batch_axis, seq_axis) = reverse_sequence_case(seed)
    ours = compare(tmp_path, model, inputs)
    assert same_bits(ours["reversed"], reverse_sequence_loop(data, whole, batch_axis, seq_axis))


# --- Convert ------------------------------------------------------------------------------------

def test_convert_every_pair(tmp_path):
    """One model, 169 Converts (one Parameter each), values where the CPU plugin is exact:
    in-range values, with the documented lossy families left out (ov_cpu.convert_ok)."""
    b = ModelBuilder("convert_pairs")
    inputs = {}
    for src in TYPE_NAMES:
        values = pool(src)
        for dst in TYPE_NAMES:
            data = values[[convert_ok(src, dst, x) for x in values]]
            assert data.size >= 2
            inputs[f"in_{src}_{dst}"] = data
            x = b.parameter(f"in_{src}_{dst}", src, [data.size])
            b.result(b.op("Convert", x, destination_type=dst, name=f"{src}_to_{dst}"))
    compare(tmp_path, b.build(), inputs)


OUT_OF_RANGE_AGREED = [
    # integer narrowing wraps (destinations of at most 32 bits)
    ("i16", "i8", [300, -129, 32767, -32768]), ("i32", "u8", [300, -1, 2**31 - 1, -(2**31)]),
    ("i32", "u16", [65536, -2, 70000]), ("i64", "i32", [2**40 + 5, -(2**40) - 7, 2**63 - 1]),
    ("u64", "u32", [2**64 - 1, 2**33 + 9]), ("u64", "i16", [2**63 + 0x8001, 40000]),
    ("u32", "i32", [2**31, 2**32 - 1]), ("i64", "u16", [-1, 2**17 + 3]),
    # f64 -> i8 / u8 / i32 saturate
    ("f64", "i8", [300.7, -1e10, 1e300, np.inf, -np.inf, 128.0, -129.5]),
    ("f64", "u8", [300.7, -1.5, 256.0, 1e10, -np.inf, np.inf]),
    ("f64", "i32", [1e10, -1e10, np.inf, -np.inf, 2.0**31, -(2.0**31) - 1]),
    # beyond a float format: +-inf
    ("i32", "f16", [65520, 100000, -100000, 2**31 - 1]), ("f32", "f16", [70000.0, 1e10, -3e38]),
    ("f64", "f16", [1e300, -1e300, 1e10]),
]


def test_convert_out_of_range_where_openvino_agrees(tmp_path):
    b = ModelBuilder("convert_out_of_range")
    inputs = {}
    for i, (src, dst, values) in enumerate(OUT_OF_RANGE_AGREED):
        if dtype_of(src).kind in "iu":
            data = np.array(values, dtype=dtype_of(src))
        else:
            with np.errstate(over="ignore"):
                data = np.array(values, np.float64).astype(dtype_of(src))
        inputs[f"in_{i}"] = data
        b.result(b.op("Convert", b.parameter(f"in_{i}", src, [data.size]), destination_type=dst,
                      name=f"case_{i}_{src}_to_{dst}"))
    compare(tmp_path, b.build(), inputs)


@pytest.mark.parametrize("src", ["f16", "bf16", "f32"])
def test_convert_float_to_8_bit_saturates_with_dynamic_shapes(tmp_path, src):
    """With a dynamic shape the CPU plugin saturates float -> i8/u8 and maps NaN to 0, as irexec
    does (with static shapes it wraps; facts in docs/compatibility.md)."""
    data = np.array([300.7, -1.5, -129.5, 1e4, -1e4, np.inf, -np.inf, np.nan, 127.9, 0.5],
                    np.float64).astype(dtype_of(src))
    b = ModelBuilder("dynamic")
    x = b.parameter("data", src, [-1])
    b.result(b.op("Convert", x, destination_type="i8", name="to_i8"))
    b.result(b.op("Convert", x, destination_type="u8", name="to_u8"))
    ours = compare(tmp_path, b.build(), {"data": data})
    assert ours["to_u8"].tolist()[:3] == [255, 0, 0] and ours["to_i8"].tolist()[:3] == [
        127, -1, -128]


# --- chains: Convert, Reverse and ReverseSequence mixed ---------------------------------------

def _step_ok(value, src: str, dst: str):
    """The value after converting, if the CPU plugin converts it exactly; else None."""
    if not convert_ok(src, dst, value):
        return None
    e = expected_in_range(value, dst)
    return np.array(e, dtype=dtype_of(dst))[()]


def chain_case(seed: int):
    rng = np.random.default_rng(3000 + seed)
    types = [TYPE_NAMES[seed % len(TYPE_NAMES)]]
    ops = []
    for _ in range(int(rng.integers(2, 6))):
        kind = rng.choice(["Convert", "Convert", "Reverse", "ReverseSequence"])
        if kind == "Convert":
            types.append(TYPE_NAMES[int(rng.integers(len(TYPE_NAMES)))])
        ops.append((str(kind), types[-1]))
    shape = [int(d) for d in rng.integers(1, 5, size=int(rng.integers(2, 4)))]
    # candidate values: moderate integers and halves, so that most survive every step
    start = types[0]
    candidates = np.concatenate([rng.integers(-300, 70000, size=64), rng.integers(-5, 6, 32)])
    if dtype_of(start).kind == "f" or start == "bf16":
        candidates = candidates + rng.choice([0.0, 0.5, 0.25, -0.75], size=candidates.size)
    if start == "boolean":
        candidates = candidates % 2
    with np.errstate(all="ignore"):
        candidates = candidates.astype(dtype_of(start))
    good = []
    for v in candidates:
        current, t, ok = v, start, True
        for kind, t_after in ops:
            if kind == "Convert":
                current = _step_ok(current, t, t_after)
                t = t_after
            elif not data_ok(kind, t, current):
                current = None
            if current is None:
                ok = False
                break
        if ok:
            good.append(v)
    good = np.array(good + [np.zeros((), dtype_of(start))[()]], dtype=dtype_of(start))
    data = good[rng.integers(0, good.size, size=shape)]
    b = ModelBuilder(f"chain_{seed}")
    y = b.parameter("data", start, shape)
    for i, (kind, t) in enumerate(ops):
        if kind == "Convert":
            y = b.op("Convert", y, destination_type=t, name=f"step{i}_convert_{t}")
        elif kind == "Reverse":
            axes = rng.integers(-len(shape), len(shape), size=int(rng.integers(1, 3)))
            y = b.op("Reverse", y, b.constant(axes.astype(np.int32)), mode="index",
                     name=f"step{i}_reverse")
        else:
            bt, sq = (int(a) for a in rng.permutation(len(shape))[:2])
            lengths = rng.integers(0, shape[sq] + 1, size=shape[bt]).astype(np.int64)
            y = b.op("ReverseSequence", y, b.constant(lengths), batch_axis=bt, seq_axis=sq,
                     name=f"step{i}_reverse_sequence")
        b.result(y)
    return b.build(), {"data": data}


@pytest.mark.parametrize("seed", range(30))
def test_random_chains(tmp_path, seed):
    model, inputs = chain_case(seed)
    compare(tmp_path, model, inputs)


# --- the sample models --------------------------------------------------------------------------

@pytest.mark.parametrize("path", SAMPLES, ids=[os.path.basename(p) for p in SAMPLES])
@pytest.mark.parametrize("seed", [0, 1])
def test_samples_agree(path, seed):
    assert SAMPLES, "no samples found"
    model = irexec.read_model(path)
    inputs = make_inputs(model, {}, seed)
    ours = irexec.compile_model(model)(inputs)
    theirs = run_openvino(ov, path, inputs, list(ours))
    for key in ours:
        assert same_bits(ours[key], theirs[key]), key


def test_openvino_reads_every_sample():
    core = ov.Core()
    assert len(SAMPLES) >= 4
    for path in SAMPLES:
        model = core.read_model(path)
        ours = irexec.read_model(path)
        assert ours.diagnostics == [], path  # the samples are clean: no warnings either
        assert len(model.get_parameters()) == len(ours.parameters)
        assert len(model.outputs) == len(ours.results)


# --- known differences: irexec exact, OpenVINO's CPU plugin not --------------------------------
# Each test asserts irexec's exact answer (from numpy or exact arithmetic) and that OpenVINO gives
# something else. If one of these fails on the OpenVINO side, OpenVINO became exact there:
# update docs/compatibility.md and move the case into the bit-for-bit tests.

def _single(tmp_path, model, inputs, name):
    xml = tmp_path / "m.xml"
    irexec.save_model(model, xml)
    ours = run_irexec(xml, inputs)[name]
    theirs = run_openvino(ov, xml, inputs, [name])[name]
    return ours, theirs


def _reverse_model(type_name, shape, axes):
    b = ModelBuilder()
    x = b.parameter("data", type_name, shape)
    b.result(b.op("Reverse", x, b.constant(np.array(axes, np.int32)), mode="index", name="y"))
    return b.build()


def _reverse_sequence_model(type_name, shape, lengths_type="i32"):
    b = ModelBuilder()
    x = b.parameter("data", type_name, shape)
    n = b.parameter("seq_lengths", lengths_type, [shape[0]])
    b.result(b.op("ReverseSequence", x, n, batch_axis=0, seq_axis=1, name="y"))
    return b.build()


def test_reverse_i64_data_is_narrowed_by_openvino(tmp_path):
    data = np.array([2**40 + 3, -5, 2**33, 7], np.int64)
    ours, theirs = _single(tmp_path, _reverse_model("i64", [4], [0]), {"data": data}, "y")
    assert ours.tolist() == data[::-1].tolist()
    assert theirs.tolist() == [7, 0, -5, 3]  # facts (a): the low 32 bits


def test_reverse_u64_data_is_narrowed_by_openvino(tmp_path):
    data = np.array([2**64 - 1, 2**32 + 1, 5], np.uint64)
    ours, theirs = _single(tmp_path, _reverse_model("u64", [3], [0]), {"data": data}, "y")
    assert ours.tolist() == data[::-1].tolist()
    assert theirs.tolist() != ours.tolist()


def test_reverse_f64_data_goes_through_f32_in_openvino(tmp_path):
    data = np.array([1e300, 0.1, 1 + 2.0**-52], np.float64)
    ours, theirs = _single(tmp_path, _reverse_model("f64", [3], [0]), {"data": data}, "y")
    assert same_bits(ours, data[::-1])
    assert theirs.tolist() == [float(np.float32(1 + 2.0**-52)), float(np.float32(0.1)),
                               3.4028234663852886e38]


def test_reverse_f16_signalling_nan_is_quieted_by_openvino(tmp_path):
    data = np.array([0x7C01, 0x3C00], np.uint16).view(np.float16)
    ours, theirs = _single(tmp_path, _reverse_model("f16", [2], [0]), {"data": data}, "y")
    assert ours.view(np.uint16).tolist() == [0x3C00, 0x7C01]
    assert theirs.view(np.uint16).tolist() == [0x3C00, 0x7E01]


def test_u64_const_axis_wrapping_to_negative(tmp_path):
    """u64 2**64-1 as a *runtime* axis is -1 in both. As a Const, OpenVINO's shape inference
    compares it unsigned with the rank and rejects the file; irexec reads it as -1 there too."""
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = ModelBuilder()
    x = b.parameter("data", "f32", [2, 3])
    b.result(b.op("Reverse", x, b.parameter("axes", "u64", [2]), mode="index", name="y"))
    ours = compare(tmp_path, b.build(), {"data": data,
                                         "axes": np.array([2**64 - 1, 2**64 - 2], np.uint64)})
    assert same_bits(ours["y"], data[::-1, ::-1])

    b = ModelBuilder()
    x = b.parameter("data", "f32", [2, 3])
    b.result(b.op("Reverse", x, b.constant(np.array([2**64 - 1], np.uint64)), mode="index",
                  name="y"))
    xml = tmp_path / "const.xml"
    irexec.save_model(b.build(), xml)
    assert same_bits(run_irexec(xml, {"data": data})["y"], data[:, ::-1])
    with pytest.raises(RuntimeError, match="out of bounds"):
        ov.Core().read_model(str(xml))


def test_reverse_i64_axis_two_to_the_32(tmp_path):
    """OpenVINO's CPU narrows i64 axes to i32 and flips axis 0; irexec reports the axis."""
    b = ModelBuilder()
    x = b.parameter("data", "f32", [2, 3])
    a = b.parameter("axes", "i64", [1])
    b.result(b.op("Reverse", x, a, mode="index", name="y"))
    xml = tmp_path / "m.xml"
    irexec.save_model(b.build(), xml)
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    inputs = {"data": data, "axes": np.array([2**32], np.int64)}
    with pytest.raises(irexec.IRError) as info:
        run_irexec(xml, inputs)
    assert info.value.code == "IR306" and str(2**32) in str(info.value)
    theirs = run_openvino(ov, xml, inputs, ["y"])["y"]
    assert same_bits(theirs, data[::-1])


@pytest.mark.parametrize("type_name, value", [("i32", 16777217), ("i32", 2**31 - 1),
                                              ("u32", 2**24 + 1), ("i64", 2**40 + 3),
                                              ("u64", 2**63 + 1), ("f64", 1 + 2.0**-52)])
def test_reverse_sequence_loses_precision_in_openvino(tmp_path, type_name, value):
    data = np.array([[value, 1, 2], [3, 4, 5]], dtype_of(type_name))
    inputs = {"data": data, "seq_lengths": np.array([3, 1], np.int32)}
    ours, theirs = _single(tmp_path, _reverse_sequence_model(type_name, [2, 3]), inputs, "y")
    expected = np.array([[2, 1, value], [3, 4, 5]], dtype_of(type_name))
    assert same_bits(ours, expected)
    assert theirs[0, 2] != expected[0, 2]
    assert theirs[0, 0] == 2 and theirs[1].tolist() == [3, 4, 5]


def test_reverse_sequence_bf16_signalling_nan_is_quieted_by_openvino(tmp_path):
    """irexec keeps every bit; OpenVINO quiets the NaN where its bf16 path uses AVX-512 and keeps
    it on AVX2-only CPUs."""
    data = np.array([[0x7F81, 0x3F80]], np.uint16).view(dtype_of("bf16"))
    inputs = {"data": data, "seq_lengths": np.array([2], np.int32)}
    ours, theirs = _single(tmp_path, _reverse_sequence_model("bf16", [1, 2]), inputs, "y")
    assert ours.view(np.uint16).tolist() == [[0x3F80, 0x7F81]]
    assert theirs.view(np.uint16).tolist() in ([[0x3F80, 0x7FC1]], [[0x3F80, 0x7F81]])


def test_reverse_sequence_i64_lengths_are_narrowed_by_openvino(tmp_path):
    """2**32+1 is above the dimension: irexec reports it; OpenVINO reads it as 1 (no change)."""
    model = _reverse_sequence_model("f32", [2, 3], "i64")
    xml = tmp_path / "m.xml"
    irexec.save_model(model, xml)
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    inputs = {"data": data, "seq_lengths": np.array([2**32 + 1, 3], np.int64)}
    with pytest.raises(irexec.IRError) as info:
        run_irexec(xml, inputs)
    assert "seq_lengths[0]" in str(info.value) and str(2**32 + 1) in str(info.value)
    theirs = run_openvino(ov, xml, inputs, ["y"])["y"]
    assert theirs.tolist() == [[0, 1, 2], [5, 4, 3]]


CONVERT_DIFFERENCES = [
    # (src, dst, value, what the CPU plugin gives); the exact answer comes from convert_reference
    ("i64", "i64", 2**40 + 5, 5),
    ("u32", "i64", 2**32 - 1, -1),
    ("u64", "u64", 2**63 + 7, 7),
    ("i32", "bf16", 12345, 12288.0),  # exact: 12352
    ("i32", "f64", 16777217, 16777216.0),
    ("f64", "f64", 0.1, 0.10000000149011612),
    ("f64", "f16", 1.0004882812509095, 1.0),  # exact: 1.0009765625
    ("f64", "bf16", 1.6, 1.59375),  # exact: 1.6015625
    ("f32", "f64", math.inf, 3.4028234663852886e38),
    ("f64", "f32", math.inf, 3.4028234663852886e38),
    # A subnormal: flushed where the plugin's bf16 path uses AVX-512, kept on AVX2-only CPUs.
    ("f32", "bf16", 1e-40, {0.0, float(np.float32(1e-40).astype(dtype_of("bf16")))}),
    ("i32", "boolean", -(2**31), False),
    ("u32", "boolean", 2**31, False),
    ("i64", "boolean", 2**32, False),
    ("f32", "boolean", math.nan, False),  # irexec: True, as C++ and OpenVINO's reference
    ("f32", "i64", 2.0**31, -(2**31)),
    ("f32", "u32", 4294967040.0, 2**31),
    ("f64", "u32", 2.0**31, 2**31 - 1),
]


def _exact(src: str, dst: str, value):
    x = np.array(value, dtype_of(src))[()]
    if dst == "boolean" and math.isnan(float(x)):
        return True
    if math.isinf(float(x)) and dst in ("f16", "bf16", "f32", "f64"):
        return float(x)
    return expected_in_range(x, dst)


def test_convert_differences(tmp_path):
    """Every documented lossy Convert family: irexec's exact answer, and what the CPU gives (a set
    where the answer depends on the machine's instruction set)."""
    b = ModelBuilder("convert_differences")
    inputs = {}
    for i, (src, dst, value, _) in enumerate(CONVERT_DIFFERENCES):
        inputs[f"in_{i}"] = np.array([value], dtype_of(src))
        b.result(b.op("Convert", b.parameter(f"in_{i}", src, [1]), destination_type=dst,
                      name=f"case_{i}"))
    xml = tmp_path / "m.xml"
    irexec.save_model(b.build(), xml)
    ours = run_irexec(xml, inputs)
    theirs = run_openvino(ov, xml, inputs, list(ours))
    now_exact = []
    for i, (src, dst, value, cpu) in enumerate(CONVERT_DIFFERENCES):
        got, ov_got = ours[f"case_{i}"].item(), theirs[f"case_{i}"].item()
        exact = _exact(src, dst, value)
        assert exact is not None and got == exact, (src, dst, value, got, exact)
        known = cpu if isinstance(cpu, set) else {cpu}
        assert ov_got in known, f"{src}->{dst} {value}: OpenVINO gives {ov_got}, expected {cpu}"
        if ov_got == got and got not in known:
            now_exact.append((src, dst, value))
    assert not now_exact, f"OpenVINO is exact now for {now_exact}"
