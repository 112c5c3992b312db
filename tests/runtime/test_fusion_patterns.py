"""Fused steps (irexec/runtime/fusion.py, irexec/kernels/fused.py): LayerNorm, RMSNorm, GELU in
its erf and tanh forms, Swish, HSwish, rotary position embedding (RoPE) and attention written as
chains of layers, and epilogue chains (a MatMul, Convolution, MVN ... and the element-wise layers after it), each run as one
step. Each pattern, in every way the tables accept it, on random shapes and element types, is
held bit for bit to the unfused plan (config ``{"fusion": "off"}``: every layer a step of its
own, each layer's kernel tested on its own elsewhere); a pattern whose inner value someone else
reads is not fused; traces still see every layer; bench's per-op table names fused steps."""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder
from irexec.cli.bench import per_op_lines
from irexec.runtime import fusion

DTYPES = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16, "f64": np.float64}


def _const(b, value, et):
    return b.constant(np.asarray(value, dtype=DTYPES[et]))


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit for bit (NaN payloads aside: any NaN matches any NaN)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    nan = np.isnan(a.astype(np.float64))
    if not np.array_equal(nan, np.isnan(b.astype(np.float64))):
        return False
    return a[~nan].tobytes() == b[~nan].tobytes()


def _run_both(model, inputs):
    fused = irexec.compile_model(model)
    plain = irexec.compile_model(model, config={"fusion": "off"})
    got, want = fused(inputs), plain(inputs)
    for g, w in zip(got.values(), want.values()):
        assert _same(np.asarray(g), np.asarray(w)), (g, w)
    return fused, plain, got


def _names(compiled) -> list[str]:
    return sorted(fusion.fused_names(compiled.plan).values())


# --- the patterns, in every way converters write them -------------------------------------------

def _layer_norm(b, x, et, square, norm, affine, swap, width):
    axes = b.constant(np.array([-1], np.int64))
    mean = b.op("ReduceMean", x, axes, keep_dims=True)
    centred = b.op("Subtract", x, mean)
    sq = b.op("Power", centred, _const(b, 2, et)) if square == "power" \
        else b.op("Multiply", centred, centred)
    variance = b.op("ReduceMean", sq, axes, keep_dims=True)
    eps = _const(b, 1e-5, et)
    shifted = b.op("Add", eps, variance) if swap else b.op("Add", variance, eps)
    normed = _normalized(b, centred, shifted, et, norm, swap)
    return _affine(b, normed, et, affine, swap, width)


def _normalized(b, value, shifted, et, norm, swap):
    if norm == "divide":
        return b.op("Divide", value, b.op("Sqrt", shifted))
    if norm == "power":
        rstd = b.op("Power", shifted, _const(b, -0.5, et))
    else:
        rstd = b.op("Divide", _const(b, 1, et), b.op("Sqrt", shifted))
    return b.op("Multiply", rstd, value) if swap else b.op("Multiply", value, rstd)


def _affine(b, value, et, affine, swap, width):
    rng = np.random.default_rng(width)
    if affine >= 1:
        gamma = _const(b, rng.uniform(0.5, 1.5, width), et)
        value = b.op("Multiply", gamma, value) if swap else b.op("Multiply", value, gamma)
    if affine >= 2:
        value = b.op("Add", value, _const(b, rng.uniform(-1, 1, width), et))
    return value


def _rms_norm(b, x, et, square, norm, affine, swap, width):
    axes = b.constant(np.array([-1], np.int64))
    sq = b.op("Power", x, _const(b, 2, et)) if square == "power" else b.op("Multiply", x, x)
    variance = b.op("ReduceMean", sq, axes, keep_dims=True)
    shifted = b.op("Add", variance, _const(b, 1e-6, et))
    normed = _normalized(b, x, shifted, et, norm, swap)
    return _affine(b, normed, et, min(affine, 1), swap, width)


def _halves(b, x, e1, et, order):
    half = _const(b, 0.5, et)
    if order == 0:
        return b.op("Multiply", b.op("Multiply", x, half), e1)
    if order == 1:
        return b.op("Multiply", b.op("Multiply", x, e1), half)
    return b.op("Multiply", x, b.op("Multiply", e1, half))


def _gelu(b, x, et, inner, order):
    scaled = b.op("Divide", x, _const(b, np.sqrt(2.0), et)) if inner == "divide" \
        else b.op("Multiply", x, _const(b, 1 / np.sqrt(2.0), et))
    e1 = b.op("Add", b.op("Erf", scaled), _const(b, 1, et))
    return _halves(b, x, e1, et, order)


def _gelu_tanh(b, x, et, cube, order):
    c = b.op("Power", x, _const(b, 3, et)) if cube == "power" \
        else b.op("Multiply", b.op("Multiply", x, x), x)
    inner = b.op("Add", x, b.op("Multiply", c, _const(b, 0.044715, et)))
    t = b.op("Tanh", b.op("Multiply", inner, _const(b, np.sqrt(2 / np.pi), et)))
    return _halves(b, x, b.op("Add", t, _const(b, 1, et)), et, order)


def _swish(b, x, et, beta):
    bx = b.op("Multiply", x, _const(b, 1.7, et)) if beta else x
    return b.op("Multiply", x, b.op("Sigmoid", bx))


def _hswish(b, x, et, relu6, sixth):
    a = b.op("Add", x, _const(b, 3, et))
    if relu6 == "clamp":
        c = b.op("Clamp", a, min=0.0, max=6.0)
    else:
        c = b.op("Minimum", b.op("Relu", a), _const(b, 6, et))
    if sixth == "divide-last":
        return b.op("Divide", b.op("Multiply", x, c), _const(b, 6, et))
    if sixth == "multiply-last":
        return b.op("Multiply", b.op("Multiply", x, c), _const(b, 1 / 6, et))
    return b.op("Multiply", x, b.op("Divide", c, _const(b, 6, et)))


ELEMENTWISE_PATTERNS = {
    "LayerNorm": (_layer_norm, list(itertools.product(
        ["power", "multiply"], ["divide", "power", "reciprocal"], [0, 1, 2], [False, True]))),
    "RMSNorm": (_rms_norm, list(itertools.product(
        ["power", "multiply"], ["divide", "power", "reciprocal"], [0, 1], [False, True]))),
    "GELU": (_gelu, list(itertools.product(["divide", "multiply"], [0, 1, 2]))),
    "GELU(tanh)": (_gelu_tanh, list(itertools.product(["power", "multiply"], [0, 1, 2]))),
    "Swish": (_swish, [(False,), (True,)]),
    "HSwish": (_hswish, list(itertools.product(
        ["clamp", "relu-min"], ["divide-last", "multiply-last", "sixth-first"]))),
}
NORMS = ("LayerNorm", "RMSNorm")


def _pattern_model(name, variant, et, shape, dynamic=False, extra_reader=False):
    build, _ = ELEMENTWISE_PATTERNS[name]
    b = ModelBuilder(name)
    x = b.parameter("x", et, [-1] * len(shape) if dynamic else list(shape))
    args = (*variant, shape[-1]) if name in NORMS else variant
    # a reader of x (an Add of a constant) first: x is not a model input the pattern owns
    y = build(b, x, et, *args)
    b.result(y, "y")
    if extra_reader:  # the pattern's first layer's value is also a model output
        first = next(n for n in b.nodes if n.role is None and n.inputs
                     and n.inputs[0].source is x)
        b.result(first.outputs[0], "inner")
    return b.build()


def _random_shape(rng) -> list[int]:
    return [int(d) for d in rng.integers(1, 7, size=int(rng.integers(1, 4)))] + \
        [int(rng.integers(2, 33))]


@pytest.mark.parametrize("name", sorted(ELEMENTWISE_PATTERNS))
@pytest.mark.parametrize("et", sorted(DTYPES))
def test_each_pattern_is_one_step_and_computes_what_its_layers_compute(name, et):
    rng = np.random.default_rng(abs(hash((name, et))) % 2**32)
    for variant in ELEMENTWISE_PATTERNS[name][1]:
        shape = _random_shape(rng)
        model = _pattern_model(name, variant, et, shape)
        x = (rng.standard_normal(shape) * 3).astype(DTYPES[et])
        x.reshape(-1)[0] = -4.5  # far into the negative tail (GELU's 1 + erf cancels)
        fused, plain, _ = _run_both(model, {"x": x})
        assert _names(fused) == [name], (variant, str(fused.plan))
        assert len(fused.plan.steps) == 1, str(fused.plan)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE_PATTERNS))
def test_dynamic_shapes_fuse_and_agree_on_each_call(name):
    rng = np.random.default_rng(7)
    variant = ELEMENTWISE_PATTERNS[name][1][-1]
    model = _pattern_model(name, variant, "f32", [2, 3, 8], dynamic=True)
    fused = irexec.compile_model(model)
    plain = irexec.compile_model(model, config={"fusion": "off"})
    assert _names(fused) == [name]
    for shape in ([2, 3, 8], [1, 5, 8], [4, 3, 8], [2, 3, 8], [3, 1, 1]):
        x = rng.standard_normal(shape).astype(np.float32)
        assert _same(fused({"x": x})[0], plain({"x": x})[0]), shape


@pytest.mark.parametrize("name", sorted(ELEMENTWISE_PATTERNS))
def test_a_value_another_reader_needs_is_not_fused_away(name):
    variant = ELEMENTWISE_PATTERNS[name][1][0]
    model = _pattern_model(name, variant, "f32", [3, 8], extra_reader=True)
    x = np.random.default_rng(1).standard_normal((3, 8)).astype(np.float32)
    fused, _, got = _run_both(model, {"x": x})
    assert name not in _names(fused), str(fused.plan)
    assert len(got) == 2


# --- rotary position embedding --------------------------------------------------------------------

def _rope_model(et, dims, swap, dynamic):
    """x * cos + cat(-x2, x1) * sin over the last axis, as transformers writes it (the halves by
    Slice; ``swap``: the commutative layers' inputs the other way round)."""
    b = ModelBuilder("rope")
    x = b.parameter("x", et, [-1, -1, -1, dims] if dynamic else [2, 3, 5, dims])
    cos = b.parameter("cos", et, [1, 1, -1, dims] if dynamic else [1, 1, 5, dims])
    sin = b.parameter("sin", et, [1, 1, -1, dims] if dynamic else [1, 1, 5, dims])
    half = dims // 2

    def sliced(start, stop):
        return b.op("Slice", x, b.constant(np.array([start], np.int64)),
                    b.constant(np.array([stop], np.int64)), b.constant(np.array([1], np.int64)),
                    b.constant(np.array([-1], np.int64)), version="opset8")
    minus = _const(b, -1, et)
    x2 = sliced(half, 2 ** 62)
    neg = b.op("Multiply", minus, x2) if swap else b.op("Multiply", x2, minus)
    cat = b.op("Concat", neg, sliced(0, half), axis=-1)
    rs = b.op("Multiply", sin, cat) if swap else b.op("Multiply", cat, sin)
    xc = b.op("Multiply", cos, x) if swap else b.op("Multiply", x, cos)
    b.result(b.op("Add", rs, xc) if swap else b.op("Add", xc, rs), "y")
    return b.build()


@pytest.mark.parametrize("et", sorted(DTYPES))
@pytest.mark.parametrize("swap", [False, True])
def test_rope_is_one_step_and_computes_what_its_layers_compute(et, swap):
    rng = np.random.default_rng(len(et) + swap)
    for dynamic in (False, True):
        model = _rope_model(et, 16, swap, dynamic)
        fused = irexec.compile_model(model)
        plain = irexec.compile_model(model, config={"fusion": "off"})
        assert _names(fused) == ["RoPE"], str(fused.plan)
        for length in ((5,) if not dynamic else (5, 1, 1, 7)):
            feed = {"x": (rng.standard_normal((2, 3, length, 16)) * 3).astype(DTYPES[et])}
            angles = rng.standard_normal((1, 1, length, 16))
            feed["cos"], feed["sin"] = (np.cos(angles).astype(DTYPES[et]),
                                        np.sin(angles).astype(DTYPES[et]))
            assert _same(fused(feed)[0], plain(feed)[0])


# --- attention ----------------------------------------------------------------------------------

def _attention_model(et, shape, scale, mask, transposed_k, views):
    """softmax(Q K^T [scaled] [masked]) V, Q K V: [B, H, L, E] ([B, L, H*E] reshaped and
    transposed by the model itself when ``views``)."""
    batch, heads, length, width = shape
    b = ModelBuilder("attention")
    if views:
        q, k, v = (b.parameter(n, et, [batch, length, heads * width]) for n in "qkv")
        split = b.constant(np.array([batch, length, heads, width], np.int64))
        order = b.constant(np.array([0, 2, 1, 3], np.int64))
        q, k, v = (b.op("Transpose", b.op("Reshape", t, split, special_zero=False), order)
                   for t in (q, k, v))
    else:
        q = b.parameter("q", et, list(shape))
        k = b.parameter("k", et, [batch, heads, width, length] if transposed_k else list(shape))
        v = b.parameter("v", et, list(shape))
    factor = _const(b, 1 / np.sqrt(width), et)
    if scale == "query":
        q = b.op("Multiply", q, factor)
    scores = b.op("MatMul", q, k, transpose_a=False, transpose_b=not transposed_k or views)
    if scale == "multiply":
        scores = b.op("Multiply", scores, factor)
    elif scale == "divide":
        scores = b.op("Divide", scores, _const(b, np.sqrt(width), et))
    causal = np.tril(np.ones((length, length), bool))
    if mask == "add":
        scores = b.op("Add", scores, _const(b, np.where(causal, 0, -1e4), et))
    elif mask == "select":
        scores = b.op("Select", b.constant(causal), scores, _const(b, -np.inf, et))
    elif mask == "select-inverted":
        scores = b.op("Select", b.constant(~causal), _const(b, -1e4, et), scores)
    weights = b.op("Softmax", scores, axis=-1, version="opset8")
    b.result(b.op("MatMul", weights, v, transpose_a=False, transpose_b=False), "y")
    return b.build()


@pytest.mark.parametrize("et", sorted(DTYPES))
def test_attention_chains_are_one_step(et):
    rng = np.random.default_rng(3)
    for scale, mask, transposed_k, views in itertools.product(
            [None, "query", "multiply", "divide"], [None, "add", "select", "select-inverted"],
            [False, True], [False, True]):
        if views and transposed_k:
            continue
        shape = [int(rng.integers(1, 3)), int(rng.integers(1, 4)), int(rng.integers(1, 9)),
                 int(rng.integers(2, 17))]
        model = _attention_model(et, shape, scale, mask, transposed_k, views)
        inputs = {p.node.name: (rng.standard_normal(p.partial_shape.to_shape()) * 2)
                  .astype(DTYPES[et]) for p in model.inputs}
        fused, _, _ = _run_both(model, inputs)
        assert _names(fused) == ["Attention"], (scale, mask, transposed_k, str(fused.plan))
        # the Reshape and Transpose of Q, K and V join the step
        assert len(fused.plan.steps) == 1, str(fused.plan)


def test_attention_weights_read_elsewhere_are_not_fused_away():
    model = _attention_model("f32", [1, 2, 4, 8], "multiply", "add", False, False)
    softmax = next(n for n in model.nodes if n.type == "Softmax")
    irexec.builder.add_outputs(model, [softmax.outputs[0]])
    rng = np.random.default_rng(0)
    inputs = {n: rng.standard_normal((1, 2, 4, 8)).astype(np.float32) for n in "qkv"}
    fused, _, got = _run_both(model, inputs)
    assert "Attention" not in _names(fused)
    assert len(got) == 2


# --- epilogue chains ----------------------------------------------------------------------------

TAILS = [("Add", {}, True), ("Multiply", {}, True), ("Subtract", {}, True), ("Divide", {}, True),
         ("Relu", {}, False), ("Clamp", {"min": -0.5, "max": 0.75}, False),
         ("Sigmoid", {}, False), ("Swish", {}, False), ("HSwish", {}, False),
         ("Gelu", {"approximation_mode": "tanh"}, False), ("Gelu", {}, False),
         ("Maximum", {}, True), ("Tanh", {}, False)]


def _producer(b, kind, x, rng, et, channels, shape):
    dtype = DTYPES[et]
    if kind == "MatMul":
        w = b.constant(rng.standard_normal((shape[-1], channels)).astype(dtype))
        return b.op("MatMul", x, w, transpose_a=False, transpose_b=False), \
            tuple(shape[:-1]) + (channels,)
    if kind == "MVN":
        axes = b.constant(np.array([-1], np.int64))
        return b.op("MVN", x, axes, normalize_variance=True, eps=1e-5,
                    eps_mode="inside_sqrt", version="opset6"), tuple(shape)
    if kind == "Convolution":
        w = b.constant(rng.standard_normal((channels, shape[1], 3, 3)).astype(dtype))
        return b.op("Convolution", x, w, strides=[1, 1], pads_begin=[1, 1], pads_end=[1, 1],
                    dilations=[1, 1]), (shape[0], channels) + tuple(shape[2:])
    w = b.constant(rng.standard_normal((shape[1], 1, 1, 3, 3)).astype(dtype))  # depthwise
    return b.op("GroupConvolution", x, w, strides=[1, 1], pads_begin=[1, 1], pads_end=[1, 1],
                dilations=[1, 1]), tuple(shape)


def _chain_model(seed, kind, et, length, dynamic=False):
    rng = np.random.default_rng(seed)
    dtype = DTYPES[et]
    if kind in ("Convolution", "GroupConvolution"):
        shape = [int(rng.integers(1, 3)), int(rng.integers(1, 5)), int(rng.integers(2, 7)),
                 int(rng.integers(2, 7))]
    else:
        shape = [int(d) for d in rng.integers(1, 6, size=int(rng.integers(2, 4)))]
    channels = int(rng.integers(1, 6))
    b = ModelBuilder("chain")
    x = b.parameter("x", et, [-1] * len(shape) if dynamic else shape)
    value, out_shape = _producer(b, kind, x, rng, et, channels, shape)
    names = [kind]
    for _ in range(length):
        name, attrs, binary = TAILS[int(rng.integers(len(TAILS)))]
        if binary:  # a per-channel (last axis) or per-element constant, or a scalar, either side
            cshape = [(), out_shape[-1:], out_shape][int(rng.integers(3))]
            c = b.constant((rng.standard_normal(cshape) + 2.0).astype(dtype))
            value = b.op(name, c, value, **attrs) if name in ("Add", "Multiply") \
                and rng.integers(2) else b.op(name, value, c, **attrs)
        else:
            value = b.op(name, value, **attrs)
        names.append(name)
    b.result(value, "y")
    return b.build(), {"x": (rng.standard_normal(shape) * 2).astype(dtype)}, "+".join(names)


@pytest.mark.parametrize("kind", ["MatMul", "MVN", "Convolution", "GroupConvolution"])
@pytest.mark.parametrize("et", sorted(DTYPES))
def test_epilogue_chains_are_one_step(kind, et):
    for seed in range(10):
        model, inputs, name = _chain_model(seed, kind, et, 1 + seed % 4)
        fused, _, _ = _run_both(model, inputs)
        assert _names(fused) == [name], str(fused.plan)


def test_epilogue_chains_with_dynamic_shapes_agree_on_each_shape():
    model, inputs, name = _chain_model(3, "MatMul", "f32", 3, dynamic=True)
    fused = irexec.compile_model(model)
    plain = irexec.compile_model(model, config={"fusion": "off"})
    assert _names(fused) == [name]
    rng = np.random.default_rng(0)
    last = inputs["x"].shape[-1]
    for rows in (1, 4, 7, 4):
        x = rng.standard_normal((2, rows, last)[-inputs["x"].ndim:]).astype(np.float32)
        assert _same(fused({"x": x})[0], plain({"x": x})[0])


def test_a_chain_stops_where_a_value_is_a_model_output():
    b = ModelBuilder("shared")
    x = b.parameter("x", "f32", [3, 4])
    mm = b.op("MatMul", x, b.constant(np.ones((4, 5), np.float32)), transpose_a=False,
              transpose_b=False)
    b.result(mm, "mm")
    b.result(b.op("Relu", b.op("Add", mm, b.constant(np.full(5, -10, np.float32)))), "y")
    x_value = np.arange(12, dtype=np.float32).reshape(3, 4)
    fused, _, got = _run_both(b.build(), {"x": x_value})
    assert _names(fused) == ["Add+Relu"]  # the MatMul stays a step of its own
    assert np.array_equal(got[0], x_value @ np.ones((4, 5), np.float32))
    assert np.array_equal(got[1], np.maximum(got[0] - 10, 0))


def test_a_chain_takes_in_an_activation_pattern():
    b = ModelBuilder("mlp")
    x = b.parameter("x", "f32", [2, 5, 8])
    rng = np.random.default_rng(2)
    mm = b.op("MatMul", x, b.constant(rng.standard_normal((8, 16)).astype(np.float32)),
              transpose_a=False, transpose_b=False)
    biased = b.op("Add", mm, b.constant(rng.standard_normal(16).astype(np.float32)))
    b.result(_gelu(b, biased, "f32", "divide", 0), "y")
    fused, _, _ = _run_both(b.build(), {"x": rng.standard_normal((2, 5, 8)).astype(np.float32)})
    assert _names(fused) == ["MatMul+Add+GELU"]


# --- what fusion leaves alone and what still sees every layer -----------------------------------

def test_traces_see_every_layer_as_the_unfused_plan_computes_it():
    model = _pattern_model("LayerNorm", ("power", "divide", 2, False), "f32", [3, 16])
    compiled = irexec.compile_model(model)
    plain = irexec.compile_model(model, config={"fusion": "off"})
    assert _names(compiled) == ["LayerNorm"]
    x = np.random.default_rng(5).standard_normal((3, 16)).astype(np.float32)
    seen, seen_plain = {}, {}
    out = compiled({"x": x}, trace=lambda layer, port, a: seen.setdefault(layer.name,
                                                                           np.array(a)))
    plain({"x": x}, trace=lambda layer, port, a: seen_plain.setdefault(layer.name, np.array(a)))
    layers = {n.name for n in model.nodes if n.role is None}
    assert layers <= set(seen)
    assert seen.keys() == seen_plain.keys()
    assert all(_same(seen[k], seen_plain[k]) for k in seen)
    assert _same(out[0], compiled({"x": x})[0])


def test_per_op_names_fused_steps():
    model = _pattern_model("GELU", ("divide", 0), "f32", [4, 8])
    compiled = irexec.compile_model(model)
    profile: dict = {}
    compiled({"x": np.ones((4, 8), np.float32)}, profile=profile)
    lines = per_op_lines(model, profile, 1, 1.0, fusion.fused_names(compiled.plan))
    assert any(line.split()[:2] == ["GELU", "(fused)"] for line in lines), lines
    assert not any("Erf" in line for line in lines)
    assert "GELU" in str(compiled.plan)


def test_fusion_off_and_precise_mode_run_every_layer():
    model = _pattern_model("Swish", (True,), "f32", [4, 8])
    assert _names(irexec.compile_model(model, config={"fusion": "off"})) == []
    assert _names(irexec.compile_model(model, config={"fusion": False})) == []
    assert _names(irexec.compile_model(model, config={"precision": "f64"})) == []
    assert _names(irexec.compile_model(model, config={"fusion": True})) == ["Swish"]
    with pytest.raises(ValueError, match="fusion"):
        irexec.compile_model(model, config={"fusion": "sometimes"})


def test_a_bad_call_gives_the_layer_own_error_in_a_fused_step():
    # dynamic shapes: the Add's constant broadcasts onto 8 columns only
    b = ModelBuilder("checked")
    x = b.parameter("x", "f32", [-1, -1])
    mm = b.op("MatMul", x, b.parameter("w", "f32", [-1, -1]), transpose_a=False,
              transpose_b=False)
    b.result(b.op("Add", mm, b.constant(np.ones(8, np.float32)), name="bias"), "y")
    model = b.build()
    fused = irexec.compile_model(model)
    plain = irexec.compile_model(model, config={"fusion": "off"})
    assert _names(fused) == ["MatMul+Add"]
    good = {"x": np.ones((2, 3), np.float32), "w": np.ones((3, 8), np.float32)}
    assert _same(fused(good)[0], plain(good)[0])
    bad = {"x": np.ones((2, 3), np.float32), "w": np.ones((3, 5), np.float32)}
    errors = []
    for compiled in (plain, fused, fused):  # the second fused call: a signature seen before
        with pytest.raises(irexec.IRError) as caught:
            compiled(bad)
        errors.append((caught.value.diagnostics[0].code,
                       caught.value.diagnostics[0].location.layer_name))
    assert errors[0] == errors[1] == errors[2] and errors[0][1] == "bias", errors


def _dynamic_layernorm_step():
    """A dynamic LayerNorm's model, its one fused step's kernel, and ``args(x)``: the step's
    inputs with ``x`` as the data."""
    model = _pattern_model("LayerNorm", ("power", "divide", 2, False), "f32", [3, 16],
                           dynamic=True)
    plan = irexec.compile_model(model).plan
    step = plan.steps[0]
    x_slot = plan.inputs[0].slot

    def args(x):
        return [x if s == x_slot else plan.initial_values[s] for s in step.inputs]
    return model, step.kernel, args


def test_a_checked_result_is_reused_only_for_the_arrays_it_was_computed_from():
    # the first call of a signature checks each layer (computing the chain) and the kernel
    # then returns that result: only for the same input arrays, never for others
    _, kernel, args = _dynamic_layernorm_step()
    rng = np.random.default_rng(4)

    a, b = (rng.standard_normal((3, 16)).astype(np.float32) for _ in range(2))
    want_a, want_b = kernel(*args(a)), kernel(*args(b))
    kernel.check(args(a))
    assert _same(kernel(*args(b)), want_b)  # other arrays: computed, not the checked result
    kernel.check(args(a))
    first = kernel(*args(a))
    assert _same(first, want_a)
    second = kernel(*args(a))
    assert _same(second, want_a) and second is not first  # used once: computed again


def test_a_kernel_error_inside_a_fused_step_names_its_layer():
    # integer division by zero (IR316) in the middle of an epilogue chain
    b = ModelBuilder("ints")
    x = b.parameter("x", "i32", [2, 3])
    d = b.parameter("d", "i32", [2, 3])
    y = b.op("Add", x, b.constant(np.ones(3, np.int32)), name="plus")
    y = b.op("Divide", y, d, name="divided")
    b.result(b.op("Relu", y, name="relu"), "y")
    model = b.build()
    fused = irexec.compile_model(model)
    plain = irexec.compile_model(model, config={"fusion": "off"})
    assert _names(fused) == ["Add+Divide+Relu"]
    x_value = np.arange(6, dtype=np.int32).reshape(2, 3) - 3
    good = {"x": x_value, "d": np.full((2, 3), 2, np.int32)}
    assert _same(fused(good)[0], plain(good)[0])
    bad = {"x": x_value, "d": np.array([[1, 0, 1], [1, 1, 1]], np.int32)}
    found = []
    for compiled in (plain, fused):
        with pytest.raises(irexec.IRError) as caught:
            compiled(bad)
        found.append((caught.value.code, caught.value.diagnostics[0].location.layer_name,
                      str(caught.value.diagnostics[0].message)))
    assert found[0] == found[1] and found[0][:2] == ("IR316", "divided"), found


def test_profiling_info_counts_each_step_under_its_last_layer():
    model = _pattern_model("GELU", ("divide", 0), "f32", [64, 64])
    compiled = irexec.compile_model(model, config={"PERF_COUNT": True})
    request = compiled.create_infer_request()
    request.infer({"x": np.ones((64, 64), np.float32)})
    timed = {p.node_name for p in request.get_profiling_info() if p.real_time.total_seconds()}
    root = next(iter(fusion.fused_names(compiled.plan)))
    assert timed == {model.by_id[int(root)].name}


def _loop_model(rows: int):
    """A Loop whose body is a GELU chain after a MatMul and a bias, over a state of ``rows``
    rows (small: the body runs as one generated function; large: through the run loop)."""
    from irexec import opset13 as ops

    rng = np.random.default_rng(9)
    start = ops.parameter([rows, 8], np.float32, name="start")
    value = ops.parameter([rows, 8], np.float32, name="value")
    weight = rng.standard_normal((8, 8)).astype(np.float32) / 4
    mm = ops.matmul(value, weight, False, False)
    biased = ops.add(mm, rng.standard_normal(8).astype(np.float32))
    inner = ops.divide(biased, np.float32(np.sqrt(2)))
    e1 = ops.add(ops.erf(inner), np.float32(1))
    out = ops.result(ops.multiply(ops.multiply(biased, np.float32(0.5)), e1))
    keep_going = ops.result(ops.constant(np.array(True)))
    body = irexec.Model([keep_going, out], [value], "body")
    loop = ops.loop(3, True)
    loop.set_function(body)
    loop.set_special_body_ports([-1, 0])
    loop.set_merged_input(value, start, out)
    final = loop.get_iter_value(out, -1)
    return irexec.Model([final], [start], "loop")


@pytest.mark.parametrize("rows", [2, 4096])
def test_a_loop_body_fuses_and_traces_every_layer(rows):
    model = _loop_model(rows)
    x = np.random.default_rng(1).standard_normal((rows, 8)).astype(np.float32)
    fused, _, got = _run_both(model, {"start": x})
    loop = next(n for n in model.nodes if n.bodies)
    body = irexec.compile_model(loop.bodies["body"].model)
    assert _names(body) == ["MatMul+Add+GELU"]
    seen = set()
    traced = fused({"start": x}, trace=lambda layer, port, a: seen.add(layer.name),
                   trace_bodies=True)
    assert _same(traced[0], got[0])
    # each iteration: the Parameter and the 7 layers (3 iterations)
    assert sum("/body/" in name for name in seen) == 3 * 8


def test_a_check_made_after_the_kernel_keeps_nothing():
    # the run loop checks a step after its kernel (its error, the size of what it made): such a
    # check's result must not be served to a later call on the same arrays, changed since
    model, kernel, args_of = _dynamic_layernorm_step()
    x = np.random.default_rng(6).standard_normal((3, 16)).astype(np.float32)
    args = args_of(x)
    kernel(*args)
    kernel.check(args)  # after the kernel
    x *= 2  # the caller changes its array in place
    want = irexec.compile_model(model, config={"fusion": "off"})({"x": x})[0]
    assert _same(kernel(*args), want)


def test_a_traced_run_shares_the_fused_plans_constants():
    # Tracing plans the model again one step per layer; the weights that planning folds (here
    # f16 weights converted to f32) are the fused plan's arrays, not a second copy kept.
    b = ModelBuilder()
    x = b.parameter("x", "f32", [2, 64])
    w = b.op("Convert", b.constant(np.ones((64, 64), np.float16)), destination_type="f32")
    y = b.op("Relu", b.op("Add", b.op("MatMul", x, w), b.constant(np.ones(64, np.float32))))
    b.result(y, "y")
    compiled = irexec.compile_model(b.build())
    data = np.linspace(-1, 1, 128, dtype=np.float32).reshape(2, 64)
    plain = compiled({"x": data})[0]
    seen = []
    traced = compiled({"x": data}, trace=lambda *args: seen.append(args))[0]
    assert seen and np.array_equal(plain, traced)
    fused, unfused = compiled.plan, compiled.plan.traced()
    assert unfused is not fused
    big = [s for s, a in fused.constants.items() if a.shape == (64, 64)]
    assert big and all(unfused.constants[s] is fused.constants[s] for s in big)
