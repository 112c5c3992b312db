"""Large element-wise layers write into dead memory (the run's pool) or over an input that dies
at the layer; whichever path runs, results equal numpy's and the caller's arrays are untouched."""

from __future__ import annotations

import numpy as np

import irexec
from irexec.builder import ModelBuilder
from irexec.ops.arithmetic.binary import OPS as BINARY
from irexec.ops.arithmetic.unary import OPS as UNARY


def test_every_kernel_has_an_in_place_variant():
    for op in (*BINARY.values(), *UNARY.values()):
        assert op.spec.in_place is not None, op.spec.type


def _chain(et: str):
    b = ModelBuilder()
    x = b.parameter("x", et, [64, 512])
    y = b.parameter("y", et, [512])
    small = b.parameter("small", et, [1, 512])
    neg = b.op("Negative", x)  # x is the caller's: not written over
    added = b.op("Add", neg, y)  # neg dies here: may be written over
    widened = b.op("Multiply", small, added)  # the first input is smaller than the output
    rounded = b.op("Floor", widened)
    b.result(b.op("Maximum", rounded, y), name="out")
    return irexec.compile_model(b.build())


def test_chain_f32_and_i32_match_numpy_and_leave_inputs_alone():
    rng = np.random.default_rng(0)
    for et, dt in (("f32", np.float32), ("i32", np.int32)):
        compiled = _chain(et)
        x = (rng.standard_normal((64, 512)) * 100).astype(dt)
        y = (rng.standard_normal(512) * 100).astype(dt)
        small = (rng.standard_normal((1, 512)) * 3).astype(dt)
        kept = x.copy(), y.copy(), small.copy()
        expected = np.maximum(np.floor(small * (-x + y)).astype(dt), y)
        for _ in range(3):  # later calls reuse the memory of earlier ones
            (out,) = compiled({"x": x, "y": y, "small": small}).values()
            np.testing.assert_array_equal(out, expected)
        for a, b in zip((x, y, small), kept):
            np.testing.assert_array_equal(a, b)


def test_in_place_integer_divide_still_checks_zero():
    b = ModelBuilder()
    x = b.parameter("x", "i32", [128, 256])
    d = b.parameter("d", "i32", [256])
    b.result(b.op("Divide", b.op("Abs", x), d), name="out")
    compiled = irexec.compile_model(b.build())
    x = np.arange(128 * 256, dtype=np.int32).reshape(128, 256) - 5000
    d = np.arange(1, 257, dtype=np.int32)
    (out,) = compiled({"x": x, "d": d}).values()
    np.testing.assert_array_equal(out, np.abs(x) // d)
    d[7] = 0
    try:
        compiled({"x": x, "d": d})
    except irexec.IRError as e:
        assert e.code == "IR316"
    else:
        raise AssertionError("no IR316")
