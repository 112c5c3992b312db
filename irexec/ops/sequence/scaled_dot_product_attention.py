"""ScaledDotProductAttention-13: softmax(query @ key^T * scale + mask) @ value."""

import functools

import numpy as np

from irexec.errors import OpError
from irexec.ir import shape_rules
from irexec.ir.shape import PartialShape
from irexec.kernels import blas
from irexec.kernels.numeric import broadcast_shape, compute_dtype, narrow, quiet
from irexec.kernels.special import LOG2E
from irexec.ops import windows
from irexec.ops.spec import register
from irexec.ops.spec import (SCALAR, Attr, Input, Op, OpSpec, Output, Rank, TensorType, TypeSet,
                             TypeVar)

T = TypeVar("T", windows.REAL)
MASK_TYPES = TypeSet(("boolean", "f16", "bf16", "f32", "f64"))


def _output_shape(q: PartialShape, k: PartialShape, v: PartialShape,
                  mask: PartialShape | None) -> PartialShape:
    if not (q.rank_is_static and k.rank_is_static and v.rank_is_static):
        return PartialShape.dynamic()
    if q[-1].merge(k[-1]) is None:
        raise OpError(f"query {q} and key {k} have different embedding sizes ({q[-1]} and "
                      f"{k[-1]}); they must agree", code="IR307")
    if k[-2].merge(v[-2]) is None:
        raise OpError(f"key {k} and value {v} have different sequence lengths ({k[-2]} and "
                      f"{v[-2]}); they must agree", code="IR307")
    batch = shape_rules.broadcast_numpy(PartialShape(q.dims[:-2]), PartialShape(k.dims[:-2]))
    batch = shape_rules.broadcast_numpy(batch, PartialShape(v.dims[:-2]))
    if mask is not None and mask.rank_is_static and len(mask) >= 2:
        # the mask broadcasts onto [batch..., L, S]
        weights = PartialShape([*batch.dims, q[-2], k[-2]])
        out = shape_rules.broadcast_numpy(weights, mask)
        batch = PartialShape(out.dims[:-2])
    return PartialShape([*batch.dims, q[-2], v[-1]])


@register
class ScaledDotProductAttention(Op):
    spec = OpSpec(
        type="ScaledDotProductAttention",
        since=13,
        until=16,
        attrs=(Attr("causal", "bool", doc="mask every key after the query's position (the "
                                          "attention_mask input is then ignored)"),),
        inputs=(
            Input("query", T, Rank(min=3), doc="[N, ..., L, E]"),
            Input("key", T, Rank(min=3), doc="[N, ..., S, E]"),
            Input("value", T, Rank(min=3), doc="[N, ..., S, Ev]"),
            Input("attention_mask", MASK_TYPES, optional=True,
                  doc="added to the scores ([N, ..., L or 1, S], or a scalar 0 for none); a "
                      "boolean mask keeps the scores where true and gives -inf elsewhere"),
            Input("scale", T, SCALAR, optional=True,
                  doc="multiplies the scores instead of 1/sqrt(E)"),
        ),
        outputs=(Output("output", "[N, ..., L, Ev]: the batch dims broadcast", type=T),),
        doc="Attention: each query's softmax-weighted average of the values, weighted by its "
            "scaled dot products with the keys.",
    )

    @staticmethod
    def infer(ctx):
        mask = ctx.input_shape(3) if ctx.num_inputs > 3 else None
        if mask is not None and not ctx.attrs["causal"]:
            mt = ctx.input_type(3).element_type
            q = ctx.input_type(0).element_type
            if not mt.is_dynamic and not q.is_dynamic and mt.name != "boolean" and mt != q:
                raise OpError(f"attention_mask is {mt} but query is {q}; a mask is boolean "
                              f"or of the query's type", code="IR304")
        shape = _output_shape(ctx.input_shape(0), ctx.input_shape(1), ctx.input_shape(2),
                              None if ctx.attrs["causal"] else mask)
        return [TensorType(ctx.output_element_types(1)[0], shape)]

    @staticmethod
    def kernel(query, key, value, attention_mask=None, scale=None, *, causal):
        # Each step written over the scores where it keeps their shape: the same operations
        # and values as with a new array each (f32 and f64 compute in place, narrower floats
        # in the f32 arrays they were widened to). A decode step's attention is a few small
        # arrays: numpy's calls are made directly, none repeated (the factor once per size).
        dtype = query.dtype
        ct = compute_dtype(dtype)
        q, k, v = (a if a.dtype == ct else a.astype(ct) for a in (query, key, value))
        factor = ct.type(scale) if scale is not None else _factor(ct, q.shape[-1])
        scores = blas.matmul(q, k.swapaxes(-1, -2))
        # f32 scores not offset by a float mask: in units of log2 e, so that the weights are
        # numpy's exp2 of them (half the time of its exp; the same softmax, see
        # kernels/special.py exp_scaled); a float mask is added in the scores' own units
        base2 = ct == np.float32 and (causal or attention_mask is None
                                      or attention_mask.dtype == np.bool_)
        if base2:
            factor = _base2(factor)
        with quiet():
            np.multiply(scores, factor, out=scores)
            if causal:
                np.copyto(scores, ct.type(-np.inf), where=_hidden(q.shape[-2], k.shape[-2]))
            elif attention_mask is not None:
                if attention_mask.dtype == np.bool_:
                    scores = np.where(attention_mask, scores, ct.type(-np.inf))
                else:
                    mask = attention_mask if attention_mask.dtype == ct else \
                        attention_mask.astype(ct)
                    same = broadcast_shape(scores, mask) == scores.shape
                    scores = np.add(scores, mask, out=scores if same else None)
            # no key (source length 0): each row's weights are empty and its output 0
            # the ufuncs' reductions directly (np.max's and np.sum's wrappers cost as much on
            # small heads)
            top = np.maximum.reduce(scores, axis=-1, keepdims=True, initial=-np.inf)
            np.subtract(scores, top, out=scores)
            weights = np.exp2(scores, out=scores) if base2 else np.exp(scores, out=scores)
            weights /= np.add.reduce(weights, axis=-1, keepdims=True)
        out = blas.matmul(weights, v)
        return out if out.dtype == dtype else narrow(out, dtype)


@functools.lru_cache(maxsize=64)
def _factor(ct: np.dtype, size: int):
    """1 / sqrt(E) in the compute type, as the kernel computes it."""
    return ct.type(1.0) / np.sqrt(ct.type(size))


@functools.lru_cache(maxsize=64)
def _base2(factor: np.float32) -> np.float32:
    """``factor * log2 e`` rounded once to f32."""
    return np.float32(float(factor) * LOG2E)


@functools.lru_cache(maxsize=64)
def _hidden(length: int, source: int) -> np.ndarray:
    """The keys a causal mask hides: those after each query's position (read-only)."""
    hidden = np.triu(np.ones((length, source), bool), k=1)
    hidden.setflags(write=False)
    return hidden
