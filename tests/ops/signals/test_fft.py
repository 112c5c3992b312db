"""DFT-7, IDFT-7, RDFT-9, IRDFT-9: the specification's examples, properties against a float64
reference that multiplies by DFT matrices (no FFT), OpenVINO conformance, and one diagnostic per
bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.ir.shape import PartialShape
from tests.ops.compute_support import (assert_close, build_layer, layer_error,
                                       openvino_and_irexec, run_layer)
from tests.ops.support import dtype_of

VERSION = {"DFT": "opset7", "IDFT": "opset7", "RDFT": "opset9", "IRDFT": "opset9"}


# --- the float64 reference: one DFT matrix per axis ----------------------------------------------

def _fit(z, axis, n):
    """``z`` trimmed or zero-padded at the end of ``axis`` to ``n`` elements."""
    have = z.shape[axis]
    if n <= have:
        return np.take(z, np.arange(n), axis=axis)
    pad = [(0, 0)] * z.ndim
    pad[axis] = (0, n - have)
    return np.pad(z, pad)


def _matrix(n, inverse):
    k = np.arange(n)
    sign = 1 if inverse else -1
    return np.exp(sign * 2j * np.pi * np.outer(k, k) / n)


def _along(z, axis, m):
    """Multiplies every fibre along ``axis`` by matrix ``m`` ([out, in])."""
    return np.moveaxis(np.tensordot(m, np.moveaxis(z, axis, 0), axes=(1, 0)), 0, axis)


def reference(op, data, axes, sizes=None):
    """(result, magnitude): the transform in float64/complex128 and, per output element, the sum
    of the magnitudes of its terms (for the tolerance)."""
    x = data.astype(np.float64)
    complex_in = op != "RDFT"
    z = x[..., 0] + 1j * x[..., 1] if complex_in else x.astype(np.complex128)
    rank = z.ndim
    axes = [a % rank for a in axes]
    sizes = sizes or [-1] * len(axes)
    s = [z.shape[a] if v == -1 else v for a, v in zip(axes, sizes)]
    if op == "IRDFT" and sizes[-1] == -1:
        s[-1] = 2 * (z.shape[axes[-1]] - 1)
    inverse = op in ("IDFT", "IRDFT")
    mag = np.abs(z)
    todo = list(zip(axes, s))
    if op == "IRDFT":
        todo = todo[:-1]
    for a, n in todo:
        z, mag = _fit(z, a, n), _fit(mag, a, n)
        z = _along(z, a, _matrix(n, inverse) / (n if inverse else 1))
        mag = _along(mag, a, np.ones((n, n)) / (n if inverse else 1)).real
    if op == "IRDFT":
        a, n = axes[-1], s[-1]
        half = n // 2 + 1
        z, mag = _fit(z, a, half), _fit(mag, a, half)
        k = np.arange(half)
        weight = np.where((k == 0) | ((n % 2 == 0) & (k == n // 2)), 1.0, 2.0)
        m = np.exp(2j * np.pi * np.outer(np.arange(n), k) / n) * weight / n
        out = _along(z, a, m).real
        mag = _along(mag, a, np.abs(m)).real
        return out, mag
    if op == "RDFT":
        a, n = axes[-1], s[-1]
        z = np.take(z, np.arange(n // 2 + 1), axis=a)
        mag = np.take(mag, np.arange(n // 2 + 1), axis=a)
    out = np.stack([z.real, z.imag], -1)
    return out, np.stack([mag, mag], -1)


def rand(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def output_shape(model) -> PartialShape:
    return model.results[0].inputs[0].source.partial_shape


# --- the specification's examples ----------------------------------------------------------------

@pytest.mark.parametrize("op, data, axes, sizes, expected", [
    ("DFT", [1, 320, 320, 2], [1, 2], None, [1, 320, 320, 2]),
    ("DFT", [1, 320, 320, 2], [-2, -1], None, [1, 320, 320, 2]),
    ("DFT", [16, 768, 580, 320, 2], [0, 1, 2], [512, 100, -1], [512, 100, 580, 320, 2]),
    ("DFT", [16, 768, 580, 320, 2], [3, 0, 1, 2], [170, -1, 1024, 390],
     [16, 1024, 390, 170, 2]),
    ("IDFT", [1, 320, 320, 2], [1, 2], None, [1, 320, 320, 2]),
    ("IDFT", [1, 320, 320, 2], [1, 2], [512, 100], [1, 512, 100, 2]),
    ("RDFT", [1, 320, 320], [1, 2], None, [1, 320, 161, 2]),
    ("RDFT", [1, 320, 320], [1, 2], [512, 100], [1, 512, 51, 2]),
    ("RDFT", [16, 768, 580, 320], [3, 0, 1, 2], [170, -1, 1024, 390],
     [16, 1024, 196, 170, 2]),
    ("IRDFT", [1, 161, 161, 2], [1, 2], None, [1, 161, 320]),
    ("IRDFT", [1, 161, 161, 2], [1, 2], [512, 100], [1, 512, 100]),
    ("IRDFT", [16, 768, 580, 320, 2], [3, 0, 1, 2], [170, -1, 1024, 390],
     [16, 1024, 390, 170]),
    ("IRDFT", [16, 768, 580, 320, 2], [3, 0, 1, 2], [170, -1, 1024, -1],
     [16, 1024, 1158, 170]),
])
def test_spec_example_shapes(op, data, axes, sizes, expected):
    """Shapes only: the specification's examples reach 17 GiB, past the default memory budget
    (half the machine's memory), which the memory rule holds every tensor to at read time."""
    from irexec import budget

    inputs = [np.zeros(1, np.float32), np.array(axes, np.int64)]
    if sizes is not None:
        inputs.append(np.array(sizes, np.int64))
    with budget.limit(1 << 40):
        model, _ = build_layer(op, *inputs, version=VERSION[op], consts=(1, 2),
                               shapes=[data, None, None])
    assert output_shape(model) == PartialShape(expected)


def test_unknown_axes_leave_every_transformable_dim_dynamic():
    model, _ = build_layer("DFT", np.zeros(1, np.float32), np.zeros(2, np.int64),
                           version="opset7", shapes=[[2, 3, 4, 2], [2]])
    assert str(output_shape(model)) == "[?,?,?,2]"
    model, _ = build_layer("RDFT", np.zeros(1, np.float32), np.array([1], np.int64),
                           version="opset9", consts=(1,), shapes=[[2, (4, 9)], None])
    assert str(output_shape(model)) == "[2,3..5,2]"


# --- hand-checked values -------------------------------------------------------------------------

def test_dft_of_an_impulse_is_flat_and_idft_takes_it_back():
    x = np.zeros((4, 2), np.float32)
    x[0, 0] = 1.0
    y = run_layer("DFT", x, np.array([0], np.int64), version="opset7", consts=(1,))
    assert y.tolist() == [[1.0, 0.0]] * 4
    back = run_layer("IDFT", y, np.array([0], np.int64), version="opset7", consts=(1,))
    assert back.tolist() == x.tolist()


def test_rdft_keeps_half_the_spectrum_and_irdft_restores_the_signal():
    x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    y = run_layer("RDFT", x, np.array([0], np.int64), version="opset9", consts=(1,))
    assert y.tolist() == [[10.0, 0.0], [-2.0, 2.0], [-2.0, 0.0]]
    back = run_layer("IRDFT", y, np.array([0], np.int64), version="opset9", consts=(1,))
    np.testing.assert_allclose(back, x, rtol=0, atol=1e-6)


def test_f16_and_f64_keep_their_type():
    for dtype in (np.float16, np.float64):
        x = rand((3, 5, 2), dtype)
        y = run_layer("DFT", x, np.array([0, 1], np.int64), version="opset7", consts=(1,))
        ref, mag = reference("DFT", x, [0, 1])
        assert y.dtype == dtype
        assert_close(y, ref.astype(dtype), mag, str(dtype))


# --- properties against the DFT matrices ---------------------------------------------------------

@st.composite
def cases(draw):
    op = draw(st.sampled_from(["DFT", "IDFT", "RDFT", "IRDFT"]))
    complex_in = op != "RDFT"
    rank = draw(st.integers(1, 3))
    shape = [draw(st.integers(1, 5)) for _ in range(rank)]
    count = draw(st.integers(1, rank))
    axes = draw(st.permutations(range(rank)))[:count]
    axes = [a - rank if draw(st.booleans()) else a for a in axes]
    sizes = None
    if draw(st.booleans()):
        sizes = [draw(st.sampled_from([-1, 1, 2, 3, 4, 6])) for _ in axes]
    if op == "IRDFT" and shape[axes[-1] % rank] == 1 and (sizes is None or sizes[-1] == -1):
        shape[axes[-1] % rank] = 2  # 2*(1-1) = 0 values: an empty result, tested apart
    full = shape + [2] if complex_in else shape
    return op, full, axes, sizes, draw(st.integers(0, 2 ** 16))


@settings(max_examples=50, deadline=None)
@given(cases(), st.sampled_from(["f32", "f64"]))
def test_property_equals_the_dft_matrices(case, type_name):
    op, shape, axes, sizes, seed = case
    dtype = dtype_of(type_name)
    x = rand(shape, dtype, seed)
    inputs = [x, np.array(axes, np.int64)] + ([np.array(sizes, np.int64)] if sizes else [])
    y = run_layer(op, *inputs, version=VERSION[op], consts=(1, 2))
    ref, mag = reference(op, x, axes, sizes)
    assert_close(y, ref.astype(dtype), mag, f"{op} {shape} {axes} {sizes}")


def test_irdft_of_one_value_gives_an_empty_axis():
    y = run_layer("IRDFT", rand((3, 1, 2)), np.array([1], np.int64), version="opset9",
                  consts=(1,))
    assert y.shape == (3, 0)


def test_precise_mode_computes_in_float64():
    import irexec
    x = rand((6, 7, 2), np.float32)
    model, feed = build_layer("DFT", x, np.array([0, 1], np.int64), version="opset7",
                              consts=(1,))
    precise = irexec.compile_model(model, config={"precision": "f64"})(feed)["y0"]
    ref, _ = reference("DFT", x, [0, 1])
    assert np.array_equal(precise, ref.astype(np.float32))


# --- OpenVINO conformance ------------------------------------------------------------------------

def _ov_cases():
    """(op, data shape, axes, signal sizes) the CPU plugin computes right
    (docs/compatibility.md: IRDFT with a signal size of 1, or padding or trimming an axis other
    than the last, is wrong; RDFT/IRDFT refuse -1 sizes and RDFT sizes beyond the dim)."""
    return [
        ("DFT", (4, 6, 2), [0, 1], None), ("DFT", (3, 5, 7, 2), [-1], None),
        ("DFT", (3, 5, 7, 2), [2, 0], [5, 2]), ("DFT", (2, 8, 2), [1], [11]),
        ("DFT", (2, 3, 4, 5, 2), [3, 1, 2], [-1, 4, 3]),
        ("IDFT", (4, 6, 2), [0, 1], None), ("IDFT", (3, 5, 7, 2), [1, -1], [8, 3]),
        ("IDFT", (2, 9, 2), [-1], None),
        ("RDFT", (4, 6), [0, 1], None), ("RDFT", (3, 5, 7), [-1], None),
        ("RDFT", (3, 5, 7), [2, 0], [5, 2]), ("RDFT", (2, 9), [1], [9]),
        ("RDFT", (2, 3, 4, 5), [3, 1, 2], [5, 2, 3]),
        ("IRDFT", (4, 6, 2), [0, 1], None), ("IRDFT", (3, 5, 7, 2), [-1], None),
        ("IRDFT", (3, 5, 7, 2), [0, 2], [3, 12]), ("IRDFT", (2, 5, 2), [1], [9]),
        ("IRDFT", (2, 3, 4, 5, 2), [2, 3], [4, 7]),
    ]


@pytest.mark.parametrize("type_name", ["f32", "f16", "bf16"])
def test_openvino_conformance(tmp_path, type_name):
    ov = pytest.importorskip("openvino")
    import openvino.opset9 as o9
    dtype = dtype_of(type_name)
    rng = np.random.default_rng(3)
    params, outputs, inputs, refs = [], [], [], []
    for op, shape, axes, sizes in _ov_cases():
        x = rng.standard_normal(shape).astype(dtype)
        p = o9.parameter(list(shape), getattr(ov.Type, type_name))
        args = [p, o9.constant(np.array(axes, np.int64))]
        if sizes is not None:
            args.append(o9.constant(np.array(sizes, np.int64)))
        node = getattr(o9, op.lower())(*args)
        params.append(p)
        outputs.append(node.output(0))
        inputs.append(x)
        refs.append((op, x, axes, sizes))
    ours, theirs = openvino_and_irexec(ov, tmp_path, params, outputs, inputs)
    for a, b, (op, x, axes, sizes) in zip(ours, theirs, refs):
        _, mag = reference(op, x, axes, sizes)
        assert_close(a, b, mag, f"{op} {x.shape} {axes} {sizes}")


# --- bad inputs -----------------------------------------------------------------------------------

F = np.zeros(1, np.float32)


@pytest.mark.parametrize("op, shape, axes, sizes, code", [
    ("DFT", [2, 3, 3], [0], None, "IR307"),  # last axis not 2
    ("DFT", [2, 3, 2], [2], None, "IR306"),  # the axis of 2 is not transformable
    ("DFT", [2, 3, 2], [-3], None, "IR306"),
    ("IDFT", [2, 3, 2], [0, -2], None, "IR333"),
    ("DFT", [2, 3, 2], [0, 1], [4], "IR307"),
    ("DFT", [2, 3, 2], [0, 1], [4, 0], "IR308"),
    ("DFT", [3, 2], [0, 1], None, "IR307"),  # more axes than the complex tensor has
    ("RDFT", [2, 3], [2], None, "IR306"),
    ("IRDFT", [2, 3, 2], [2], None, "IR306"),
    ("IRDFT", [4, 2], [0], [-2], "IR308"),
])
def test_bad_inputs_give_one_coded_error(op, shape, axes, sizes, code):
    inputs = [F, np.array(axes, np.int64)] + ([np.array(sizes, np.int64)]
                                             if sizes is not None else [])
    e = layer_error(op, *inputs, version=VERSION[op], consts=(1, 2), shapes=[shape, None, None])
    assert [d.code for d in e.diagnostics] == [code], [str(d) for d in e.diagnostics]


def test_integer_data_is_refused():
    e = layer_error("DFT", np.zeros(1, np.int32), np.array([0], np.int64), version="opset7",
                    consts=(1,), shapes=[[3, 2], None])
    assert [d.code for d in e.diagnostics] == ["IR304"]


def test_irexec_compare_knows_where_openvino_fails_rdft_and_irdft(tmp_path):
    from irexec.builder import ModelBuilder

    def node_of(op, shape, axes, sizes, const=True):
        b = ModelBuilder("m")
        x = b.parameter("x", "f32", shape)
        ax = b.constant(np.array(axes, np.int64)) if const else b.parameter("a", "i64", [1])
        args = [x, ax] + ([b.constant(np.array(sizes, np.int64))] if sizes else [])
        b.result(b.op(op, *args, version="opset9", name="y"), "r")
        model = b.build()
        return next(n for n in model.nodes if n.name == "y")

    for op, shape, axes, sizes, const, refused in [
            ("RDFT", [4, 6], [1], None, True, False),
            ("RDFT", [4, 6], [1], [-1], True, True),
            ("RDFT", [4, 6], [1], [8], True, True),
            ("RDFT", [4, 6], [0], None, False, True),
            ("IRDFT", [4, 6, 2], [0, 1], [4, 10], True, False),
            ("IRDFT", [4, 6, 2], [0, 1], [3, 10], True, True),
            ("IRDFT", [4, 6, 2], [1], [1], True, True),
            ("IRDFT", [4, 1, 2], [1], None, True, True)]:
        node = node_of(op, shape, axes, sizes, const)
        assert (node.op.openvino_refuses(node) is not None) == refused, (op, shape, sizes)
    assert node_of("DFT", [4, 6, 2], [0], None).op.openvino_refuses is None
