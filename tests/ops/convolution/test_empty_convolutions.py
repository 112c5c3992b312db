"""Convolutions of empty tensors: a batch of 0, no output channels, or no input channels. The
output has the shape the geometry gives (OpenVINO's CPU plugin agrees on it); a sum of no terms
is 0 (the plugin leaves that output uninitialised). The kernels used to crash on reshapes of
empty arrays."""

from __future__ import annotations

import numpy as np
import pytest

from tests.ops.compute_support import run_layer
from tests.ops.convolution.test_convolution import attrs


def _forward_dim(size, kernel, stride=1, dilation=1):
    return (size - ((kernel - 1) * dilation + 1)) // stride + 1


def _backward_dim(size, kernel, stride=1, dilation=1):
    return (size - 1) * stride + (kernel - 1) * dilation + 1


@pytest.mark.parametrize("op, data, weights, channels", [
    ("Convolution", (0, 2, 5, 5), (3, 2, 3, 3), 3),
    ("Convolution", (0, 2, 5, 5), (3, 2, 1, 1), 3),
    ("Convolution", (1, 2, 5, 5), (0, 2, 3, 3), 0),
    ("Convolution", (1, 2, 5, 5), (0, 2, 1, 1), 0),
    ("Convolution", (2, 0, 5, 5), (3, 0, 3, 3), 3),
    ("GroupConvolution", (0, 4, 5, 5), (4, 1, 1, 3, 3), 4),  # depthwise
    ("GroupConvolution", (1, 4, 5, 5), (4, 0, 1, 3, 3), 0),
    ("ConvolutionBackpropData", (0, 2, 5, 5), (2, 3, 3, 3), 3),
    ("ConvolutionBackpropData", (1, 2, 5, 5), (2, 0, 3, 3), 0),
    ("ConvolutionBackpropData", (1, 0, 5, 5), (0, 3, 3, 3), 3),
    ("GroupConvolutionBackpropData", (0, 4, 5, 5), (2, 2, 3, 3, 3), 6),
    ("GroupConvolutionBackpropData", (1, 4, 5, 5), (2, 2, 0, 3, 3), 0),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int32])
def test_empty_tensors_give_the_geometrys_shape_and_zeros(op, data, weights, channels, dtype):
    y = run_layer(op, np.ones(data, dtype), np.ones(weights, dtype), consts=(1,), **attrs(2))
    dim = _backward_dim if "Backprop" in op else _forward_dim
    spatial = tuple(dim(s, k) for s, k in zip(data[2:], weights[-2:]))
    assert y.shape == (data[0], channels) + spatial
    assert y.dtype == dtype
    if channels and data[0] and not data[1]:
        np.testing.assert_array_equal(y, np.zeros(y.shape, dtype))
