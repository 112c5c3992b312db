"""StringTensorUnpack-15 and StringTensorPack-15: a string tensor to and from its three-tensor
form (where each string begins and ends in ``symbols``, the UTF-8 bytes of all of them).

irexec holds strings as numpy object arrays of ``str`` (irexec/io/bin_layout.py); bytes that are
not UTF-8 travel as surrogate escapes, so unpacking then packing gives back the very bytes the
.bin held. Exact.
"""

from __future__ import annotations

import numpy as np

from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.domains import Domain, _sizes, as_int64
from irexec.ops.spec import (SHAPE_INDEX, VECTOR, Input, Op, OpSpec, Output, TensorType, TypeSet,
                             TypeVar, register)

T_IDX = TypeVar("T_IDX", SHAPE_INDEX)


def _encode(values: np.ndarray) -> list[bytes]:
    return [str(v).encode("utf-8", "surrogateescape") for v in values.reshape(-1).tolist()]


@register
class StringTensorUnpack(Op):
    spec = OpSpec(
        type="StringTensorUnpack",
        since=15,
        until=16,
        inputs=(Input("data", TypeSet(("string",)), doc="the strings, any shape"),),
        outputs=(Output("begins", "data's shape: where each string starts in symbols",
                        type="i32"),
                 Output("ends", "data's shape: where each string ends (exclusive)", type="i32"),
                 Output("symbols", "[total bytes]: every string's UTF-8 bytes, one after "
                                   "another", type="u8")),
        doc="Splits a string tensor into begins, ends and the concatenated UTF-8 bytes.",
        exact=True,
    )

    @staticmethod
    def infer(ctx):
        shape = ctx.input_shape(0)
        total = Dimension.dynamic()
        value = ctx.input_value(0)
        if value is not None:
            total = Dimension.static(sum(len(b) for b in _encode(value)))
        i32, _, u8 = ctx.output_element_types(3)
        return [TensorType(i32, shape), TensorType(i32, shape),
                TensorType(u8, PartialShape._of((total,)))]

    @staticmethod
    def kernel(data):
        parts = _encode(data)
        ends = np.cumsum([len(p) for p in parts], dtype=np.int64)
        begins = ends - np.array([len(p) for p in parts], np.int64)
        symbols = np.frombuffer(b"".join(parts), np.uint8).copy()
        return (begins.astype(np.int32).reshape(data.shape),
                ends.astype(np.int32).reshape(data.shape), symbols)


class _Bounds(Domain):
    """Begins (``end=False``) or ends of consecutive one-byte strings over input ``of``'s
    bytes: string i is byte i (or empty past the end)."""

    def __init__(self, end: bool):
        self.of, self.end = 2, end

    def generate(self, rng, data_shape, attrs, declared, unsigned):
        sizes = _sizes(declared)
        n = int(np.prod(sizes))
        top = data_shape[0] if data_shape else 0
        starts = np.minimum(np.arange(n), top)
        return (np.minimum(starts + 1, top) if self.end else starts).reshape(sizes)


@register
class StringTensorPack(Op):
    spec = OpSpec(
        type="StringTensorPack",
        since=15,
        until=16,
        inputs=(Input("begins", T_IDX, domain=_Bounds(False),
                      doc="where each string starts in symbols; any shape"),
                Input("ends", T_IDX, domain=_Bounds(True),
                      doc="begins' shape: where each string ends (exclusive), at least its "
                          "begin and at most the symbols' length"),
                Input("symbols", TypeSet(("u8",)), VECTOR, doc="the strings' UTF-8 bytes")),
        outputs=(Output("output", "begins' shape: the strings symbols[begins:ends]",
                        type="string"),),
        doc="Builds a string tensor from begins, ends and UTF-8 bytes.",
        exact=True,
    )

    @staticmethod
    def infer(ctx):
        begins, ends = ctx.input_shape(0), ctx.input_shape(1)
        shape = begins.merge(ends)
        if shape is None:
            ctx.error("IR307", f"begins {begins} and ends {ends} must have the same shape")
        b, e = ctx.input_value(0), ctx.input_value(1)
        if b is not None and e is not None:
            symbols = ctx.input_shape(2)
            top = symbols[0].max if symbols.rank_is_static else None
            b, e = as_int64(b), as_int64(e)
            bad = (b < 0) | (e < b) | ((e > top) if top is not None else False)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                limit = top if top is not None else "len(symbols)"
                ctx.error("IR308", f"string {i} spans [{int(b[i])}, {int(e[i])}); a span must "
                                   f"lie within [0, {limit}] and not end before it begins")
        return [TensorType(ctx.output_element_types(1)[0], shape)]

    @staticmethod
    def kernel(begins, ends, symbols):
        text = symbols.tobytes()
        out = np.empty(begins.size, dtype=object)
        out[:] = [text[b:e].decode("utf-8", "surrogateescape")
                  for b, e in zip(as_int64(begins).tolist(), as_int64(ends).tolist())]
        return out.reshape(begins.shape)
