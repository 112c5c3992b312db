"""Range-1 and Range-4: the numbers start, start+step, ... up to (not including) stop."""

import functools
import math

import numpy as np

from irexec.diagnostics.codes import ERROR, Code
from irexec.errors import OpError
from irexec.ir.element_type import from_dtype
from irexec.ir.shape import Dimension, PartialShape
from irexec.kernels.convert import convert
from irexec.ops.spec import register
from irexec.ops.rules import check_output_size
from irexec.ops.spec import NUMERIC, SCALAR, Attr, Input, Op, OpSpec, Output, TensorType, TypeVar

CODE = Code("IR335", "range-values", ERROR,
            "give Range finite start and stop and a finite, non-zero step")

T = TypeVar("T", NUMERIC)


def _scalar(value) -> float:
    v = np.asarray(value).reshape(-1)
    if v.size != 1:
        raise OpError(f"start, stop and step must be scalars, not {v.size} values", code="IR305")
    return float(v[0])


@functools.lru_cache(maxsize=16)
def _limits(dtype: np.dtype) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _plain_int(value) -> bool:
    """Whether a Range input is a tensor of numpy's signed or unsigned integers."""
    return type(value) is np.ndarray and value.dtype.kind in "iu" and value.dtype.isnative


def _checked(start: float, stop: float, step: float) -> None:
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if not math.isfinite(v):
            raise OpError(f"{name} is {v}; Range needs finite numbers", code="IR335")
    if step == 0:
        raise OpError("step is 0; Range needs a non-zero step", code="IR335")


def count(start: float, stop: float, step: float, integral: bool) -> int:
    """OpenVINO's element count: the inputs as doubles (truncated for an integer output),
    max(ceil((stop - start) / step), 0)."""
    if integral:
        start, stop, step = math.trunc(start), math.trunc(stop), math.trunc(step)
        if step == 0:
            raise OpError("step truncates to 0 for an integer output; Range needs a non-zero "
                          "step", code="IR335")
    if (step > 0 and start >= stop) or (step < 0 and start <= stop):
        return 0
    return int(math.ceil(abs(stop - start) / abs(step)))


_SAME_INT = (np.dtype(np.int64), np.dtype(np.int32))
_SAFE = 1 << 30  # bounds under which no value of a fast-path range wraps (in int32 either)


def run(start, stop, step, out_type) -> np.ndarray:
    """The numbers in ``out_type`` (an ElementType): an integer output adds step repeatedly,
    wrapping as C++ does; a float one computes start + i * step in its own precision, or for
    f16 and bf16 in f32 from the inputs as given, rounded once (as OpenVINO's CPU plugin)."""
    a, b, c = _scalar(start), _scalar(stop), _scalar(step)
    _checked(a, b, c)
    integral = out_type.is_integral
    n = count(a, b, c, integral)
    check_output_size((n,), 8)  # the widest intermediate
    dtype = out_type.dtype
    if integral and _plain_int(start) and _plain_int(step) and dtype.kind == "i":
        # integer inputs and output (a length, positions): start + i * step, when every
        # value fits the output type nothing wraps, so numpy's own arange is exact
        ia, ic = int(start.reshape(-1)[0]), int(step.reshape(-1)[0])  # exact, not via float
        low, high = _limits(dtype)
        if low <= min(ia, ia + (n - 1) * ic) and max(ia, ia + (n - 1) * ic) <= high:
            return np.arange(ia, ia + n * ic, ic, dtype=dtype) if n else np.zeros(0, dtype)
    first = convert(np.asarray(start).reshape(()), out_type)
    delta = convert(np.asarray(step).reshape(()), out_type)
    if integral:
        i = np.arange(n, dtype=np.uint64)
        wide = first.astype(np.int64).astype(np.uint64) + i * delta.astype(np.int64).astype(
            np.uint64)
        return wide.astype(dtype)
    if dtype.itemsize < 4:  # f16, bf16: in f32 from the inputs as given, rounded once
        a32 = np.asarray(start).astype(np.float32).reshape(())
        c32 = np.asarray(step).astype(np.float32).reshape(())
        return (a32 + np.arange(n).astype(np.float32) * c32).astype(dtype)
    return first + np.arange(n).astype(dtype) * delta


def _infer(ctx, out_type):
    if out_type.kind not in ("int", "uint", "float", "dynamic"):
        ctx.error("IR302", f"output_type is {out_type}; Range makes numbers (an integer or "
                           f"floating-point type)")
    values = [ctx.input_value(i) for i in range(3)]
    if all(v is not None for v in values):
        try:
            a, b, c = (_scalar(v) for v in values)
            _checked(a, b, c)
            n = count(a, b, c, out_type.is_integral)
        except OpError as e:
            ctx.error(e.code, str(e))
        return [TensorType(out_type, PartialShape([n]))]
    for i, name in enumerate(("start", "stop", "step")):
        if values[i] is not None:
            try:
                v = _scalar(values[i])
            except OpError as e:
                ctx.error(e.code, str(e))
            if not math.isfinite(v) or (name == "step" and v == 0):
                ctx.error("IR335", f"{name} is {v}; Range needs finite numbers and a non-zero "
                                   f"step")
    return [TensorType(out_type, PartialShape([_length(ctx, out_type)]))]


def _length(ctx, out_type) -> Dimension:
    """The length's interval from the bounds of start and stop (a step known exactly):
    Range(0, ShapeOf(x)[1], 1) of a dim 1..8 has 1..8 elements."""
    got = [ctx.input_bounds(i) for i in range(3)]
    if any(g is None for g in got) or got[2][0].size != 1 or got[2][0].item() != got[2][1].item():
        return Dimension.dynamic()
    step = got[2][0].item()
    if step == 0 or not math.isfinite(step):
        return Dimension.dynamic()
    (lo_a, hi_a), (lo_b, hi_b) = ((g[0].item(), g[1].item()) for g in got[:2])
    few = (hi_a, lo_b) if step > 0 else (lo_a, hi_b)
    many = (lo_a, hi_b) if step > 0 else (hi_a, lo_b)

    def n(a, b):
        if not (math.isfinite(a) and math.isfinite(b)):
            return None
        return count(a, b, step, out_type.is_integral)
    low, high = n(*few), n(*many)
    return Dimension(low or 0, high)


@register
class Range1(Op):
    spec = OpSpec(
        type="Range",
        since=1,
        until=3,
        inputs=(Input("start", T, SCALAR, doc="the first number"),
                Input("stop", T, SCALAR, doc="the bound, not included"),
                Input("step", T, SCALAR, doc="the increment; not zero")),
        outputs=(Output("output", "start, start+step, ... while before stop", type=T),),
        doc="A 1-D tensor of evenly spaced numbers: max(ceil((stop-start)/step), 0) of them, "
            "of the inputs' element type.",
        codes=(CODE,),
    )

    @staticmethod
    def infer(ctx):
        return _infer(ctx, ctx.type_var("T"))

    @staticmethod
    def kernel(start, stop, step):
        return run(start, stop, step, from_dtype(start.dtype))


@register
class Range4(Op):
    spec = OpSpec(
        type="Range",
        since=4,
        until=16,
        attrs=(Attr("output_type", "element_type", doc="the output's element type; start, "
                                                       "stop and step are converted to it"),),
        inputs=(Input("start", NUMERIC, SCALAR, doc="the first number"),
                Input("stop", NUMERIC, SCALAR, doc="the bound, not included"),
                Input("step", NUMERIC, SCALAR, doc="the increment; not zero")),
        outputs=(Output("output", "start, start+step, ... while before stop",
                        type="@output_type"),),
        doc="A 1-D tensor of evenly spaced numbers of output_type: start, stop and step are "
            "converted to output_type first (truncated for an integer type); "
            "max(ceil((stop-start)/step), 0) of them.",
    )

    @staticmethod
    def infer(ctx):
        return _infer(ctx, ctx.attrs["output_type"])

    @staticmethod
    def kernel(start, stop, step, *, output_type):
        return run(start, stop, step, output_type)
