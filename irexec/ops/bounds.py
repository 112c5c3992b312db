"""Value bounds of small integer tensors, as OpenVINO's shape inference tracks them.

Inference knows the exact values of some tensors (Constants, and layers it could fold: see
irexec/infer.py) and, for others, an interval per element: a lower and an upper bound. Bounds
start at ShapeOf of a partial shape (a dim of ``2..8`` has bounds 2 and 8; ``?`` has 0 and no
upper bound) and flow through the shape arithmetic converters write, so that a Reshape or
Broadcast whose target shape is computed at run time still gets the tightest partial shape.

Bounds are float64 arrays of the tensor's shape: ``-inf``/``inf`` stand for no bound, and the
arithmetic saturates on its own. Integers up to 2**53 are exact; a bound beyond is treated as
unbounded when read as a dim (:func:`as_dims`).

How a layer's output bounds are found (first that applies):

1. the op's own ``bounds(ctx)`` hook (ShapeOf, Convert, the element-wise arithmetic, Select,
   the reductions: made from the rules here, e.g. ``bounds = staticmethod(bounds.binary(add))``);
2. data movement (``OpSpec(exact=True)``): the kernel run once on the lower and once on the
   upper bounds of its data inputs (those whose element type is the output's), every other input
   known exactly (Gather, Concat, Reshape, Squeeze, StridedSlice ...).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from irexec.ir.shape import Dimension, PartialShape

Bounds = tuple[np.ndarray, np.ndarray]
EXACT_LIMIT = float(1 << 53)  # float64 holds every integer up to here


def exact(values: np.ndarray) -> Bounds:
    """The bounds of known values (lower = upper = the values), as float64."""
    v = np.asarray(values)
    if v.dtype.kind == "u" and v.dtype.itemsize == 8:
        v = v.view(np.int64)  # OpenVINO reads u64 shape values as signed
    v = v.astype(np.float64)
    return v, v


def unbounded(shape) -> Bounds:
    return np.full(shape, -np.inf), np.full(shape, np.inf)


def as_values(bounds: Bounds, dtype: np.dtype) -> np.ndarray | None:
    """The values when both bounds agree everywhere (within float64's exact range), else None."""
    lo, hi = bounds
    if lo.shape != hi.shape or not np.array_equal(lo, hi) or not np.all(np.abs(lo) <= EXACT_LIMIT):
        return None
    return lo.astype(np.int64).astype(dtype)


def as_dims(bounds: Bounds) -> list[Dimension]:
    """The bounds of a 1-D shape tensor as dims: negative lower bounds read as 0, an upper bound
    that is infinite, beyond 2**53 or negative reads as no bound."""
    lo, hi = bounds
    dims = []
    for a, b in zip(lo.reshape(-1).tolist(), hi.reshape(-1).tolist()):
        low = 0 if not a > 0 or a > EXACT_LIMIT else int(a)
        high = None if not 0 <= b <= EXACT_LIMIT else int(b)
        if high is not None and high < low:
            high = None
        dims.append(Dimension(low, high))
    return dims


def of_shape(shape: PartialShape) -> Bounds:
    """The bounds of ShapeOf of a partial shape of static rank."""
    lo = np.array([d.min for d in shape], np.float64)
    hi = np.array([np.inf if d.max is None else d.max for d in shape], np.float64)
    return lo, hi


# --- interval arithmetic ---------------------------------------------------------------------

def _clean(a: np.ndarray) -> np.ndarray:
    # 0 * inf is nan in float arithmetic; with finite true values the product is 0.
    return np.where(np.isnan(a), 0.0, a)


def add(a: Bounds, b: Bounds) -> Bounds:
    with np.errstate(invalid="ignore"):
        lo, hi = a[0] + b[0], a[1] + b[1]
    return np.where(np.isnan(lo), -np.inf, lo), np.where(np.isnan(hi), np.inf, hi)


def subtract(a: Bounds, b: Bounds) -> Bounds:
    return add(a, (-b[1], -b[0]))


def multiply(a: Bounds, b: Bounds) -> Bounds:
    with np.errstate(invalid="ignore"):
        products = [_clean(x * y) for x in a for y in b]
    return np.minimum.reduce(products), np.maximum.reduce(products)


def divide(a: Bounds, b: Bounds, floor: bool) -> Bounds:
    """Integer division (floor or toward zero); no bound where the divisor may be 0 or both
    numerator and divisor are unbounded."""
    with np.errstate(invalid="ignore", divide="ignore"):
        quotients = np.broadcast_arrays(*[x / y for x in a for y in b])
    lo_b = np.broadcast_to(b[0], quotients[0].shape)
    hi_b = np.broadcast_to(b[1], quotients[0].shape)
    unknown = ~((lo_b > 0) | (hi_b < 0)) | np.logical_or.reduce([np.isnan(q) for q in quotients])
    rnd = np.floor if floor else np.trunc
    with np.errstate(invalid="ignore"):
        lo = rnd(np.minimum.reduce(quotients))
        hi = rnd(np.maximum.reduce(quotients))
    return np.where(unknown, -np.inf, lo), np.where(unknown, np.inf, hi)


def binary(fn):
    """The ``bounds`` hook of an element-wise binary op whose interval rule is ``fn`` (``add``,
    ``subtract``, ``multiply``), for integer tensors and numpy or no broadcasting."""
    def rule(ctx):
        a, b = ctx.input_bounds(0), ctx.input_bounds(1)
        if a is None or b is None or not ctx.input_type(0).element_type.is_integral:
            return None
        if ctx.attrs.get("auto_broadcast", "numpy") not in ("numpy", "none"):
            return None
        return [fn(a, b)]
    return rule


def divide_rule(ctx):
    """Divide's ``bounds`` hook (integer tensors)."""
    a, b = ctx.input_bounds(0), ctx.input_bounds(1)
    if a is None or b is None or not ctx.input_type(0).element_type.is_integral:
        return None
    return [divide(a, b, ctx.attrs.get("m_pythondiv", True))]


def monotone(fn):
    """Element-wise ops non-decreasing in every input: bounds of the output are the op on the
    bounds of the inputs."""
    def rule(ctx):
        got = [ctx.input_bounds(i) for i in range(ctx.num_inputs)]
        if any(g is None for g in got) or not ctx.input_type(0).element_type.is_integral:
            return None
        return [(fn(*(g[0] for g in got)), fn(*(g[1] for g in got)))]
    return rule


def select(ctx):
    """Select's ``bounds`` hook: the chosen branch's where the condition is known, else the
    hull of both."""
    cond, then, other = (ctx.input_bounds(i) for i in range(3))
    if then is None or other is None:
        return None
    if cond is not None and np.array_equal(cond[0], cond[1]):
        c = cond[0] != 0
        return [(np.where(c, then[0], other[0]), np.where(c, then[1], other[1]))]
    return [(np.minimum(then[0], other[0]), np.maximum(then[1], other[1]))]


def convert(ctx):
    """Convert's bounds: kept for an integer destination that holds them, else unknown."""
    got = ctx.input_bounds(0)
    target = ctx.attrs.get("destination_type")
    if got is None or target is None or not target.is_integral or target.is_dynamic:
        return None
    info = np.iinfo(target.dtype)
    lo, hi = got
    inside = (lo >= info.min) & (hi <= info.max)  # outside, the conversion wraps
    return [(np.where(inside, lo, -np.inf), np.where(inside, hi, np.inf))]


def reduce(fn, nonnegative: bool = False):
    """The ``bounds`` hook of a reduction whose interval rule is ``fn`` over each bound (sum,
    max, min; a product only of non-negative bounds)."""
    def rule(ctx):
        got, axes = ctx.input_bounds(0), ctx.input_value(1)
        if got is None or axes is None or not ctx.input_type(0).element_type.is_integral:
            return None
        lo, hi = got
        if nonnegative and lo.size and lo.min() < 0:
            return None
        ax = tuple(int(a) % max(lo.ndim, 1) for a in np.asarray(axes).reshape(-1)) \
            if lo.ndim else None
        keep = bool(ctx.attrs.get("keep_dims", False))
        with np.errstate(invalid="ignore", over="ignore"):
            out = [_clean(fn(x, axis=ax, keepdims=keep)) for x in (lo, hi)]
        return [tuple(out)]
    return rule
