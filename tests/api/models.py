"""The small models the idiom scripts run, written as IR files (so that OpenVINO reads the very
same files), and their outputs computed independently with plain numpy.

* ``classifier``: ``image`` f32 [1,3,4,4] -> 1x1 Convolution (+ bias) -> Relu -> mean over H, W
  -> MatMul to 5 classes -> Softmax, output ``probs``;
* ``two_inputs``: ``a`` f32 [2,3], ``b`` f32 [2,3] -> ``sum`` = a + 2 b and ``prod`` = a * b;
* ``stateful``: ``x`` f32 [2]; variable ``acc`` starts at [5, 7] (ReadValue's init input) and
  adds x each run; output ``total`` = the new value.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from irexec import save_model
from irexec.builder import ModelBuilder

RNG = np.random.default_rng(29)
CONV_W = RNG.standard_normal((6, 3, 1, 1)).astype(np.float32)
CONV_B = RNG.standard_normal((1, 6, 1, 1)).astype(np.float32)
FC_W = RNG.standard_normal((6, 5)).astype(np.float32)
STATE_INIT = np.array([5.0, 7.0], np.float32)


def classifier(batch=1):
    b = ModelBuilder("classifier")
    x = b.parameter("image", "f32", [batch, 3, 4, 4])
    conv = b.op("Convolution", x, b.constant(CONV_W, name="conv_weights"), strides=[1, 1],
                pads_begin=[0, 0], pads_end=[0, 0], dilations=[1, 1], name="conv")
    biased = b.op("Add", conv, b.constant(CONV_B, name="conv_bias"), name="bias")
    relu = b.op("Relu", biased, name="relu")
    pooled = b.op("ReduceMean", relu, b.constant(np.array([2, 3], np.int64)), keep_dims=False,
                  name="pool")
    logits = b.op("MatMul", pooled, b.constant(FC_W, name="fc_weights"), name="fc")
    probs = b.op("Softmax", logits, version="opset8", axis=-1, name="probs")
    probs.names = ["probs"]
    b.result(probs, "probs/sink")
    return b.build()


def relu_reference(x: np.ndarray) -> np.ndarray:
    """The classifier's Relu layer (its 1x1 convolution plus bias, then max(0, .))."""
    conv = np.einsum("oc,nchw->nohw", CONV_W[:, :, 0, 0].astype(np.float64),
                     x.astype(np.float64)) + CONV_B
    return np.maximum(conv, 0).astype(np.float32)


def classifier_reference(x: np.ndarray) -> np.ndarray:
    """The classifier computed by hand in float64, then rounded to float32."""
    x = x.astype(np.float64)
    conv = np.einsum("oc,nchw->nohw", CONV_W[:, :, 0, 0].astype(np.float64), x) + CONV_B
    pooled = np.maximum(conv, 0).mean(axis=(2, 3))
    logits = pooled @ FC_W.astype(np.float64)
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


def two_inputs():
    b = ModelBuilder("two_inputs")
    a = b.parameter("a", "f32", [2, 3])
    x = b.parameter("b", "f32", [2, 3])
    twice = b.op("Multiply", x, b.constant(np.float32(2.0)), name="twice")
    total = b.op("Add", a, twice, name="sum")
    total.names = ["sum"]
    prod = b.op("Multiply", a, x, name="prod")
    prod.names = ["prod"]
    b.result(total, "sum/sink")
    b.result(prod, "prod/sink")
    return b.build()


def stateful():
    b = ModelBuilder("stateful")
    x = b.parameter("x", "f32", [2])
    init = b.constant(STATE_INIT, name="acc_init")
    read = b.op("ReadValue", init, version="opset6", variable_id="acc", variable_type="f32",
                variable_shape=[2], name="acc_read")
    total = b.op("Add", read, x, name="total")
    total.names = ["total"]
    b.op("Assign", total, version="opset6", variable_id="acc", name="acc_write")
    b.result(total, "total/sink")
    return b.build()


def write_all(folder: Path) -> dict[str, Path]:
    """Every model as an IR file in ``folder`` (weights kept in f32): {name: xml path}."""
    paths = {}
    for name, make in (("classifier", classifier), ("two_inputs", two_inputs),
                       ("stateful", stateful)):
        path = folder / f"{name}.xml"
        save_model(make(), path, compress_to_fp16=False)
        paths[name] = path
    return paths
