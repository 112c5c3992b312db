"""irexec/kernels/flip_inplace.py against np.flip: every dim layout, every element width, and
block sizes small enough that every path (pairs of blocks, the middle block, slabs larger than
a block) runs on small arrays."""

from __future__ import annotations

from unittest import mock

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.ir import element_type as et_table
from irexec.kernels import flip_inplace
from irexec.kernels.flip_inplace import flip_in_place

CHUNKS = [8, 16, 24, 100, 4096, flip_inplace._CHUNK_BYTES]
DTYPES = [np.uint8, np.int16, np.float32, np.float64, np.complex128, ml_dtypes.bfloat16,
          ml_dtypes.int4, et_table.parse_name("u3").dtype, np.bool_]


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint8).tobytes()


def _data(shape, dtype, seed=0):
    raw = np.random.default_rng(seed).integers(0, 256, int(np.prod(shape)) *
                                               np.dtype(dtype).itemsize, dtype=np.uint8)
    if np.dtype(dtype) == np.bool_:
        raw &= 1
    return raw.view(dtype).reshape(shape)


@given(shape=st.lists(st.integers(1, 9), min_size=1, max_size=4),
       axes=st.lists(st.integers(0, 3), max_size=5),
       dtype=st.sampled_from(DTYPES), chunk=st.sampled_from(CHUNKS), seed=st.integers(0, 99))
@settings(max_examples=400, deadline=None)
def test_same_bits_as_np_flip(shape, axes, dtype, chunk, seed):
    axes = [a for a in axes if a < len(shape)]
    data = _data(shape, dtype, seed)
    expected = np.flip(data, tuple(set(axes))) if axes else data
    work = data.copy()
    with mock.patch.object(flip_inplace, "_CHUNK_BYTES", chunk):
        assert flip_in_place(work, axes) is work
    assert _bits(work) == _bits(expected)


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("axes", [(0,), (1,), (2,), (0, 1), (0, 2), (1, 2), (0, 1, 2)])
@pytest.mark.parametrize("shape", [(1, 7, 1), (2, 3, 5), (5, 1, 9), (33, 2, 8), (3, 17, 4),
                                   (3, 2, 1), (5, 2, 1)])  # 2-3 rows of 8 bytes a block
def test_every_layout(shape, axes, chunk, monkeypatch):
    monkeypatch.setattr(flip_inplace, "_CHUNK_BYTES", chunk)
    data = _data(shape, np.float32, seed=len(shape) + chunk)
    work = data.copy()
    flip_in_place(work, axes)
    assert _bits(work) == _bits(np.flip(data, axes))


def test_large_array_with_the_real_block_size():
    data = _data((9, 300, 1000), np.int8, seed=3)  # 2.6 MiB: several blocks per slab
    for axes in [(0,), (1,), (2,), (0, 2), (0, 1, 2)]:
        work = data.copy()
        flip_in_place(work, axes)
        assert _bits(work) == _bits(np.flip(data, axes))


@pytest.mark.parametrize("bad", [np.zeros((4, 4), object), np.zeros((4, 8))[:, ::2],
                                 np.zeros(4).view()])
def test_refuses_what_it_cannot_write(bad):
    if bad.flags.c_contiguous and not bad.dtype.hasobject:
        bad.flags.writeable = False
    with pytest.raises(ValueError):
        flip_in_place(bad, (0,))
