"""Operations: one module per op type. Importing this package registers the built-in ops."""

from irexec.ops import (constant, convert, onnx_cast, onnx_identity,  # noqa: F401
                        onnx_reverse_sequence, parameter, result, reverse, reverse_sequence,
                        reverse_subsequences)
from irexec.ops.registry import all_ops, lookup, register
from irexec.ops.spec import Attr, Input, Op, OpSpec, Output, TensorType

__all__ = ["Attr", "Input", "Op", "OpSpec", "Output", "TensorType", "all_ops", "lookup", "register"]
