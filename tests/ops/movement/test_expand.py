"""Tile-1, Broadcast-1/3, Pad-1/12 and Roll-7: the specifications' examples, numpy properties
(np.tile, np.broadcast_to, np.pad, np.roll), bad values both ways."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.ir.shape import PartialShape
from tests.ops.movement.cases import Param, read_error, run, same_error_both_ways, shape_of
from tests.ops.support import TYPE_NAMES, assert_same_bits, random_values

A = np.array


def data(*shape):
    return np.arange(1, int(np.prod(shape)) + 1, dtype=np.float32).reshape(shape)


# --- Tile ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, repeats", [((2, 3, 4), [2, 1, 3]), ((2, 3, 4), [2, 2]),
                                            ((2, 3), [2, 1, 2]), ((2, 3), [0, 2]),
                                            ((4, 3, 2, 5), [2, 1, 3, 2, 2]), ((), [3])])
def test_tile_equals_np_tile(shape, repeats):
    x = data(*shape)
    assert_same_bits(run("Tile", Param(x), A(repeats)), np.tile(x, repeats))
    assert_same_bits(run("Tile", Param(x), Param(A(repeats))), np.tile(x, repeats))


def test_tile_negative_repeat():
    x = data(2, 3)
    same_error_both_ways("Tile", [Param(x), A([1, -1])], [Param(x), Param(A([1, -1]))], "IR327")


def test_tile_dynamic():
    assert shape_of("Tile", Param(data(2, 3), shape=[-1, 3]), A([2, 2])) == PartialShape([-1, 6])
    assert shape_of("Tile", Param(data(2, 3)), Param(A([2, 2, 1]))) == PartialShape([-1] * 3)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=4), st.lists(st.integers(0, 3), max_size=5))
def test_property_tile(shape, repeats):
    x = data(*shape)
    assert_same_bits(run("Tile", Param(x), A(repeats, np.int64)), np.tile(x, repeats))


# --- Broadcast -----------------------------------------------------------------------------------

@pytest.mark.parametrize("version", ["opset1", "opset3"])
def test_broadcast_spec_examples(version):
    x = data(16, 1, 1)
    out = run("Broadcast", Param(x), A([1, 16, 50, 50]), version=version, mode="numpy")
    assert_same_bits(out, np.broadcast_to(x, (1, 16, 50, 50)))
    c = data(16)
    out = run("Broadcast", Param(c), A([1, 16, 50, 50]), A([1]), version=version,
              mode="explicit")
    assert_same_bits(out, np.broadcast_to(c.reshape(1, 16, 1, 1), (1, 16, 50, 50)))
    hw = data(50, 50)
    out = run("Broadcast", Param(hw), A([1, 50, 50, 16]), A([1, 2]), version=version,
              mode="explicit")
    assert_same_bits(out, np.broadcast_to(hw.reshape(1, 50, 50, 1), (1, 50, 50, 16)))


def test_broadcast_bidirectional_spec_example():
    x = data(16, 1, 1)
    out = run("Broadcast", Param(x), A([1, 1, 50, 50]), version="opset3", mode="bidirectional")
    assert_same_bits(out, x * np.ones((1, 1, 50, 50), np.float32))


def test_broadcast_bidirectional_is_only_in_broadcast_3():
    import irexec

    with pytest.raises(irexec.IRError) as info:
        run("Broadcast", Param(data(2)), A([2]), version="opset1", mode="bidirectional")
    assert info.value.code == "IR302"


@pytest.mark.parametrize("mode, target, mapping, code", [
    ("numpy", [3, 4], None, "IR307"), ("numpy", [2], None, "IR307"),
    ("numpy", [2, -3], None, "IR327"), ("explicit", [5, 3], [1], "IR307"),
    ("explicit", [2, 3, 4], [3, 0], "IR306"), ("explicit", [2, 2, 3], [1, 0], "IR308"),
    ("bidirectional", [4, 4], None, "IR307"),
])
def test_broadcast_bad_targets(mode, target, mapping, code):
    x = data(2, 3) if mode != "explicit" or len(mapping) == 2 else data(2)
    extra = [] if mapping is None else [A(mapping)]
    same_error_both_ways("Broadcast", [Param(x), A(target), *extra],
                         [Param(x), Param(A(target), shape=[-1]), *extra], code, mode=mode)


def test_broadcast_unknown_target():
    """A target of known length: the data's dims still show where they must land."""
    assert shape_of("Broadcast", Param(data(2, 3)), Param(A([4, 2, 3])), mode="numpy") == \
        PartialShape([-1, 2, 3])
    assert read_error("Broadcast", Param(data(2, 3)), Param(A([4])), mode="numpy").code == \
        "IR307"  # three dims cannot come from one


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 3), max_size=3), st.data())
def test_property_broadcast_numpy_and_bidirectional(shape, draw):
    x = data(*shape)
    extra = draw.draw(st.lists(st.integers(0, 3), max_size=2))
    target = [draw.draw(st.sampled_from([n, 1] if n == 1 else [n])) if True else n
              for n in shape]
    target = extra + [n if n != 1 else draw.draw(st.integers(0, 3)) for n in target]
    out = run("Broadcast", Param(x), A(target, np.int64), version="opset3", mode="numpy")
    assert_same_bits(out, np.broadcast_to(x, target))
    ones = [1 if draw.draw(st.booleans()) else n for n in target]
    out = run("Broadcast", Param(x), A(ones, np.int64), version="opset3", mode="bidirectional")
    assert_same_bits(out, np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(ones))))


# --- Pad -----------------------------------------------------------------------------------------

DATA = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]], np.float32)


@pytest.mark.parametrize("mode, expected", [
    ("constant", [[0, 1, 2, 3, 4, 0, 0, 0], [0, 5, 6, 7, 8, 0, 0, 0], [0, 9, 10, 11, 12, 0, 0, 0],
                  [0] * 8, [0] * 8]),
    ("edge", [[1, 1, 2, 3, 4, 4, 4, 4], [5, 5, 6, 7, 8, 8, 8, 8], [9, 9, 10, 11, 12, 12, 12, 12],
              [9, 9, 10, 11, 12, 12, 12, 12], [9, 9, 10, 11, 12, 12, 12, 12]]),
    ("reflect", [[2, 1, 2, 3, 4, 3, 2, 1], [6, 5, 6, 7, 8, 7, 6, 5],
                 [10, 9, 10, 11, 12, 11, 10, 9], [6, 5, 6, 7, 8, 7, 6, 5],
                 [2, 1, 2, 3, 4, 3, 2, 1]]),
    ("symmetric", [[1, 1, 2, 3, 4, 4, 3, 2], [5, 5, 6, 7, 8, 8, 7, 6],
                   [9, 9, 10, 11, 12, 12, 11, 10], [9, 9, 10, 11, 12, 12, 11, 10],
                   [5, 5, 6, 7, 8, 8, 7, 6]]),
])
@pytest.mark.parametrize("version", ["opset1", "opset12"])
def test_pad_spec_examples(mode, expected, version):
    out = run("Pad", Param(DATA), A([0, 1]), A([2, 3]), version=version, pad_mode=mode)
    assert_same_bits(out, np.array(expected, np.float32))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric"])
def test_pad_12_negative_pads(mode):
    out = run("Pad", Param(DATA), A([-1, -1]), A([-1, -1]), version="opset12", pad_mode=mode)
    assert_same_bits(out, np.array([[6, 7]], np.float32))


@pytest.mark.parametrize("mode, expected", [
    ("constant", [[0] * 6, [0] * 6, [2, 3, 4, 0, 0, 0], [6, 7, 8, 0, 0, 0]]),
    ("edge", [[2, 3, 4, 4, 4, 4], [2, 3, 4, 4, 4, 4], [2, 3, 4, 4, 4, 4], [6, 7, 8, 8, 8, 8]]),
    ("reflect", [[10, 11, 12, 11, 10, 9], [6, 7, 8, 7, 6, 5], [2, 3, 4, 3, 2, 1],
                 [6, 7, 8, 7, 6, 5]]),
    ("symmetric", [[6, 7, 8, 8, 7, 6], [2, 3, 4, 4, 3, 2], [2, 3, 4, 4, 3, 2],
                   [6, 7, 8, 8, 7, 6]]),
])
def test_pad_12_mixed_pads(mode, expected):
    out = run("Pad", Param(DATA), A([2, -1]), A([-1, 3]), version="opset12", pad_mode=mode)
    assert_same_bits(out, np.array(expected, np.float32))


def test_pad_value_and_strings():
    out = run("Pad", Param(DATA), A([0, 1]), A([0, 0]), Param(np.array(15.0, np.float32)),
              pad_mode="constant")
    assert out[:, 0].tolist() == [15, 15, 15]
    words = np.array(["a", "b"], dtype=object)
    assert run("Pad", Param(words), A([1]), A([1]), pad_mode="constant").tolist() == [
        "", "a", "b", ""]
    assert run("Pad", Param(words), A([1]), A([0]), Param(np.array("z", dtype=object)),
               pad_mode="constant").tolist() == ["z", "a", "b"]


def test_pad_crops_to_zero_not_below():
    out = run("Pad", Param(DATA), A([-3, 0]), A([-2, 0]), pad_mode="constant")
    assert out.shape == (0, 4)


@pytest.mark.parametrize("version, mode, begin, end", [
    ("opset12", "reflect", [0, 4], [0, 0]), ("opset12", "symmetric", [0, 0], [4, 5]),
    ("opset12", "constant", [0, 0, 0], [0, 0, 0]), ("opset1", "constant", [0, -1], [0, 0]),
])
def test_pad_bad_pads(version, mode, begin, end):
    same_error_both_ways("Pad", [Param(DATA), A(begin), A(end)],
                         [Param(DATA), Param(A(begin), shape=[-1]), Param(A(end), shape=[-1])],
                         "IR332", version=version, pad_mode=mode)


def test_pad_edge_of_an_empty_dim():
    empty = np.zeros((0, 3), np.float32)
    same_error_both_ways("Pad", [Param(empty), A([1, 0]), A([0, 0])],
                         [Param(empty), Param(A([1, 0])), A([0, 0])], "IR332", pad_mode="edge")


def test_pad_dynamic():
    x = Param(DATA, shape=[-1, 4])
    assert shape_of("Pad", x, A([1, -1]), A([1, 2]), pad_mode="constant") == PartialShape(
        [(2, None), 5])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_property_pad_equals_np_pad(shape, draw):
    x = data(*shape)
    mode = draw.draw(st.sampled_from(["constant", "edge", "reflect", "symmetric"]))
    top = {"constant": 3, "edge": 3, "reflect": None, "symmetric": None}
    begins, ends = [], []
    for n in shape:
        limit = n - 1 if mode == "reflect" else n if mode == "symmetric" else top[mode]
        begins.append(draw.draw(st.integers(0, limit)))
        ends.append(draw.draw(st.integers(0, limit)))
    as_param = draw.draw(st.booleans())
    b, e = A(begins), A(ends)
    out = run("Pad", Param(x), Param(b) if as_param else b, Param(e) if as_param else e,
              pad_mode=mode)
    assert_same_bits(out, np.pad(x, list(zip(begins, ends)), mode=mode))


@pytest.mark.parametrize("type_name", TYPE_NAMES)
def test_pad_every_element_type(type_name):
    x = random_values(type_name, (2, 3), np.random.default_rng(6))
    out = run("Pad", Param(x, type_name=type_name), A([1, 0]), A([0, 2]), pad_mode="edge")
    assert_same_bits(out, x[[0, 0, 1]][:, [0, 1, 2, 2, 2]])
    out = run("Pad", Param(x, type_name=type_name), A([0, 1]), A([1, 0]), pad_mode="constant")
    assert_same_bits(out[:2, 1:], x)
    if x.dtype == object:
        assert out[:, 0].tolist() == ["", "", ""]
    else:  # zero bits
        assert not np.ascontiguousarray(out[:, 0]).view(np.uint8).any()


# --- Roll ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("shift, axes", [([1], [0]), ([-2, 1], [1, 0]), (3, [0, 1]),
                                         ([1, 1], [1, -1]), ([7], [1]), (-2, 1)])
def test_roll_equals_np_roll(shift, axes):
    x = data(3, 4)
    s = np.array(shift)
    count = np.size(axes)
    expected = np.roll(x, list(np.broadcast_to(s, count)), list(np.reshape(axes, count)))
    assert_same_bits(run("Roll", Param(x), s, A(axes)), expected)
    assert_same_bits(run("Roll", Param(x), Param(s), Param(A(axes))), expected)


def test_roll_bad_values():
    x = data(3, 4)
    same_error_both_ways("Roll", [Param(x), A([1, 2]), A([0, 1, 0])],
                         [Param(x), A([1, 2]), Param(A([0, 1, 0]), shape=[-1])], "IR307")
    # a 1-D shift of one value is not a scalar: it names one axis
    same_error_both_ways("Roll", [Param(x), A([1]), A([0, 1])],
                         [Param(x), A([1]), Param(A([0, 1]), shape=[-1])], "IR307")
    same_error_both_ways("Roll", [Param(x), A([1]), A([2])], [Param(x), A([1]), Param(A([2]))],
                         "IR306")


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=3), st.data())
def test_property_roll(shape, draw):
    x = data(*shape)
    axes = draw.draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1, max_size=4))
    shifts = draw.draw(st.lists(st.integers(-9, 9), min_size=len(axes), max_size=len(axes)))
    out = run("Roll", Param(x), A(shifts), A(axes))
    assert_same_bits(out, np.roll(x, shifts, axes))
