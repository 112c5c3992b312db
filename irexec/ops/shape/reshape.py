"""Reshape-1: the same elements in the same order under another shape (a view, never a copy of
contiguous data).

The target holds sizes, ``-1`` once at most (computed so that the element count stays the same)
and, with ``special_zero``, ``0`` to copy the data's dim at that index. Where the specification is
silent OpenVINO settles it: a ``-1`` beside a zero-size dim of an empty tensor is 1, and a scalar
target (value 1) makes a scalar.
"""

from __future__ import annotations

import functools
import math

from irexec.errors import OpError
from irexec.ir import shape_rules
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.domains import TargetShape
from irexec.ops.spec import register, same_bytes
from irexec.ops.spec import (ANY, INTEGER, SCALAR_OR_VECTOR, Attr, Input, Op, OpSpec, Output,
                             TensorType, TypeVar)
from irexec.ops.values import ints

T = TypeVar("T", ANY)
EXACT = float(1 << 53)  # bounds beyond are no bounds (float64 holds every integer up to here)


def _pattern_error(values, message: str, code: str = "IR327") -> OpError:
    return OpError(f"target shape {list(values)} {message}", code=code)


def _check_pattern(values: tuple[int, ...], rank: int | None, special_zero: bool) -> None:
    """The rules a target shape obeys whatever the data: sizes >= -1, -1 once, and each copying
    0 at an index the data has."""
    if values.count(-1) > 1:
        raise _pattern_error(values, "holds -1 more than once; at most one size is computed")
    bad = [v for v in values if v < -1]
    if bad:
        raise _pattern_error(values, f"holds {bad[0]}; sizes are >= 0, or -1 for the one "
                                     f"computed size")
    if special_zero and rank is not None:
        beyond = [i for i, v in enumerate(values) if v == 0 and i >= rank]
        if beyond:
            raise _pattern_error(values, f"has 0 at index {beyond[0]}, which copies dim "
                                         f"{beyond[0]} of the data, but the data has rank {rank}")


def target_shape(shape: PartialShape, values: tuple[int, ...], special_zero: bool) -> PartialShape:
    """The output shape of a reshape of data of partial shape ``shape`` to the target
    ``values``; OpError (IR327 for a malformed target, IR326 for a wrong element count)."""
    rank = len(shape) if shape.rank_is_static else None
    _check_pattern(values, rank, special_zero)
    copied = {i for i, v in enumerate(values) if v == 0 and special_zero}
    if rank is None:
        return PartialShape([Dimension.dynamic() if i in copied or v == -1 else v
                             for i, v in enumerate(values)])
    out = [shape[i] if i in copied else None if v == -1 else Dimension.static(v)
           for i, v in enumerate(values)]
    # A copied dim appears on both sides: it cancels out of the element count.
    rest_in = shape_rules.product([d for i, d in enumerate(shape) if i not in copied])
    known_out = math.prod(v for i, v in enumerate(values) if i not in copied and v != -1)
    if -1 in values:
        at = values.index(-1)
        if known_out == 0:
            if rest_in.min > 0:
                raise _pattern_error(values, f"cannot size its -1: the other sizes make 0 "
                                             f"elements but the data {shape} is not empty",
                                     "IR326")
            out[at] = Dimension.static(1)  # OpenVINO's choice for an empty tensor
        elif rest_in.is_static:
            if rest_in.min % known_out:
                raise _pattern_error(values, f"cannot size its -1: the data {shape} holds "
                                             f"{rest_in.min} elements (besides copied dims), not "
                                             f"a multiple of {known_out}", "IR326")
            out[at] = Dimension.static(rest_in.min // known_out)
        else:
            hi = None if rest_in.max is None else rest_in.max // known_out
            lo = -(-rest_in.min // known_out)
            if hi is not None and hi < lo:
                raise _pattern_error(values, f"cannot size its -1: no element count of the "
                                             f"data {shape} is a multiple of {known_out}", "IR326")
            out[at] = Dimension(lo, hi)
    elif not rest_in.contains(known_out):
        raise _pattern_error(values, f"makes {known_out} elements (besides copied dims) but the "
                                     f"data {shape} holds {rest_in}; a reshape keeps every "
                                     f"element", "IR326")
    return PartialShape._of(tuple(out))


def bounded_target(shape: PartialShape, lows, highs, special_zero: bool) -> PartialShape:
    """The output shape for a target known by a lower and an upper bound per element (computed
    from a dynamic shape: irexec/ops/bounds.py). An element whose bounds agree is its value;
    one whose bounds are sizes (>= 0; > 0 with special_zero) is a size in that interval; any
    other might be -1 or a copying 0, and leaves its dim, and the element count, open. Nothing
    some value within the bounds allows is refused."""
    elements: list = []
    for lo, hi in zip(lows.reshape(-1).tolist(), highs.reshape(-1).tolist()):
        if lo == hi and abs(lo) <= EXACT:
            elements.append(int(lo))
        elif lo >= (1 if special_zero else 0):
            elements.append(Dimension(int(lo), int(hi) if hi <= EXACT else None))
        else:
            elements.append(None)
    known = tuple(e for e in elements if isinstance(e, int))
    rank = len(shape) if shape.rank_is_static else None
    shown = "[" + ", ".join("?" if e is None else str(e) for e in elements) + "]"
    if known.count(-1) > 1 or any(v < -1 for v in known):
        _check_pattern(known, None, False)
    copied = {i for i, e in enumerate(elements) if e == 0 and special_zero}
    if special_zero and rank is not None and any(i >= rank for i in copied):
        _check_pattern(tuple(0 if i in copied else 1 for i in range(len(elements))), rank, True)
    out = [shape[i] if i in copied and rank is not None else
           Dimension.dynamic() if e is None or e == -1 or i in copied else
           Dimension.static(e) if isinstance(e, int) else e for i, e in enumerate(elements)]
    if rank is None or None in elements:
        return PartialShape._of(tuple(out))
    rest_in = shape_rules.product([d for i, d in enumerate(shape) if i not in copied])
    minus = elements.index(-1) if -1 in elements else None
    rest_out = shape_rules.product([d for i, d in enumerate(out) if i not in copied
                                    and i != minus])
    if minus is None:
        if rest_in.merge(rest_out) is None:
            raise OpError(f"target shape {shown} makes {rest_out} elements (besides copied "
                          f"dims) but the data {shape} holds {rest_in}; a reshape keeps every "
                          f"element", code="IR326")
    elif rest_out.max == 0:
        if rest_in.min > 0:
            raise OpError(f"target shape {shown} cannot size its -1: the other sizes make 0 "
                          f"elements but the data {shape} is not empty", code="IR326")
        out[minus] = Dimension.static(1)
    else:
        lo = -(-rest_in.min // rest_out.max) if rest_out.max is not None else 0
        hi = rest_in.max // rest_out.min if rest_in.max is not None and rest_out.min else None
        if hi is not None and hi < lo:
            raise OpError(f"target shape {shown} cannot size its -1: no element count of the "
                          f"data {shape} fits", code="IR326")
        out[minus] = Dimension(lo, hi)
    return PartialShape._of(tuple(out))


def _unknown_target(pattern_shape: PartialShape) -> PartialShape:
    """The output when the target's values are not known: as many dynamic dims as it has."""
    if not pattern_shape.rank_is_static:
        return PartialShape.dynamic()
    if len(pattern_shape) == 0:
        return PartialShape([])
    n = pattern_shape[0]
    return PartialShape([Dimension.dynamic()] * n.min) if n.is_static else PartialShape.dynamic()


@register
class Reshape(Op):
    spec = OpSpec(
        type="Reshape",
        since=1,
        until=16,
        attrs=(Attr("special_zero", "bool",
                    doc="true: a 0 in the target copies the data's dim at that index; false: 0 "
                        "is a size"),),
        inputs=(
            Input("data", T, doc="the tensor to reshape"),
            Input("shape", INTEGER, SCALAR_OR_VECTOR, domain=TargetShape(0),
                  doc="the target shape: sizes, -1 once at most (computed), 0 (copied with "
                      "special_zero); a scalar 1 makes a scalar"),
        ),
        outputs=(Output("output", "the data's elements in the same order, in the target shape",
                        type=T),),
        doc="Changes a tensor's shape, keeping its elements and their order.",
        exact=True,
        returns_view=True,  # the plan copies it where the caller must own it
        reshapes=True,
        output_bytes=same_bytes,
    )

    @staticmethod
    def infer(ctx):
        data = ctx.input_type(0)
        pattern = ctx.input_value(1)
        bounds = ctx.input_bounds(1) if pattern is None else None
        if pattern is None and bounds is not None and ctx.input_shape(1).rank_is_static \
                and len(ctx.input_shape(1)) == 1:
            shape = bounded_target(data.shape, bounds[0], bounds[1], ctx.attrs["special_zero"])
        elif pattern is None:
            shape = _unknown_target(ctx.input_shape(1))
        else:
            values = ints(pattern)
            if pattern.ndim == 0:
                if values[0] != 1:
                    ctx.error("IR327", f"a scalar target shape must be 1 (a scalar result), "
                                       f"not {values[0]}")
                values = ()
            try:
                shape = target_shape(data.shape, values, ctx.attrs["special_zero"])
            except OpError as e:
                ctx.error(e.code, str(e))
        return [TensorType(data.element_type, shape)]

    @staticmethod
    def kernel(data, shape, *, special_zero):
        return data.reshape(_sizes(data.shape, ints(shape) if shape.ndim else (), special_zero))


@functools.lru_cache(maxsize=1024)  # a model reshapes the same shapes on every call
def _sizes(dims: tuple[int, ...], values: tuple[int, ...], special_zero: bool) -> tuple[int, ...]:
    """The output dims of data of ``dims`` reshaped to the target ``values``."""
    sizes = [dims[i] if v == 0 and special_zero else v for i, v in enumerate(values)]
    if -1 in sizes:
        at = sizes.index(-1)
        known = math.prod(s for i, s in enumerate(sizes) if i != at)
        sizes[at] = math.prod(dims) // known if known else 1
    return tuple(sizes)

