"""Shape rules shared by many ops, over partial shapes (intervals and dynamic rank included).

Each function takes partial shapes (and plain attribute values) and returns the output's partial
shape, or raises :class:`irexec.errors.OpError` with a code and a sentence. The same functions
serve read-time inference (partial shapes) and the run-time checks of dynamic models (the
concrete shapes of a call, as static partial shapes), so both say the same thing.
"""

from __future__ import annotations

from collections.abc import Sequence

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape

_ONE = Dimension.static(1)


def normalize_axis(axis: int, rank: Dimension | int, what: str = "axis") -> int | None:
    """``axis`` in [0, rank); None when the rank is dynamic and the axis is not negative (it
    may still be fine). OpError IR306 outside [-rank, rank-1]; IR315 for a negative axis
    against a dynamic rank (OpenVINO's shape inference refuses that)."""
    if isinstance(rank, Dimension):
        if not rank.is_static:
            if axis < 0:
                raise OpError(f"{what} {axis} is negative but the data's rank is not known; a "
                              f"negative axis needs a static rank", code="IR315")
            return None
        rank = rank.min
    if not -rank <= axis < rank:
        allowed = f"[-{rank}, {rank - 1}]" if rank else "nothing: a scalar has no axes"
        raise OpError(f"{what} {axis} is out of range {allowed} for data of rank {rank}",
                      code="IR306")
    return axis % rank


def normalize_axes(axes: Sequence[int], rank: Dimension | int, what: str = "axis") \
        -> list[int] | None:
    """Each axis normalized (see :func:`normalize_axis`); None when the rank is dynamic."""
    out = [normalize_axis(int(a), rank, what) for a in axes]
    return None if any(a is None for a in out) else out


def _broadcast_dim(a: Dimension, b: Dimension) -> Dimension | None:
    """numpy's rule for one dim pair over intervals: a size of 1 stretches to the other; other
    sizes must be equal. The result spans every size some pair of sizes could give; None when
    no pair can broadcast."""
    if a.is_static and a.min == 1:
        return b
    if b.is_static and b.min == 1:
        return a
    if a.is_static and b.is_static:
        return a if a.min == b.min else None
    candidates = [d for d in (a.merge(b), b if a.contains(1) else None,
                              a if b.contains(1) else None) if d is not None]
    if not candidates:
        return None
    lo = min(d.min for d in candidates)
    hi = None if any(d.max is None for d in candidates) else max(d.max for d in candidates)
    return Dimension(lo, hi)


def broadcast_numpy(a: PartialShape, b: PartialShape) -> PartialShape:
    """numpy-style broadcasting of two partial shapes (right-aligned). OpError IR307 naming both
    shapes when they cannot broadcast."""
    if not a.rank_is_static or not b.rank_is_static:
        return PartialShape.dynamic()
    n = max(len(a), len(b))
    da = (_ONE,) * (n - len(a)) + a.dims
    db = (_ONE,) * (n - len(b)) + b.dims
    out = []
    for x, y in zip(da, db):
        d = _broadcast_dim(x, y)
        if d is None:
            raise OpError(f"shapes {a} and {b} cannot be broadcast together (numpy rules: "
                          f"dims must be equal or 1, aligned from the right)", code="IR307")
        out.append(d)
    return PartialShape._of(tuple(out))


def broadcast_pdpd(a: PartialShape, b: PartialShape, axis: int) -> PartialShape:
    """PaddlePaddle's rule: ``b`` broadcasts onto ``a`` starting at ``axis`` (-1: aligned
    right); the output has ``a``'s shape."""
    if not a.rank_is_static or not b.rank_is_static:
        return a
    if len(b) > len(a):
        raise OpError(f"shapes {a} and {b} cannot be broadcast (pdpd rules: the second input "
                      f"may not have a higher rank)", code="IR307")
    start = len(a) - len(b) if axis == -1 else axis
    if not 0 <= start <= len(a) - len(b):
        raise OpError(f"pdpd broadcast axis {axis} does not fit shape {b} into {a}", code="IR306")
    dims = list(b.dims)
    while dims and dims[-1].is_static and dims[-1].min == 1:  # trailing ones are dropped
        dims.pop()
    for i, d in enumerate(dims):
        target = a[start + i]
        if not (d.is_static and d.min == 1) and target.merge(d) is None:
            raise OpError(f"shapes {a} and {b} cannot be broadcast (pdpd rules, axis {axis}): "
                          f"dim {start + i} is {target}, not {d} or 1", code="IR307")
    return a


def broadcast(shapes: Sequence[PartialShape], mode: str = "numpy", axis: int = -1) \
        -> PartialShape:
    """The output shape of an element-wise op under ``auto_broadcast`` ``mode``: ``none``
    (every shape the same), ``numpy`` or ``pdpd`` (onto the first input, from ``axis``)."""
    out = shapes[0]
    for other in shapes[1:]:
        if mode == "none":
            merged = out.merge(other)
            if merged is None:
                raise OpError(f"shapes {out} and {other} differ, and auto_broadcast is none "
                              f"(inputs must have the same shape)", code="IR307")
            out = merged
        elif mode == "pdpd":
            out = broadcast_pdpd(out, other, axis)
        else:
            out = broadcast_numpy(out, other)
    return out


def reduce(shape: PartialShape, axes: Sequence[int] | None, keep_dims: bool) -> PartialShape:
    """The shape left after reducing ``axes`` (None: not known before running)."""
    if not shape.rank_is_static:
        return shape
    if axes is None:
        if keep_dims:
            return PartialShape([Dimension(0 if d.min == 0 else 1, d.max) if d.min <= 1 else
                                 Dimension(1, d.max) for d in shape])
        return PartialShape.dynamic()
    axes = set(normalize_axes(axes, len(shape)))
    if keep_dims:
        return PartialShape([_ONE if i in axes else d for i, d in enumerate(shape)])
    return PartialShape([d for i, d in enumerate(shape) if i not in axes])


def concat(shapes: Sequence[PartialShape], axis: int) -> PartialShape:
    """The shape of ``shapes`` joined along ``axis``: other dims must agree (IR307), the axis
    dims add up (interval bounds add)."""
    ranked = [s for s in shapes if s.rank_is_static]
    if not ranked:
        normalize_axis(axis, Dimension.dynamic())  # a negative axis needs a rank: IR315
        return PartialShape.dynamic()
    rank = len(ranked[0])
    for s in ranked:
        if len(s) != rank:
            raise OpError(f"inputs of rank {rank} and {len(s)} cannot be concatenated; every "
                          f"input must have the same rank", code="IR307")
    a = normalize_axis(axis, rank)
    out = list(ranked[0].dims)
    lo, hi = 0, 0
    for i, s in enumerate(shapes):
        if not s.rank_is_static:
            lo, hi = lo, None
            continue
        for d in range(rank):
            if d == a:
                continue
            merged = out[d].merge(s[d])
            if merged is None:
                raise OpError(f"input {i} has shape {s}, which differs from {ranked[0]} in dim "
                              f"{d}; inputs must agree on every dim but the axis {axis}",
                              code="IR307")
            out[d] = merged
        lo += s[a].min
        hi = None if hi is None or s[a].max is None else hi + s[a].max
    out[a] = Dimension(lo, hi)
    return PartialShape(out)


# --- sliding windows (convolution and pooling) --------------------------------------------------
#
# One axis of a sliding window: ``size`` input elements, padded by ``pad_begin`` and ``pad_end``,
# a kernel of ``kernel`` taps ``dilation`` apart (so it spans (kernel-1)*dilation+1 elements),
# moved ``stride`` elements at a time. Convolution and pooling share these rules; they take
# plain integers so kernels reuse them at run time, and ``window_dim`` lifts them to intervals.

def dilated(kernel: int, dilation: int) -> int:
    """The number of input elements one kernel spans."""
    return (kernel - 1) * dilation + 1


def same_padding(size: int, kernel: int, stride: int, dilation: int, upper: bool) \
        -> tuple[int, int]:
    """(pad_begin, pad_end) for ``auto_pad`` same_upper (``upper``) or same_lower: enough padding
    that ceil(size / stride) windows fit; an odd total puts the extra element at the end
    (same_upper) or at the beginning (same_lower)."""
    out = -(-size // stride)
    total = max((out - 1) * stride + dilated(kernel, dilation) - size, 0)
    small = total // 2
    return (small, total - small) if upper else (total - small, small)


def window_pads(sizes: Sequence[int | None], kernel: Sequence[int], strides: Sequence[int],
                dilations: Sequence[int], pads_begin: Sequence[int], pads_end: Sequence[int],
                auto_pad: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The padding actually applied on each spatial axis under ``auto_pad`` (explicit: the
    attributes; valid: none; same_upper/same_lower: computed from the size, 0 where the size is
    not known)."""
    n = len(kernel)
    if auto_pad == "valid":
        return (0,) * n, (0,) * n
    if auto_pad in ("same_upper", "same_lower"):
        pairs = [same_padding(s, k, st, d, auto_pad == "same_upper") if s is not None else (0, 0)
                 for s, k, st, d in zip(sizes, kernel, strides, dilations)]
        return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
    return tuple(pads_begin), tuple(pads_end)


def window_count(size: int, span: int, stride: int, pad_begin: int, pad_end: int,
                 rounding: str = "floor") -> int | None:
    """How many windows of ``span`` elements fit on one padded axis: ``floor`` keeps only whole
    windows; ``ceil`` adds a last partial one; ``ceil_torch`` adds it only when it starts before
    the end padding (PyTorch's rule). None when not even one window fits."""
    room = size + pad_begin + pad_end - span
    if room < 0:
        return None
    if rounding == "floor":
        return room // stride + 1
    count = -(-room // stride) + 1
    if rounding == "ceil_torch" and (count - 1) * stride >= size + pad_begin:
        count -= 1
    return count


def window_dim(dim: Dimension, span: int, stride: int, pad_begin: int, pad_end: int,
               rounding: str = "floor", axis: int = 0) -> Dimension:
    """``window_count`` over an interval of sizes. OpError IR346 when the window is longer than
    the padded axis for every size the dim allows."""
    hi = None if dim.max is None else window_count(dim.max, span, stride, pad_begin, pad_end,
                                                   rounding)
    if dim.max is not None and hi is None:
        padded = dim.max + pad_begin + pad_end
        raise OpError(f"the window spans {span} elements on spatial axis {axis} (dim {axis + 2}) "
                      f"but the input "
                      f"has only {padded} there after padding ({dim} + {pad_begin} + {pad_end})",
                      code="IR346")
    lo = window_count(dim.min, span, stride, pad_begin, pad_end, rounding)
    if lo is None:  # the smallest sizes fit no window: the first size that fits one
        lo = 1
    return Dimension(lo, hi)


def ceil_div_dim(dim: Dimension, stride: int) -> Dimension:
    """ceil(dim / stride) over an interval (the output of a same_* padded window)."""
    return Dimension(-(-dim.min // stride), None if dim.max is None else -(-dim.max // stride))
def product(dims: Sequence[Dimension]) -> Dimension:
    """The number of elements of a tensor with these dims: the product of their intervals (a
    static 0 makes it 0 whatever the others are)."""
    if any(d.max == 0 for d in dims):
        return Dimension.static(0)
    lo, hi = 1, 1
    for d in dims:
        lo *= d.min
        hi = None if hi is None or d.max is None else hi * d.max
    return Dimension(lo, hi)


def hull(dims: Sequence[Dimension]) -> Dimension:
    """The smallest interval holding every size of every dim (one dim is one of these, which
    one not known yet)."""
    lo = min(d.min for d in dims)
    hi = None if any(d.max is None for d in dims) else max(d.max for d in dims)
    return Dimension(lo, hi)


def shape_of(sizes: Sequence[int]) -> PartialShape:
    """A static PartialShape."""
    return PartialShape._of(tuple(Dimension.static(int(s)) for s in sizes))
