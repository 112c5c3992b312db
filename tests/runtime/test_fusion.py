"""The plan's weight-decompression pattern (irexec/runtime/fusion.py): a compressed Const ->
Convert -> [Subtract zero point] -> Multiply by scale -> [Reshape groups] -> [Convert] feeding
MatMul, Gather or Convolution is computed in f32 without rounding inside (as OpenVINO's plugins
compute it), unless the config asks for the IR-literal reading.

Each variant is checked against a plain numpy f32 computation of the weight (bit for bit) and of
the consumer (within the numeric contract), against the IR-literal reading (config
``{"decompression": "ir"}``: the f16 rounding the IR's types say), and against OpenVINO's CPU
plugin with dynamic quantization off (skipped without openvino)."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec import numerics
from irexec.builder import ModelBuilder
from irexec.ir import element_type as et_table
from irexec.kernels.convert import NF4_VALUES
from irexec.runtime import fusion

OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"}
F32 = et_table.from_name("f32")

# (storage type, asymmetric?) as NNCF and other converters write them
STORAGE = [("u8", True), ("u8", False), ("i8", False), ("i8", True), ("u4", True),
           ("u4", False), ("i4", False), ("nf4", False), ("f4e2m1", False), ("f8e4m3", False),
           ("f8e5m2", False), ("f16", False)]
N, K, GROUP = 6, 32, 8


def _dtype(name: str) -> np.dtype:
    return et_table.from_name(name).dtype


def _codes(storage: str, shape, rng) -> tuple[np.ndarray, np.ndarray]:
    """A compressed weight: the array the Const holds and its values in f32."""
    et = et_table.from_name(storage)
    if storage == "nf4":
        codes = rng.integers(0, 16, shape).astype(np.uint8)
        return et_table.from_codes(et, codes), NF4_VALUES[codes]
    if et.kind in ("int", "uint"):
        bounds = {"u8": (0, 256), "i8": (-128, 128), "u4": (0, 16), "i4": (-8, 8)}[storage]
        ints = rng.integers(*bounds, shape)
        return ints.astype(et.dtype), ints.astype(np.float32)
    values = rng.normal(0, 2, shape).astype(et.dtype)  # f4/f8/f16: rounded to the type
    return values, values.astype(np.float32)


def _case(storage, asymmetric, grouped, wide, seed=0):
    """The parts of one compressed [N, K] weight and its f32 value computed with numpy."""
    rng = np.random.default_rng(seed)
    groups = K // GROUP if grouped else 1
    shape = (N, groups, K // groups) if grouped else (N, K)
    stored, values = _codes(storage, shape, rng)
    sshape = (N, groups, 1) if grouped else (N, 1)
    scale = rng.uniform(0.001, 0.05, sshape).astype(_dtype(wide))
    zp = None
    if asymmetric:
        zp = rng.integers(0, 8, sshape).astype(_dtype(storage))
    w = values if zp is None else values - zp.astype(np.float32)
    expected = (w * scale.astype(np.float32)).astype(np.float32).reshape(N, K)
    return stored, zp, scale, expected


def _weight(b, storage, stored, zp, scale, wide, grouped):
    """The decompression subgraph, as NNCF writes it."""
    w = b.op("Convert", b.constant(stored, storage), destination_type=wide)
    if zp is not None:
        z = b.op("Convert", b.constant(zp, storage), destination_type=wide)
        w = b.op("Subtract", w, z)
    w = b.op("Multiply", w, b.constant(scale))
    if grouped:
        w = b.op("Reshape", w, b.constant(np.array([N, K], np.int64)), special_zero=False)
    if wide != "f32":
        w = b.op("Convert", w, destination_type="f32", name="weight")
    return w


def _matmul_model(storage, asymmetric, grouped, wide):
    stored, zp, scale, expected = _case(storage, asymmetric, grouped, wide)
    b = ModelBuilder("compressed_matmul")
    x = b.parameter("x", "f32", [3, K])
    w = _weight(b, storage, stored, zp, scale, wide, grouped)
    b.result(b.op("MatMul", x, w, transpose_a=False, transpose_b=True, name="y"))
    return b.build(), expected


def _x(seed=1):
    return np.random.default_rng(seed).normal(size=(3, K)).astype(np.float32)


def _root_value(compiled, inputs, name):
    seen = {}
    compiled(inputs, trace=lambda node, port, array: seen.setdefault(node.name, array))
    return seen[name]


def _root_name(model):
    (d,) = fusion.decompressions(model.nodes).values()
    return d.root.node.name


CASES = [(s, a, g, wide) for s, a in STORAGE for g in (False, True) for wide in ("f16", "f32")
         if not (s == "f16" and wide == "f16")]


def _id(case):
    s, a, g, wide = case
    return f"{s}-{'asym' if a else 'sym'}-{'grouped' if g else 'channel'}-{wide}"


def _tolerance_outside(ours, ref, x, w):
    tol = numerics.tolerance("accumulating", F32)
    magnitude = np.abs(x.astype(np.float64)) @ np.abs(w.astype(np.float64)).T
    return tol.outside(ours, ref, magnitude)


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_matmul_weight_is_the_f32_product(case):
    model, expected = _matmul_model(*case)
    assert len(fusion.decompressions(model.nodes)) == 1
    compiled = irexec.compile_model(model)
    x = _x()
    weight = _root_value(compiled, {"x": x}, _root_name(model))
    assert weight.dtype == np.float32 and np.array_equal(weight, expected)
    y = compiled({"x": x})[0]
    ref = x.astype(np.float64) @ expected.astype(np.float64).T
    assert not _tolerance_outside(y, ref, x, expected).any()


@pytest.mark.parametrize("case", [c for c in CASES if c[3] == "f16"], ids=_id)
def test_ir_reading_rounds_to_f16_as_the_types_say(case):
    storage, asymmetric, grouped, wide = case
    model, expected = _matmul_model(*case)
    stored, zp, scale, _ = _case(*case)
    compiled = irexec.compile_model(model, config={"decompression": "ir"})
    weight = _root_value(compiled, {"x": _x()}, "weight")
    # f16 Subtract and Multiply, each rounded to f16
    _, values = _codes(storage, stored.shape, np.random.default_rng(0))
    w = values.astype(np.float16)
    if zp is not None:
        w = (w.astype(np.float32) - zp.astype(np.float32)).astype(np.float16)
    w = (w.astype(np.float32) * scale.astype(np.float32)).astype(np.float16)
    literal = w.astype(np.float32).reshape(N, K)
    assert np.array_equal(weight, literal)
    if not np.array_equal(literal, expected):  # the default reading is the other one
        fused = _root_value(irexec.compile_model(model), {"x": _x()}, "weight")
        assert np.array_equal(fused, expected) and not np.array_equal(fused, weight)


def test_per_call_mode_gives_the_same_result_and_keeps_only_compressed_constants():
    model, expected = _matmul_model("u4", True, True, "f16")
    fused = irexec.compile_model(model)
    per_call = irexec.compile_model(model, config={"decompression": "per-call"})
    x = _x()
    assert np.array_equal(fused({"x": x})[0], per_call({"x": x})[0])
    assert not any(a.dtype == np.float32 and a.shape == (N, K)
                   for a in per_call.plan.constants.values())
    assert any(a.dtype == np.float32 and a.shape == (N, K)
               for a in fused.plan.constants.values())


def test_per_call_mode_on_large_weights_called_again():
    """Weights decompressed on every call, read by two layers and freed after the second: the
    same results as the fused mode, call after call."""
    rng = np.random.default_rng(3)
    n, k = 512, 256
    b = ModelBuilder("big")
    x = b.parameter("x", "f32", [4, k])
    codes = rng.integers(0, 256, (n, k)).astype(np.uint8)
    scale = rng.uniform(0.001, 0.01, (n, 1)).astype(np.float16)
    w = b.op("Multiply", b.op("Convert", b.constant(codes, "u8"), destination_type="f16"),
             b.constant(scale))
    w = b.op("Convert", w, destination_type="f32")
    h = b.op("MatMul", x, w, transpose_a=False, transpose_b=True)
    b.result(b.op("Relu", b.op("MatMul", h, b.op("Transpose", w, b.constant(
        np.array([1, 0], np.int64))), transpose_a=False, transpose_b=True)))
    model = b.build()
    compiled = irexec.compile_model(model, config={"decompression": "per-call"})
    fused = irexec.compile_model(model)
    feed = rng.normal(size=(4, k)).astype(np.float32)
    for _ in range(3):
        assert np.array_equal(compiled({"x": feed})[0], fused({"x": feed})[0])


def test_per_call_when_the_f32_weights_pass_the_budget():
    from irexec import budget

    # Two weights: each f32 weight fits the budget (one tensor), both together do not.
    stored, zp, scale, _ = _case("u8", True, False, "f16")
    b = ModelBuilder("two_compressed_matmuls")
    x = b.parameter("x", "f32", [3, K])
    w1 = _weight(b, "u8", stored, zp, scale, "f16", False)
    w2 = _weight(b, "u8", stored, zp, scale, "f16", False)
    y = b.op("MatMul", x, w1, transpose_a=False, transpose_b=True)
    b.result(b.op("MatMul", x, w2, transpose_a=False, transpose_b=True, name="z"))
    b.result(y)
    model = b.build()
    with budget.limit(2 * N * K * 4 - 1):
        compiled = irexec.compile_model(model)
    assert not any(a.dtype == np.float32 and a.shape == (N, K)
                   for a in compiled.plan.constants.values())
    assert sum(isinstance(s.kernel, fusion.Decompression) for s in compiled.plan.steps) == 2


def test_unknown_mode_is_a_clear_error():
    model, _ = _matmul_model("u8", True, False, "f16")
    with pytest.raises(ValueError, match="decompression"):
        irexec.compile_model(model, config={"decompression": "sometimes"})


def test_a_pattern_whose_values_are_read_elsewhere_is_still_computed():
    """The Multiply's f16 result also goes to a Result: that output keeps the IR's rounding,
    the MatMul reads the f32 product."""
    stored, zp, scale, expected = _case("u8", True, False, "f16")
    b = ModelBuilder("shared")
    x = b.parameter("x", "f32", [3, K])
    w = b.op("Convert", b.constant(stored, "u8"), destination_type="f16")
    w = b.op("Subtract", w, b.op("Convert", b.constant(zp, "u8"), destination_type="f16"))
    m = b.op("Multiply", w, b.constant(scale), name="m")
    b.result(b.op("MatMul", x, b.op("Convert", m, destination_type="f32", name="weight"),
                  transpose_a=False, transpose_b=True, name="y"))
    b.result(m)
    out = irexec.compile_model(b.build())({"x": _x()})
    ir = ((stored.astype(np.float32) - zp).astype(np.float16).astype(np.float32)
          * scale.astype(np.float32)).astype(np.float16)
    assert np.array_equal(out["m"], ir)
    ref = _x().astype(np.float64) @ expected.astype(np.float64).T
    assert not _tolerance_outside(out["y"], ref, _x(), expected).any()


def test_not_a_pattern_when_the_scale_is_an_input():
    stored, _, _, _ = _case("u8", True, False, "f16")
    b = ModelBuilder("plain")
    s = b.parameter("s", "f16", [N, K])
    w = b.op("Convert", b.constant(stored, "u8"), destination_type="f16")
    w = b.op("Multiply", w, s)
    b.result(b.op("MatMul", b.parameter("y", "f16", [3, K]), w, transpose_a=False,
                  transpose_b=True))
    assert fusion.decompressions(b.build().nodes) == {}


def _gather_model(storage, asymmetric, wide):
    stored, zp, scale, expected = _case(storage, asymmetric, False, wide)
    b = ModelBuilder("compressed_embedding")
    ids = b.parameter("ids", "i64", [2, 5])
    w = _weight(b, storage, stored, zp, scale, wide, False)
    b.result(b.op("Gather", w, ids, b.constant(np.array(0, np.int64)), version="opset8",
                  batch_dims=0, name="e"))
    return b.build(), expected


IDS = np.array([[0, 5, 2, 2, 1], [3, 4, 0, 1, 5]], np.int64)
GATHER = [("u8", True), ("i8", False), ("u4", True), ("i4", False), ("nf4", False)]


@pytest.mark.parametrize("storage,asymmetric", GATHER)
def test_gather_reads_the_f32_rows(storage, asymmetric):
    model, expected = _gather_model(storage, asymmetric, "f16")
    if storage == "nf4":  # an embedding's nf4 codebook is rounded to f16 first, as the plugin
        stored, _, scale, _ = _case(storage, asymmetric, False, "f16")
        values = NF4_VALUES[stored.view(np.uint8)].astype(np.float16).astype(np.float32)
        expected = values * scale.astype(np.float32)
    out = irexec.compile_model(model)({"ids": IDS})[0]
    assert np.array_equal(out, expected[IDS])


def _conv_model(storage, asymmetric, wide):
    rng = np.random.default_rng(3)
    shape = (4, 3, 3, 3)
    stored, values = _codes(storage, shape, rng)
    scale = rng.uniform(0.01, 0.1, (4, 1, 1, 1)).astype(_dtype(wide))
    zp = rng.integers(0, 8, (4, 1, 1, 1)).astype(stored.dtype) if asymmetric else None
    b = ModelBuilder("compressed_conv")
    x = b.parameter("x", "f32", [1, 3, 8, 8])
    w = b.op("Convert", b.constant(stored, storage), destination_type=wide)
    if zp is not None:
        w = b.op("Subtract", w, b.op("Convert", b.constant(zp, storage), destination_type=wide))
    w = b.op("Multiply", w, b.constant(scale))
    if wide != "f32":
        w = b.op("Convert", w, destination_type="f32", name="weight")
    b.result(b.op("Convolution", x, w, strides=[1, 1], pads_begin=[1, 1], pads_end=[1, 1],
                  dilations=[1, 1], name="y"))
    v = values if zp is None else values - zp.astype(np.float32)
    return b.build(), (v * scale.astype(np.float32)).astype(np.float32)


CONV = [("u8", True), ("i8", False), ("u4", True), ("i4", False)]


def _image():
    return np.random.default_rng(4).normal(size=(1, 3, 8, 8)).astype(np.float32)


@pytest.mark.parametrize("storage,asymmetric", CONV)
def test_convolution_reads_the_f32_weight(storage, asymmetric):
    model, expected = _conv_model(storage, asymmetric, "f16")
    compiled = irexec.compile_model(model)
    assert np.array_equal(_root_value(compiled, {"x": _image()}, "weight"), expected)


# --- against OpenVINO's CPU plugin ---------------------------------------------------------------

def _openvino(model, feed, tmp_path):
    ov = pytest.importorskip("openvino")
    xml = tmp_path / "m.xml"
    irexec.save_model(model, xml)
    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU", OV_CONFIG)
    return np.asarray(compiled(feed)[0])


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_matmul_agrees_with_openvino(case, tmp_path):
    model, expected = _matmul_model(*case)
    x = _x()
    theirs = _openvino(model, {"x": x}, tmp_path)
    ours = irexec.compile_model(model)({"x": x})[0]
    bad = _tolerance_outside(ours, theirs, x, expected)
    assert not bad.any(), float(np.abs(ours - theirs).max())


@pytest.mark.parametrize("storage,asymmetric", GATHER)
def test_gather_agrees_with_openvino(storage, asymmetric, tmp_path):
    model, _ = _gather_model(storage, asymmetric, "f16")
    theirs = _openvino(model, {"ids": IDS}, tmp_path)
    ours = irexec.compile_model(model)({"ids": IDS})[0]
    assert np.array_equal(ours, theirs), float(np.abs(ours - theirs).max())


@pytest.mark.parametrize("storage,asymmetric", CONV)
def test_convolution_agrees_with_openvino(storage, asymmetric, tmp_path):
    model, expected = _conv_model(storage, asymmetric, "f16")
    x = _image()
    theirs = _openvino(model, {"x": x}, tmp_path)
    ours = irexec.compile_model(model)({"x": x})[0]
    magnitude = np.abs(theirs).max() + 1.0
    tol = numerics.tolerance("accumulating", F32)
    assert not tol.outside(ours, theirs, magnitude * 27).any(), \
        float(np.abs(ours - theirs).max())


def test_run_command_takes_the_ir_reading_as_an_option(tmp_path):
    from tests.cli.inproc import irexec_cli

    model, expected = _matmul_model("u4", True, True, "f16")
    xml = tmp_path / "m.xml"
    irexec.save_model(model, xml)
    np.save(tmp_path / "x.npy", _x())
    outs = {}
    for mode in ("fused", "ir"):
        out = tmp_path / f"{mode}.npz"
        code, _, err = irexec_cli("run", xml, "--input", f"x={tmp_path / 'x.npy'}",
                                  "--decompression", mode, "--output", out)
        assert code == 0, err
        outs[mode] = np.load(out)["y"]
    ir = irexec.compile_model(model, config={"decompression": "ir"})({"x": _x()})[0]
    assert np.array_equal(outs["ir"], ir)
    assert np.array_equal(outs["fused"], irexec.compile_model(model)({"x": _x()})[0])
    assert not np.array_equal(outs["fused"], outs["ir"])
    with pytest.raises(SystemExit) as exit_:
        irexec_cli("run", xml, "--decompression", "sometimes")
    assert exit_.value.code == 2


# --- every NNCF compression mode, as NNCF writes it ------------------------------------------

NNCF_MODES = [("INT8_ASYM", None), ("INT8_SYM", None), ("INT4_SYM", 16), ("INT4_ASYM", 32),
              ("INT4_ASYM", -1), ("NF4", 16), ("FP4", 16), ("MXFP4", 32), ("FP8_E4M3", 16),
              ("MXFP8_E4M3", 32), ("CB4", 16), ("INT3_SYM", 16), ("INT2_SYM", 16),
              ("NVFP4", 16)]


@pytest.mark.parametrize("mode,group", NNCF_MODES, ids=[f"{m}-{g}" for m, g in NNCF_MODES])
def test_every_nncf_mode_agrees_with_openvino(mode, group, tmp_path):
    ov = pytest.importorskip("openvino")
    nncf = pytest.importorskip("nncf")
    import openvino.opset13 as ops

    rng = np.random.default_rng(11)
    x = ops.parameter([3, 64], np.float32, name="x")
    h = ops.matmul(x, ops.constant(rng.normal(size=(64, 64)).astype(np.float32)), False, True)
    y = ops.matmul(ops.relu(h), ops.constant(rng.normal(size=(32, 64)).astype(np.float32)),
                   False, True)
    model = ov.Model([ops.result(y)], [x])
    options = {"mode": getattr(nncf.CompressWeightsMode, mode)}
    if group is not None:
        options.update(group_size=group, ratio=1.0, all_layers=True)
    compressed = nncf.compress_weights(model, **options)
    xml = tmp_path / "m.xml"
    ov.save_model(compressed, str(xml), compress_to_fp16=False)
    ours_model = irexec.read_model(xml)
    assert len(fusion.decompressions(ours_model.nodes)) == 2, mode
    feed = rng.normal(size=(3, 64)).astype(np.float32)
    core = ov.Core()
    theirs = np.asarray(core.compile_model(core.read_model(str(xml)), "CPU", OV_CONFIG)(
        {"x": feed})[0])
    ours = irexec.compile_model(ours_model)({"x": feed})[0]
    tol = numerics.tolerance("accumulating", F32)
    magnitude = float(np.abs(theirs).max()) * 64
    assert not tol.outside(ours, theirs, magnitude).any(), float(np.abs(ours - theirs).max())


def test_a_codebook_and_a_computed_scale():
    """NNCF's CB4 (codes index an f8 codebook through a Gather) and NVFP4 (the scale is an f8
    scale times an f32 one, rounded to f16 as the IR says): the codebook and the scale are
    folded as the IR says, the Multiply computed in f32."""
    rng = np.random.default_rng(2)
    book = rng.normal(size=16).astype(_dtype("f8e4m3"))
    idx = rng.integers(0, 16, (N, K // GROUP, GROUP)).astype(np.uint8)
    small = rng.uniform(0.5, 2, (N, K // GROUP, 1)).astype(_dtype("f8e4m3"))
    big = np.array([[[0.0123]]], np.float32)
    b = ModelBuilder("cb4")
    x = b.parameter("x", "f32", [3, K])
    codes = b.op("Gather", b.op("Convert", b.constant(book, "f8e4m3"), destination_type="f16"),
                 b.op("Convert", b.constant(idx, "u4"), destination_type="u8"),
                 b.constant(np.array(0, np.int64)), version="opset8", batch_dims=0)
    scale = b.op("Convert", b.op("Multiply", b.op("Convert", b.constant(small, "f8e4m3"),
                                                  destination_type="f32"), b.constant(big)),
                 destination_type="f16")
    w = b.op("Reshape", b.op("Multiply", codes, scale), b.constant(np.array([N, K], np.int64)),
             special_zero=False)
    w = b.op("Convert", w, destination_type="f32", name="weight")
    b.result(b.op("MatMul", x, w, transpose_a=False, transpose_b=True, name="y"))
    model = b.build()
    assert len(fusion.decompressions(model.nodes)) == 1
    f16_scale = (small.astype(np.float32) * big).astype(np.float16).astype(np.float32)
    expected = (book.astype(np.float32)[idx] * f16_scale).reshape(N, K)
    weight = _root_value(irexec.compile_model(model), {"x": _x()}, "weight")
    assert np.array_equal(weight, expected)
