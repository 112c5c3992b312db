"""The fast full-flip kernel (irexec/kernels/flip.py) against np.flip, bit for bit: every dtype
(object arrays and 1-byte ml_dtypes included), odd and zero sizes, non-contiguous inputs, and
block sizes shrunk so that every path (blocks, words, outer loops, fallbacks) runs on small data;
and Reverse's use of it equals the shared kernel at full lengths."""

import itertools

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.kernels import flip as flip_module
from irexec.kernels.flip import flip
from irexec.kernels.reverse_subsequences import reverse_subsequences

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.float16, np.float32, np.int32, np.float64,
          np.int64, np.complex64, np.complex128, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn,
          ml_dtypes.float8_e5m2, ml_dtypes.int4, ml_dtypes.uint4, object]


def values(dtype, shape, rng):
    raw = rng.integers(0, 256, shape, dtype=np.uint8)
    if dtype is object:
        return raw.astype(str).astype(object)
    itemsize = np.dtype(dtype).itemsize
    # Every bit pattern, NaN payloads included: random bytes viewed as the type.
    return rng.integers(0, 256, (*shape, itemsize), dtype=np.uint8).view(dtype).reshape(shape)


def same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.flags.c_contiguous
    if want.dtype.hasobject:
        assert got.tolist() == want.tolist()
    else:
        assert got.tobytes() == want.tobytes()


@pytest.fixture(params=["default", "tiny blocks"])
def block_sizes(request, monkeypatch):
    if request.param == "tiny blocks":
        monkeypatch.setattr(flip_module, "_SMALL_BYTES", 0)
        monkeypatch.setattr(flip_module, "_BLOCK_BYTES", 24)
        monkeypatch.setattr(flip_module, "_MIN_SLAB_BYTES", 0)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_axis_set_equals_np_flip(dtype, block_sizes):
    rng = np.random.default_rng(0)
    for shape in [(0,), (1,), (7,), (8,), (16,), (40,), (3, 8), (2, 0, 4), (2, 3, 16), (4, 1, 24),
                  (3, 5, 7), (2, 2, 3, 8), (5, 64)]:
        data = values(dtype, shape, rng)
        for r in range(len(shape) + 1):
            for axes in itertools.combinations(range(len(shape)), r):
                same(flip(data, axes), np.flip(data, axes))


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_property_equals_np_flip(data):
    dtype = data.draw(st.sampled_from(DTYPES))
    shape = tuple(data.draw(st.lists(st.integers(0, 9), min_size=1, max_size=4)))
    axes = data.draw(st.lists(st.integers(0, len(shape) - 1), max_size=5))
    array = values(dtype, shape, np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))))
    if data.draw(st.booleans()) and array.ndim and array.shape[-1] > 1:
        array = array[..., ::2]  # non-contiguous
    small = data.draw(st.booleans())
    block = data.draw(st.integers(1, 200))
    saved = flip_module._SMALL_BYTES, flip_module._BLOCK_BYTES, flip_module._MIN_SLAB_BYTES
    try:
        if small:
            flip_module._SMALL_BYTES, flip_module._BLOCK_BYTES = 0, block
            flip_module._MIN_SLAB_BYTES = data.draw(st.sampled_from([0, 64]))
        got = flip(array, axes)
    finally:
        flip_module._SMALL_BYTES, flip_module._BLOCK_BYTES, flip_module._MIN_SLAB_BYTES = saved
    want = np.flip(array, tuple(set(axes))) if axes else array
    same(got, want)
    assert not np.shares_memory(got, array)


@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.float32, object],
                         ids=lambda d: np.dtype(d).name)
def test_large_flip_equals_the_shared_kernel_at_full_lengths(dtype):
    """Reverse's fast path and ReverseSequence's kernel agree on whole-axis reversals."""
    rng = np.random.default_rng(1)
    data = values(dtype, (3, 40, 520), rng)
    for axis in range(3):
        lengths = np.full([1 if d == axis else data.shape[d] for d in range(3)], data.shape[axis])
        same(flip(data, (axis,)), reverse_subsequences(data, lengths, axis))


def loop_reference(data, lengths):
    """Per-fibre reversal of the innermost axis, one fibre at a time."""
    out = data.copy()
    for index in np.ndindex(*data.shape[:-1]):
        n = int(lengths[index])
        out[index][:n] = data[index][:n][::-1]
    return out


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_property_innermost_per_fibre_lengths_equal_a_loop(data):
    """The flat-slice path of reverse_subsequences (a distinct length per innermost fibre)."""
    dtype = data.draw(st.sampled_from(DTYPES))
    shape = tuple(data.draw(st.lists(st.integers(1, 7), min_size=1, max_size=3))) + (
        data.draw(st.integers(0, 12)),)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    array = values(dtype, shape, rng)
    if data.draw(st.booleans()):
        array = np.flip(array, 0)  # non-contiguous: the general path
    lengths = rng.integers(0, shape[-1] + 1, shape[:-1] + (1,))
    same(reverse_subsequences(array, lengths, -1), loop_reference(array, lengths[..., 0]))


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_property_kernels_writing_into_reused_memory_equal_fresh_ones(data):
    """Inside a run, kernels may get an array from the pool (stale contents): the one-pass
    path of reverse_subsequences and the flip must overwrite every element."""
    from irexec.kernels import buffers

    dtype = data.draw(st.sampled_from([d for d in DTYPES if d is not object]))
    shape = tuple(data.draw(st.lists(st.integers(1, 6), min_size=2, max_size=4)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    array = values(dtype, shape, rng)
    axis = data.draw(st.integers(0, len(shape) - 1))
    batch = data.draw(st.integers(0, len(shape) - 1).filter(lambda b: b != axis))
    lengths = rng.integers(0, shape[axis] + 1, shape[batch])
    lengths = lengths.reshape([shape[batch] if d == batch else 1 for d in range(len(shape))])
    want = reverse_subsequences(array, lengths, axis)
    pool = buffers.Pool()
    stale = values(dtype, shape, rng)
    pool.spare[(stale.shape, stale.dtype)] = [stale]
    pool.count = 1
    with buffers.using(pool):
        got = reverse_subsequences(array, lengths, axis)
    same(got, want)
    assert not np.shares_memory(got, array)
