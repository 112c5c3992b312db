"""ONNX Identity (``version="onnxN"``, family ``onnx``): the input, unchanged. Removed when an
ONNX model is converted to IR (``irexec convert``)."""

import numpy as np

from irexec.ops.spec import register
from irexec.ops.spec import ANY, Input, Op, OpSpec, Output


@register
class OnnxIdentity(Op):
    spec = OpSpec(
        type="Identity",
        family="onnx",
        since=1,
        inputs=(Input("input", ANY, doc="any tensor"),),
        outputs=(Output("output", "a copy of the input"),),
        doc="ONNX's Identity: returns its input.",
        exact=True,
    )

    @staticmethod
    def kernel(input):
        return np.array(input, copy=True)

    @staticmethod
    def to_openvino(b, node, data):
        return data  # removed: its tensor names move to the tensor it passes on
