"""Broadcast-1 and Broadcast-3: replicate a tensor to a target shape.

Modes: ``numpy`` (the data's dims, aligned right, equal the target's or are 1: the output has the
target shape), ``explicit`` (``axes_mapping`` says which output axis each data axis becomes, in
increasing order; the other output axes replicate), and in Broadcast-3 ``bidirectional`` (as
``data * ones(target_shape)``: either side's 1 stretches). ``pdpd`` reads as ``numpy`` (its axis
is not written in IR files: -1, aligned right). ``none`` is OpenVINO's other name for
``explicit``. Target sizes are >= 0 (IR327); a data dim that does not fit is IR307.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.ir.shape_rules import broadcast_numpy
from irexec.kernels import buffers, numeric
from irexec.ops.domains import ExpandedShape, UniqueAxes
from irexec.ops.openvino_cpu import refuses
from irexec.ops.spec import UNKNOWN_BYTES, register
from irexec.ops.spec import (ANY, INTEGER, SCALAR_OR_VECTOR, VECTOR, Attr, Input, Op, OpSpec,
                             Output, TensorType, TypeVar)
from irexec.ops.values import ints

T = TypeVar("T", ANY)
_ONE = Dimension.static(1)


def _mode(attrs) -> str:
    mode = attrs["mode"]
    return {"none": "explicit", "pdpd": "numpy"}.get(mode, mode)


def one_directional(data: PartialShape, target: PartialShape) -> PartialShape:
    """numpy mode: the target, each data dim (aligned right) equal to its target dim or 1."""
    if len(data) > len(target):
        raise OpError(f"the data {data} has more dims than the target shape {target}; numpy "
                      f"broadcasting only adds dims", code="IR307")
    out = list(target.dims)
    offset = len(target) - len(data)
    for i, d in enumerate(data):
        t = target[offset + i]
        if d.is_static and d.min == 1:
            continue  # stretches to the target dim
        if t.is_static and t.min == 1:
            merged = t if d.contains(1) else None  # only a data dim of 1 fits a target 1
        else:
            merged = t.merge(d)
        if merged is None:
            raise OpError(f"data dim {i} ({d}) cannot broadcast to target dim {offset + i} ({t}) "
                          f"of {target}: it must equal it or be 1", code="IR307")
        out[offset + i] = merged
    return PartialShape._of(tuple(out))


def explicit(data: PartialShape, target: PartialShape, mapping: tuple[int, ...]) -> PartialShape:
    if len(mapping) != len(data):
        raise OpError(f"axes_mapping {list(mapping)} has {len(mapping)} values but the data "
                      f"{data} has rank {len(data)}; it maps every data axis", code="IR307")
    for a in mapping:
        if not 0 <= a < len(target):
            raise OpError(f"axes_mapping {list(mapping)} names axis {a}, outside the target "
                          f"shape {target} (rank {len(target)})", code="IR306")
    if any(b <= a for a, b in zip(mapping, mapping[1:])):
        raise OpError(f"axes_mapping {list(mapping)} is not increasing; data axes keep their "
                      f"order", code="IR308")
    out = list(target.dims)
    for i, a in enumerate(mapping):
        d, t = data[i], target[a]
        if d.is_static and d.min == 1:
            continue
        merged = t.merge(d)
        if merged is None:
            raise OpError(f"data dim {i} ({d}) cannot broadcast to target dim {a} ({t}) of "
                          f"{target}: it must equal it or be 1", code="IR307")
        out[a] = merged
    return PartialShape._of(tuple(out))


def target_values(values) -> tuple[int, ...]:
    sizes = ints(values)
    bad = [v for v in sizes if v < 0]
    if bad:
        raise OpError(f"target shape {list(sizes)} holds {bad[0]}; sizes are >= 0",
                      code="IR327")
    return sizes


def infer_broadcast(ctx):
    data = ctx.input_type(0)
    mode = _mode(ctx.attrs)
    if mode == "explicit" and ctx.num_inputs < 3:
        ctx.error("IR303", "mode explicit needs the axes_mapping input (the third)")
    values = ctx.input_value(1)
    if values is None:
        # Bounds of a computed shape (irexec/ops/bounds.py), or as many dynamic dims as the
        # target has; nothing when not even its length is known.
        target = ctx.input_as_shape(1)
        if target is None:
            return [TensorType(data.element_type, PartialShape.dynamic())]
        if mode == "bidirectional" and data.shape.rank_is_static and len(data.shape) > len(
                target):
            target = PartialShape([None] * (len(data.shape) - len(target)) + list(target))
    else:
        target = PartialShape(target_values(values))
    shape = data.shape
    if not shape.rank_is_static:
        if mode == "bidirectional":
            return [TensorType(data.element_type, PartialShape.dynamic())]
        return [TensorType(data.element_type, target)]
    if mode == "bidirectional":
        return [TensorType(data.element_type, broadcast_numpy(shape, target))]
    if mode == "explicit":
        mapping = ctx.input_value(2)
        if mapping is None:
            return [TensorType(data.element_type, target)]
        return [TensorType(data.element_type, explicit(shape, target, ints(mapping)))]
    return [TensorType(data.element_type, one_directional(shape, target))]


@functools.lru_cache(maxsize=256)
def _both(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """``np.broadcast_shapes(a, b)`` in plain Python (numpy's makes arrays to find it), for the
    few shapes a model uses; ValueError where numpy's does."""
    return numeric.broadcast_dims(a, b)


def broadcast(data, target_shape, axes_mapping=None, *, mode):
    mode = {"none": "explicit", "pdpd": "numpy"}.get(mode, mode)
    target = ints(target_shape)
    if mode == "explicit":
        placed = [1] * len(target)
        for i, a in enumerate(ints(axes_mapping)):
            placed[a] = data.shape[i]
        source = data.reshape(placed)
        shape = tuple(target)
    else:
        source = data
        shape = tuple(target) if mode == "numpy" else _both(data.shape, tuple(target))
    out = buffers.empty(shape, data.dtype)
    if out.size:
        np.copyto(out, source)
    return out


def broadcast_bytes(data, target_shape, axes_mapping=None, *, mode) -> int:
    """``output_bytes``: the target's elements, or (bidirectional) the larger of the data's
    and the target's size on each dim; a negative size is for the full check to refuse."""
    target = ints(target_shape)
    if any(t < 0 for t in target):
        return UNKNOWN_BYTES
    if mode == "bidirectional":
        dims = list(data.shape)
        width = max(len(dims), len(target))
        dims = [1] * (width - len(dims)) + dims
        target = [1] * (width - len(target)) + list(target)
        target = [max(d, t) for d, t in zip(dims, target)]
    return math.prod(target) * data.itemsize


@register
class Broadcast1(Op):
    spec = OpSpec(
        type="Broadcast", since=1, until=2,
        attrs=(Attr("mode", "enum", default="numpy", values=("numpy", "explicit", "none", "pdpd"),
                    doc="numpy (aligned right), explicit (by axes_mapping; none is its other "
                        "name) or pdpd (read as numpy)"),),
        inputs=(
            Input("data", T, doc="the tensor to replicate"),
            Input("target_shape", INTEGER, VECTOR, domain=ExpandedShape(0),
                  doc="the output shape (sizes >= 0)"),
            Input("axes_mapping", INTEGER, SCALAR_OR_VECTOR, domain=UniqueAxes(0), optional=True,
                  doc="explicit mode: the output axis of each data axis, increasing"),
        ),
        outputs=(Output("output", "the data replicated to the target shape", type=T),),
        doc="Replicates a tensor to a target shape.", exact=True,
        output_bytes=broadcast_bytes)
    openvino_refuses = refuses()
    kernel = staticmethod(broadcast)

    @staticmethod
    def infer(ctx):
        return infer_broadcast(ctx)


@register
class Broadcast3(Op):
    spec = OpSpec(
        type="Broadcast", since=3, until=16,
        attrs=(Attr("mode", "enum", default="numpy",
                    values=("numpy", "explicit", "bidirectional", "none", "pdpd"),
                    doc="numpy (aligned right), explicit (by axes_mapping; none is its other "
                        "name), bidirectional (as data * ones(target_shape)) or pdpd (read as "
                        "numpy)"),),
        inputs=Broadcast1.spec.inputs,
        outputs=(Output("output", "the data replicated to the target shape (bidirectional: "
                                  "to both shapes broadcast together)", type=T),),
        doc="Replicates a tensor to a target shape.", exact=True,
        output_bytes=broadcast_bytes)
    openvino_refuses = refuses()
    kernel = staticmethod(broadcast)

    @staticmethod
    def infer(ctx):
        return infer_broadcast(ctx)
