"""Known values and bounds through shape subgraphs (irexec/infer.py, irexec/ops/bounds.py), the
constant folding of the plan and the shape arithmetic it runs once per input shape."""

import numpy as np
import pytest

import irexec
from irexec.errors import IRError
from irexec.builder import ModelBuilder
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.spec import Input, Op, OpSpec, Output

from .standins import standins  # noqa: F401 - the fixture

pytestmark = pytest.mark.usefixtures("standins")


def i64(*values):
    return np.array(values, np.int64)


def dim_of(b, x, index):
    """Gather(ShapeOf(x), [index], 0): what converters write for x.shape[index]."""
    shape = b.op("ShapeOf", x, version="opset3")
    return b.op("Gather", shape, b.constant(i64(index)), b.constant(np.int64(0)),
                version="opset8")


def flatten_tail(batch_dim):
    """x [batch, 12, 64] -> Reshape(x, Concat(x.shape[0], 12*64)): PyTorch's x.view(B, -1)
    with the product computed from the shape, as a converter writes it."""
    b = ModelBuilder("flatten")
    x = b.parameter("x", "f32", [batch_dim, 12, 64])
    inner = b.op("Multiply", dim_of(b, x, 1), dim_of(b, x, 2))
    target = b.op("Concat", dim_of(b, x, 0), inner, axis=0)
    b.result(b.op("Reshape", x, target, special_zero=False, name="y"), "out")
    return b.build()


@pytest.mark.parametrize("batch, expected", [
    (-1, PartialShape([Dimension.dynamic(), 768])),
    ((1, 8), PartialShape([(1, 8), 768])),
    (5, PartialShape([5, 768])),
])
def test_reshape_target_from_shape_of_keeps_the_tightest_shape(batch, expected):
    model = flatten_tail(batch)
    assert model.outputs[0].partial_shape == expected
    out = irexec.compile_model(model)({"x": np.ones((3 if batch != 5 else 5, 12, 64),
                                                    np.float32)})["y"]
    assert out.shape == (3 if batch != 5 else 5, 768)


def test_static_shape_arithmetic_is_folded_while_inferring():
    """With a static input, the target's values are known: Reshape's rule reads them."""
    b = ModelBuilder()
    x = b.parameter("x", "f32", [4, 6])
    half = b.op("Divide", dim_of(b, x, 1), b.constant(i64(2)))
    target = b.op("Concat", dim_of(b, x, 0), half, b.constant(i64(2)), axis=0)
    b.result(b.op("Reshape", x, target, special_zero=False, name="y"), "out")
    model = b.build()
    assert model.outputs[0].partial_shape == PartialShape([4, 3, 2])


def test_divide_and_subtract_bounds():
    b = ModelBuilder()
    x = b.parameter("x", "f32", [(2, 10), 768])
    heads = b.op("Divide", dim_of(b, x, 1), b.constant(i64(12)))
    target = b.op("Concat", dim_of(b, x, 0), heads, b.constant(i64(12)), axis=0)
    b.result(b.op("Reshape", x, target, special_zero=False, name="y"), "out")
    assert b.build().outputs[0].partial_shape == PartialShape([(2, 10), 64, 12])


@pytest.mark.parametrize("dim, expected", [
    ((1, 8), Dimension(1, 8)), (-1, Dimension.dynamic()), (7, Dimension.static(7)),
    ((3, None), Dimension(3, None)),
])
def test_range_from_shape_of_has_the_dims_bounds(dim, expected):
    """Range(0, x.shape[1], 1): position ids, as converters write them."""
    b = ModelBuilder()
    x = b.parameter("x", "f32", [2, dim])
    stop = b.op("Gather", b.op("ShapeOf", x, version="opset3"), b.constant(np.int64(1)),
                b.constant(np.int64(0)), version="opset8")
    r = b.op("Range", b.constant(np.int64(0)), stop, b.constant(np.int64(1)),
             version="opset4", output_type="i64", name="ids")
    b.result(r, "out")
    model = b.build()
    assert model.outputs[0].partial_shape == PartialShape([expected])
    out = irexec.compile_model(model)({"x": np.zeros((2, 7), np.float32)})["ids"]
    np.testing.assert_array_equal(out, np.arange(7))


@pytest.mark.parametrize("batch", [-1, (1, 8)])
def test_broadcast_to_a_computed_shape(batch):
    b = ModelBuilder()
    x = b.parameter("x", "f32", [batch, 3])
    target = b.op("Concat", dim_of(b, x, 0), b.constant(i64(4)), axis=0)
    b.result(b.op("Broadcast", b.constant(np.float32(2.5)), target, version="opset3",
                  name="y"), "out")
    model = b.build()
    assert model.outputs[0].partial_shape == PartialShape([batch, 4])
    out = irexec.compile_model(model)({"x": np.zeros((5, 3), np.float32)})["y"]
    np.testing.assert_array_equal(out, np.full((5, 4), 2.5, np.float32))


def test_bounds_survive_convert_and_a_concat_with_unknown_values():
    b = ModelBuilder()
    x = b.parameter("x", "f32", [(2, 6), 5])
    n = b.parameter("n", "i32", [1])  # a value known only when running
    dims = b.op("Convert", dim_of(b, x, 0), destination_type="i32")
    target = b.op("Concat", dims, n, axis=0)
    b.result(b.op("Broadcast", b.constant(np.float32(1)), target, version="opset3",
                  name="y"), "out")
    model = b.build()
    assert model.outputs[0].partial_shape == PartialShape([(2, 6), Dimension.dynamic()])
    out = irexec.compile_model(model)({"x": np.zeros((3, 5), np.float32),
                                       "n": np.array([4], np.int32)})["y"]
    assert out.shape == (3, 4)


def test_a_folded_constant_subgraph_is_no_step_of_the_plan():
    b = ModelBuilder()
    x = b.parameter("x", "f32", [2, 3])
    c = b.op("Concat", b.constant(i64(2)), b.op("Range", b.constant(np.int64(1)),
                                                   b.constant(np.int64(4)),
                                                   b.constant(np.int64(2)),
                                                   version="opset4", output_type="i64"),
             axis=0)
    target = b.op("Convert", c, destination_type="i64")
    b.result(b.op("Reshape", x, b.op("Gather", target, b.constant(i64(0, 2)),
                                     b.constant(np.int64(0)), version="opset8"),
                  special_zero=False, name="y"), "out")
    model = b.build()
    assert model.outputs[0].partial_shape == PartialShape([2, 3])
    compiled = irexec.compile_model(model)
    assert [s.type for s in compiled.plan.steps] == ["Reshape"]
    out = compiled({"x": np.arange(6, dtype=np.float32).reshape(2, 3)})["y"]
    np.testing.assert_array_equal(out, np.arange(6, dtype=np.float32).reshape(2, 3))


CALLS = []


class CountingShift(Op):
    """Adds 1 to a small integer tensor and counts its runs (stands for shape arithmetic)."""

    spec = OpSpec(type="IrxTestCountingShift", since=1, family="irexec",
                  inputs=(Input("x"),), outputs=(Output("y"),))

    @staticmethod
    def kernel(x):
        CALLS.append(x.copy())
        return x + 1


@pytest.fixture
def counting_shift():
    """CountingShift registered for one test; the registry restored afterwards."""
    from irexec.ops import registry

    saved = {k: dict(v) for k, v in registry._REGISTRY.items()}
    registry.register(CountingShift)
    yield
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved)


def test_shape_arithmetic_runs_once_per_new_input_shape(counting_shift):
    CALLS.clear()
    b = ModelBuilder()
    x = b.parameter("x", "f32", [-1, 4])
    shifted = b.op("IrxTestCountingShift", b.op("ShapeOf", x, version="opset3"),
                   version="irexec1")
    b.result(b.op("Broadcast", b.constant(np.float32(0)), shifted, version="opset3",
                  name="y"), "out")
    compiled = irexec.compile_model(b.build())
    for batch in (2, 2, 2, 3, 3, 2):
        out = compiled({"x": np.zeros((batch, 4), np.float32)})["y"]
        assert out.shape == (batch + 1, 5)
    assert [c.tolist() for c in CALLS] == [[2, 4], [3, 4]]


def test_shape_values_returned_as_outputs_are_the_callers_own():
    b = ModelBuilder()
    x = b.parameter("x", "f32", [-1, 4])
    b.result(b.op("ShapeOf", x, version="opset3", name="s"), "out")
    compiled = irexec.compile_model(b.build())
    first = compiled({"x": np.zeros((2, 4), np.float32)})["s"]
    first[0] = 99  # the caller may write its output
    again = compiled({"x": np.zeros((2, 4), np.float32)})["s"]
    np.testing.assert_array_equal(again, [2, 4])


def test_shapes_that_change_between_calls_need_no_recompiling():
    b = ModelBuilder()
    n = b.parameter("n", "i64", [])
    r = b.op("Range", b.constant(np.int64(0)), n, b.constant(np.int64(2)), version="opset4",
             output_type="i32", name="r")
    b.result(r, "out")
    model = b.build()
    assert model.outputs[0].partial_shape == PartialShape([Dimension.dynamic()])
    compiled = irexec.compile_model(model)
    for stop in (5, 0, 9, -3):
        out = compiled({"n": np.array(stop, np.int64)})["r"]
        np.testing.assert_array_equal(out, np.arange(0, max(stop, 0), 2, dtype=np.int32))


def test_a_bad_value_computed_from_constants_is_reported_at_read_time():
    b = ModelBuilder()
    zero = b.op("Multiply", b.constant(np.int64(3)), b.constant(np.int64(0)))
    b.result(b.op("Range", b.constant(np.int64(0)), b.constant(np.int64(4)), zero,
                  version="opset4", output_type="i64"), "out")
    with pytest.raises(IRError) as e:
        b.build()
    assert e.value.code == "IR335"


def test_a_constant_layer_beyond_the_memory_budget_is_ir109_when_read():
    """Too many to fold while inferring, but its shape is known: refused when the model is
    read (as ``validate`` reports it), not first when compiling."""
    b = ModelBuilder()
    b.result(b.op("Range", b.constant(np.int64(0)), b.constant(np.int64(2**40)),
                  b.constant(np.int64(1)), version="opset4", output_type="i64"), "out")
    with pytest.raises(IRError) as e:
        b.build()
    assert e.value.code == "IR109" and "8.0 TiB" in str(e.value)
