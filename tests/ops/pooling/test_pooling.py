"""MaxPool-1/8/14, AvgPool-1/14/16, AdaptiveAvgPool-8, AdaptiveMaxPool-8: the specification's
examples, properties against window-by-window loops, OpenVINO conformance for every rounding,
padding mode and element type, and one diagnostic per bad attribute or shape."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.ir.shape import PartialShape
from irexec.kernels import pool
from tests.ops.compute_support import (assert_close, build_layer, layer_error,
                                       openvino_and_irexec, run_layer)
from tests.ops.convolution.reference import pads_for
from tests.ops.support import dtype_of

F = np.zeros(1, np.float32)


def pool_attrs(nsp, kernel, strides=1, pads_begin=0, pads_end=0, auto_pad="explicit",
               rounding_type="floor", dilations=None):
    def spread(v):
        return tuple(v) if isinstance(v, (tuple, list)) else (v,) * nsp
    at = dict(kernel=spread(kernel), strides=spread(strides), pads_begin=spread(pads_begin),
              pads_end=spread(pads_end), auto_pad=auto_pad, rounding_type=rounding_type)
    if dilations is not None:
        at["dilations"] = spread(dilations)
    return at


def output_shape(model):
    return [model.results[i].inputs[0].source.partial_shape for i in range(len(model.results))]


# --- reference loops ----------------------------------------------------------------------------

def out_size(size, k, s, d, pb, pe, rounding):
    span = (k - 1) * d + 1
    room = size + pb + pe - span
    if rounding == "floor":
        return room // s + 1
    n = -(-room // s) + 1
    if rounding == "ceil_torch" and (n - 1) * s >= size + pb:
        n -= 1
    return n


def geometry(x, at):
    kernel, strides = at["kernel"], at["strides"]
    dil = at.get("dilations") or (1,) * len(kernel)
    pb, pe = pads_for(x.shape[2:], kernel, strides, dil, at["pads_begin"], at["pads_end"],
                      at["auto_pad"])
    out = [out_size(n, k, s, d, b, e, at["rounding_type"]) for n, k, s, d, b, e in
           zip(x.shape[2:], kernel, strides, dil, pb, pe)]
    return kernel, strides, dil, pb, pe, out


def window(o, kernel, strides, dil, pb):
    """The data positions of window ``o``'s taps (in row-major tap order), padding included."""
    for k in itertools.product(*map(range, kernel)):
        yield tuple(oi * s - b + ki * d for oi, ki, s, d, b in zip(o, k, strides, dil, pb))


def max_pool_loop(x, at, axis=0):
    """OpenVINO's rule: start from the lowest finite value, take an element only when it is
    greater (so NaN and -inf never are); its flat index, or 0 when none was taken."""
    kernel, strides, dil, pb, _, out = geometry(x, at)
    ct = np.float32 if x.dtype.kind == "f" or x.dtype == dtype_of("bf16") else x.dtype.type
    low = np.finfo(ct).min if np.dtype(ct).kind == "f" else np.iinfo(ct).min
    values = np.zeros(x.shape[:2] + tuple(out), ct)
    index = np.zeros(values.shape, np.int64)
    spatial = x.shape[2:]
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for o in itertools.product(*map(range, out)):
            best, where = low, None
            for pos in window(o, kernel, strides, dil, pb):
                if all(0 <= p < sz for p, sz in zip(pos, spatial)):
                    v = ct(x[(n, c, *pos)])
                    if v > best:
                        best, where = v, pos
            values[(n, c, *o)] = best
            flat = np.ravel_multi_index((n, c, *where), x.shape) if where is not None else \
                np.ravel_multi_index((n, c) + (0,) * len(spatial), x.shape)
            index[(n, c, *o)] = flat % math.prod(x.shape[axis:])
    with np.errstate(over="ignore"):  # the lowest f32 is -inf in f16
        return values.astype(x.dtype), index


def avg_pool_loop(x, at, exclude_pad):
    """(mean, mean of magnitudes) of each window: over the data's elements (exclude_pad), or over
    the whole kernel when there is padding (OpenVINO's rule), else the taps inside the data."""
    kernel, strides, dil, pb, pe, out = geometry(x, at)
    xf = x.astype(np.float64)
    values = np.zeros(x.shape[:2] + tuple(out))
    mags = np.zeros_like(values)
    spatial = x.shape[2:]
    whole = not exclude_pad and any(tuple(pb) + tuple(pe))
    for o in itertools.product(*map(range, out)):
        total, mag, count = 0.0, 0.0, 0
        for pos in window(o, kernel, strides, dil, pb):
            inside = all(0 <= p < sz for p, sz in zip(pos, spatial))
            in_padded = all(-b <= p < sz + e for p, sz, b, e in zip(pos, spatial, pb, pe))
            if inside:
                total = total + xf[(slice(None), slice(None), *pos)]
                mag = mag + np.abs(xf[(slice(None), slice(None), *pos)])
            if inside or (not exclude_pad and in_padded):
                count += 1
        if whole:
            count = math.prod(kernel)
        with np.errstate(invalid="ignore", divide="ignore"):
            values[(slice(None), slice(None), *o)] = np.float64(total) / count
            mags[(slice(None), slice(None), *o)] = np.float64(mag) / max(count, 1)
    return values, mags


# --- the specification's examples ---------------------------------------------------------------

@pytest.mark.parametrize("version, at, expected", [
    ("opset14", pool_attrs(2, 2, 2, 1, 1, "explicit"), [1, 3, 17, 17]),
    ("opset14", pool_attrs(2, 2, 2, 1, 1, "valid"), [1, 3, 16, 16]),
    # the specification's first example writes 32x32 here; ceil(32 / 2) windows is 16 (and
    # OpenVINO agrees)
    ("opset14", pool_attrs(2, 2, 2, 1, 1, "same_upper"), [1, 3, 16, 16]),
    ("opset8", pool_attrs(2, 3, 2, 0, 0, "explicit", "ceil", dilations=1), [1, 3, 16, 16]),
    ("opset1", pool_attrs(2, 3, 2, 0, 0, "explicit", "floor"), [1, 3, 15, 15]),
])
def test_max_pool_spec_examples(version, at, expected):
    model, _ = build_layer("MaxPool", F, shapes=[[1, 3, 32, 32]], version=version, **at)
    assert all(s == PartialShape(expected) for s in output_shape(model))


@pytest.mark.parametrize("at, expected", [
    (pool_attrs(2, 5, 3, 1, 1, "explicit", dilations=1), [1, 3, 10, 10]),
    (pool_attrs(2, 5, 2, 1, 1, "explicit", dilations=1), [1, 3, 15, 15]),
    (pool_attrs(2, 5, 2, 1, 1, "valid", dilations=1), [1, 3, 14, 14]),
    (pool_attrs(2, 5, 2, 1, 1, "explicit", dilations=2), [1, 3, 13, 13]),
    # written as 32x32 in the specification; ceil(32 / 2) is 16
    (pool_attrs(2, 2, 2, 0, 1, "same_upper", dilations=1), [1, 3, 16, 16]),
])
def test_avg_pool_16_spec_examples(at, expected):
    for exclude in (True, False):
        model, _ = build_layer("AvgPool", F, shapes=[[1, 3, 32, 32]], version="opset16",
                               **{"exclude-pad": exclude}, **at)
        assert output_shape(model) == [PartialShape(expected)]


def test_adaptive_spec_shapes():
    model, _ = build_layer("AdaptiveAvgPool", F, np.array([3, 5], np.int32), consts=(1,),
                           shapes=[[1, 3, 32, 32], None], version="opset8")
    assert output_shape(model) == [PartialShape([1, 3, 3, 5])]
    model, _ = build_layer("AdaptiveMaxPool", F, np.array([3, 5, 4], np.int64), consts=(1,),
                           shapes=[[2, 3, 7, 8, 9], None], version="opset8",
                           index_element_type="i32")
    assert output_shape(model) == [PartialShape([2, 3, 3, 5, 4])] * 2


# --- hand-checked values -------------------------------------------------------------------------

def test_max_pool_values_and_indices():
    x = np.array([[[1, 5, 2, 5, 3, 0]], [[7, 7, -1, 4, 9, 9]]], np.float32)  # [2, 1, 6]
    values, index = run_layer("MaxPool", x, version="opset8",
                              **pool_attrs(1, 2, 2, dilations=1))
    assert values.tolist() == [[[5, 5, 3]], [[7, 4, 9]]]
    assert index.tolist() == [[[1, 3, 4]], [[6, 9, 10]]]  # flat over the whole tensor
    _, index = run_layer("MaxPool", x, version="opset8", axis=2,
                         **pool_attrs(1, 2, 2, dilations=1))
    assert index.tolist() == [[[1, 3, 4]], [[0, 3, 4]]]  # within each channel


def test_max_pool_skips_nan_and_gives_lowest_where_nothing_is_greater():
    low = float(np.finfo(np.float32).min)
    x = np.array([[[np.nan, 1, -np.inf, -np.inf, np.nan, np.nan, 2, np.nan]]], np.float32)
    values, index = run_layer("MaxPool", x, version="opset14",
                              **pool_attrs(1, 2, 2, dilations=1))
    assert values.tolist() == [[[1.0, low, low, 2.0]]]
    assert index.tolist() == [[[1, 0, 0, 6]]]
    assert run_layer("MaxPool", x, **pool_attrs(1, 2, 2)).tolist() == [[[1.0, low, low, 2.0]]]


def test_ceil_rounding_adds_a_window_and_ceil_torch_drops_one_in_the_padding():
    x = np.array([[[1.0, 2.0, 3.0, 4.0]]], np.float32)
    at = pool_attrs(1, 3, 2, 0, 2, rounding_type="ceil", dilations=1)
    values, _ = run_layer("MaxPool", x, version="opset14", **at)
    assert values.tolist() == [[[3.0, 4.0, float(np.finfo(np.float32).min)]]]
    values, _ = run_layer("MaxPool", x, version="opset14", **dict(at, rounding_type="ceil_torch"))
    assert values.tolist() == [[[3.0, 4.0]]]


def test_avg_pool_divisors():
    x = np.array([[[1.0, 2.0, 3.0, 4.0]]], np.float32)
    at = pool_attrs(1, 3, 2, 1, 2, rounding_type="ceil")
    assert run_layer("AvgPool", x, **{"exclude-pad": False}, **at).tolist() == \
        [[[1.0, 3.0, float(np.float32(4.0) / np.float32(3.0))]]]
    assert run_layer("AvgPool", x, **{"exclude-pad": True}, **at).tolist() == [[[1.5, 3.0, 4.0]]]
    # a ceil window past the end of unpadded data averages what it covers
    at = pool_attrs(1, 3, 2, 0, 0, rounding_type="ceil")
    assert run_layer("AvgPool", x, **{"exclude-pad": False}, **at).tolist() == [[[2.0, 3.5]]]


def test_avg_pool_window_of_padding_only():
    x = np.array([[[1.0, 2.0, 3.0, 4.0]]], np.float32)
    at = pool_attrs(1, 3, 2, 0, 2, rounding_type="ceil")
    include = run_layer("AvgPool", x, **{"exclude-pad": False}, **at)
    exclude = run_layer("AvgPool", x, **{"exclude-pad": True}, **at)
    assert include[0, 0, 2] == 0.0 and np.isnan(exclude[0, 0, 2])


def test_avg_pool_integers_round_to_nearest():
    x = np.array([[[1, 2, 3, 4, 5, 6, 7, 100]]], np.int32)
    y = run_layer("AvgPool", x, **{"exclude-pad": True},
                  **pool_attrs(1, 3, 2, 0, 1, rounding_type="ceil"))
    assert y.dtype == np.int32 and y.tolist() == [[[2, 4, 6, 54]]]


def test_adaptive_windows_overlap():
    x = np.arange(5, dtype=np.float32).reshape(1, 1, 5)
    y = run_layer("AdaptiveAvgPool", x, np.array([3], np.int64), consts=(1,), version="opset8")
    assert y.tolist() == [[[0.5, 2.0, 3.5]]]  # windows [0,2), [1,4), [3,5)
    values, index = run_layer("AdaptiveMaxPool", x[:, :, ::-1].copy(), np.array([3], np.int64),
                              consts=(1,), version="opset8")
    assert values.tolist() == [[[4.0, 3.0, 1.0]]] and index.tolist() == [[[0, 1, 3]]]


# --- properties ------------------------------------------------------------------------------------

@st.composite
def pool_cases(draw, roundings=("floor", "ceil", "ceil_torch"), dilated=True):
    nsp = draw(st.integers(1, 3))
    kernel = [draw(st.integers(1, 3)) for _ in range(nsp)]
    strides = [draw(st.integers(1, 3)) for _ in range(nsp)]
    dil = [draw(st.integers(1, 2)) if dilated else 1 for _ in range(nsp)]
    pb = [draw(st.integers(0, 2)) for _ in range(nsp)]
    pe = [draw(st.integers(0, 2)) for _ in range(nsp)]
    spatial = [draw(st.integers((k - 1) * d + 1, (k - 1) * d + 5)) for k, d in zip(kernel, dil)]
    at = pool_attrs(nsp, kernel, strides, pb, pe,
                    draw(st.sampled_from(("explicit", "valid", "same_upper", "same_lower"))),
                    draw(st.sampled_from(roundings)), dilations=dil)
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 3)), *spatial)
    return shape, at, draw(st.integers(0, 2**16))


def _data(shape, type_name, seed):
    rng = np.random.default_rng(seed)
    if type_name in ("i32", "u8"):
        return rng.integers(0, 9, shape).astype(dtype_of(type_name))
    x = rng.standard_normal(shape)
    x[rng.random(shape) < 0.05] = rng.choice([np.nan, -np.inf, np.inf])
    return np.round(x, 1).astype(dtype_of(type_name))  # ties between equal values happen


@settings(max_examples=50, deadline=None)
@given(pool_cases(), st.sampled_from(["f32", "f16", "i32"]), st.integers(-5, 4))
def test_property_max_pool_equals_the_loop(case, type_name, axis):
    shape, at, seed = case
    x = _data(shape, type_name, seed)
    axis = axis % len(shape) - (len(shape) if axis < 0 else 0)
    values, index = run_layer("MaxPool", x, version="opset14", axis=axis, **at)
    ref_values, ref_index = max_pool_loop(x, at, axis % len(shape))
    np.testing.assert_array_equal(values, ref_values)
    np.testing.assert_array_equal(index, ref_index)
    if at["rounding_type"] != "ceil_torch" and set(at["dilations"]) == {1}:
        at1 = {k: v for k, v in at.items() if k != "dilations"}
        np.testing.assert_array_equal(run_layer("MaxPool", x, **at1), ref_values)


@settings(max_examples=50, deadline=None)
@given(pool_cases(), st.sampled_from(["f32", "f64", "f16"]), st.booleans())
def test_property_avg_pool_equals_the_loop(case, type_name, exclude):
    shape, at, seed = case
    x = _data(shape, type_name, seed)
    x[np.isinf(x.astype(np.float64))] = 1  # keep inf - inf = NaN out of the sums
    y = run_layer("AvgPool", x, version="opset16", **{"exclude-pad": exclude}, **at)
    ref, mag = avg_pool_loop(x, at, exclude)
    assert_close(y, ref.astype(x.dtype), mag, f"{at} exclude={exclude}")


@st.composite
def wide_padding_cases(draw):
    """Windows mostly over padding (wide pads, wide kernels, small data): the kernels reduce
    them without a padded copy (kernels/pool.py ``_clipped``)."""
    nsp = draw(st.integers(1, 3))
    kernel = [draw(st.integers(1, 7)) for _ in range(nsp)]
    strides = [draw(st.integers(1, 4)) for _ in range(nsp)]
    dil = [draw(st.integers(1, 3)) for _ in range(nsp)]
    pb = [draw(st.integers(0, 12)) for _ in range(nsp)]
    pe = [draw(st.integers(0, 12)) for _ in range(nsp)]
    spatial = [draw(st.integers(1, 4)) for _ in range(nsp)]
    for i in range(nsp):  # at least one window
        pe[i] = max(pe[i], (kernel[i] - 1) * dil[i] + 1 - spatial[i] - pb[i])
    at = pool_attrs(nsp, kernel, strides, pb, pe, "explicit",
                    draw(st.sampled_from(("floor", "ceil"))), dilations=dil)
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 3)), *spatial)
    return shape, at, draw(st.integers(0, 2**16))


@settings(max_examples=60, deadline=None)
@given(wide_padding_cases(), st.sampled_from(["f32", "f16", "i32", "u8"]), st.integers(-5, 4))
def test_property_pools_over_wide_padding_equal_the_loop(case, type_name, axis):
    shape, at, seed = case
    x = _data(shape, type_name, seed)
    axis = axis % len(shape) - (len(shape) if axis < 0 else 0)
    at1 = {k: v for k, v in at.items() if k != "dilations"}
    ref_values, ref_index = max_pool_loop(x, at, axis % len(shape))
    if set(at["dilations"]) == {1}:
        np.testing.assert_array_equal(run_layer("MaxPool", x, version="opset1", **at1),
                                      ref_values)
    values, index = run_layer("MaxPool", x, version="opset8", axis=axis, **at)
    np.testing.assert_array_equal(values, ref_values)
    np.testing.assert_array_equal(index, ref_index)
    kernel, strides, dil, pb, _, out = geometry(x, at)  # values only, dilated too
    np.testing.assert_array_equal(pool.max_pool(x, kernel, strides, dil, pb, out), ref_values)
    if type_name in ("f32", "f16"):
        x[np.isinf(x.astype(np.float64))] = 1
        for exclude in (False, True):
            y = run_layer("AvgPool", x, version="opset16", **{"exclude-pad": exclude}, **at)
            ref, mag = avg_pool_loop(x, at, exclude)
            assert_close(y, ref.astype(x.dtype), mag, f"{at} exclude={exclude}")


def test_max_pool_with_a_huge_kernel_over_huge_padding_makes_no_padded_copy():
    """A 100,000-wide kernel with as much padding over a 3x3 input: four outputs (OpenVINO:
    0.02 s). A padded copy would be 149 GiB; the memory budget of 1 MiB is never approached."""
    from irexec import budget

    k = 100_000
    x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
    at = pool_attrs(2, k, k, k - 1, k - 1)
    with budget.limit(1 << 20):
        y = run_layer("MaxPool", x, version="opset1", **at)
    # windows start at -99999 and at 1: the first covers rows/columns 0, the second 1..2
    assert y.tolist() == [[[[0.0, 2.0], [6.0, 8.0]]]]


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 3), st.data())
def test_property_adaptive_pools_equal_the_loop(nsp, data):
    spatial = [data.draw(st.integers(1, 7)) for _ in range(nsp)]
    out = [data.draw(st.integers(1, 8)) for _ in range(nsp)]
    x = _data((2, 2, *spatial), "f32", data.draw(st.integers(0, 2**16)))
    x[~np.isfinite(x)] = 0
    avg = run_layer("AdaptiveAvgPool", x, np.array(out, np.int64), consts=(1,),
                    version="opset8")
    values, index = run_layer("AdaptiveMaxPool", x, np.array(out, np.int32), consts=(1,),
                              version="opset8", index_element_type="i32")
    ref_avg = np.zeros((2, 2, *out))
    ref_max = np.zeros((2, 2, *out), np.float32)
    ref_index = np.zeros((2, 2, *out), np.int64)
    for o in itertools.product(*map(range, out)):
        box = tuple(slice(i * n // m, -(-(i + 1) * n // m)) for i, n, m in zip(o, spatial, out))
        part = x[(slice(None), slice(None), *box)].reshape(2, 2, -1)
        ref_avg[(slice(None), slice(None), *o)] = part.astype(np.float64).mean(axis=2)
        ref_max[(slice(None), slice(None), *o)] = part.max(axis=2)
        first = part.argmax(axis=2)  # row-major within the box
        coords = np.unravel_index(first, [s.stop - s.start for s in box])
        ref_index[(slice(None), slice(None), *o)] = np.ravel_multi_index(
            tuple(c + s.start for c, s in zip(coords, box)), spatial)
    assert_close(avg, ref_avg.astype(np.float32), np.abs(x).max(), "adaptive avg")
    np.testing.assert_array_equal(values, ref_max)
    np.testing.assert_array_equal(index, ref_index)
    assert index.dtype == np.int32


# --- OpenVINO conformance ------------------------------------------------------------------------

def _ov_cases():
    modes = []
    for nsp in (1, 2, 3):
        shape = (2, 3) + (9, 8, 7)[:nsp]
        for k, s, d, pb, pe in ((3, 2, 1, 1, 1), (2, 3, 1, 0, 1), (3, 2, 2, 1, 2),
                                (2, 2, 1, 0, 0), (3, 1, 2, 2, 0)):
            for auto_pad in ("explicit", "valid", "same_upper", "same_lower"):
                for rounding in ("floor", "ceil", "ceil_torch"):
                    modes.append((shape, pool_attrs(nsp, k, s, pb, pe, auto_pad, rounding,
                                                    dilations=d)))
    return modes


def starts_past_the_padding(shape, at) -> bool:
    """Whether ceil rounding makes a window that starts after the end padding: OpenVINO's CPU
    plugin then averages to 0 or NaN depending on the axis (docs/compatibility.md)."""
    kernel, strides, dil, pb, pe, out = geometry(np.zeros(shape), at)
    return any((o - 1) * s >= n + b + e for o, s, n, b, e in zip(out, strides, shape[2:], pb, pe))


def _ov_pools(o1, o8, o14, o16, p, shape, at, index_type):
    """Every pooling layer OpenVINO can build for these attributes: (label, output ports)."""
    k, s, d = list(at["kernel"]), list(at["strides"]), list(at["dilations"])
    pb, pe, ap, rt = list(at["pads_begin"]), list(at["pads_end"]), at["auto_pad"], \
        at["rounding_type"]
    layers = [("MaxPool-14", o14.max_pool(p, s, d, pb, pe, k, rt, ap, index_type, 0).outputs())]
    for exclude in (True, False):
        layers.append((f"AvgPool-16 {exclude}",
                       o16.avg_pool(p, s, pb, pe, k, exclude, rt, ap, d).outputs()))
    if rt != "ceil_torch":
        layers.append(("MaxPool-8 axis 2", o8.max_pool(p, s, d, pb, pe, k, rt, ap, index_type,
                                                       2).outputs()))
        if set(d) == {1}:
            layers.append(("MaxPool-1", o1.max_pool(p, s, pb, pe, k, rt, ap).outputs()))
            for exclude in (True, False):
                layers.append((f"AvgPool-1 {exclude}",
                               o1.avg_pool(p, s, pb, pe, k, exclude, rt, ap).outputs()))
    if set(d) == {1}:
        for exclude in (True, False):
            layers.append((f"AvgPool-14 {exclude}",
                           o14.avg_pool(p, s, pb, pe, k, exclude, rt, ap).outputs()))
    return layers


@pytest.mark.parametrize("type_name", ["f32", "f16", "i32", "u8"])
def test_openvino_conformance_pooling(tmp_path, type_name):
    ov = pytest.importorskip("openvino")
    import openvino.opset1 as o1
    import openvino.opset8 as o8
    import openvino.opset14 as o14
    import openvino.opset16 as o16
    dtype = dtype_of(type_name)
    rng = np.random.default_rng(11)
    params, outputs, inputs, labels = [], [], [], []
    cases = _ov_cases() if type_name == "f32" else _ov_cases()[::4]
    for shape, at in cases:
        p = o1.parameter(list(shape), dtype)
        x = _data(shape, type_name, int(rng.integers(2**16)))
        if type_name != "f32":
            x[~np.isfinite(x.astype(np.float64))] = 0
        for label, ports in _ov_pools(o1, o8, o14, o16, p, shape, at, "i32"):
            if type_name in ("i32", "u8") and label.startswith("AvgPool"):
                continue  # see test_openvino_conformance_integer_averages
            if label.startswith("AvgPool") and label.endswith("True") \
                    and starts_past_the_padding(shape, at):
                continue
            params.append(p) if p not in params else None
            outputs.extend(ports)
            labels.extend(f"{label} #{i} {shape} {at}" for i in range(len(ports)))
        inputs.append(x)
    ours, theirs = openvino_and_irexec(ov, tmp_path, params, outputs, inputs)
    scale = {id(p): np.abs(np.nan_to_num(x.astype(np.float64), posinf=0, neginf=0)).max()
             for p, x in zip(params, inputs)}
    for label, a, b in zip(labels, ours, theirs):
        if label.startswith("AvgPool"):
            assert_close(a, b, max(scale.values()), label)
        else:
            np.testing.assert_array_equal(a, b, label)


def test_openvino_conformance_integer_averages(tmp_path):
    """Integer means round to nearest, halves to even. (OpenVINO's CPU plugin refuses i32 and
    i64 AvgPool without ceil rounding.)"""
    ov = pytest.importorskip("openvino")
    import openvino.opset14 as o14
    params, outputs, inputs = [], [], []
    for type_name in ("u8", "i8"):
        x = np.array([[[0, 3, 6, 9, 12, 3, 3, 6, 21, 1, 2, 5, 4, 5, 0]]]).astype(
            dtype_of(type_name))
        p = o14.parameter(list(x.shape), dtype_of(type_name))
        for exclude in (True, False):
            outputs.append(o14.avg_pool(p, [3], [0], [0], [3], exclude).output(0))
            outputs.append(o14.avg_pool(p, [3], [1], [1], [3], exclude).output(0))
            outputs.append(o14.avg_pool(p, [2], [1], [1], [2], exclude).output(0))
        params.append(p)
        inputs.append(x)
    ours, theirs = openvino_and_irexec(ov, tmp_path, params, outputs, inputs)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)


def test_openvino_conformance_adaptive(tmp_path):
    ov = pytest.importorskip("openvino")
    import openvino.opset8 as o8
    rng = np.random.default_rng(12)
    params, outputs, inputs, labels = [], [], [], []
    for type_name in ("f32", "f16"):
        for shape, out in (((2, 3, 7), [3]), ((2, 3, 7), [9]), ((1, 2, 6, 9), [4, 2]),
                           ((1, 2, 5, 6, 7), [2, 3, 4]), ((1, 2, 4, 4), [4, 4])):
            x = np.round(rng.standard_normal(shape), 1).astype(dtype_of(type_name))
            p = o8.parameter(list(shape), dtype_of(type_name))
            sizes = o8.constant(np.array(out, np.int64))
            outputs.append(o8.adaptive_avg_pool(p, sizes).output(0))
            outputs.extend(o8.adaptive_max_pool(p, sizes, "i32").outputs())
            labels += [f"avg {shape} {out}", f"max {shape}", f"index {shape}"]
            params.append(p)
            inputs.append(x)
    ours, theirs = openvino_and_irexec(ov, tmp_path, params, outputs, inputs)
    for label, a, b in zip(labels, ours, theirs):
        if label.startswith("avg"):
            assert_close(a, b, 3.0, label)
        else:
            np.testing.assert_array_equal(a, b, label)


# --- bad attributes and shapes ----------------------------------------------------------------

@pytest.mark.parametrize("op, version, shape, at, code", [
    ("MaxPool", "opset1", [1, 2, 6, 6], pool_attrs(1, 3), "IR345"),
    ("MaxPool", "opset8", [1, 2, 6, 6], pool_attrs(2, 3, dilations=(1, 1, 1)), "IR345"),
    ("MaxPool", "opset1", [1, 2, 6, 6], dict(pool_attrs(2, 3), strides=(1,)), "IR345"),
    ("MaxPool", "opset1", [1, 2, 6, 6], pool_attrs(2, 7), "IR346"),
    ("MaxPool", "opset8", [1, 2, 6, 6], pool_attrs(2, 3, dilations=3), "IR346"),
    ("MaxPool", "opset1", [1, 2, 6, 6], pool_attrs(2, (3, 0)), "IR347"),
    ("MaxPool", "opset1", [1, 2, 6, 6], pool_attrs(2, 3, strides=0), "IR347"),
    ("MaxPool", "opset8", [1, 2, 6, 6], pool_attrs(2, 3, dilations=0), "IR347"),
    ("MaxPool", "opset1", [2, 6], pool_attrs(0, ()), "IR305"),
    ("MaxPool", "opset8", [1, 2, 6, 6], dict(pool_attrs(2, 3, dilations=1), axis=4), "IR306"),
    ("AvgPool", "opset1", [1, 2, 6], dict(pool_attrs(1, 7), **{"exclude-pad": True}),
     "IR346"),
    ("AvgPool", "opset16", [1, 2, 6], dict(pool_attrs(1, 3, dilations=(1, 1)),
                                           **{"exclude-pad": True}), "IR345"),
])
def test_bad_attributes_and_shapes_give_one_coded_error(op, version, shape, at, code):
    e = layer_error(op, F, version=version, shapes=[shape], **at)
    assert [d.code for d in e.diagnostics] == [code], [str(d) for d in e.diagnostics]


def test_ceil_torch_is_refused_before_opset14():
    e = layer_error("MaxPool", F, version="opset8", shapes=[[1, 1, 4]],
                    **pool_attrs(1, 2, rounding_type="ceil_torch", dilations=1))
    assert e.code == "IR302"


def test_index_type_must_be_i32_or_i64():
    e = layer_error("MaxPool", F, version="opset8", shapes=[[1, 1, 4]],
                    index_element_type="f32", **pool_attrs(1, 2, dilations=1))
    assert e.code == "IR302"


@pytest.mark.parametrize("sizes, code", [([2], "IR345"), ([2, 0], "IR347")])
def test_adaptive_output_shape_errors(sizes, code):
    e = layer_error("AdaptiveAvgPool", F, np.array(sizes, np.int64), consts=(1,),
                    version="opset8", shapes=[[1, 2, 4, 4], None])
    assert [d.code for d in e.diagnostics] == [code]


def test_adaptive_output_shape_checked_at_run_time():
    e = layer_error("AdaptiveMaxPool", np.zeros((1, 2, 4, 4), np.float32),
                    np.array([2, -1], np.int64), version="opset8")
    assert e.code == "IR347"


def test_window_larger_than_the_input_at_run_time():
    e = layer_error("MaxPool", np.zeros((1, 1, 2, 2), np.float32), shapes=[[1, 1, -1, -1]],
                    **pool_attrs(2, 3))
    assert e.code == "IR346"


@settings(max_examples=40, deadline=None)
@given(pool_cases(), st.sampled_from(["f32", "f16", "i32"]))
def test_property_max_pool_with_unread_indices_skips_them(case, type_name):
    """A MaxPool-8/14 whose indices no layer reads (as converters write it) computes the values
    alone: the same values as the loop, and the indices kernel is never called."""
    import irexec
    from irexec.builder import ModelBuilder
    from irexec.kernels import pool

    shape, at, seed = case
    x = _data(shape, type_name, seed)
    for version in ("opset8", "opset14"):
        if version == "opset8" and at["rounding_type"] == "ceil_torch":
            continue
        b = ModelBuilder("unread_indices")
        values, _ = b.op("MaxPool", b.parameter("x", type_name, list(shape)), version=version,
                         name="pool", **at)
        b.result(values, "y")
        compiled = irexec.compile_model(b.build())
        calls = []
        original = pool.max_pool_with_indices
        pool.max_pool_with_indices = lambda *a, **k: calls.append(1) or original(*a, **k)
        try:
            (got,) = compiled({"x": x}).values()
        finally:
            pool.max_pool_with_indices = original
        assert calls == []
        np.testing.assert_array_equal(got, max_pool_loop(x, at, 2)[0])


def test_wide_window_indices_equal_the_tap_by_tap_ones(monkeypatch):
    """MaxPool's indices of windows over 64 taps are found axis by axis (doubling runs on a
    wide axis); on random windows with NaN, -inf and ties (small integers), padding, strides
    and dilations they equal the tap-by-tap scores', value for value and index for index."""
    from irexec.kernels import pool

    rng = np.random.default_rng(5)
    checked = 0
    while checked < 150:
        nsp = int(rng.integers(1, 3))
        kernel = [int(rng.integers(1, 20)) for _ in range(nsp)]
        strides = [int(rng.integers(1, 3)) for _ in range(nsp)]
        dilations = [int(rng.integers(1, 3)) for _ in range(nsp)]
        pads = [int(rng.integers(0, 2)) for _ in range(nsp)]
        spatial = [int(rng.integers(1, 45)) for _ in range(nsp)]
        out = [(n + 2 * p - (k - 1) * d - 1) // s + 1
               for n, p, k, d, s in zip(spatial, pads, kernel, dilations, strides)]
        if min(out) < 1:
            continue
        dtype = [np.float32, np.int32, np.float16][checked % 3]
        x = rng.integers(-3, 3, size=[2, 3] + spatial).astype(dtype)
        if dtype != np.int32:
            mark = rng.random(x.shape)
            x[mark < 0.1], x[(mark > 0.1) & (mark < 0.15)] = np.nan, -np.inf
        axis = int(rng.integers(0, 3))
        got = []
        for wide in (10 ** 9, 0):
            monkeypatch.setattr(pool, "_WIDE_INDEX", wide)
            got.append(pool.max_pool_with_indices(x, kernel, strides, dilations, pads, out,
                                                  axis, np.int64))
        assert np.array_equal(got[0][0], got[1][0], equal_nan=True)
        assert np.array_equal(got[0][1], got[1][1]), (kernel, strides, dilations, pads)
        checked += 1
