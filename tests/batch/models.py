"""Small models saved as IR for the batch tests: a few convolutions (some milliseconds a sample,
so that a test can interrupt a run part-way) and a single layer."""

from __future__ import annotations

import numpy as np

import irexec
from irexec.builder import ModelBuilder

IMAGE_SHAPE = [1, 3, 32, 32]


def conv_model(folder, layers: int = 3, channels: int = 16, size: int = 32, name: str = "conv",
               f16_weights: bool = False):
    """image [1,3,size,size] f32 -> (Convolution 3x3 + Relu) x layers -> ReduceMean -> 'score'.
    ``f16_weights``: the weights rounded to f16 (kept in f32), a twin with the same layers."""
    rng = np.random.default_rng(7)
    b = ModelBuilder(name)
    x = b.parameter("image", "f32", [1, 3, size, size])
    c_in = 3
    for i in range(layers):
        w = (rng.standard_normal((channels, c_in, 3, 3)) * 0.2).astype(np.float32)
        if f16_weights:
            w = w.astype(np.float16).astype(np.float32)
        w = b.constant(w)
        x = b.op("Convolution", x, w, strides=[1, 1], pads_begin=[1, 1], pads_end=[1, 1],
                 dilations=[1, 1], name=f"conv{i}")
        x = b.op("Relu", x, name=f"relu{i}")
        c_in = channels
    axes = b.constant(np.array([2, 3], np.int64))
    b.result(b.op("ReduceMean", x, axes, keep_dims=False, name="score"), "score_result")
    path = f"{folder}/{name}.xml"
    irexec.save_model(b.build(), path)
    return path


def one_layer_model(folder, name: str = "one"):
    b = ModelBuilder(name)
    x = b.parameter("x", "f32", [1, 16])
    b.result(b.op("Relu", x, name="relu"), "y")
    path = f"{folder}/{name}.xml"
    irexec.save_model(b.build(), path)
    return path


def write_samples(folder, count: int, shape=IMAGE_SHAPE, key="image", seed: int = 0,
                  suffix: str = ".npz"):
    """``count`` samples s000.npz ... (or .npy) of normal noise."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        array = rng.standard_normal(shape).astype(np.float32)
        if suffix == ".npz":
            np.savez(folder / f"s{i:03d}.npz", **{key: array})
        else:
            np.save(folder / f"s{i:03d}.npy", array)
    return folder
