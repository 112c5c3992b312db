"""Operations: one module per op type. Importing this package registers the built-in ops."""

from irexec.ops import constant, convert, parameter, result, reverse, reverse_sequence  # noqa: F401
from irexec.ops.registry import all_ops, lookup, register
from irexec.ops.spec import Attr, Input, Op, OpSpec, Output, TensorType

__all__ = ["Attr", "Input", "Op", "OpSpec", "Output", "TensorType", "all_ops", "lookup", "register"]
