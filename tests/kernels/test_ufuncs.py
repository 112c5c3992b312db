"""Kernels declared to be one numpy ufunc for some element types (the spec's ``ufunc``, what the
loop fast path calls instead): for every binary and unary arithmetic op and every element
type irexec holds, a declared ufunc must give the kernel's values bit for bit, in its dtype."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.ir import element_type as et_table
from irexec.kernels import numeric
from irexec.ops import registry
from irexec.ops.arithmetic import binary, unary

BINARY = [row[0] for row in binary._ROWS]
UNARY = [row[0] for row in unary._ROWS]
DTYPES = sorted({et.dtype for et in et_table.SUPPORTED}, key=str)


def _kernel(type_name: str):
    return registry.lookup(type_name, "opset8").kernel


def ufunc_for(kernel_name: str, dtype: np.dtype):
    """The ufunc the op's spec declares its kernel to be over arrays of ``dtype``, or None."""
    declared = registry.lookup(kernel_name, "opset8").spec.ufunc
    if declared is None:
        return None
    ufunc, kinds = declared
    return ufunc if numeric.kind(dtype) in kinds else None


def _declared(names):
    return [(name, dtype) for name in names for dtype in DTYPES
            if ufunc_for(name, dtype) is not None]


def test_the_plain_arithmetic_is_declared_and_the_rest_is_not():
    f32, f16, i32, boolean = (np.dtype(t) for t in ("float32", "float16", "int32", "bool"))
    for name, dtype, ufunc in [("Add", f32, np.add), ("Multiply", f16, np.multiply),
                               ("Subtract", i32, np.subtract), ("Power", f32, np.power),
                               ("Tanh", f32, np.tanh), ("Negative", i32, np.negative),
                               ("Divide", f32, np.true_divide)]:
        assert ufunc_for(name, dtype) is ufunc, (name, dtype)
    # Power's and Tanh's integers, the zero checks of FloorMod's and Divide's integers,
    # Maximum's NaN rule, booleans: kernels
    for name, dtype in [("Power", i32), ("Tanh", i32), ("FloorMod", i32), ("Maximum", f32),
                        ("Add", boolean), ("Exp", f16), ("Divide", i32)]:
        assert ufunc_for(name, dtype) is None, (name, dtype)


def _values(draw, dtype, shape):
    n = int(np.prod(shape))
    if dtype.kind == "f" or dtype.name in ("bfloat16",):
        specials = [0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, np.nan, 1e30, -7.25, 0.5]
        picks = draw(st.lists(st.sampled_from(specials) | st.floats(-1e4, 1e4, width=32),
                              min_size=n, max_size=n))
        with np.errstate(over="ignore"):  # 1e30 is inf in f16
            return np.array(picks, np.float64).astype(dtype).reshape(shape)
    info = np.iinfo(dtype)
    picks = draw(st.lists(st.integers(int(info.min), int(info.max)), min_size=n, max_size=n))
    return np.array(picks, dtype=dtype).reshape(shape)


def _same(got: np.ndarray, want: np.ndarray) -> None:
    assert type(got) is np.ndarray and got.dtype == want.dtype and got.shape == want.shape
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[want.dtype.itemsize]
    np.testing.assert_array_equal(np.ascontiguousarray(got).view(width),
                                  np.ascontiguousarray(want).view(width))


@pytest.mark.parametrize("name, dtype", _declared(BINARY), ids=str)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_a_declared_binary_ufunc_computes_what_the_kernel_does(name, dtype, data):
    shape_a = data.draw(st.sampled_from([(3,), (2, 3), (1, 3), (2, 1)]))
    shape_b = data.draw(st.sampled_from([(), (3,), (1, 3), (2, 3)]))
    a = _values(data.draw, dtype, shape_a)
    b = _values(data.draw, dtype, shape_b)
    kernel = _kernel(name)
    with np.errstate(all="ignore"):
        _same(ufunc_for(name, dtype)(a, b), kernel(a, b))


@pytest.mark.parametrize("name, dtype", _declared(UNARY), ids=str)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_a_declared_unary_ufunc_computes_what_the_kernel_does(name, dtype, data):
    x = _values(data.draw, dtype, data.draw(st.sampled_from([(1,), (4,), (2, 3)])))
    kernel = _kernel(name)
    with np.errstate(all="ignore"):
        _same(ufunc_for(name, dtype)(x), kernel(x))
