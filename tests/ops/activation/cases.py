"""The activation cases shared by the tests: each op with its attributes and parameter inputs,
and an independent float64 reference (numpy and math only, never irexec code)."""

from __future__ import annotations

import math

import numpy as np

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax(x, axis):
    d = x - x.max(axis=axis, keepdims=True)
    return d - np.log(np.exp(d).sum(axis=axis, keepdims=True))


def _softplus(x):
    return np.where(x > 30, x, np.log1p(np.exp(np.minimum(x, 30))))


# name -> (type, version, attrs, parameter inputs (values), float64 reference of x)
CASES = {
    "relu": ("Relu", "opset1", {}, (), lambda x: np.where(x > 0, x, 0.0)),
    "sigmoid": ("Sigmoid", "opset1", {}, (), lambda x: 1 / (1 + np.exp(-x))),
    "hswish": ("HSwish", "opset4", {}, (), lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "hsigmoid": ("HSigmoid", "opset5", {}, (), lambda x: np.clip(x + 3, 0, 6) / 6),
    "mish": ("Mish", "opset4", {}, (), lambda x: x * np.tanh(_softplus(x))),
    "softplus": ("SoftPlus", "opset4", {}, (), _softplus),
    "softsign": ("SoftSign", "opset9", {}, (), lambda x: x / (1 + np.abs(x))),
    "gelu2": ("Gelu", "opset2", {}, (), lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2)))),
    "gelu_erf": ("Gelu", "opset7", {"approximation_mode": "erf"}, (),
                 lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2)))),
    "gelu_tanh": ("Gelu", "opset7", {"approximation_mode": "tanh"}, (),
                  lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) *
                                                   (x + 0.044715 * x ** 3)))),
    "clamp": ("Clamp", "opset1", {"min": -1.5, "max": 2.25}, (), lambda x: np.clip(x, -1.5, 2.25)),
    "elu": ("Elu", "opset1", {"alpha": 0.5}, (), lambda x: np.where(x < 0, 0.5 * np.expm1(x), x)),
    "swish": ("Swish", "opset4", {}, (), lambda x: x / (1 + np.exp(-x))),
    "swish_beta": ("Swish", "opset4", {}, (0.75,), lambda x: x / (1 + np.exp(-0.75 * x))),
    "selu": ("Selu", "opset1", {}, ([1.5], [1.25]),
             lambda x: 1.25 * np.where(x > 0, x, 1.5 * np.expm1(x))),
    "hard_sigmoid": ("HardSigmoid", "opset1", {}, (0.25, 0.5),
                     lambda x: np.clip(0.25 * x + 0.5, 0, 1)),
    "prelu": ("PRelu", "opset1", {}, ([0.25, -0.5, 2.0],), None),  # reference in the test
    "softmax1": ("Softmax", "opset1", {"axis": 1}, (), lambda x: _softmax(x, 1)),
    "softmax8": ("Softmax", "opset8", {"axis": -1}, (), lambda x: _softmax(x, -1)),
    "log_softmax": ("LogSoftmax", "opset5", {"axis": 1}, (), lambda x: _log_softmax(x, 1)),
}


def prelu_reference(x, slope):
    s = np.asarray(slope, np.float64).reshape(1, -1, *([1] * (x.ndim - 2)))
    return np.where(x < 0, x * s, x)


def reference(name, x):
    x = np.asarray(x, np.float64)
    if name == "prelu":
        return prelu_reference(x, CASES[name][3][0])
    with np.errstate(all="ignore"):
        return CASES[name][4](x)
