"""f16 Add, Subtract, Multiply, Divide and SquaredDifference by vectorised integer and f32
passes (irexec/kernels/half.py, arith) give exactly the results of computing them directly
(numpy's f16 loops, or f32 rounded once: docs/numerics.md): the widening on every value, the
rounding at every f16 boundary, every value against a set of operands, random bit patterns
across chunk boundaries and odd tails, one-element sides, in place."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.kernels import half
from irexec.ops.arithmetic.binary import OPS

EVERY = np.arange(1 << 16, dtype=np.uint16)
FINITE = EVERY[(EVERY & 0x7C00) != 0x7C00]
NAMES = {"Add": "add", "Subtract": "subtract", "Multiply": "multiply", "Divide": "divide",
         "SquaredDifference": "squared_difference"}
F32_ROUTE = {  # numpy's own cast route: widen to f32, compute, round once
    "Add": np.add, "Subtract": np.subtract, "Multiply": np.multiply, "Divide": np.divide,
    "SquaredDifference": lambda a, b: np.square(np.subtract(a, b)),
}
N = half.ARITH_CHUNK


def _bits(a):
    return np.asarray(a).view(np.uint16)


def cast_route(name, a, b):
    with np.errstate(all="ignore"):
        return F32_ROUTE[name](a.astype(np.float32), b.astype(np.float32)).astype(np.float16)


def same_as_cast_route(got, name, a, b):
    """Bit for bit but for NaN payloads, which no route promises (numpy's f16 add loop gives
    a NaN plus a NaN other bits than its f32 add of the widened values)."""
    expected = cast_route(name, a, b)
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(_bits(got)[~nan], _bits(expected)[~nan])


def check(name, a, b):
    """The kernel and its in-place variant against half.direct(), bit for bit, and numpy's
    cast route."""
    kernel = OPS[name].kernel
    with half.direct():
        direct = kernel(a, b)
    same_as_cast_route(direct, name, a, b)
    np.testing.assert_array_equal(_bits(kernel(a, b)), _bits(direct))
    if a.shape == direct.shape:
        np.testing.assert_array_equal(_bits(OPS[name].spec.in_place(a.copy(), b)),
                                      _bits(direct))


def test_widening_is_exact_on_every_value():
    """The int32 bits are the f32 of the value times 2^-112 (subnormals and -0.0 included);
    infinities and NaNs become finite values of 2^16 (scaled) or more."""
    dst = np.empty(EVERY.size, np.int32)
    half.widen_scaled(EVERY.view(np.int16), dst)
    wide = dst.view(np.float32).astype(np.float64) * 2.0 ** 112
    values = EVERY.view(np.float16).astype(np.float64)
    finite = np.isfinite(values)
    np.testing.assert_array_equal(wide[finite], values[finite])
    np.testing.assert_array_equal(np.signbit(wide), EVERY >= 0x8000)
    assert (np.abs(wide[~finite]) >= 2.0 ** 16).all() and np.isfinite(wide).all()


def _boundaries():
    """f32 values at and around every rounding boundary of f16: each finite f16 value, the
    midpoints to its neighbours, one f32 step either side of both, of both signs, up to the
    overflow limit (65520 excluded) -- and some random f32 bit patterns in range."""
    v = FINITE[FINITE < 0x7C00].view(np.float16).astype(np.float64)
    nxt = np.append(v[1:], 65520.0)
    mids = ((v + nxt) / 2).astype(np.float32)
    points = np.concatenate([v.astype(np.float32), mids])
    points = np.concatenate([points, np.nextafter(points, np.float32(np.inf)),
                             np.nextafter(points, np.float32(0))])
    rng = np.random.default_rng(11)
    random = rng.integers(0, 0x477FF000, 200_000, dtype=np.int64).astype(np.int32)
    points = np.concatenate([points, random.view(np.float32)])
    points = points[np.abs(points) < 65520]
    return np.concatenate([points, -points])


@pytest.mark.parametrize("name", ["divide", "subtract"])
def test_rounding_is_numpys_cast_at_every_boundary(name):
    """The unscaled rounding (by 1.5 * 2^(e+13) and the FPU) and the scaled one (round to
    nearest even on the bits) against numpy's f32 -> f16 cast; the scaled one on values
    whose subnormal part is exact, as sums are."""
    x = _boundaries()
    if name == "subtract":  # scaled; below f16's smallest normal only f16 values (exact sums)
        small = np.abs(x) < 2.0 ** -14
        x = np.where(small, x.astype(np.float16).astype(np.float32), x)
        x = (x.astype(np.float64) * 2.0 ** -112).astype(np.float32)
        expected = (x.astype(np.float64) * 2.0 ** 112).astype(np.float32).astype(np.float16)
    else:
        expected = x.astype(np.float16)
    got = np.empty(x.size, np.int16)
    for i in range(0, x.size, N):
        part = x[i:i + N]
        chunk = half._Chunk(part.size, name, {})
        chunk.i["x"][...] = part.view(np.int32)
        chunk.round(got[i:i + N])
    np.testing.assert_array_equal(got.view(np.uint16), _bits(expected))


OPERANDS = np.array([0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x3C00, 0xBC00, 0x3C01,
                     0x3555, 0x4248, 0xC900, 0x7BFF, 0xFBFF, 0x5BFF, 0x2001, 0x0200, 0x1400,
                     0x7C00, 0xFC00, 0x7E00, 0xFD23],
                    np.uint16)  # zeros, subnormals, 1, 1/3, 2^-13, the largest, inf, NaN


@pytest.mark.parametrize("name", sorted(NAMES))
def test_every_value_against_chosen_operands(name):
    """Every finite value (one chunk: the integer passes) and every value (the direct route)
    on either side of zeros, subnormals, ties, the largest values, infinities and NaNs (an
    operand that is an infinity or a NaN sends every chunk the direct route)."""
    for x in (FINITE.view(np.float16), EVERY.view(np.float16)):
        for operand in OPERANDS.view(np.float16):
            y = np.full(x.shape, operand)
            check(name, x, y)
            check(name, y, x)
            check(name, x, operand.reshape(()))  # a one-element side, widened once


def _draw(rng, size, kind):
    """Random f16 bits: any pattern (most chunks hold an infinity or a NaN), finite ones
    (every chunk by the passes, overflow included), or small ones (subnormal results)."""
    bits = rng.integers(0, 1 << 16, size, dtype=np.uint16)
    if kind == "finite":
        bits[(bits & 0x7C00) == 0x7C00] &= 0x83FF
    elif kind == "small":
        bits = (bits & 0x8000) | (bits & 0x7FFF) % 0x2C00
    elif kind == "normal range":
        bits = (bits & 0x8000) | (0x3000 + (bits & 0x7FFF) % 0x1800)
    return bits.view(np.float16)


SIZES = st.sampled_from([1, 2, half.USE_MIN, N - 1, N, N + 1, 2 * N + 7, 3 * N - 5])


@pytest.mark.parametrize("name", sorted(NAMES))
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), size=SIZES,
       kinds=st.tuples(*[st.sampled_from(["any", "finite", "small", "normal range"])] * 2),
       scalar=st.sampled_from([None, 0, 1]), special_chunk=st.booleans())
def test_random_bits_across_chunks(name, seed, size, kinds, scalar, special_chunk):
    rng = np.random.default_rng(seed)
    a, b = _draw(rng, size, kinds[0]), _draw(rng, size, kinds[1])
    if special_chunk and size > N:  # one NaN in the second chunk only
        a[N] = np.float16("nan")
    if scalar == 0:
        a = a[:1].reshape(())
    elif scalar == 1:
        b = b[:1]
    check(name, a, b)


@pytest.mark.parametrize("name", sorted(NAMES))
def test_finite_chunks_take_the_passes(name):
    """Without infinities and NaNs no chunk goes the direct way (else the tests above would
    pass by it), overflowing magnitudes included; one NaN sends only its own chunk there."""
    rng = np.random.default_rng(5)
    a, b = _draw(rng, 3 * N, "finite"), _draw(rng, 3 * N, "finite")
    if name == "Divide":
        b[b == 0] = np.float16(1)  # 0 / 0 is a NaN: that chunk goes the direct way
    calls = []

    def direct(x, y, out):
        calls.append(x.size)
        out[...] = cast_route(name, x, y)
    out = np.empty(a.shape, np.float16)
    with np.errstate(all="ignore"):
        half.arith(NAMES[name], a, b, direct, out)
    assert calls == []
    same_as_cast_route(out, name, a, b)
    a[N + 1] = np.float16("inf")
    half.arith(NAMES[name], a, b, direct, out)
    assert calls == [N]
    same_as_cast_route(out, name, a, b)


def _check_tool():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "tools" / "check_f16_arith.py"
    spec = importlib.util.spec_from_file_location("check_f16_arith", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_check_tool_passes_finds_a_difference_and_refuses_unknown_ops(capsys, monkeypatch):
    """tools/check_f16_arith.py (all pairs, offline) on the first values of a: no difference;
    with ties rounded up on the bits instead of to even, a difference and exit 1; an unknown
    op is one line and exit 1."""
    tool = _check_tool()
    assert tool.main(["--first", "64"]) == 0
    out = capsys.readouterr().out
    assert out.count(" 0 of 4,063,232 pairs differ") == 5
    monkeypatch.setattr(half, "_BIAS", np.array(0x1000, np.int32))
    assert tool.main(["--first", "64", "Add"]) == 1
    assert "Add: a=" in capsys.readouterr().out
    assert tool.main(["Nope"]) == 1
    assert capsys.readouterr().out.strip().splitlines() == [
        "error: unknown op 'Nope'; choose from Add, Subtract, Multiply, Divide, "
        "SquaredDifference"]
