"""Interpolate-1's ``area`` mode (named by the specification, refused by OpenVINO's CPU plugin):
hand-checked values and properties against an exact reference -- each input element repeated
``out`` times along the axis, then the mean of every ``in`` consecutive copies."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ops.compute_support import assert_close, run_layer
from tests.ops.support import dtype_of


def area_reference(x, axes, sizes):
    y = x.astype(np.float64)
    for axis, out in zip(axes, sizes):
        n = y.shape[axis]
        rep = np.repeat(y, out, axis=axis)  # n * out elements: out groups of n
        shape = list(rep.shape)
        shape[axis:axis + 1] = [out, n]
        y = rep.reshape(shape).mean(axis=axis + 1)
    return y


def area(x, axes, sizes, **attrs):
    return run_layer("Interpolate", x, np.array(sizes, np.int64), consts=(1,), axes=axes,
                     mode="area", **attrs)


def test_halving_averages_blocks():
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    y = area(x, (2, 3), (2, 2))
    assert y.tolist() == [[[[2.5, 4.5], [10.5, 12.5]]]]


def test_a_partly_covered_element_counts_by_the_part_covered():
    x = np.array([[0.0, 3.0, 6.0]], np.float32)  # 3 -> 2: each output covers 1.5 elements
    y = area(x, (1,), (2,))
    np.testing.assert_allclose(y, [[(0 + 1.5) / 1.5, (1.5 + 6) / 1.5]], rtol=1e-6)


def test_growing_copies_inside_one_element_and_align_corners_changes_nothing():
    x = np.array([[1.0, 5.0]], np.float32)
    y = area(x, (1,), (4,))
    assert y.tolist() == [[1.0, 1.0, 5.0, 5.0]]
    assert area(x, (1,), (4,), align_corners=True).tolist() == y.tolist()


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 7), st.integers(1, 7), st.integers(1, 7), st.integers(1, 7),
       st.sampled_from(["f32", "f64", "f16", "i32"]), st.integers(0, 2 ** 16))
def test_property_equals_the_repeat_and_mean_reference(h, w, oh, ow, type_name, seed):
    rng = np.random.default_rng(seed)
    dtype = dtype_of(type_name)
    x = rng.integers(-50, 50, (2, 3, h, w)).astype(dtype) if type_name == "i32" \
        else rng.standard_normal((2, 3, h, w)).astype(dtype)
    y = area(x, (2, 3), (oh, ow))
    ref = area_reference(x, (2, 3), (oh, ow))
    if type_name == "i32":  # rounded half away from zero, as the other modes on integers
        ref = np.where(ref >= 0, np.floor(ref + 0.5), np.ceil(ref - 0.5))
        near_half = np.abs(np.abs(area_reference(x, (2, 3), (oh, ow))) % 1 - 0.5) < 1e-9
        np.testing.assert_array_equal(y[~near_half], ref.astype(dtype)[~near_half])
        return
    mag = area_reference(np.abs(x), (2, 3), (oh, ow)) * 4
    assert_close(y, ref.astype(dtype), mag, f"{h}x{w} -> {oh}x{ow}")


def test_irexec_compare_knows_openvino_refuses_area():
    from irexec.ops import registry
    op = registry.lookup("Interpolate", "opset1")
    node = type("Node", (), {"attrs": {"mode": "area"}})()
    assert "area" in op.openvino_refuses(node)
    assert op.openvino_refuses(type("Node", (), {"attrs": {"mode": "linear"}})()) is None
