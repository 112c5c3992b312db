"""The activations run through the public path (ModelBuilder, compile_model): hand-computed
examples, hypothesis properties against float64 references (tests/ops/activation/cases.py) within
the tolerance table, integer inputs exact, special values, shapes, versions and bad inputs."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import irexec
from irexec import numerics
from irexec.errors import IRError
from irexec.ir import element_type as et_table
from irexec.builder import ModelBuilder
from irexec.ir.shape import PartialShape
from irexec.ops import registry
from tests.ops.activation.cases import CASES, reference
from tests.helpers_ir import op_family


def run(name, x, type_name=None, shape=None, precise=False):
    op, version, attrs, params, _ = CASES[name]
    type_name = type_name or et_table.from_dtype(x.dtype).name
    dtype = et_table.from_name(type_name).dtype
    b = ModelBuilder()
    p = b.parameter("x", type_name, list(x.shape) if shape is None else shape)
    inputs = [b.constant(np.asarray(v, np.float32).astype(dtype)) for v in params]
    b.result(b.op(op, p, *inputs, version=version, name="y", **attrs))
    config = {"precision": "f64"} if precise else None
    return irexec.compile_model(b.build(), config=config)({"x": x})["y"]


def one(type_name, op, version, *inputs, **attrs):
    """Build one layer on a parameter of the given shape; returns the model (or raises)."""
    b = ModelBuilder()
    ports = []
    for i, spec in enumerate(inputs):
        if isinstance(spec, np.ndarray):
            ports.append(b.constant(spec))
        else:
            et, shape = spec
            ports.append(b.parameter(f"p{i}", et, shape))
    b.result(b.op(op, *ports, version=version, name="y", **attrs))
    return b.build()


# --- hand-computed examples (the specs' formulas on simple values) ------------------------------

def test_examples():
    x = np.array([-2.0, -0.5, 0.0, 0.5, 3.0], np.float32)
    np.testing.assert_array_equal(run("relu", x), [0, 0, 0, 0.5, 3])
    np.testing.assert_array_equal(run("clamp", x), [-1.5, -0.5, 0, 0.5, 2.25])
    np.testing.assert_array_equal(run("hsigmoid", x), np.float32([1 / 6, 2.5 / 6, 0.5, 3.5 / 6, 1]))
    np.testing.assert_array_equal(run("hard_sigmoid", x), [0, 0.375, 0.5, 0.625, 1])
    np.testing.assert_allclose(run("sigmoid", np.float32([0, math.log(3)])), [0.5, 0.75],
                               rtol=1e-7)
    np.testing.assert_array_equal(run("softsign", np.float32([-3, 1])), [-0.75, 0.5])
    np.testing.assert_array_equal(run("softmax8", np.zeros((2, 4), np.float32)),
                                  np.full((2, 4), 0.25, np.float32))
    np.testing.assert_allclose(run("log_softmax", np.zeros((1, 4), np.float32)),
                               np.full((1, 4), -math.log(4)), rtol=1e-7)
    prelu = run("prelu", np.array([[-4.0, -4.0, -4.0], [1, 2, 3]], np.float32).reshape(2, 3, 1))
    np.testing.assert_array_equal(prelu.reshape(2, 3), [[-1, 2, -8], [1, 2, 3]])


# --- against float64 references -----------------------------------------------------------------

FLOATS = ["f32", "f64", "f16", "bf16"]


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("type_name", FLOATS)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_within_the_table_of_a_float64_reference(name, type_name, data):
    shape = (2, 3, 5)
    values = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-12, 12, width=32)))
    x = values.astype(et_table.from_name(type_name).dtype)
    op = CASES[name][0]
    et = et_table.from_name(type_name)
    expected = reference(name, x.astype(np.float64))
    family = op_family(op)
    tol = numerics.tolerance(family, et, against_openvino=False)
    magnitude = 1.0 if family == numerics.ACCUMULATING else None
    for precise in (False, True):
        got = run(name, x, precise=precise)
        assert got.dtype == x.dtype and got.shape == x.shape
        bad = tol.outside(got, expected.astype(x.dtype).astype(np.float64)
                          if et.bits < 32 else expected, magnitude)
        assert not bad.any(), (name, precise, x[bad], got[bad], expected[bad])


@pytest.mark.parametrize("name", ["sigmoid", "gelu_erf", "elu", "mish", "softmax8", "swish"])
def test_precise_mode_rounds_the_float64_value_once(name):
    x = np.random.default_rng(3).uniform(-5, 5, (2, 3, 7)).astype(np.float16)
    expected = reference(name, x.astype(np.float64)).astype(np.float16)  # one rounding
    got = run(name, x, precise=True)
    # the reference is exact to ~1e-15: only a value within that of a rounding tie could differ
    assert numerics.ulps(got, expected, et_table.from_name("f16")).max() <= 1
    assert np.mean(got == expected) > 0.97


# --- integers: exact ---------------------------------------------------------------------------

@pytest.mark.parametrize("type_name", ["i8", "i32", "i64", "u8", "u32"])
def test_integer_relu_clamp_prelu_are_exact(type_name):
    dtype = et_table.from_name(type_name).dtype
    info = np.iinfo(dtype)
    x = np.array([info.min, -3, -1, 0, 1, 2, 3, info.max], dtype=np.int64).astype(dtype)
    np.testing.assert_array_equal(run("relu", x), np.maximum(x, 0))
    # Clamp's bounds -1.5 and 2.25 become ceil(-1.5) = -1 and floor(2.25) = 2 (0 for unsigned)
    low = -1 if info.min < 0 else 0
    assert run("clamp", x).tolist() == np.clip(x, low, 2).tolist()
    m = one(type_name, "PRelu", "opset1", (type_name, [8]), np.array([3], dtype))
    out = irexec.compile_model(m)({"p0": x})["y"]
    wrapped = (x.astype(np.int64) * 3).astype(dtype)  # integer products wrap
    assert out.tolist() == np.where(x < 0, wrapped, x).tolist()


def test_clamp_bounds_saturate_for_integers():
    m = one("u8", "Clamp", "opset1", ("u8", [3]), min=-5.0, max=1e9)
    out = irexec.compile_model(m)({"p0": np.array([0, 7, 255], np.uint8)})["y"]
    assert out.tolist() == [0, 7, 255]


# --- special values, shapes --------------------------------------------------------------------

def test_nan_and_infinities():
    x = np.array([np.nan, np.inf, -np.inf, -0.0], np.float32)
    assert run("relu", x).tolist() == [0, np.inf, 0, 0]  # OpenVINO's x > 0 ? x : 0
    assert not np.signbit(run("relu", x)[3])
    s = run("sigmoid", x)
    assert math.isnan(s[0]) and s[1] == 1 and s[2] == 0
    sp = run("softplus", x)
    assert math.isnan(sp[0]) and sp[1] == np.inf and sp[2] == 0
    assert math.isnan(run("clamp", x)[0])  # NaN stays NaN (the spec; OpenVINO's CPU gives min)


@pytest.mark.parametrize("name", ["relu", "sigmoid", "gelu_tanh", "softmax8", "prelu", "swish"])
def test_zero_size(name):
    x = np.zeros((2, 3, 0), np.float32)
    assert run(name, x).shape == (2, 3, 0)


def test_scalars_and_dynamic_shapes():
    assert run("sigmoid", np.array(0.0, np.float32)).tolist() == 0.5
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(run("gelu_erf", x, shape=[-1, -1]), run("gelu_erf", x))
    np.testing.assert_array_equal(run("softmax8", x, shape=[(1, 5), 4]), run("softmax8", x))


def test_in_place_gives_the_same_values():
    """A chain where each input dies at its layer (so the kernel may write over it)."""
    b = ModelBuilder()
    y = b.parameter("x", "f32", [1 << 15])
    for op, version in (("Sigmoid", "opset1"), ("HSwish", "opset4"), ("Mish", "opset4"),
                        ("Relu", "opset1")):
        y = b.op(op, y, version=version)
    b.result(y, "y")
    # each layer a step of its own: fused into one step, the chain writes over its own values
    compiled = irexec.compile_model(b.build(), config={"fusion": "off"})
    x = np.random.default_rng(0).normal(size=1 << 15).astype(np.float32)
    first = compiled({"x": x.copy()})
    out = list(first.values())[0]
    s = 1 / (1 + np.exp(-x.astype(np.float64)))
    h = s * np.clip(s + 3, 0, 6) / 6
    m = h * np.tanh(np.log1p(np.exp(h)))
    np.testing.assert_allclose(out, np.maximum(m, 0), rtol=1e-6)
    assert any(s.in_place is not None for s in compiled.plan.steps)


# --- versions ----------------------------------------------------------------------------------

@pytest.mark.parametrize("op,first,last", [
    ("Relu", 1, 16), ("Sigmoid", 1, 16), ("Clamp", 1, 16), ("Elu", 1, 16), ("PRelu", 1, 16),
    ("Selu", 1, 16), ("HardSigmoid", 1, 16), ("Gelu", 2, 16), ("Swish", 4, 16),
    ("HSwish", 4, 16), ("Mish", 4, 16), ("SoftPlus", 4, 16), ("HSigmoid", 5, 16),
    ("SoftSign", 9, 16), ("Softmax", 1, 16), ("LogSoftmax", 5, 16), ("ConvertLike", 1, 16),
    ("ConvertPromoteTypes", 14, 16), ("FakeQuantize", 1, 16), ("FakeConvert", 13, 16)])
def test_opsets_hold_each_op_as_openvino_does(op, first, last):
    """Measured with OpenVINO 2026.4.1: opset17 is partial and holds none of them."""
    for n in range(1, 18):
        inside = first <= n <= last
        try:
            registry.lookup(op, f"opset{n}")
            found = True
        except registry.LookupFailure:
            found = False
        assert found == inside, (op, n)


def test_version_picks_the_right_semantics():
    assert registry.lookup("Gelu", "opset6").spec.since == 2
    assert registry.lookup("Gelu", "opset7").spec.since == 7
    assert registry.lookup("Softmax", "opset7").spec.attr("axis").kind == "uint"
    assert registry.lookup("Softmax", "opset8").spec.attr("axis").kind == "int"


# --- bad inputs --------------------------------------------------------------------------------

def code_of(fn) -> str:
    with pytest.raises(IRError) as e:
        fn()
    (d,) = e.value.diagnostics
    return d.code


@pytest.mark.parametrize("build,code", [
    (lambda: one("f32", "Clamp", "opset1", ("f32", [2]), min=2.0, max=1.0), "IR320"),
    (lambda: one("f32", "Clamp", "opset1", ("f32", [2]), min=float("nan"), max=1.0), "IR320"),
    (lambda: one("f32", "Selu", "opset1", ("f32", [2]), ("f32", [2]), ("f32", [1])), "IR321"),
    (lambda: one("f32", "HardSigmoid", "opset1", ("f32", [2]), ("f32", []), ("f32", [3])),
     "IR321"),
    (lambda: one("f32", "PRelu", "opset1", ("f32", [2, 3, 4]), ("f32", [5])), "IR322"),
    (lambda: one("f32", "PRelu", "opset1", ("f32", [2, 3]), ("f32", [2, 2, 3])), "IR322"),
    (lambda: one("i32", "Sigmoid", "opset1", ("i32", [2])), "IR304"),
    (lambda: one("f32", "PRelu", "opset1", ("f32", [2]), ("f16", [2])), "IR304"),
    (lambda: one("boolean", "Relu", "opset1", ("boolean", [2])), "IR304"),
    (lambda: one("f32", "Swish", "opset4", ("f32", [2]), ("f32", [1])), "IR305"),
    (lambda: one("f32", "Softmax", "opset8", ("f32", [2, 3]), axis=2), "IR306"),
    (lambda: one("f32", "Softmax", "opset8", ("f32", [2, 3]), axis=-3), "IR306"),
    (lambda: one("f32", "LogSoftmax", "opset5", ("f32", PartialShape.dynamic()), axis=-1), "IR315"),
    (lambda: one("f32", "Gelu", "opset7", ("f32", [2]), approximation_mode="fast"), "IR302"),
    (lambda: one("f32", "Softmax", "opset1", ("f32", [2]), axis=-1), "IR302"),
])
def test_bad_inputs_have_one_code(build, code):
    assert code_of(build) == code


def test_bf16_narrow_types_compute_in_f32_and_round_once():
    x = np.array([0.3, -1.7, 2.9], np.float32).astype(ml_dtypes.bfloat16)
    wide = 1 / (1 + np.exp(-x.astype(np.float32)))
    assert run("sigmoid", x).tolist() == wide.astype(ml_dtypes.bfloat16).tolist()


# --- attributes written back -------------------------------------------------------------------

@pytest.mark.parametrize("op,version,attrs", [
    ("Elu", "opset1", {"alpha": 1e-05}),
    ("Clamp", "opset1", {"min": float("-inf"), "max": 6.0}),
    ("Clamp", "opset1", {"min": -0.5, "max": float("inf")}),
    ("Gelu", "opset7", {"approximation_mode": "tanh"}),
    ("Softmax", "opset8", {"axis": -1}),
    ("LogSoftmax", "opset5", {"axis": 0}),
])
def test_float_and_enum_attributes_round_trip_through_the_ir(op, version, attrs, tmp_path):
    b = ModelBuilder()
    b.result(b.op(op, b.parameter("x", "f32", [2, 3]), version=version, name="y", **attrs))
    path = tmp_path / "m.xml"
    irexec.save_model(b.build(), path)
    text = path.read_text()
    for key, value in attrs.items():
        spelled = {float("inf"): "inf", float("-inf"): "-inf", 1e-05: "1e-05"}.get(value, value)
        assert f'{key}="{spelled}"' in text
    (node,) = [n for n in irexec.read_model(path).nodes if n.name == "y"]
    assert {k: node.attrs[k] for k in attrs} == attrs
    x = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(irexec.compile_model(irexec.read_model(path))({"x": x})["y"],
                                  irexec.compile_model(b.build())({"x": x})["y"])


@pytest.mark.parametrize("type_name", ["f8e4m3", "f8e5m2"])
@pytest.mark.parametrize("name", ["sigmoid", "gelu_tanh", "softmax8", "hswish", "clamp"])
def test_f8_computes_in_f32_and_rounds_once(type_name, name):
    dtype = et_table.from_name(type_name).dtype
    x = np.linspace(-4, 4, 30).reshape(2, 3, 5).astype(dtype)
    got = run(name, x)
    expected = reference(name, x.astype(np.float64))
    tol = numerics.tolerance(op_family(CASES[name][0]), et_table.from_name(type_name),
                             against_openvino=False)
    magnitude = 1.0 if op_family(CASES[name][0]) == numerics.ACCUMULATING else None
    assert got.dtype == dtype
    assert not tol.outside(got, expected.astype(dtype), magnitude).any()


@pytest.mark.parametrize("dtype, snan", [(np.float32, 0x7F800001), (np.float64, 0x7FF0000000000001)])
@pytest.mark.parametrize("size", [1, 13, 300_001])
def test_relu_of_every_nan_is_zero(dtype, snan, size):
    """x > 0 ? x : 0 gives 0 for a NaN, signalling or quiet, wherever it sits (numpy's fmax
    keeps a signalling NaN in its scalar loop: an array's last elements, strided arrays)."""
    from irexec.ops.activation.unary import relu
    rng = np.random.default_rng(size)
    x = rng.standard_normal(size).astype(dtype)
    bits = x.view(np.uint32 if dtype == np.float32 else np.uint64)
    where = rng.choice(size, size=min(size, 5), replace=False)
    bits[where] = snan
    bits[-1] = snan | (1 << (bits.dtype.itemsize * 8 - 1))  # a negative signalling NaN last
    for src in (x, x[::-1]):  # contiguous, and a strided (reversed) view
        out = np.empty(size, dtype)
        relu(src, out)
        np.testing.assert_array_equal(out, np.where(src > 0, src, 0).astype(dtype))
        assert not np.signbit(out).any()
    assert np.isnan(x).sum() == len(set(where.tolist()) | {size - 1})


@pytest.mark.parametrize("dtype, itype", [(np.float32, np.uint32), (np.float64, np.uint64)])
def test_relu_on_the_bits_is_the_definition_bit_for_bit(dtype, itype):
    """f32 and f64 Relu clips the bits as integers (unary._relu_bits): on random bits (every
    sign, subnormals, infinities, NaNs of both signs), ±0.0 and the largest values, strided,
    reversed and in place, the result is x > 0 ? x : +0.0 bit for bit."""
    from irexec.ops.activation.unary import relu
    rng = np.random.default_rng(3)
    bits = rng.integers(0, np.iinfo(itype).max, 20_010, dtype=itype, endpoint=True)
    info = np.finfo(dtype)
    edges = np.array([0.0, -0.0, np.inf, -np.inf, info.max, -info.max, info.smallest_subnormal,
                      -info.smallest_subnormal, info.tiny, -info.tiny], dtype)
    x = np.concatenate([bits.view(dtype), edges, rng.standard_normal(1008).astype(dtype)])
    for src in (x, x[::3], x[::-1], x.reshape(7, -1)[:, 1:]):
        want = np.where(src > 0, src, dtype(0)).view(itype)
        out = np.empty(src.shape, dtype)
        relu(src, out)
        np.testing.assert_array_equal(out.view(itype), want)
        own = src.copy()
        relu(own, own)
        np.testing.assert_array_equal(own.view(itype), want)
