"""The fused step's kernel (irexec/kernels/fused.py) on layers made here: it runs them in order
on the step's values, writes over a value made inside the step only where nothing else refers
to it, never over the step's inputs, and computes what the layers compute."""

from __future__ import annotations

import numpy as np
import pytest

from irexec.kernels import fused
from irexec.kernels.fused import FusedKernel, Layer


@pytest.fixture(autouse=True)
def _full_path(monkeypatch):
    """The arrays here are tiny: hold them to the full path (writing over, the pool), which
    small first inputs skip (``_QUICK_BYTES``); the quick path has its own test below."""
    monkeypatch.setattr(fused, "_QUICK_BYTES", 0)


def _add(a, b):
    return np.add(a, b)


def _add_over(a, b):
    return np.add(a, b, out=a)


def _negate(a):
    return np.negative(a)


def _negate_over(a):
    return np.negative(a, out=a)


def test_layers_run_in_order_and_write_over_their_own_values():
    # values: 0 x, 1 c, then 2 = x + c, 3 = -(2), 4 = 3 + c
    made = []

    def add(a, b):
        made.append("add")
        return np.add(a, b)

    layers = (Layer(add, (0, 1)),
              Layer(_negate, (2,), over=_negate_over, overwritable=(0,), dead=(2,)),
              Layer(_add, (3, 1), ufunc=np.add, overwritable=(0,), dead=(3,)))
    kernel = FusedKernel("test", layers, 2)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    c = np.full(3, 0.5, np.float32)
    before = x.copy()
    out = kernel(x, c)
    assert np.array_equal(out, -(x + c) + c)
    assert np.array_equal(x, before)  # an input is never written
    assert made == ["add"]


def test_a_value_someone_else_holds_is_not_written_over():
    kept = []

    def add_and_keep(a, b):
        out = np.add(a, b)
        kept.append(out)  # a kernel that keeps its output (or a view of it) somewhere
        return out

    layers = (Layer(add_and_keep, (0, 1)),
              Layer(_negate, (2,), over=_negate_over, overwritable=(0,), dead=(2,)),
              Layer(_add, (3, 1), ufunc=np.add, overwritable=(0,), dead=(3,)))
    x = np.ones((2, 3), np.float32)
    c = np.ones(3, np.float32)
    out = FusedKernel("test", layers, 2)(x, c)
    assert np.array_equal(kept[0], np.full((2, 3), 2, np.float32))  # untouched
    assert np.array_equal(out, np.full((2, 3), -1, np.float32))


def test_a_value_is_written_over_in_place():
    seen = []

    def negate_over(a):
        seen.append(id(a))
        return np.negative(a, out=a)

    layers = (Layer(_add, (0, 1)),
              Layer(_negate, (2,), over=negate_over, overwritable=(0,), dead=(2,)))
    out = FusedKernel("test", layers, 2)(np.ones(4, np.float32), np.ones(4, np.float32))
    assert seen == [id(out)] and np.array_equal(out, np.full(4, -2, np.float32))


def test_a_broadcast_larger_than_the_value_gets_a_new_array():
    # the value [1, 3] plus [2, 3]: the result cannot be written over the value
    layers = (Layer(_negate, (0,)),
              Layer(_add, (2, 1), ufunc=np.add, overwritable=(0,), dead=(2,)))
    x = np.ones((1, 3), np.float32)
    y = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = FusedKernel("test", layers, 2)(x, y)
    assert np.array_equal(out, -x + y)


@pytest.mark.parametrize("shape", [(4,), (2, 3), (1, 1, 64)])
def test_small_values_take_the_quick_path_with_the_same_results(monkeypatch, shape):
    # The same layers on small values: the quick path (no writing over) gives the full path's
    # results, and leaves the inputs alone.
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(np.float32)
    c = rng.standard_normal(shape).astype(np.float32)
    layers = (Layer(_add, (0, 1), over=_add_over, ufunc=np.add),
              Layer(_negate, (2,), over=_negate_over, overwritable=(0,), dead=(2,)),
              Layer(_add, (3, 1), over=_add_over, ufunc=np.add, overwritable=(0,)))
    full = FusedKernel("test", layers, 2)(x.copy(), c.copy())
    monkeypatch.setattr(fused, "_QUICK_BYTES", 1 << 20)
    calls = []
    monkeypatch.setattr(fused, "_run", lambda *a: calls.append(a) or None)
    x0, c0 = x.copy(), c.copy()
    quick = FusedKernel("test", layers, 2)(x, c)
    assert calls == []  # the full path's helper was not used
    assert np.array_equal(quick, full) and np.array_equal(x, x0) and np.array_equal(c, c0)
    assert quick.dtype == np.float32
