"""f16 and bf16 element-wise functions by table and on their bits (irexec/kernels/half.py) give
exactly the results of computing them directly (in f32, rounded once: docs/numerics.md): every
one of the 65,536 bit patterns, NaN payloads and signed zeros included, in any order and layout,
through compiled models and the in-place kernels."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec.builder import ModelBuilder
from irexec.kernels import half
from irexec.ops.activation import unary as activations
from irexec.ops.activation.elu import Elu
from irexec.ops.arithmetic import unary as arithmetic
from tests.ops.activation.cases import CASES

HALVES = {"f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16)}
EVERY = np.arange(1 << 16, dtype=np.uint16)
ELEMENTWISE = [name for name, case in CASES.items()
               if case[0] not in ("PRelu", "Softmax", "LogSoftmax")]
EXTRA = {  # more attributes: signed zero bounds, a bound between two halves, a negative alpha
    "clamp_zero": ("Clamp", "opset1", {"min": -0.0, "max": 0.0}, ()),
    "clamp_between": ("Clamp", "opset1", {"min": -1e-4, "max": 0.1}, ()),
    "elu_negative": ("Elu", "opset1", {"alpha": -2.5}, ()),
}


def _case(name):
    return EXTRA[name] if name in EXTRA else CASES[name][:4]


def _model(name, type_name, n):
    op, version, attrs, params = _case(name)
    dtype = HALVES[type_name]
    b = ModelBuilder()
    p = b.parameter("x", type_name, [n])
    inputs = [b.constant(np.asarray(v, np.float32).astype(dtype)) for v in params]
    b.result(b.op(op, p, *inputs, version=version, name="y", **attrs))
    return irexec.compile_model(b.build())


def _bits(a):
    return np.asarray(a).view(np.uint16)


def assert_same(got, expected):
    """Bit for bit, except that a NaN need only be a NaN: numpy's own f32 loops (tanh's) give
    different NaN bits for the same input at different places in an array (a canonical NaN in
    the vector loop's last part, the input's payload elsewhere), so no NaN payload is part of
    the contract (docs/numerics.md)."""
    nan = np.isnan(np.asarray(expected).astype(np.float32))
    np.testing.assert_array_equal(np.isnan(np.asarray(got).astype(np.float32)), nan)
    np.testing.assert_array_equal(_bits(got)[~nan], _bits(expected)[~nan])


@st.composite
def every_value(draw):
    """All 65,536 bit patterns in a drawn order, some of them twice (the table's own order is
    never the order that built it)."""
    seed = draw(st.integers(0, 2**32 - 1))
    extra = draw(st.integers(0, 5000))
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.permutation(EVERY), rng.integers(0, 1 << 16, extra,
                                                                dtype=np.uint16)])


@pytest.mark.parametrize("type_name", HALVES)
@pytest.mark.parametrize("name", ELEMENTWISE + list(EXTRA))
@settings(max_examples=3, deadline=None)
@given(bits=every_value())
def test_activation_on_every_value_is_the_direct_result(name, type_name, bits):
    x = bits.view(HALVES[type_name])
    model = _model(name, type_name, x.size)
    with half.direct():
        expected = model({"x": x})["y"]
    if _case(name)[0] == "Relu":  # x > 0 ? x : +0.0 (see test_any_size_and_layout...)
        expected = np.where(x.astype(np.float32) > 0, x, np.zeros((), x.dtype))
    assert_same(model({"x": x})["y"], expected)


@pytest.mark.parametrize("type_name", HALVES)
@pytest.mark.parametrize("name", sorted(arithmetic.OPS))
def test_unary_arithmetic_on_every_value_is_the_direct_result(name, type_name):
    kernel = arithmetic.OPS[name].kernel
    x = np.random.default_rng(7).permutation(EVERY).view(HALVES[type_name])
    attrs = {"mode": "half_away_from_zero"} if name == "Round" else {}
    with half.direct():
        expected = kernel(x, **attrs)
    assert_same(kernel(x, **attrs), expected)
    assert_same(arithmetic.OPS[name].spec.in_place(x.copy(), **attrs), expected)  # over its input


@pytest.mark.parametrize("type_name", HALVES)
@pytest.mark.parametrize("name", sorted(activations.OPS))
@settings(max_examples=5, deadline=None)
@given(size=st.sampled_from([0, 1, 7, half.USE_MIN - 1, half.USE_MIN, half.BUILD_MIN - 3,
                             half.BUILD_MIN, half.CHUNK + 5]),
       step=st.integers(1, 3), seed=st.integers(0, 2**32 - 1))
def test_any_size_and_layout_is_the_direct_result(name, type_name, size, step, seed):
    """Below the sizes that build a table, at them, across a chunk boundary; strided views;
    the kernel and its in-place variant."""
    kernel = activations.OPS[name].kernel
    x = np.random.default_rng(seed).integers(0, 1 << 16, size * step, dtype=np.uint16)
    x = x.view(HALVES[type_name])[::step]
    with half.direct():
        expected = kernel(x)
    if name == "Relu":  # the contract's x > 0 ? x : +0.0: numpy's f32 fmax gives NaN for a
        # signalling NaN in an array's last n % 8 elements (its scalar loop), 0 elsewhere
        expected = np.where(x.astype(np.float32) > 0, x, np.zeros((), x.dtype))
    assert_same(kernel(x), expected)
    assert_same(activations.OPS[name].spec.in_place(x.copy()), expected)


def test_relu_on_the_bits_is_the_f32_computation():
    """Relu's selection on the bits against the f32 formula itself (fmax(x, 0) + 0, rounded):
    -0.0 and NaN of either sign give +0.0."""
    for dtype in HALVES.values():
        x = EVERY.view(dtype)
        w = x.astype(np.float32)
        expected = (np.fmax(w, 0) + 0).astype(dtype)
        got = activations.OPS["Relu"].kernel(x)
        np.testing.assert_array_equal(_bits(got), _bits(expected))
        assert not np.isnan(got.astype(np.float32)).any()


def test_table_keys_tell_signed_zeros_apart():
    """Elu(alpha=0.0) and Elu(alpha=-0.0) differ on a negative input (-0.0 and +0.0), though
    0.0 == -0.0 in Python: the table of one is never used for the other, in either order."""
    x = np.full(half.BUILD_MIN, -1.0, np.float16)
    for order in ((0.0, -0.0), (-0.0, 0.0)):
        for alpha in order:
            got = Elu.kernel(x, alpha=alpha)
            with half.direct():
                expected = Elu.kernel(x, alpha=alpha)
            np.testing.assert_array_equal(_bits(got), _bits(expected))
            assert got[0] == 0 and np.signbit(got[0]) != np.signbit(alpha)


def test_to_f32_is_numpys_cast_on_every_value():
    x = np.random.default_rng(3).permutation(EVERY).view(np.float16)
    np.testing.assert_array_equal(half.to_f32(x).view(np.uint32),
                                  x.astype(np.float32).view(np.uint32))
    strided = x[::3]
    np.testing.assert_array_equal(half.to_f32(strided).view(np.uint32),
                                  strided.astype(np.float32).view(np.uint32))


def test_tables_are_built_once_reused_and_bounded():
    calls = []

    def negate(v):
        calls.append(v.size)
        return -v
    x = np.random.default_rng(5).integers(0, 1 << 16, half.BUILD_MIN, np.uint16).view(np.float16)
    for _ in range(3):
        assert_same(half.mapped(x, ("test", "negate"), negate), -x)
    assert_same(half.mapped(x[:half.USE_MIN], ("test", "negate"), negate), -x[:half.USE_MIN])
    assert calls == [1 << 16]  # one table, of every value; then lookups
    for i in range(half.LIMIT + 5):
        half.mapped(x, ("test", i), np.negative)
    assert len(half._tables) == half.LIMIT
    half.mapped(x, ("test", "negate"), negate)  # pushed out: built again
    assert calls == [1 << 16] * 2


SPECIAL = np.array([0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 0xFD23, 0x3C00,
                    0xBC00, 0x0001, 0x8001, 0x7BFF, 0xFBFF, 0x7F80, 0xFF80, 0x7FC0, 0xFF81],
                   np.uint16)  # zeros, infinities and NaNs of f16 and of bf16, neighbours
PAIR_SHAPES = st.sampled_from([((70000,), (70000,)), ((300, 400), (300, 400)), ((70000,), ()),
                               ((), (5000,)), ((1,), (5000,)), ((3000, 1), (1,)),
                               ((10,), (10,))])


def draw_pair(seed, shapes, dtype, non_negative=False, nan=True):
    """Two arrays of random bits, 30% of them special values; equal pairs every 5th element,
    a value against its negation every 7th (when the shapes are equal)."""
    rng = np.random.default_rng(seed)

    def draw(shape):
        size = int(np.prod(shape))
        bits = rng.integers(0, 1 << 16, size, dtype=np.uint16)
        pick = rng.random(size) < 0.3
        bits[pick] = rng.choice(SPECIAL, int(pick.sum()))
        if non_negative:
            bits &= 0x7FFF
        values = bits.reshape(shape).view(dtype)
        if not nan:
            values = np.where(np.isnan(values.astype(np.float32)), np.zeros((), dtype), values)
        return values
    a, b = draw(shapes[0]), draw(shapes[1])
    if a.shape == b.shape:  # equal pairs: which of two equal values is chosen shows
        b.reshape(-1)[::5] = a.reshape(-1)[::5]
        b.reshape(-1)[1::7] = (a.reshape(-1)[1::7].view(np.uint16) ^ 0x8000).view(dtype)
    return a, b


@pytest.mark.parametrize("type_name", HALVES)
@pytest.mark.parametrize("name", ["Maximum", "Minimum"])
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shapes=PAIR_SHAPES)
def test_maximum_and_minimum_choose_the_direct_result(name, type_name, seed, shapes):
    """The choice on the bits (f32 comparison, the chosen element's own bits, exactly the
    formula) against the direct f32 computation rounded back, specials against each other
    included; and in place."""
    from irexec.ops.arithmetic.binary import OPS
    kernel = OPS[name].kernel
    a, b = draw_pair(seed, shapes, HALVES[type_name])
    with half.direct():
        expected = kernel(a, b)
    assert_same(kernel(a, b), expected)  # a bf16 signalling NaN: ml_dtypes quiets it
    assert_same(OPS[name].spec.in_place(a.copy(), b), expected)
    compare = np.greater if name == "Maximum" else np.less
    formula = np.where(compare(a.astype(np.float32), b.astype(np.float32)), a, b)
    if type_name == "f16":  # numpy's f16 <-> f32 casts keep every NaN's bits
        np.testing.assert_array_equal(_bits(kernel(a, b)), _bits(formula))
    assert_same(kernel(a, b), formula)


BOUNDS = [0.0, -0.0, 1.0, -1.0, 6.0, 1e-7, -1e-7, 0.5, -0.5, 65504.0, -65504.0, 3e38, -3e38,
          float("inf"), -float("inf")]


@pytest.mark.parametrize("type_name", HALVES)
@settings(max_examples=40, deadline=None)
@given(bounds=st.tuples(st.sampled_from(BOUNDS) | st.floats(-70000, 70000, width=32),
                        st.sampled_from(BOUNDS) | st.floats(-70000, 70000, width=32))
       .map(sorted),
       nan_free=st.booleans(), over=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_clamp_on_the_bits_is_the_direct_result(type_name, bounds, nan_free, over, seed):
    """Every value (NaN-free, so every chunk takes the integer min/max; or all of them, so
    chunks with a NaN take the table), bounds of every sign, zeros of both signs, infinities,
    and bounds that round to the type."""
    from irexec.ops.activation.clamp import Clamp, clamp
    low, high = bounds
    x = np.random.default_rng(seed).permutation(EVERY).view(HALVES[type_name])
    if nan_free:
        x = x[~np.isnan(x.astype(np.float32))]
    with half.direct(), np.errstate(over="ignore"):
        expected = clamp(x, min=low, max=high)
    with np.errstate(over="ignore"):
        got = clamp(x.copy(), min=low, max=high, out=None) if not over else \
            Clamp.spec.in_place(x.copy(), min=low, max=high)
    assert_same(got, expected)


COMPARISONS = {"Equal": np.equal, "NotEqual": np.not_equal, "Less": np.less,
               "LessEqual": np.less_equal, "Greater": np.greater,
               "GreaterEqual": np.greater_equal}


@pytest.mark.parametrize("type_name", HALVES)
@pytest.mark.parametrize("name", sorted(COMPARISONS))
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), signs=st.sampled_from(["mixed", "non-negative"]),
       nan=st.booleans(), shapes=PAIR_SHAPES)
def test_comparisons_on_the_bits_are_ieee(name, type_name, seed, signs, nan, shapes):
    """Comparisons of f16/bf16 on order keys of their bits (a chunk with a NaN in f32) against
    numpy's f32 comparison of the widened values: -0.0 == 0.0, NaN unordered and unequal;
    chunks with no negative value (compared on the bits themselves) and mixed ones."""
    from irexec.ops.comparison.comparison import OPS
    kernel = OPS[name].kernel
    a, b = draw_pair(seed, shapes, HALVES[type_name], signs == "non-negative", nan)
    expected = COMPARISONS[name](a.astype(np.float32), b.astype(np.float32))
    got = kernel(a, b)
    assert got.dtype == np.bool_ and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("type_name", HALVES)
@pytest.mark.parametrize("name", ["Maximum", "Minimum", *sorted(COMPARISONS)])
@pytest.mark.parametrize("zeros", ["none", "a", "b", "both"])
def test_bits_flipped_where_both_are_negative(name, type_name, zeros):
    """Every NaN-free value against a permutation of them, plus equal pairs and negations
    (chunks with negatives on both sides: compared on the bits xor (a & b) >> 15), with a -0.0
    on neither side, on one (Maximum then errs on (+0, -0) unless it takes the keys, Minimum on
    (-0, +0)) or both; the result against f32 computed directly."""
    dtype = HALVES[type_name]
    rng = np.random.default_rng(13)
    values = EVERY[~np.isnan(EVERY.view(dtype).astype(np.float32))]
    values = values[values != 0x8000]
    a, b = rng.permutation(values), rng.permutation(values)
    b[::5] = a[::5]
    b[1::7] = a[1::7] ^ 0x8000
    b[b == 0x8000] = 0x3C00
    zero = np.flatnonzero(a == 0)[0]
    if zeros in ("a", "both"):
        a[zero + 1], b[zero + 1] = 0x8000, 0
    if zeros in ("b", "both"):
        a[zero], b[zero] = 0, 0x8000
    a, b = a.view(dtype), b.view(dtype)
    wa, wb = a.astype(np.float32), b.astype(np.float32)
    if name in COMPARISONS:
        from irexec.ops.comparison.comparison import OPS as COMPARE
        np.testing.assert_array_equal(COMPARE[name].kernel(a, b), COMPARISONS[name](wa, wb))
        return
    from irexec.ops.arithmetic.binary import OPS
    kernel = OPS[name].kernel
    formula = np.where((np.greater if name == "Maximum" else np.less)(wa, wb), a, b)
    np.testing.assert_array_equal(_bits(kernel(a, b)), _bits(formula))
    np.testing.assert_array_equal(_bits(OPS[name].spec.in_place(a.copy(), b)), _bits(formula))
    np.testing.assert_array_equal(_bits(kernel(a, b[:1])),
                                  _bits(np.where((wa > wb[0]) if name == "Maximum"
                                                 else (wa < wb[0]), a, b[:1])))
