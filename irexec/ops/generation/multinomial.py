"""Multinomial-13: class indices drawn from each row of probabilities, as OpenVINO's reference
draws them (src/core/reference/include/openvino/reference/multinomial.hpp).

Per row, in the probabilities' own type: exp if log_probs, the running sum (the CDF), divided
by its last value; the samples are RandomUniform's in [0, 1) of that type (alignment
tensorflow: Philox4x32-10 keyed by global_seed, counter op_seed, from the start of the stream on
every call); a sample picks the first class whose CDF value is >= it. Without replacement the
picked class's probability is then taken out of the CDF (the entries from it on lowered by it)
and the CDF divided by one minus it. OpenVINO's CPU plugin draws its samples with another
generator (docs/compatibility.md).
"""

from __future__ import annotations

import numpy as np

from irexec.diagnostics.codes import ERROR, Code
from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.kernels import philox
from irexec.ops.domains import SmallInts, Weights, as_int64
from irexec.ops.generation.common import draw_seed, seeds_warning
from irexec.ops.rules import check_output_size
from irexec.ops.spec import (INTEGER, REAL, SCALAR_OR_VECTOR, Attr, Input, Op, OpSpec, Output,
                             Rank, TensorType, register)

SAMPLES = Code("IR389", "multinomial-samples", ERROR,
               "give Multinomial a num_samples of at least 0 and, without replacement, at most "
               "the number of classes (probs' last dim)")

KINDS = {"f16": np.float16, "bf16": philox.BF16, "f32": np.float32, "f64": np.float64}
_F32 = np.float32


def _count(value) -> int:
    v = as_int64(np.asarray(value)).reshape(-1)
    if v.size != 1:
        raise OpError(f"num_samples holds {v.size} values; it must hold one", code="IR321")
    if v[0] < 0:
        raise OpError(f"num_samples is {int(v[0])}; it must not be negative", code="IR389")
    return int(v[0])


def _too_many(samples: int, classes: int) -> OpError:
    return OpError(f"num_samples ({samples}) is more than the {classes} classes; without "
                   f"replacement each class is drawn at most once", code="IR389")


def _in(dtype, values):
    """``values`` (f32 or f64) rounded to ``dtype`` as OpenVINO's float types round."""
    if dtype == philox.BF16:
        return philox.to_bf16(np.asarray(values, _F32))
    return np.asarray(values).astype(dtype)


def _op(fn, a, b, dtype):
    """a fn b in ``dtype``: f16/bf16 computed in f32 and rounded (OpenVINO's float16/bfloat16
    operators), f32/f64 in their own type."""
    if dtype in (np.float16, philox.BF16):
        return _in(dtype, fn(np.asarray(a).astype(_F32), np.asarray(b).astype(_F32)))
    return fn(a, b)


def _cumsum(x: np.ndarray) -> np.ndarray:
    """The running sum along the last axis, each addition rounded to x's type (left to right,
    as OpenVINO's reference cumsum adds)."""
    if x.dtype != philox.BF16:
        return np.cumsum(x, axis=-1, dtype=x.dtype)  # numpy accumulates one by one, rounding
    out = np.empty_like(x)
    acc = x[:, 0]
    out[:, 0] = acc
    for k in range(1, x.shape[1]):  # one column at a time: bf16 rounds OpenVINO's way
        acc = _op(np.add, acc, x[:, k], x.dtype)
        out[:, k] = acc
    return out


def _first_at_least(cdf: np.ndarray, samples: np.ndarray) -> np.ndarray:
    """Per row, the first class k with samples <= cdf[k] (for each sample), or the class count
    where none is: the first k where the running maximum of the CDF (nan skipped) reaches it."""
    top = np.fmax.accumulate(cdf.astype(np.float64), axis=1)
    top[np.isnan(top)] = -np.inf
    s = samples.astype(np.float64)
    return np.stack([np.searchsorted(top[i], s[i], side="left") for i in range(cdf.shape[0])]) \
        if cdf.shape[0] else np.zeros(samples.shape, np.int64)


def sample(probs: np.ndarray, samples: int, with_replacement: bool, log_probs: bool,
           global_seed: int, op_seed: int) -> np.ndarray:
    """The class indices ([batch, samples], int64) the reference draws."""
    dtype = probs.dtype.type if probs.dtype != philox.BF16 else philox.BF16
    batch, classes = probs.shape
    x = probs
    if log_probs:
        with np.errstate(over="ignore"):
            x = _in(dtype, np.exp(probs.astype(np.float64)).astype(_F32)
                    if dtype != np.float64 else np.exp(probs))
    with np.errstate(all="ignore"):
        cdf = _cumsum(np.ascontiguousarray(x))
        cdf = _op(np.divide, cdf, cdf[:, -1:], dtype)
    kind = {v: k for k, v in KINDS.items()}[dtype]
    zero, one = np.zeros((), dtype), np.ones((), dtype)
    u = philox.uniform(batch * samples, kind, zero, one, global_seed, op_seed,
                       "tensorflow").reshape(batch, samples)
    out = np.zeros((batch, samples), np.int64)
    if with_replacement:
        idx = _first_at_least(cdf, u)
        found = idx < classes
        out[found] = idx[found]
        return out
    rows = np.arange(batch)
    with np.errstate(all="ignore"):
        for j in range(samples):  # each draw changes the CDF the next one reads
            hit = u[:, j:j + 1] <= cdf
            found = hit.any(axis=1)
            k = hit.argmax(axis=1)
            out[found, j] = k[found]
            r, k = rows[found], k[found]
            if not r.size:
                continue
            prev = np.where(k > 0, cdf[r, np.maximum(k - 1, 0)], np.zeros((), dtype))
            p = np.where(k > 0, _op(np.subtract, cdf[r, k], prev, dtype), cdf[r, 0])
            divisor = _op(np.subtract, one, p, dtype)
            part = cdf[r]
            lower = np.arange(classes)[None, :] >= k[:, None]
            part = np.where(lower, _op(np.subtract, part, p[:, None], dtype), part)
            cdf[r] = _op(np.divide, part, divisor[:, None], dtype)
    return out


@register
class Multinomial(Op):
    spec = OpSpec(
        type="Multinomial",
        since=13,
        until=16,
        attrs=(Attr("convert_type", "element_type", doc="the output's type: i32 or i64"),
               Attr("with_replacement", "bool", doc="a class may be drawn more than once"),
               Attr("log_probs", "bool", doc="probs are unnormalised log probabilities"),
               Attr("global_seed", "uint", 0, doc="Philox's key; 0 with op_seed 0: a fresh "
                                                  "seed every call"),
               Attr("op_seed", "uint", 0, doc="Philox's counter")),
        inputs=(Input("probs", REAL, Rank(exact=2), Weights(),
                      doc="[batch, classes] probabilities (f16, bf16, f32 or f64), not "
                          "necessarily normalised; log probabilities with log_probs"),
                Input("num_samples", INTEGER, SCALAR_OR_VECTOR, SmallInts(low=1, high=1),
                      doc="how many classes to draw per row; one element"),),
        outputs=(Output("output", "[batch, num_samples] class indices", type="@convert_type"),),
        doc="Class indices drawn from each row of probs (the first class whose normalised "
            "running sum reaches a uniform sample), with or without replacement; the samples are "
            "RandomUniform's (alignment tensorflow) for the seeds, the same on every call.",
        codes=(SAMPLES,),
        folds=False,
    )

    @staticmethod
    def infer(ctx):
        out = ctx.attrs["convert_type"]
        if out.name not in ("i32", "i64"):
            ctx.error("IR302", f"convert_type is {out}; Multinomial gives i32 or i64 indices")
        et = ctx.input_type(0).element_type
        if not et.is_dynamic and et.name not in KINDS:
            ctx.error("IR304", f"probs is {et}; Multinomial takes f16, bf16, f32 or f64")
        shape = ctx.input_shape(1)
        if shape.rank_is_static and len(shape) == 1 and not shape[0].contains(1):
            ctx.error("IR321", f"num_samples has shape {shape}; it must hold one element")
        seeds_warning(ctx)
        probs = ctx.input_shape(0)
        batch = probs[0] if probs.rank_is_static else Dimension.dynamic()
        classes = probs[1] if probs.rank_is_static else Dimension.dynamic()
        value = ctx.input_value(1)
        count = Dimension.dynamic()
        if value is not None:
            try:
                n = _count(value)
                if not ctx.attrs["with_replacement"] and classes.is_static and n > classes.min:
                    raise _too_many(n, classes.min)
            except OpError as e:
                ctx.error(e.code, str(e))
            count = Dimension.static(n)
        return [TensorType(out, PartialShape([batch, count]))]

    @staticmethod
    def kernel(probs, num_samples, *, convert_type, with_replacement, log_probs, global_seed=0,
               op_seed=0):
        n = _count(num_samples)
        batch, classes = probs.shape
        if not with_replacement and n > classes:
            raise _too_many(n, classes)
        check_output_size((batch, n), 8)
        if global_seed == 0 and op_seed == 0:
            global_seed = draw_seed()
        if batch * n == 0:
            return np.zeros((batch, n), convert_type.dtype)
        return sample(probs, n, with_replacement, log_probs, global_seed,
                      op_seed).astype(convert_type.dtype)

    @staticmethod
    def openvino_refuses(node) -> str | None:
        return ("OpenVINO's CPU plugin draws Multinomial's samples with another generator than "
                "its reference's (docs/compatibility.md)")
