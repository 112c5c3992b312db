"""ScatterUpdate-3, ScatterElementsUpdate-3/12, ScatterNDUpdate-3/15 and SliceScatter-15: the
specifications' examples, reductions applied in order, repeated indices, bad values both ways."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ops.movement.cases import Param, read_error, run, same_error_both_ways
from tests.ops.support import TYPE_NAMES, assert_same_bits, random_values

A = np.array


def f32(values):
    return np.array(values, np.float32)


# --- ScatterUpdate -------------------------------------------------------------------------------

def test_scatter_update_spec_example_2():
    data = f32([[-1, 1, -1, 3, 4], [-1, 6, -1, 8, 9], [-1, 11, 1, 13, 14]])
    out = run("ScatterUpdate", Param(data), A([0, 2]), Param(f32([[1, 1], [1, 1], [1, 2]])),
              A([1]), version="opset3")
    assert_same_bits(out, f32([[1, 1, 1, 3, 4], [1, 6, 1, 8, 9], [1, 11, 2, 13, 14]]))


def test_scatter_update_scalar_and_nd_indices():
    data = f32(np.zeros((4, 2)))
    out = run("ScatterUpdate", Param(data), A(2), Param(f32([5, 6])), A(0))
    assert_same_bits(out, f32([[0, 0], [0, 0], [5, 6], [0, 0]]))
    out = run("ScatterUpdate", Param(data), A([[3], [1]]), Param(f32([[[1, 2]], [[3, 4]]])), A(0))
    assert_same_bits(out, f32([[0, 0], [3, 4], [0, 0], [1, 2]]))


def test_scatter_update_repeated_index_last_wins():
    out = run("ScatterUpdate", Param(f32([0, 0, 0])), A([1, 1, 1]), Param(f32([7, 8, 9])), A(0))
    assert_same_bits(out, f32([0, 9, 0]))


@pytest.mark.parametrize("index", [-1, 3])
def test_scatter_update_index_outside_0_to_dim(index):
    data = f32([0, 0, 0])
    same_error_both_ways("ScatterUpdate", [Param(data), A([index]), Param(f32([1])), A(0)],
                         [Param(data), Param(A([index])), Param(f32([1])), A(0)], "IR325")


def test_scatter_update_updates_of_the_wrong_shape():
    assert read_error("ScatterUpdate", Param(f32(np.zeros((3, 4)))), A([0, 1]),
                      Param(f32(np.zeros((3, 3)))), A(1)).code == "IR307"


def test_scatter_update_input_not_written():
    data = f32([1, 2, 3])
    run("ScatterUpdate", Param(data), A([0]), Param(f32([9])), A(0))
    assert data.tolist() == [1, 2, 3]


# --- ScatterElementsUpdate ------------------------------------------------------------------------

@pytest.mark.parametrize("reduction, use_init_val, data, indices, updates, axis, expected", [
    ("sum", True, [2, 3, 4, 6], [1, 0, 0, -2, -1, 2], [10, 20, 30, 40, 70, 60], 0,
     [52, 13, 104, 76]),
    ("sum", False, [2, 3, 4, 6], [1, 0, 0, 2, 3, 2], [10, 20, 30, 40, 70, 60], 0,
     [50, 10, 100, 70]),
    ("none", True, np.zeros((3, 4)), [[1, 2], [0, 3]], [[11, 12], [13, 14]], 1,
     [[0, 11, 12, 0], [13, 0, 0, 14], [0, 0, 0, 0]]),
    ("sum", True, np.ones((3, 4)), [[1, 1], [0, 3]], [[11, 12], [13, 14]], 1,
     [[1, 24, 1, 1], [14, 1, 1, 15], [1, 1, 1, 1]]),
    ("prod", True, np.full((3, 4), 2), [[1, 1], [0, 3]], [[11, 12], [13, 14]], 1,
     [[2, 264, 2, 2], [26, 2, 2, 28], [2, 2, 2, 2]]),
])
def test_scatter_elements_spec_examples(reduction, use_init_val, data, indices, updates, axis,
                                        expected):
    out = run("ScatterElementsUpdate", Param(f32(data)), A(indices), Param(f32(updates)),
              A([axis]), version="opset12", reduction=reduction, use_init_val=use_init_val)
    assert_same_bits(out, f32(expected))


@pytest.mark.parametrize("reduction, use_init_val, expected", [
    ("max", True, [5, 9, 2]), ("max", False, [5, 9, 2]), ("min", True, [-3, 1, 2]),
    ("min", False, [-3, 4, 2]), ("prod", False, [-15, 36, 2]), ("sum", True, [3, 14, 2]),
    # means of integers round down: (1 + 5 - 3) / 3 = 1, (1 + 9 + 4) / 3 = 4.67 -> 4
    ("mean", True, [1, 4, 2]), ("mean", False, [1, 6, 2]),
])
def test_scatter_elements_reductions_on_integers(reduction, use_init_val, expected):
    data = np.array([1, 1, 2], np.int8)
    out = run("ScatterElementsUpdate", Param(data), A([0, 0, 1, 1]), Param(
        np.array([5, -3, 9, 4], np.int8)), A(0), version="opset12", reduction=reduction,
        use_init_val=use_init_val)
    assert out.tolist() == expected


def test_scatter_elements_mean_of_negative_integers_rounds_down():
    out = run("ScatterElementsUpdate", Param(np.array([0], np.int32)), A([0, 0]),
              Param(np.array([-1, -1], np.int32)), A(0), version="opset12", reduction="mean")
    assert out.tolist() == [-1]  # -2/3 rounds down to -1


def test_scatter_elements_float_max_follows_cpp_comparison():
    """a > b ? a : b in order: a NaN is dropped by the next value; of 0.0 and -0.0 the later
    wins."""
    data = f32([np.nan, 0.0, 1.0])
    out = run("ScatterElementsUpdate", Param(data), A([0, 1, 2, 2]),
              Param(f32([2.0, -0.0, np.nan, 0.5])), A(0), version="opset12", reduction="max")
    assert out[0] == 2.0 and str(out[1]) == "-0.0" and out[2] == 0.5


def test_scatter_elements_booleans_sum_is_or_prod_is_and():
    data = A([False, True])
    out = run("ScatterElementsUpdate", Param(data), A([0, 1]), Param(A([True, False])), A(0),
              version="opset12", reduction="sum")
    assert out.tolist() == [True, True]
    out = run("ScatterElementsUpdate", Param(data), A([0, 1]), Param(A([True, False])), A(0),
              version="opset12", reduction="prod")
    assert out.tolist() == [False, False]


def test_scatter_elements_mean_of_booleans_is_refused():
    assert read_error("ScatterElementsUpdate", Param(A([True])), A([0]), Param(A([True])), A(0),
                      version="opset12", reduction="mean").code == "IR302"


@pytest.mark.parametrize("index", [4, -5])
def test_scatter_elements_out_of_range(index):
    data = f32([1, 2, 3, 4])
    same_error_both_ways("ScatterElementsUpdate",
                         [Param(data), A([index]), Param(f32([0])), A(0)],
                         [Param(data), Param(A([index])), Param(f32([0])), A(0)], "IR325")


def test_scatter_elements_shapes():
    data = Param(f32(np.zeros((2, 3))))
    assert read_error("ScatterElementsUpdate", data, np.zeros((2, 2), np.int64),
                      Param(f32(np.zeros((2, 3)))), A(1)).code == "IR307"
    assert read_error("ScatterElementsUpdate", data, np.zeros((3, 2), np.int64),
                      Param(f32(np.zeros((3, 2)))), A(1)).code == "IR307"


def elements_reference(data, idx, updates, axis, reduction, use_init_val):
    """The reference's loop, in the updates' order."""
    out = data.copy()
    ops = {"sum": lambda a, b: a + b, "prod": lambda a, b: a * b,
           "max": lambda a, b: a if a > b else b, "min": lambda a, b: a if a < b else b}
    touched = {}
    for where in np.ndindex(*idx.shape):
        target = list(where)
        target[axis] = int(idx[where]) % data.shape[axis]
        target = tuple(target)
        if reduction == "none":
            out[target] = updates[where]
            continue
        if target not in touched:
            touched[target] = 0
            if not use_init_val:
                out[target] = {"sum": 0, "mean": 0, "prod": 1, "max": -np.inf,
                               "min": np.inf}[reduction]
        touched[target] += 1
        out[target] = ops["sum" if reduction == "mean" else reduction](out[target],
                                                                      updates[where])
    if reduction == "mean":
        for target, n in touched.items():
            out[target] = np.float32(out[target]) / np.float32(n + use_init_val)
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_property_scatter_elements_f64(shape, draw):
    axis = draw.draw(st.integers(0, len(shape) - 1))
    ishape = [draw.draw(st.integers(0, n)) for n in shape]
    ishape[axis] = draw.draw(st.integers(0, 5))
    rng = np.random.default_rng(draw.draw(st.integers(0, 1000)))
    idx = rng.integers(-shape[axis], shape[axis], size=ishape)
    updates = rng.integers(-4, 5, size=ishape).astype(np.float64)
    data = rng.integers(-4, 5, size=shape).astype(np.float64)
    reduction = draw.draw(st.sampled_from(["none", "sum", "prod", "max", "min", "mean"]))
    use_init_val = draw.draw(st.booleans())
    out = run("ScatterElementsUpdate", Param(data), Param(idx), Param(updates), A(axis),
              version="opset12", reduction=reduction, use_init_val=use_init_val)
    expected = elements_reference(data, idx, updates, axis, reduction, use_init_val)
    if reduction == "mean":
        assert np.allclose(out, expected)
    else:
        assert_same_bits(out, expected)


# --- ScatterNDUpdate -----------------------------------------------------------------------------

def test_scatter_nd_spec_example_1():
    out = run("ScatterNDUpdate", Param(f32([1, 2, 3, 4, 5, 6, 7, 8])),
              A([[4], [3], [1], [7], [-2], [-4]]), Param(f32([9, 10, 11, 12, 13, 14])),
              version="opset15")
    assert_same_bits(out, f32([1, 11, 3, 10, 14, 6, 13, 12]))


def test_scatter_nd_spec_example_slices():
    block = [[1, 2, 3, 4], [5, 6, 7, 8], [8, 7, 6, 5], [4, 3, 2, 1]]
    rblock = [[8, 7, 6, 5], [4, 3, 2, 1], [1, 2, 3, 4], [5, 6, 7, 8]]
    data = f32([block, block, rblock, rblock])
    updates = f32([[[5] * 4, [6] * 4, [7] * 4, [8] * 4], [[1] * 4, [2] * 4, [3] * 4, [4] * 4]])
    out = run("ScatterNDUpdate", Param(data), A([[0], [2]]), Param(updates), version="opset4")
    expected = data.copy()
    expected[0], expected[2] = updates[0], updates[1]
    assert_same_bits(out, expected)


@pytest.mark.parametrize("reduction, expected", [("sum", [61, 72, 23, 4]),
                                                 ("sub", [-59, -68, -17, 4]),
                                                 ("prod", [500, 2400, 60, 4]),
                                                 ("max", [50, 40, 20, 4]), ("min", [1, 2, 3, 4]),
                                                 ("none", [50, 40, 20, 4])])
def test_scatter_nd_reductions(reduction, expected):
    """The specification's examples 2 to 4, with the indices as tuples of one. (Its example 4
    prints [500, 3600, 40, 4], which swaps two data values: 2 * 30 * 40 is 2400, 3 * 20 is 60;
    its sum example, on the same data, agrees with this reading.)"""
    out = run("ScatterNDUpdate", Param(np.array([1, 2, 3, 4], np.int32)),
              A([[0], [2], [-3], [-3], [0]]), Param(np.array([10, 20, 30, 40, 50], np.int32)),
              version="opset15", reduction=reduction)
    assert out.tolist() == expected


def test_scatter_nd_boolean_sub_is_xor():
    out = run("ScatterNDUpdate", Param(A([True, False])), A([[0], [1], [1]]),
              Param(A([True, True, True])), version="opset15", reduction="sub")
    assert out.tolist() == [False, False]


@pytest.mark.parametrize("version", ["opset4", "opset15"])
def test_scatter_nd_out_of_range(version):
    data = f32([[1, 2], [3, 4]])
    same_error_both_ways("ScatterNDUpdate", [Param(data), A([[2, 0]]), Param(f32([9]))],
                         [Param(data), Param(A([[2, 0]])), Param(f32([9]))], "IR325",
                         version=version)


def test_scatter_nd_is_not_in_opset3():
    from irexec.ops import registry

    with pytest.raises(registry.LookupFailure):
        registry.lookup("ScatterNDUpdate", "opset3")


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=3), st.data())
def test_property_scatter_nd(shape, draw):
    k = draw.draw(st.integers(1, len(shape)))
    count = draw.draw(st.integers(0, 4))
    rng = np.random.default_rng(draw.draw(st.integers(0, 1000)))
    idx = np.stack([rng.integers(-shape[j], shape[j], size=count) for j in range(k)], -1) \
        if count else np.zeros((0, k), np.int64)
    updates = rng.integers(-9, 10, size=(count,) + tuple(shape[k:])).astype(np.int64)
    data = rng.integers(-9, 10, size=shape).astype(np.int64)
    reduction = draw.draw(st.sampled_from(["none", "sum", "sub", "prod", "min", "max"]))
    out = run("ScatterNDUpdate", Param(data), Param(idx), Param(updates), version="opset15",
              reduction=reduction)
    expected = data.copy()
    fn = {"none": lambda a, b: b, "sum": np.add, "sub": np.subtract, "prod": np.multiply,
          "min": np.minimum, "max": np.maximum}[reduction]
    for i in range(count):
        t = tuple(int(v) for v in idx[i])
        expected[t] = fn(expected[t], updates[i])
    assert_same_bits(out, expected)


# --- SliceScatter --------------------------------------------------------------------------------

@pytest.mark.parametrize("data, updates, start, stop, step, axes, expected", [
    ([[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]], [[10, 20, 30, 40, 50]], [0], [1], [1], [0],
     [[10, 20, 30, 40, 50], [5, 6, 7, 8, 9]]),
    ([[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]], [[10, 20, 30], [40, 50, 60]], [-25], [25], [2], [1],
     [[10, 1, 20, 3, 30], [40, 6, 50, 8, 60]]),
    ([[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11, 12, 13, 14]], [[50, 60], [70, 80]], [0, 1],
     [3, 5], [2, 2], None, [[0, 50, 2, 60, 4], [5, 6, 7, 8, 9], [10, 70, 12, 80, 14]]),
])
def test_slice_scatter_spec_examples(data, updates, start, stop, step, axes, expected):
    extra = [] if axes is None else [A(axes)]
    out = run("SliceScatter", Param(f32(data)), Param(f32(updates)), A(start), A(stop), A(step),
              *extra, version="opset15")
    assert_same_bits(out, f32(expected))


def test_slice_scatter_updates_must_fit_the_slice():
    error = read_error("SliceScatter", Param(f32(np.zeros((2, 5)))), Param(f32(np.zeros((2, 2)))),
                       A([0]), A([5]), A([2]), A([1]))
    assert error.code == "IR307"


def test_slice_scatter_zero_step():
    data, updates = f32(np.zeros((2, 5))), f32(np.zeros((2, 5)))
    same_error_both_ways("SliceScatter", [Param(data), Param(updates), A([0]), A([5]), A([0])],
                         [Param(data), Param(updates), A([0]), A([5]), Param(A([0]))], "IR330")


@pytest.mark.parametrize("type_name", TYPE_NAMES)
def test_scatter_every_element_type(type_name):
    rng = np.random.default_rng(4)
    data = random_values(type_name, (3, 4), rng)
    upd = random_values(type_name, (3, 2), rng)
    out = run("ScatterUpdate", Param(data, type_name=type_name), A([3, 0]),
              Param(upd, type_name=type_name), A(1))
    expected = data.copy()
    expected[:, [3, 0]] = upd
    assert_same_bits(out, expected)
    out = run("ScatterNDUpdate", Param(data, type_name=type_name), A([[2], [0]]),
              Param(data[:2], type_name=type_name))
    expected = data.copy()
    expected[[2, 0]] = data[:2]
    assert_same_bits(out, expected)


@pytest.mark.parametrize("type_name", ["u3", "u4", "i4", "nf4", "f8e4m3", "string"])
def test_reductions_need_a_type_with_arithmetic(type_name):
    """Narrow types and strings have no arithmetic of their own: a reduction over them is
    refused; replacing (reduction none) moves them like any data."""
    x = random_values(type_name, (3,), np.random.default_rng(0))
    for op, version, idx, extra in [("ScatterElementsUpdate", "opset12", A([0]), [A(0)]),
                                    ("ScatterNDUpdate", "opset15", A([[0]]), [])]:
        assert read_error(op, Param(x, type_name=type_name), idx,
                          Param(x[:1], type_name=type_name), *extra, version=version,
                          reduction="sum").code == "IR302"
        out = run(op, Param(x, type_name=type_name), idx, Param(x[2:], type_name=type_name),
                  *extra, version=version)
        assert_same_bits(out, x[[2, 1, 2]])
