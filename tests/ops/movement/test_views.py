"""Reshape, Squeeze, Unsqueeze, Split, VariadicSplit, contiguous Slice/StridedSlice and a
Transpose that keeps the last axis last cost no copy: inside a model their outputs are views of
the array they read. A view is never written through, and the caller never gets a view of its
own input or of a constant."""

import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder


def data(*shape):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


def view_op(b, op, x):
    c = b.constant
    if op == "Reshape":
        return b.op("Reshape", x, c(np.array([0, -1])), special_zero=True, name="v")
    if op == "Squeeze":
        return b.op("Squeeze", b.op("Unsqueeze", x, c(np.array([0])), name="u"),
                    c(np.array([0])), name="v")
    if op == "Unsqueeze":
        return b.op("Unsqueeze", x, c(np.array([1])), name="v")
    if op == "Split":
        return b.op("Split", x, c(np.array(0)), outputs=2, num_splits=2, name="v")[1]
    if op == "VariadicSplit":
        return b.op("VariadicSplit", x, c(np.array(0)), c(np.array([1, -1])), outputs=2,
                    name="v")[1]
    if op == "Slice":
        return b.op("Slice", x, c(np.array([1])), c(np.array([3])), c(np.array([1])),
                    version="opset8", name="v")
    return b.op("StridedSlice", x, c(np.array([1, 0])), c(np.array([3, 0])),
                begin_mask=[0, 1], end_mask=[0, 1], name="v")


VIEW_OPS = ["Reshape", "Squeeze", "Unsqueeze", "Split", "VariadicSplit", "Slice", "StridedSlice"]


@pytest.mark.parametrize("op", VIEW_OPS)
def test_output_is_a_view_of_the_intermediate_it_reads(op):
    b = ModelBuilder()
    x = b.parameter("x", "f32", [4, 6, 5])
    t = b.op("Relu", x, name="t")  # an intermediate of the model's own
    b.result(view_op(b, op, t), "out")
    compiled = irexec.compile_model(b.build())
    seen = {}
    compiled({"x": data(4, 6, 5)}, trace=lambda layer, port, array: seen.setdefault(
        (layer.name, port), array))
    parts = [a for (name, _), a in seen.items() if name == "v"]
    assert parts and all(np.shares_memory(a, seen["t", 0]) for a in parts), op


@pytest.mark.parametrize("op", VIEW_OPS)
def test_caller_never_gets_a_view_of_its_input_or_a_constant(op):
    value = data(6, 5)
    b = ModelBuilder()
    b.result(view_op(b, op, b.parameter("x", "f32", [6, 5])), "out")
    (out,) = irexec.compile_model(b.build())({"x": value}).values()
    assert not np.shares_memory(out, value)
    b = ModelBuilder()
    const = data(6, 5)
    b.result(view_op(b, op, b.constant(const)), "out")
    (out,) = irexec.compile_model(b.build())({}).values()
    assert not np.shares_memory(out, const) and out.flags.writeable


def test_a_view_is_never_written_through():
    """Reverse may write over its input when nothing else can see it; a view of an array the
    caller also receives is seen, so it is left alone (the reference-count proof)."""
    b = ModelBuilder()
    x = b.parameter("x", "f32", [512, 64])
    t = b.op("Transpose", x, b.constant(np.array([1, 0])), name="t")
    v = b.op("Reshape", t, b.constant(np.array([-1])), special_zero=False, name="v")
    b.result(b.op("Reverse", v, b.constant(np.array([0])), mode="index", name="r"), "reversed")
    b.result(t, "transposed")
    compiled = irexec.compile_model(b.build())
    value = data(512, 64)
    for _ in range(3):  # later calls reuse memory: nothing may leak into a returned array
        out = compiled({"x": value})
        assert np.array_equal(out["t"], value.T)
        assert np.array_equal(out["r"], value.T.reshape(-1)[::-1])


def test_a_dropped_view_returns_its_whole_block_to_the_pool():
    """A model whose output is a view of a kernel's output (Transpose -> Reshape, or one part of
    a Split): once the caller drops it, the next call's Transpose writes into the same memory
    (no fresh pages to fault in)."""
    from irexec.kernels import buffers

    if not buffers.COUNTS_PROVE:
        pytest.skip("reference counts prove nothing on this Python: no memory is reused")
    for split in (False, True):
        b = ModelBuilder()
        x = b.parameter("x", "f32", [256, 128])
        t = b.op("Transpose", x, b.constant(np.array([1, 0])), name="t")
        v = b.op("Reshape", t, b.constant(np.array([-1])), special_zero=False, name="v")
        if split:
            v = b.op("Split", v, b.constant(np.array(0)), outputs=2, num_splits=2, name="s")[0]
        b.result(v, "out")
        compiled = irexec.compile_model(b.build())
        addresses = []
        value = data(256, 128)
        for _ in range(3):
            compiled({"x": value}, trace=lambda layer, port, array: addresses.append(
                array.ctypes.data) if layer.name == "t" else None)
        assert addresses[1] == addresses[2], split


def _transposed(order, shape=(4, 6, 5)):
    b = ModelBuilder()
    x = b.parameter("x", "f32", list(shape))
    t = b.op("Relu", x, name="t")
    v = b.op("Transpose", t, b.constant(np.array(order)), name="v")
    # a consumer of the view, and the view as a result
    b.result(b.op("Multiply", v, b.constant(np.float32(2)), name="m"), "twice")
    b.result(v, "out")
    return irexec.compile_model(b.build())


@pytest.mark.parametrize("order", [[1, 0, 2], [0, 1, 2], [2, 1, 0], [1, 2, 0]])
def test_transpose_keeping_the_last_axis_is_a_view(order):
    value = data(4, 6, 5) - 50
    seen = {}
    twice, out = _transposed(order)({"x": value}, trace=lambda layer, port, array:
                                    seen.setdefault(layer.name, array)).values()
    want = np.maximum(value, 0).transpose(order)
    assert np.array_equal(out, want) and np.array_equal(twice, want * 2)
    assert np.shares_memory(seen["v"], seen["t"]) == (order[-1] == 2)
    assert not np.shares_memory(out, twice)


def test_caller_never_gets_a_view_of_its_input_through_transpose():
    value = data(6, 5)
    b = ModelBuilder()
    b.result(b.op("Transpose", b.parameter("x", "f32", [6, 5]), b.constant(np.array([0, 1]))),
             "out")
    (out,) = irexec.compile_model(b.build())({"x": value}).values()
    assert np.array_equal(out, value) and not np.shares_memory(out, value)
