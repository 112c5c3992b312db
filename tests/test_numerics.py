"""The numeric contract (docs/numerics.md): the one tolerance table and its measures, the single
rounding of precise mode, and precise mode itself."""

from __future__ import annotations

import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import irexec
from irexec import numerics
from irexec.ir import element_type as et_table
from irexec.builder import ModelBuilder
from irexec.kernels.numeric import round_once
from irexec.ops import registry

DOC = Path(__file__).parent.parent / "docs" / "numerics.md"
ET = et_table.from_name


def test_the_documented_table_is_the_codes():
    text = DOC.read_text()
    m = re.search(r"<!-- numerics table: begin -->\n(.*?)\n<!-- numerics table: end -->", text,
                  re.S)
    assert m and m.group(1) == numerics.markdown_table()
    for family, (r, a, c) in numerics.FAMILIES.items():
        assert re.search(rf"^\| {family} \|.*\| {r:g} eps \| {a:g} eps \| {c:g} \|$", text,
                         re.M), family


ISSUE_16_OPS = ["Relu", "Sigmoid", "Clamp", "Elu", "Gelu", "Swish", "HSwish", "HSigmoid", "Mish",
                "SoftPlus", "SoftSign", "PRelu", "Selu", "HardSigmoid", "Softmax", "LogSoftmax",
                "ConvertLike", "ConvertPromoteTypes", "FakeQuantize", "FakeConvert"]


@pytest.mark.parametrize("op", ISSUE_16_OPS)
def test_every_op_has_its_family(op):
    assert registry.lookup(op, "opset16").spec.numerics in numerics.FAMILIES


def test_integer_and_boolean_results_are_always_exact():
    for name in ("i8", "u64", "boolean", "i4"):
        assert numerics.tolerance(numerics.TRANSCENDENTAL, ET(name)).exact


def test_narrower_types_get_looser_tolerances():
    for family in (numerics.ROUNDED, numerics.TRANSCENDENTAL, numerics.ACCUMULATING):
        f32, f16, bf16 = (numerics.tolerance(family, ET(n)) for n in ("f32", "f16", "bf16"))
        assert f32.rtol < f16.rtol < bf16.rtol
        # against OpenVINO f64 is computed as f32; against precise mode it is not
        assert numerics.tolerance(family, ET("f64")).rtol == f32.rtol
        assert numerics.tolerance(family, ET("f64"), against_openvino=False).rtol < 1e-14
    assert numerics.tolerance(numerics.EXACT, ET("f32")).exact


def test_outside_matches_nan_and_equal_infinities():
    tol = numerics.tolerance(numerics.TRANSCENDENTAL, ET("f32"))
    ours = np.array([np.nan, np.inf, -np.inf, 1.0, 1.0, 0.0], np.float32)
    ref = np.array([np.nan, np.inf, np.inf, 1.0 + 1e-6, 1.1, np.nan], np.float32)
    assert tol.outside(ours, ref).tolist() == [False, False, True, False, True, True]


def test_accumulation_allows_error_relative_to_the_sum_of_magnitudes():
    tol = numerics.tolerance(numerics.ACCUMULATING, ET("f32"))
    ours, ref = np.float32([1e-3]), np.float32([1e-3 + 1e-4])
    assert tol.outside(ours, ref).all()
    assert not tol.outside(ours, ref, magnitude=1e4).any()  # 4 eps * 1e4 > 1e-4


def test_ulps():
    one_up = np.nextafter(np.float32(1), np.float32(2))
    assert numerics.ulps(np.float32([one_up]), np.float32([1]), ET("f32")).tolist() == [1.0]
    h = np.float16(1000)
    assert numerics.ulps(np.float16([1001.0]), np.float16([h]), ET("f16")).tolist() == [2.0]
    # below the normal range the unit is the smallest subnormal
    tiny = np.float32(1e-45)
    assert numerics.ulps(np.float32([3 * tiny]), np.float32([0]), ET("f32")).tolist() == [3.0]
    e = numerics.errors(np.float32([1, 2.5]), np.float32([1, 2]), ET("f32"))
    assert (e.max_abs, e.max_rel) == (0.5, 0.25) and e.max_ulps == 0.5 / 2 ** -22


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn,
                                   ml_dtypes.float8_e5m2, np.float16])
def test_round_once_is_the_nearest_value(dtype):
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-3, 3, 20000), [1 + 2 ** -8 + 2 ** -30]])
    got = round_once(x, np.dtype(dtype)).astype(np.float64)
    width = np.dtype(dtype).itemsize
    every = np.arange(1 << (8 * width), dtype=f"u{width}").view(dtype).astype(np.float64)
    every = np.unique(every[np.isfinite(every)])
    i = np.searchsorted(every, x)
    lo, hi = every[i - 1], every[i]
    nearest = np.where(x - lo < hi - x, lo, np.where(hi - x < x - lo, hi, np.nan))
    decided = ~np.isnan(nearest)
    assert np.array_equal(got[decided], nearest[decided])
    if dtype is ml_dtypes.bfloat16:
        assert got[-1] == 1.0078125  # ml_dtypes alone gives 1.0 (two roundings)


# --- precise mode --------------------------------------------------------------------------------

def _chain(type_name):
    b = ModelBuilder()
    x = b.parameter("x", type_name, [64])
    y = b.op("Sigmoid", x, name="s")
    y = b.op("Gelu", y, version="opset7", approximation_mode="tanh", name="g")
    y = b.op("Softmax", y, version="opset8", axis=0, name="sm")
    b.result(y, "y")
    return b.build()


@pytest.mark.parametrize("type_name", ["f16", "bf16", "f32"])
def test_precise_mode_rounds_each_layer_once(type_name):
    dtype = ET(type_name).dtype
    x = np.random.default_rng(1).uniform(-4, 4, 64).astype(dtype)
    got = irexec.compile_model(_chain(type_name), config={"precision": "f64"})({"x": x})
    (out,) = got.values()
    # layer by layer: the float64 function of the rounded input, rounded once
    s = round_once(1 / (1 + np.exp(-x.astype(np.float64))), dtype).astype(np.float64)
    g = round_once(0.5 * s * (1 + np.tanh(np.sqrt(2 / np.pi) * (s + 0.044715 * s ** 3))),
                   dtype).astype(np.float64)
    e = np.exp(g - g.max())
    expected = round_once(e / e.sum(), dtype)
    assert out.dtype == dtype
    assert numerics.ulps(out, expected, ET(type_name)).max() <= (0 if type_name != "f32" else 1)


def test_precise_mode_wraps_only_float_layers_that_compute():
    b = ModelBuilder()
    x = b.parameter("x", "f32", [4])
    i = b.parameter("i", "i32", [4])
    b.result(b.op("Sigmoid", x, name="s"), "s")
    b.result(b.op("Relu", i, name="r"), "r")
    b.result(b.op("Clamp", x, min=0.0, max=1.0, name="c"), "c")
    model = b.build()
    precise = irexec.compile_model(model, config={"precision": "f64"})
    wrapped = {s.layer: hasattr(s.kernel, "__wrapped__") for s in precise.plan.steps}
    assert wrapped == {"s": True, "r": False, "c": False}
    default = irexec.compile_model(model)
    assert not any(hasattr(s.kernel, "__wrapped__") for s in default.plan.steps)
    out = precise({"x": np.float32([0, 1, 2, 3]), "i": np.int32([-1, 0, 1, 2])})
    assert out["s"].dtype == np.float32 and out["r"].tolist() == [0, 0, 1, 2]


def _special_values(dtype, n, rng):
    """n values of a float type: random bits (subnormals, infinities and NaNs among them),
    and small integers and halves (where ties to even decide)."""
    bits = rng.integers(0, 2 ** (8 * np.dtype(dtype).itemsize), n, dtype=np.uint64)
    raw = bits.astype(f"u{np.dtype(dtype).itemsize}").view(dtype)
    easy = (rng.integers(-64, 64, n) / 2).astype(dtype)
    return np.where(rng.random(n) < 0.5, raw, easy)


ONE_ROUNDING = [("Add", 2), ("Subtract", 2), ("Multiply", 2), ("Divide", 2), ("Sqrt", 1)]


@pytest.mark.parametrize("type_name", ["f32", "f16", "bf16", "f8e4m3", "f8e5m2"])
@pytest.mark.parametrize("op,arity", ONE_ROUNDING)
def test_one_rounding_ops_give_precise_results_without_float64(op, arity, type_name):
    """Add, Subtract, Multiply, Divide and Sqrt are one correctly rounded operation each:
    precise mode runs their default kernel, and that is exactly what computing in float64 and
    rounding once gives (f32 holds more than 2p+2 bits of every narrower type's p; f32 itself
    rounds once). Checked against the float64 computation on random bits of every kind."""
    dtype = ET(type_name).dtype
    rng = np.random.default_rng(len(op) * 7 + len(type_name))
    b = ModelBuilder()
    xs = [b.parameter(f"x{i}", type_name, [20_000]) for i in range(arity)]
    b.result(b.op(op, *xs, name="y"), "y")
    model = b.build()
    precise = irexec.compile_model(model, config={"precision": "f64"})
    (step,) = precise.plan.steps
    assert not hasattr(step.kernel, "__wrapped__")  # not widened to float64
    inputs = {f"x{i}": _special_values(dtype, 20_000, rng) for i in range(arity)}
    (got,) = precise(inputs).values()
    with np.errstate(all="ignore"):
        wide = [v.astype(np.float64) for v in inputs.values()]
        exact = {"Add": np.add, "Subtract": np.subtract, "Multiply": np.multiply,
                 "Divide": np.divide, "Sqrt": np.sqrt}[op](*wide)
    expected = round_once(exact, dtype)
    nan = np.isnan(expected.astype(np.float64))
    assert np.array_equal(np.isnan(got.astype(np.float64)), nan)
    assert np.array_equal(got[~nan].view(f"u{dtype.itemsize}"),
                          expected[~nan].view(f"u{dtype.itemsize}"))


@pytest.mark.parametrize("config", [{"precision": "f16"}, {"precison": "f64"}])
def test_bad_config_is_one_clear_error(config):
    with pytest.raises(ValueError, match="precision|config"):
        irexec.compile_model(_chain("f32"), config=config)


def test_run_precise_on_the_command_line(tmp_path):
    from tests.cli.inproc import irexec_cli

    path = tmp_path / "chain.xml"
    irexec.save_model(_chain("f16"), path)
    x = np.random.default_rng(2).uniform(-4, 4, 64).astype(np.float16)
    np.save(tmp_path / "x.npy", x)
    code, out, err = irexec_cli("run", path, "--precise", "--input", f"x={tmp_path / 'x.npy'}",
                                "--output", tmp_path / "out.npz")
    assert code == 0, err
    got = np.load(tmp_path / "out.npz")
    expected = irexec.compile_model(_chain("f16"), config={"precision": "f64"})({"x": x})
    assert all(np.array_equal(got[k], v) for k, v in expected.items())


def test_an_op_declares_its_family_in_its_spec():
    from irexec.ops.spec import OpSpec
    from tests.helpers_ir import op_family
    assert op_family("HSwish") == numerics.ROUNDED
    assert op_family("ReduceMax") == numerics.EXACT  # selects: no rounding of its own
    assert op_family("Transpose") == numerics.EXACT  # declares none, but only moves data
    assert numerics.family(OpSpec(type="Mine", since=1)) == numerics.ACCUMULATING
    with pytest.raises(ValueError, match="unknown numeric family 'fuzzy'"):
        OpSpec(type="Mine", since=1, numerics="fuzzy")


def test_precise_mode_reaches_into_loop_bodies():
    """A TensorIterator's body (h = tanh(x W + h R), tests/data/subgraphs) computes in float64
    in precise mode as the layers outside do: each body layer rounds once to f32."""
    from pathlib import Path
    path = Path(__file__).parent / "data" / "subgraphs" / "tensor_iterator_cell.xml"
    model = irexec.read_model(path)
    rng = np.random.default_rng(7)
    seq = rng.standard_normal((5, 1, 128)).astype(np.float32) * 30
    h0 = rng.standard_normal((1, 128)).astype(np.float32) * 30
    precise = irexec.compile_model(model, config={"precision": "f64"})
    (runner,) = precise.plan.bodies[0][1].values()
    every, last = (np.asarray(v) for v in precise({"seq": seq, "h0": h0}).values())
    assert runner._model().precision == "f64"
    w, r = np.float64(0.01), np.float64(-0.02)  # the body's broadcast weights, [128, 128]
    h, expected = h0, []
    for x in seq:
        xw = (x.astype(np.float64).sum(axis=1, keepdims=True) * w).astype(np.float32)
        hr = (h.astype(np.float64).sum(axis=1, keepdims=True) * r).astype(np.float32)
        a = (xw.astype(np.float64) + hr).astype(np.float32)
        h = np.broadcast_to(np.tanh(a.astype(np.float64)).astype(np.float32), (1, 128))
        expected.append(h)
    np.testing.assert_array_equal(last, expected[-1])
    np.testing.assert_array_equal(every.reshape(5, 1, 128), np.stack(expected))
