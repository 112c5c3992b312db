"""Slice-8 and StridedSlice-1: the specifications' examples, OpenVINO's clamping, masks,
dynamic dims, bad values both ways, views."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.ir.shape import PartialShape
from tests.ops.movement.cases import Param, read_error, run, same_error_both_ways, shape_of
from tests.ops.support import TYPE_NAMES, assert_same_bits, random_values

A = np.array
TEN = np.arange(10, dtype=np.float32)


def clamp_slice(n, start, stop, step):
    """The indices ``start:stop:step`` takes from a dim of n, written from the specifications:
    negative values count from the end, then values clamp into the dim; going backward a start
    clamps into [0, n-1] (so a start below -n still takes element 0) and a stop into [-1, n]."""
    start = start + n if start < 0 else start
    stop = stop + n if stop < 0 else stop
    if step > 0:
        start, stop = min(max(start, 0), n), min(max(stop, 0), n)
        return list(range(start, stop, step))
    if n == 0:
        return []
    start, stop = min(max(start, 0), n - 1), min(max(stop, -1), n)
    return [i for i in range(start, -1, step) if i > stop]


# --- Slice ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("start, stop, step, axes, expected", [
    ([1], [8], [1], [0], [1, 2, 3, 4, 5, 6, 7]),
    ([1], [8], [1], None, [1, 2, 3, 4, 5, 6, 7]),
    ([1], [8], [2], [0], [1, 3, 5, 7]),
    ([-100], [100], [1], [0], list(range(10))),
    ([9], [-11], [-1], [0], list(range(9, -1, -1))),
    ([9], [0], [-1], [0], list(range(9, 0, -1))),
    ([9], [-10], [-1], [0], list(range(9, 0, -1))),
    ([9], [-11], [-2], [0], [9, 7, 5, 3, 1]),
    ([100], [-100], [-1], [0], list(range(9, -1, -1))),
])
def test_slice_spec_examples(start, stop, step, axes, expected):
    extra = [] if axes is None else [A(axes)]
    out = run("Slice", Param(TEN), A(start), A(stop), A(step), *extra, version="opset8")
    assert out.tolist() == expected


def test_slice_spec_examples_2d_3d():
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    out = run("Slice", Param(x), A([0, 1]), A([2, 4]), A([1, 2]), A([0, 1]))
    assert out.tolist() == [[1, 3], [6, 8]]
    y = Param(np.zeros((20, 10, 5), np.float32))
    assert shape_of("Slice", y, A([0, 0, 0]), A([4, 10, 5]), A([1, 1, 1]), A([0, 1, 2])) == \
        PartialShape([4, 10, 5])
    assert shape_of("Slice", y, A([0, 0]), A([4, 10]), A([1, 1]), A([0, 1])) == PartialShape(
        [4, 10, 5])


def test_backward_start_below_the_dim_takes_element_zero():
    """OpenVINO clamps; Python's data[-3::-1] on a dim of 2 is empty (/work/shared facts)."""
    x = np.array([5, 6], np.float32)
    assert run("Slice", Param(x), A([-3]), A([-100]), A([-1])).tolist() == [5]


def test_slice_dynamic_dims():
    x = Param(np.zeros((4, 6), np.float32), shape=[-1, (2, 8)])
    assert shape_of("Slice", x, A([1, 0]), A([2**62, -1]), A([1, 2]), A([0, 1])) == \
        PartialShape([-1, (1, 4)])
    assert shape_of("Slice", x, Param(A([1])), A([3]), A([1])) == PartialShape([-1, (2, 8)])


@pytest.mark.parametrize("bad, code", [({"step": [0]}, "IR330"), ({"axes": [2]}, "IR306"),
                                       ({"axes": [0, -2]}, "IR333")])
def test_slice_bad_values(bad, code):
    x = np.zeros((3, 4), np.float32)
    values = {"start": [0], "stop": [2], "step": [1], "axes": [0]}
    if "axes" in bad and len(bad["axes"]) == 2:
        values = {"start": [0, 0], "stop": [2, 2], "step": [1, 1]}
    values.update(bad)
    const = [Param(x)] + [A(values[k]) for k in ("start", "stop", "step", "axes")]
    param = [Param(x)] + [Param(A(values[k])) if k in bad else A(values[k])
                          for k in ("start", "stop", "step", "axes")]
    same_error_both_ways("Slice", const, param, code)


def test_slice_lengths_must_agree():
    assert read_error("Slice", Param(np.zeros((3, 4), np.float32)), A([0, 0]), A([1]),
                      A([1])).code == "IR307"


def test_slice_is_a_view_of_an_intermediate():
    from irexec.ops.movement.slice import Slice

    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    out = Slice.kernel(x, A([1]), A([3]), A([1]))
    assert np.shares_memory(out, x) and out.flags.c_contiguous


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=3), st.data())
def test_property_slice(shape, draw):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    axes = draw.draw(st.permutations(range(len(shape))))[:draw.draw(st.integers(1, len(shape)))]
    big = st.integers(-8, 8) | st.sampled_from([2**62, -2**62, 2**31 - 1])
    starts = [draw.draw(big) for _ in axes]
    stops = [draw.draw(big) for _ in axes]
    steps = [draw.draw(st.sampled_from([-3, -2, -1, 1, 2, 3])) for _ in axes]
    as_param = draw.draw(st.booleans())
    signed = [a - len(shape) if draw.draw(st.booleans()) else a for a in axes]
    inputs = [A(v) for v in (starts, stops, steps, signed)]
    out = run("Slice", Param(x), *[Param(v) if as_param else v for v in inputs])
    index = [slice(None)] * len(shape)
    for a, b, e, s in zip(axes, starts, stops, steps):
        index[a] = clamp_slice(shape[a], b, e, s)
    expected = x[np.ix_(*[range(n)[i] if isinstance(i, slice) else i
                          for n, i in zip(shape, index)])]
    assert_same_bits(out, expected)


# --- StridedSlice --------------------------------------------------------------------------------

def strided(x, begin, end, stride=None, **masks):
    masks.setdefault("begin_mask", [0] * len(begin))
    masks.setdefault("end_mask", [0] * len(begin))
    inputs = [Param(x), A(begin), A(end)] + ([A(stride)] if stride is not None else [])
    return run("StridedSlice", *inputs, version="opset1", **masks)


def test_strided_slice_spec_example_basic():
    x = np.arange(4**6, dtype=np.float32).reshape([4] * 6)
    out = strided(x, [0, 1, 0, 1, 3, 3], [4, 4, 4, 4, 0, 0], [1, 1, 2, 2, -1, -2])
    assert_same_bits(out, x[0:4, 1:4, 0:4:2, 1:4:2, 3:0:-1, 3:0:-2])


def test_strided_slice_spec_example_clamping():
    """The specification's array[2:3, 2:1:-1] example on a 2x2 array: begin 1234 clamps to 2
    (nothing left); going backward begin 2 clamps to 1 and end 4321 to 2, so nothing either.
    (The example's comments print one element each, which a 2x2 array cannot hold; OpenVINO's
    shape inference gives [0, 0] too.)"""
    x = np.arange(4, dtype=np.float32).reshape(2, 2)
    out = strided(x, [1234, 2], [1234, 4321], [1, -1])
    assert out.shape == (0, 0)


def test_strided_slice_spec_example_negative():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert_same_bits(strided(x, [0, 0, 0], [2, 2, -1], [1, 1, 1]), x[0:2, 0:2, 0:-1])


def test_strided_slice_masks_and_reverse_end_mask_is_inclusive():
    """array[1:, :, ::-1]: OpenVINO runs a masked end backward to element 0 inclusive (the
    specification's example prints [3, 2, 1]; OpenVINO and numpy give [3, 2, 1, 0])."""
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = strided(x, [1, 1, 123], [0, 0, 2], [1, 1, -1], begin_mask=[0, 1, 1],
                  end_mask=[1, 1, 1])
    assert_same_bits(out, x[1:, :, ::-1])


def test_strided_slice_new_axis_shrink_and_ellipsis():
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    out = strided(x, [0, 0, 0, 1], [1, 2, 0, 3], [1, 1, 1, 1], new_axis_mask=[1, 0, 0, 0],
                  ellipsis_mask=[0, 0, 1, 0], shrink_axis_mask=[0, 1, 0, 0])
    assert_same_bits(out, x[None, 0, ..., 1:3])
    out = strided(x, [1, 0], [2, 0], new_axis_mask=[0, 1], shrink_axis_mask=[1, 0])
    assert_same_bits(out, x[1, None])


def test_strided_slice_masks_of_any_length():
    """Shorter masks are padded with zeros, longer ones cut (OpenVINO refuses masks of
    different lengths; the specification allows them: docs/compatibility.md)."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = strided(x, [1, 1], [2, 3], begin_mask=[1], end_mask=[0, 0, 0, 1],
                  shrink_axis_mask=[0])
    assert_same_bits(out, x[:2, 1:3])


@pytest.mark.parametrize("begin", [3, -4])
def test_strided_slice_shrink_outside_the_dim(begin):
    x = np.zeros((3, 4), np.float32)
    masks = dict(begin_mask=[0], end_mask=[0], shrink_axis_mask=[1])
    same_error_both_ways("StridedSlice", [Param(x), A([begin]), A([begin + 1])],
                         [Param(x), Param(A([begin])), A([begin + 1])], "IR325", **masks)


def test_strided_slice_zero_stride_and_two_ellipses():
    x = np.zeros((3, 4), np.float32)
    same_error_both_ways("StridedSlice", [Param(x), A([0]), A([1]), A([0])],
                         [Param(x), A([0]), A([1]), Param(A([0]))], "IR330", begin_mask=[0],
                         end_mask=[0])
    assert read_error("StridedSlice", Param(x), A([0, 0]), A([1, 1]), begin_mask=[0],
                      end_mask=[0], ellipsis_mask=[1, 1]).code == "IR302"


def test_strided_slice_too_many_axes():
    assert read_error("StridedSlice", Param(np.zeros((3,), np.float32)), A([0, 0]), A([1, 1]),
                      begin_mask=[0], end_mask=[0]).code == "IR307"


def test_strided_slice_dynamic_dims():
    x = Param(np.zeros((4, 6), np.float32), shape=[-1, 6])
    assert shape_of("StridedSlice", x, A([0, 1]), A([0, 0]), A([1, 1]), begin_mask=[1, 0],
                    end_mask=[1, 1], version="opset1") == PartialShape([-1, 5])
    assert shape_of("StridedSlice", x, A([0, 0]), A([-1, 0]), A([1, 1]), begin_mask=[1, 1],
                    end_mask=[0, 1], version="opset1") == PartialShape([-1, 6])
    assert shape_of("StridedSlice", x, Param(A([0, 0])), A([2, 2]), begin_mask=[0, 0],
                    end_mask=[0, 0], version="opset1") == PartialShape([-1, (0, 6)])


@st.composite
def strided_cases(draw):
    rank = draw(st.integers(1, 4))
    shape = draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank))
    count = draw(st.integers(1, rank + 1))
    kinds = draw(st.lists(st.sampled_from(["slice", "slice", "new", "shrink", "ellipsis"]),
                          min_size=count, max_size=count))
    if kinds.count("ellipsis") > 1:
        first = kinds.index("ellipsis")
        kinds = [k if k != "ellipsis" or i == first else "slice" for i, k in enumerate(kinds)]
    real = sum(k in ("slice", "shrink") for k in kinds)
    if real > rank:
        kinds = [k if k not in ("slice", "shrink") else "new" for k in kinds]
    return shape, kinds, draw(st.data())


def strided_reference(x, kinds, begin, end, stride, bm, em):
    """numpy indexing built step by step from the specification."""
    index = []
    rank = x.ndim
    real = sum(k in ("slice", "shrink") for k in kinds)
    axis = 0
    for i, kind in enumerate(kinds):
        if kind == "new":
            index.append(None)
        elif kind == "ellipsis":
            index.extend([slice(None)] * (rank - real))
            axis += rank - real
        elif kind == "shrink":
            index.append(begin[i] % x.shape[axis])
            axis += 1
        else:
            n = x.shape[axis]
            b = (n - 1 if stride[i] < 0 else 0) if bm[i] else begin[i]
            e = (-n - 1 if stride[i] < 0 else n) if em[i] else end[i]
            index.append(clamp_slice(n, b, e, stride[i]))
            axis += 1
    index.extend([slice(None)] * (rank - axis))
    out = x
    # apply one step at a time (numpy cannot mix several index lists in one go)
    position = 0
    for item in index:
        if item is None:
            out = np.expand_dims(out, position)
            position += 1
        elif isinstance(item, int):
            out = np.take(out, item, axis=position)
        elif isinstance(item, list):
            out = np.take(out, item, axis=position)
            position += 1
        else:
            position += 1
    return out


@settings(max_examples=100, deadline=None)
@given(strided_cases())
def test_property_strided_slice(case):
    shape, kinds, draw = case
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    count = len(kinds)
    begin, end, stride, bm, em, steps = [], [], [], [], [], []
    real = sum(k in ("slice", "shrink") for k in kinds)
    axis = 0
    for kind in kinds:
        if kind == "shrink" and x.shape[axis] == 0:
            kind = "slice"  # an empty dim has no element to take
        steps.append(kind)
        if kind == "shrink":
            n = x.shape[axis]
            begin.append(draw.draw(st.integers(-n, n - 1)))
        else:
            begin.append(draw.draw(st.integers(-6, 6)))
        end.append(draw.draw(st.integers(-6, 6)))
        stride.append(draw.draw(st.sampled_from([-3, -2, -1, 1, 2, 3])))
        bm.append(0 if kind == "shrink" else draw.draw(st.integers(0, 1)))
        em.append(draw.draw(st.integers(0, 1)))
        if kind in ("slice", "shrink"):
            axis += 1
        elif kind == "ellipsis":
            axis += x.ndim - real
    kinds = steps
    masks = dict(begin_mask=bm, end_mask=em,
                 new_axis_mask=[int(k == "new") for k in kinds],
                 shrink_axis_mask=[int(k == "shrink") for k in kinds],
                 ellipsis_mask=[int(k == "ellipsis") for k in kinds])
    as_param = draw.draw(st.booleans())
    inputs = [A(begin), A(end), A(stride)]
    if as_param and "shrink" not in kinds:
        inputs = [Param(v) for v in inputs]
    expected = strided_reference(x, kinds, begin, end, stride, bm, em)
    out = run("StridedSlice", Param(x), *inputs, version="opset1", **masks)
    assert_same_bits(out, expected)
    assert count == len(begin)


@pytest.mark.parametrize("type_name", TYPE_NAMES)
def test_slices_every_element_type(type_name):
    x = random_values(type_name, (3, 5), np.random.default_rng(9))
    out = run("Slice", Param(x, type_name=type_name), A([4, 0]), A([0, 3]), A([-2, 1]),
              A([1, 0]))
    assert_same_bits(out, x[0:3, 4:0:-2])
    out = strided(x, [1, 0], [0, 0], [1, 1], begin_mask=[0, 1], end_mask=[1, 1],
                  new_axis_mask=[0, 0], shrink_axis_mask=[1, 0])
    assert_same_bits(out, x[1])
