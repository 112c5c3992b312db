"""Models whose tensors' sizes come from values or attributes, made to need far more memory
than a small budget allows (tests/runtime/test_memory_rule.py, and measured by hand: see
docs/robustness.md). Each case is ``(model, inputs)``: the size-deciding input is a Parameter fed
at run time (``runtime=True``: a 16-byte input, say), or a Const (static: refused when read)."""

from __future__ import annotations

import numpy as np

from irexec.builder import ModelBuilder

BIG = 23000  # [23000, 23000] f32 is 2 GiB


def _size(b, name, values, runtime, dtype=np.int64):
    values = np.asarray(values, dtype)
    if runtime:
        return b.parameter(name, values.dtype.name.replace("int", "i").replace("ui", "u"),
                           list(values.shape)), {name: values}
    return b.constant(values), {}


def _finish(b, out, feeds):
    b.result(out, "out")
    return b.build(), feeds


def broadcast(runtime=True):
    b = ModelBuilder("broadcast")
    x = b.parameter("x", "f32", [1])
    shape, feeds = _size(b, "shape", [BIG, BIG], runtime)
    feeds["x"] = np.ones(1, np.float32)
    return _finish(b, b.op("Broadcast", x, shape, version="opset3"), feeds)


def tile(runtime=True):
    b = ModelBuilder("tile")
    x = b.parameter("x", "f32", [1, 1])
    reps, feeds = _size(b, "repeats", [BIG, BIG], runtime)
    feeds["x"] = np.ones((1, 1), np.float32)
    return _finish(b, b.op("Tile", x, reps), feeds)


def pad(runtime=True):
    b = ModelBuilder("pad")
    x = b.parameter("x", "f32", [1, 1])
    begin, feeds = _size(b, "begin", [BIG, BIG], runtime)
    end, more = _size(b, "end", [0, 0], runtime)
    feeds.update(more, x=np.ones((1, 1), np.float32))
    return _finish(b, b.op("Pad", x, begin, end, pad_mode="constant", version="opset12"),
                   feeds)


def reshape_huge_times_zero(runtime=True):
    b = ModelBuilder("reshape")
    x = b.parameter("x", "f32", [0])
    shape, feeds = _size(b, "shape", [2**62, 0], runtime)
    feeds["x"] = np.ones(0, np.float32)
    return _finish(b, b.op("Reshape", x, shape, special_zero=False), feeds)


def broadcast_huge_times_zero(runtime=True):
    b = ModelBuilder("broadcast0")
    x = b.parameter("x", "f32", [1])
    shape, feeds = _size(b, "shape", [2**62, 0], runtime)
    feeds["x"] = np.ones(1, np.float32)
    return _finish(b, b.op("Broadcast", x, shape, version="opset3"), feeds)


def tile_huge_times_zero(runtime=True):
    b = ModelBuilder("tile0")
    x = b.parameter("x", "f32", [1, 0])
    reps, feeds = _size(b, "repeats", [2**62, 1], runtime)
    feeds["x"] = np.ones((1, 0), np.float32)
    return _finish(b, b.op("Tile", x, reps), feeds)


def adaptive_avg_pool(runtime=True):
    b = ModelBuilder("adaptive")
    x = b.parameter("x", "f32", [1, 1, 1, 1])
    size, feeds = _size(b, "size", [BIG, BIG], runtime)
    feeds["x"] = np.ones((1, 1, 1, 1), np.float32)
    return _finish(b, b.op("AdaptiveAvgPool", x, size), feeds)


def conv_backprop_strides():
    b = ModelBuilder("deconv")
    x = b.parameter("x", "f32", [1, 1, 2, 2])
    w = b.constant(np.ones((1, 1, 1, 1), np.float32))
    y = b.op("ConvolutionBackpropData", x, w, strides=[BIG, BIG], pads_begin=[0, 0],
             pads_end=[0, 0], dilations=[1, 1])
    return _finish(b, y, {"x": np.ones((1, 1, 2, 2), np.float32)})


def conv_pads():
    b = ModelBuilder("conv")
    x = b.parameter("x", "f32", [1, 1, 1, 1])
    w = b.constant(np.ones((1, 1, 1, 1), np.float32))
    y = b.op("Convolution", x, w, strides=[1, 1], pads_begin=[BIG, BIG], pads_end=[0, 0],
             dilations=[1, 1])
    return _finish(b, y, {"x": np.ones((1, 1, 1, 1), np.float32)})


def conv_wide_kernel():
    """A 1000x1000 kernel (4 MB of weights) with as much padding over a 3x3 input: a 4 MB
    output, but the columns of its windows would be 3.7 GiB."""
    b = ModelBuilder("conv_wide")
    x = b.parameter("x", "f32", [1, 1, 3, 3])
    w = b.constant(np.ones((1, 1, 1000, 1000), np.float32))
    y = b.op("Convolution", x, w, strides=[1, 1], pads_begin=[1000, 1000],
             pads_end=[1000, 1000], dilations=[1, 1])
    return _finish(b, y, {"x": np.ones((1, 1, 3, 3), np.float32)})


def conv_dilated_padding():
    """Dilations and pads of 1e8 around 3 elements: 3 outputs, a padded copy of 800 MB."""
    b = ModelBuilder("conv_dilated")
    x = b.parameter("x", "f32", [1, 1, 3])
    w = b.constant(np.ones((1, 1, 3), np.float32))
    y = b.op("Convolution", x, w, strides=[1], pads_begin=[10**8], pads_end=[10**8],
             dilations=[10**8])
    return _finish(b, y, {"x": np.ones((1, 1, 3), np.float32)})


def pool_pads(op="AvgPool"):
    b = ModelBuilder("pool")
    x = b.parameter("x", "f32", [1, 1, 1, 1])
    attrs = dict(strides=[1, 1], pads_begin=[BIG, BIG], pads_end=[0, 0], kernel=[1, 1])
    if op == "AvgPool":
        attrs["exclude-pad"] = False
    y = b.op(op, x, **attrs, version="opset1")
    return _finish(b, y, {"x": np.ones((1, 1, 1, 1), np.float32)})


def max_pool_big_kernel():
    """A 100,000-wide kernel with as much padding: 9 outputs (OpenVINO: 0.02 s); the padded
    input alone would be 7.5 GB."""
    k = 100_000
    b = ModelBuilder("maxpool")
    x = b.parameter("x", "f32", [1, 1, 3, 3])
    y = b.op("MaxPool", x, strides=[k, k], pads_begin=[k - 1, k - 1],
             pads_end=[k - 1, k - 1], kernel=[k, k], version="opset1")
    return _finish(b, y, {"x": np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)})


def max_pool_indices_big_kernel():
    """The same with MaxPool-8's indices read: they were found in a padded block (149 GiB
    here); now, padding dominating, each axis's winners are found without one."""
    k = 100_000
    b = ModelBuilder("maxpool_indices")
    x = b.parameter("x", "f32", [1, 1, 3, 3])
    y = b.op("MaxPool", x, strides=[k, k], pads_begin=[k - 1, k - 1],
             pads_end=[k - 1, k - 1], kernel=[k, k], version="opset8")
    b.result(y[0], "values")
    b.result(y[1], "indices")
    return b.build(), {"x": np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)}


def embedding_segments_sum(runtime=True):
    b = ModelBuilder("embedding")
    table = b.parameter("table", "f32", [2, 1000])
    idx = b.constant(np.array([0, 1], np.int64))
    seg = b.constant(np.array([0, 1], np.int64))
    n, feeds = _size(b, "num_segments", BIG * BIG // 1000, runtime)
    feeds["table"] = np.ones((2, 1000), np.float32)
    return _finish(b, b.op("EmbeddingSegmentsSum", table, idx, seg, n), feeds)


def segment_max(runtime=True):
    b = ModelBuilder("segment_max")
    data = b.parameter("data", "f32", [2, 1000])
    seg = b.constant(np.array([0, 1], np.int64))
    n, feeds = _size(b, "num_segments", BIG * BIG // 1000, runtime)
    feeds["data"] = np.ones((2, 1000), np.float32)
    return _finish(b, b.op("SegmentMax", data, seg, n, fill_mode="zero"), feeds)


def sparse_fill_empty_rows(runtime=True):
    b = ModelBuilder("sparse")
    values = b.parameter("values", "f32", [1])
    shape, feeds = _size(b, "dense_shape", [BIG * BIG, 1], runtime)
    idx = b.constant(np.array([[0, 0]], np.int64))
    feeds["values"] = np.ones(1, np.float32)
    y = b.op("SparseFillEmptyRows", values, shape, idx, b.constant(np.float32(0)))
    for port, name in zip(y, ("indices", "values_out", "empty")):
        b.result(port, name)
    return b.build(), feeds


def sparse_fill_empty_rows_indices():
    """50,000,000 rows, one entry: the empty-row indicator fits 100 MiB, the indices of the
    filled rows (16 bytes a row) do not; their count is known from the call's values."""
    b = ModelBuilder("sparse_rows")
    values = b.parameter("values", "f32", [1])
    shape = b.parameter("dense_shape", "i64", [2])
    idx = b.constant(np.array([[0, 0]], np.int64))
    y = b.op("SparseFillEmptyRows", values, shape, idx, b.constant(np.float32(0)))
    for port, name in zip(y, ("indices", "values_out", "empty")):
        b.result(port, name)
    return b.build(), {"values": np.ones(1, np.float32),
                       "dense_shape": np.array([50_000_000, 1], np.int64)}


def roi_pooling():
    b = ModelBuilder("roi")
    x = b.parameter("x", "f32", [1, 1, 4, 4])
    rois = b.constant(np.array([[0, 0, 0, 3, 3]], np.float32))
    y = b.op("ROIPooling", x, rois, pooled_h=BIG, pooled_w=BIG, spatial_scale=1.0)
    return _finish(b, y, {"x": np.ones((1, 1, 4, 4), np.float32)})


def prior_box(runtime=True):
    b = ModelBuilder("priorbox")
    size, feeds = _size(b, "output_size", [BIG, BIG], runtime)
    image, more = _size(b, "image_size", [100, 100], runtime)
    feeds.update(more)
    y = b.op("PriorBox", size, image, min_size=[2.0], aspect_ratio=[1.0], offset=0.5,
             version="opset1")
    return _finish(b, y, feeds)


def concat_doubling(runs=40, dynamic=False):
    b = ModelBuilder("concat")
    x = b.parameter("x", "f32", [-1] if dynamic else [1024])
    y = x
    for _ in range(runs):
        y = b.op("Concat", y, y, axis=0)
    return _finish(b, y, {"x": np.ones(1024, np.float32)})


# The attribute cases whose size is known only when called (else when read).
AT_CALL = {"concat_doubling_dynamic", "sparse_fill_empty_rows_indices"}

CASES = {
    "broadcast": broadcast, "tile": tile, "pad": pad, "adaptive_avg_pool": adaptive_avg_pool,
    "embedding_segments_sum": embedding_segments_sum, "segment_max": segment_max,
    "sparse_fill_empty_rows": sparse_fill_empty_rows, "prior_box": prior_box,
    "reshape_huge_times_zero": reshape_huge_times_zero,
    "broadcast_huge_times_zero": broadcast_huge_times_zero,
    "tile_huge_times_zero": tile_huge_times_zero,
}
ATTRIBUTE_CASES = {
    "conv_backprop_strides": conv_backprop_strides, "conv_pads": conv_pads,
    "avg_pool_pads": lambda: pool_pads("AvgPool"), "max_pool_pads": lambda: pool_pads("MaxPool"),
    "roi_pooling": roi_pooling, "concat_doubling": concat_doubling,
    "max_pool_big_kernel": max_pool_big_kernel, "conv_wide_kernel": conv_wide_kernel,
    "max_pool_indices_big_kernel": max_pool_indices_big_kernel,
    "conv_dilated_padding": conv_dilated_padding,
    "sparse_fill_empty_rows_indices": sparse_fill_empty_rows_indices,
    "concat_doubling_dynamic": lambda: concat_doubling(dynamic=True),
}
