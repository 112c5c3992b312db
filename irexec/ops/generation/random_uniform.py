"""RandomUniform-8: uniform random numbers in [min, max), bit for bit OpenVINO's for given seeds.

The words come from irexec/kernels/philox.py (Philox4x32-10 for alignment="tensorflow",
MT19937 for "pytorch"); docs/numerics.md describes the streams and how each output type is
made from them. A compiled model keeps each layer's place in its stream, so a second call
continues it, as OpenVINO's compiled models do (docs/compatibility.md says by how much).
"""

from __future__ import annotations

import math

import numpy as np

from irexec.diagnostics.codes import ERROR, Code
from irexec.errors import OpError
from irexec.ir.shape import PartialShape
from irexec.kernels import buffers, philox
from irexec.ops.domains import SmallInts, as_int64
from irexec.ops.generation.common import SEED, draw_seed, seeds_warning
from irexec.ops.rules import check_output_size
from irexec.ops.spec import (ANY, SCALAR_OR_VECTOR, SHAPE_INDEX, VECTOR, Attr, Input, Op, OpSpec,
                             Output, TensorType, register)

RANGE = Code("IR387", "random-range", ERROR,
             "give RandomUniform a min below its max (neither nan): [min, max) must not be empty")

KINDS = ("i32", "i64", "f16", "bf16", "f32", "f64")


def _bound(value, name: str):
    v = np.asarray(value).reshape(-1)
    if v.size != 1:
        raise OpError(f"{name} holds {v.size} values; it must hold one", code="IR321")
    return v.reshape(())


def _below(mn, mx) -> bool:
    """min < max, exactly for integers (OpenVINO compares as doubles; equal for every value
    a double holds exactly)."""
    if mn.dtype.kind in "iu":
        return int(mn) < int(mx)
    return bool(float(mn) < float(mx))


def _check_range(mn, mx) -> None:
    if not _below(mn, mx):
        raise OpError(f"min ({mn.item()}) is not below max ({mx.item()}); RandomUniform draws "
                      f"from [min, max)", code="IR387")


def _dims(shape) -> tuple[int, ...]:
    dims = as_int64(np.asarray(shape)).reshape(-1)
    if (dims < 0).any():
        raise OpError(f"the output shape {dims.tolist()} holds a negative size", code="IR327")
    return tuple(int(d) for d in dims)


@register
class RandomUniform(Op):
    spec = OpSpec(
        type="RandomUniform",
        since=8,
        until=16,
        attrs=(Attr("output_type", "element_type",
                    doc="the output's type: i32, i64, f16, bf16, f32 or f64 (min and max have "
                        "it too)"),
               Attr("global_seed", "uint", 0,
                    doc="Philox's key (tensorflow) or MT19937's seed (pytorch); 0 with op_seed 0: "
                        "a fresh seed every call"),
               Attr("op_seed", "uint", 0, doc="Philox's counter (tensorflow); unused by pytorch"),
               Attr("alignment", "enum", "tensorflow", values=("tensorflow", "pytorch"),
                    doc="whose generator: TensorFlow's Philox4x32-10 or PyTorch's MT19937")),
        inputs=(Input("shape", SHAPE_INDEX, VECTOR, SmallInts(low=0, high=4),
                      doc="the output's shape; sizes >= 0"),
                Input("minval", ANY, SCALAR_OR_VECTOR, SmallInts(low=-2, high=-1),
                      doc="the lowest value (included); one element of output_type"),
                Input("maxval", ANY, SCALAR_OR_VECTOR, SmallInts(low=1, high=2),
                      doc="the bound (excluded); one element of output_type, above minval")),
        outputs=(Output("output", "of the shape given by shape", type="@output_type"),),
        doc="Uniform random numbers in [minval, maxval): OpenVINO's generator bit for bit for "
            "given seeds (docs/numerics.md). A compiled model continues its stream from call to "
            "call.",
        codes=(RANGE, SEED),
        folds=False,
        keeps_state=True,
    )

    @staticmethod
    def infer(ctx):
        out = ctx.attrs["output_type"]
        if out.name not in KINDS:
            ctx.error("IR302", f"output_type is {out}; RandomUniform makes {', '.join(KINDS)}")
        for i, name in ((1, "minval"), (2, "maxval")):
            et = ctx.input_type(i).element_type
            if not et.is_dynamic and et != out:
                ctx.error("IR304", f"{name} is {et}; it must be of output_type ({out})")
            shape = ctx.input_shape(i)
            if shape.rank_is_static and len(shape) == 1 and not shape[0].contains(1):
                ctx.error("IR321", f"{name} has shape {shape}; it must hold one element")
        values = ctx.input_value(1), ctx.input_value(2)
        if values[0] is not None and values[1] is not None:
            try:
                _check_range(_bound(values[0], "minval"), _bound(values[1], "maxval"))
            except OpError as e:
                ctx.error(e.code, str(e))
        seeds_warning(ctx)
        shape_value = ctx.input_value(0)
        if shape_value is not None:
            try:
                _dims(shape_value)
            except OpError as e:
                ctx.error(e.code, str(e))
        dims = ctx.input_as_shape(0)
        if dims is None:
            return [TensorType(out, PartialShape.dynamic())]
        return [TensorType(out, dims)]

    @staticmethod
    def kernel(shape, minval, maxval, *, output_type, global_seed=0, op_seed=0,
               alignment="tensorflow", state=None):
        dims = _dims(shape)
        mn, mx = _bound(minval, "minval"), _bound(maxval, "maxval")
        _check_range(mn, mx)
        dtype = output_type.dtype
        check_output_size(dims, dtype.itemsize)
        count = math.prod(dims)
        if count == 0:
            return np.empty(dims, dtype)
        if global_seed == 0 and op_seed == 0:
            global_seed = draw_seed()
        out = buffers.empty(dims, dtype)
        start = (0, 0)
        if state is not None:
            with state.lock:
                start = state.values.get("stream", (0, 0))
                state.values["stream"] = philox.next_state(start, count, alignment)
        philox.uniform(count, output_type.name, mn, mx, global_seed, op_seed, alignment, start,
                       out=out.reshape(-1))
        return out

    @staticmethod
    def openvino_refuses(node) -> str | None:
        attrs = node.attrs
        if attrs.get("global_seed", 0) == 0 and attrs.get("op_seed", 0) == 0:
            return "both seeds are 0: OpenVINO draws a new seed on every run"
        et = attrs["output_type"].name
        if et in ("f16", "bf16", "f64") or (et, attrs.get("alignment", "tensorflow")) in (
                ("i64", "tensorflow"), ("i64", "pytorch")):
            return (f"OpenVINO's CPU plugin makes {et} RandomUniform values its own way, not "
                    f"as its reference does (docs/compatibility.md)")
        return None
