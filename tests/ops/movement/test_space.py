"""DepthToSpace-1, SpaceToDepth-1, BatchToSpace-2, SpaceToBatch-2 and ShuffleChannels-1 against
element-by-element references written from the specifications' formulas."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.ir.shape import PartialShape
from tests.ops.movement.cases import Param, read_error, run, same_error_both_ways, shape_of
from tests.ops.support import TYPE_NAMES, assert_same_bits, random_values

A = np.array


def data(*shape):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


def depth_to_space_ref(x, bs, mode):
    n, c, *spatial = x.shape
    k = len(spatial)
    c2 = c // bs ** k
    out = np.empty((n, c2) + tuple(d * bs for d in spatial), x.dtype)
    for where in np.ndindex(*out.shape):
        b, ch, *pos = where
        offsets = [p % bs for p in pos]
        flat = 0
        for o in offsets:
            flat = flat * bs + o
        src_c = flat * c2 + ch if mode == "blocks_first" else ch * bs ** k + flat
        out[where] = x[(b, src_c) + tuple(p // bs for p in pos)]
    return out


def space_to_depth_ref(x, bs, mode):
    n, c, *spatial = x.shape
    k = len(spatial)
    out = np.empty((n, c * bs ** k) + tuple(d // bs for d in spatial), x.dtype)
    for where in np.ndindex(*out.shape):
        b, ch, *pos = where
        if mode == "blocks_first":
            flat, src_c = divmod(ch, c)
        else:
            src_c, flat = divmod(ch, bs ** k)
        offsets = []
        for _ in range(k):
            flat, o = divmod(flat, bs)
            offsets.insert(0, o)
        out[where] = x[(b, src_c) + tuple(p * bs + o for p, o in zip(pos, offsets))]
    return out


@pytest.mark.parametrize("mode", ["blocks_first", "depth_first"])
@pytest.mark.parametrize("shape, bs", [((1, 8, 2, 3), 2), ((2, 27, 2, 1, 2), 3), ((1, 4, 5), 2),
                                       ((1, 5, 2, 2), 1)])
def test_depth_to_space(mode, shape, bs):
    x = data(*shape)
    out = run("DepthToSpace", Param(x), mode=mode, block_size=bs, version="opset1")
    assert_same_bits(out, depth_to_space_ref(x, bs, mode))
    back = run("SpaceToDepth", Param(out), mode=mode, block_size=bs, version="opset1")
    assert_same_bits(back, x)
    assert_same_bits(back, space_to_depth_ref(out, bs, mode))


def test_depth_to_space_channels_not_divisible():
    assert read_error("DepthToSpace", Param(data(1, 6, 2, 2)), mode="blocks_first",
                      block_size=2).code == "IR331"
    assert read_error("SpaceToDepth", Param(data(1, 6, 3, 2)), mode="depth_first",
                      block_size=2).code == "IR331"


def test_depth_to_space_dynamic():
    x = Param(data(1, 8, 2, 3), shape=[-1, 8, -1, 3])
    assert shape_of("DepthToSpace", x, mode="blocks_first", block_size=2) == PartialShape(
        [-1, 2, -1, 6])


def batch_to_space_ref(x, block, begin, end):
    blocks = block[1:]
    batch = x.shape[0] // math.prod(blocks)
    joined = np.empty((batch,) + tuple(d * b for d, b in zip(x.shape[1:], blocks)), x.dtype)
    for where in np.ndindex(*joined.shape):
        n, *pos = where
        offsets = [p % b for p, b in zip(pos, blocks)]
        flat = 0
        for o, b in zip(offsets, blocks):
            flat = flat * b + o
        joined[where] = x[(flat * batch + n,) + tuple(p // b for p, b in zip(pos, blocks))]
    crop = tuple(slice(b, joined.shape[i] - e) for i, (b, e) in enumerate(zip(begin, end)))
    return joined[crop]


def space_to_batch_ref(x, block, begin, end):
    padded = np.pad(x, list(zip(begin, end)))
    blocks = block[1:]
    batch = padded.shape[0]
    out = np.empty((batch * math.prod(blocks),) + tuple(
        d // b for d, b in zip(padded.shape[1:], blocks)), x.dtype)
    for where in np.ndindex(*out.shape):
        nb, *pos = where
        flat, n = divmod(nb, batch)
        offsets = []
        for b in reversed(blocks):
            flat, o = divmod(flat, b)
            offsets.insert(0, o)
        out[where] = padded[(n,) + tuple(p * b + o for p, b, o in zip(pos, blocks, offsets))]
    return out


def test_batch_to_space_spec_like_example():
    x = data(8, 1, 1, 3)  # blocks [1, 2, 2, 1]: batch 8 -> 2
    out = run("BatchToSpace", Param(x), A([1, 2, 2, 1]), A([0, 0, 0, 0]), A([0, 0, 0, 1]))
    assert_same_bits(out, batch_to_space_ref(x, [1, 2, 2, 1], [0, 0, 0, 0], [0, 0, 0, 1]))
    assert out.shape == (2, 2, 2, 2)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=3), st.data())
def test_property_space_to_batch_and_back(spatial, draw):
    blocks = [draw.draw(st.integers(1, 3)) for _ in spatial]
    begin = [0] + [draw.draw(st.integers(0, 2)) for _ in spatial]
    end = [0] + [(-(d + b) % k) + k * draw.draw(st.integers(0, 1))
                 for d, b, k in zip(spatial, begin[1:], blocks)]
    batch = draw.draw(st.integers(1, 2))
    x = data(batch, *spatial)
    block = [1] + blocks
    out = run("SpaceToBatch", Param(x), A(block), A(begin), A(end))
    assert_same_bits(out, space_to_batch_ref(x, block, begin, end))
    back = run("BatchToSpace", Param(out), A(block), A(begin), A(end))
    assert_same_bits(back, x)


def test_space_to_batch_dim_smaller_than_its_block():
    """The case OpenVINO's CPU plugin gets wrong (facts): [2, 1, 4, 1], block [1, 1, 2, 2],
    pads_end [0, 0, 0, 1]."""
    x = data(2, 1, 4, 1)
    block, begin, end = [1, 1, 2, 2], [0, 0, 0, 0], [0, 0, 0, 1]
    out = run("SpaceToBatch", Param(x), A(block), A(begin), A(end))
    assert_same_bits(out, space_to_batch_ref(x, block, begin, end))


@pytest.mark.parametrize("op, values, code", [
    ("SpaceToBatch", ([1, 2, 2], [0, 0, 0], [0, 0, 0]), "IR331"),
    ("SpaceToBatch", ([2, 1, 1], [0, 0, 0], [0, 0, 0]), "IR308"),
    ("SpaceToBatch", ([1, 1, 1], [0, -1, 0], [0, 0, 0]), "IR308"),
    ("BatchToSpace", ([1, 4, 1], [0, 0, 0], [0, 0, 0]), "IR331"),
    ("BatchToSpace", ([1, 1, 1], [0, 0, 2], [0, 0, 2]), "IR308"),
])
def test_space_batch_bad_values(op, values, code):
    x = data(2, 3, 3)
    const = [Param(x)] + [A(v) for v in values]
    param = [Param(x)] + [Param(A(v)) for v in values]
    same_error_both_ways(op, const, param, code)


@pytest.mark.parametrize("shape, axis, group", [((1, 6, 2), 1, 3), ((2, 4), -1, 2),
                                                ((3, 2, 8), 2, 4), ((5,), 0, 5)])
def test_shuffle_channels(shape, axis, group):
    x = data(*shape)
    out = run("ShuffleChannels", Param(x), axis=axis, group=group, version="opset3")
    a = axis % len(shape)
    c = shape[a]
    expected = np.empty_like(x)
    for j, g in itertools.product(range(c // group), range(group)):
        src = [slice(None)] * len(shape)
        dst = list(src)
        src[a], dst[a] = g * (c // group) + j, j * group + g
        expected[tuple(dst)] = x[tuple(src)]
    assert_same_bits(out, expected)


def test_shuffle_channels_is_not_in_opset2():
    from irexec.ops import registry

    assert registry.lookup("ShuffleChannels", "opset1") is not None
    assert registry.lookup("ShuffleChannels", "opset3") is not None
    with pytest.raises(registry.LookupFailure):
        registry.lookup("ShuffleChannels", "opset2")


def test_shuffle_channels_bad_group():
    assert read_error("ShuffleChannels", Param(data(1, 6)), axis=1, group=4).code == "IR331"
    assert read_error("ShuffleChannels", Param(data(1, 6)), axis=2, group=1).code == "IR306"


@pytest.mark.parametrize("type_name", TYPE_NAMES)
def test_space_ops_every_element_type(type_name):
    x = random_values(type_name, (1, 4, 2, 2), np.random.default_rng(8))
    out = run("DepthToSpace", Param(x, type_name=type_name), mode="depth_first", block_size=2)
    assert_same_bits(out, depth_to_space_ref(x, 2, "depth_first"))
    out = run("ShuffleChannels", Param(x, type_name=type_name), axis=1, group=2)
    assert_same_bits(out, x[:, [0, 2, 1, 3]])
