"""ConvertPromoteTypes-14: convert two tensors to their common element type.

The common type follows OpenVINO's promotion rules (its spec and shape inference): booleans give
way to numbers, integers to floats; two integers promote to one that holds both ranges (signed
and unsigned: a signed type of twice the unsigned width; u64 with a signed type: the
``u64_integer_promotion_target``); two floats to the wider. Without ``promote_unsafe``, a
promotion that could lose values or widen bits is refused (IR323)."""

from __future__ import annotations

from irexec.diagnostics.codes import ERROR, Code
from irexec.ir import element_type as et_table
from irexec.ir.element_type import ElementType
from irexec.kernels.convert import convert
from irexec.ops.spec import register
from irexec.ops.spec import Attr, Input, Op, OpSpec, Output, TensorType, TypeSet

SUPPORTED = ("boolean", "f16", "f32", "f64", "i4", "i8", "i16", "i32", "i64", "u1", "u4", "u8",
             "u16", "u32", "u64", "f8e4m3", "f8e5m2", "bf16")
_INTS = {4: "i4", 8: "i8", 16: "i16", 32: "i32", 64: "i64"}


class Refused(Exception):
    """A promotion the attributes do not allow; the message says why."""


def _signed(et: ElementType) -> bool:
    return et.kind == "int" or et.is_real


def common_type(a: ElementType, b: ElementType, *, promote_unsafe: bool,
                pytorch_scalar_promotion: bool, u64_integer_promotion_target: ElementType,
                a_scalar: bool = False, b_scalar: bool = False) -> ElementType:
    """The type both inputs convert to; Refused when the attributes forbid it."""
    if a.is_dynamic or b.is_dynamic:
        return ElementType.dynamic
    if a == b:
        return a
    if a.kind == "boolean":
        return b
    if b.kind == "boolean":
        return a
    if a.is_real != b.is_real:
        real, integer = (a, b) if a.is_real else (b, a)
        if not promote_unsafe and real.bits < 2 * integer.bits:
            raise Refused(f"{integer} cannot be promoted safely to {real} (a float needs at "
                          f"least twice the integer's bits); set promote_unsafe")
        return real
    if pytorch_scalar_promotion and a_scalar != b_scalar:
        target, scalar = (b, a) if a_scalar else (a, b)
        if not promote_unsafe and not (
                (_signed(target) == _signed(scalar) and target.bits >= scalar.bits)
                or (_signed(target) and not _signed(scalar) and target.bits * 2 >= scalar.bits)):
            raise Refused(f"the scalar's {scalar} does not fit the tensor's {target} by the safe "
                          f"rules; set promote_unsafe")
        return target
    if _signed(a) != _signed(b):
        unsigned, signed = (b, a) if _signed(a) else (a, b)
        if unsigned.bits <= 32 and (promote_unsafe or unsigned.bits * 2 <= signed.bits):
            return et_table.from_name(_INTS[max(unsigned.bits * 2, signed.bits)])
        if not promote_unsafe:
            wider = (f"{_INTS[2 * unsigned.bits]} would widen {signed}" if unsigned.bits <= 32
                     else "no signed integer holds u64")
            raise Refused(f"{unsigned} and {signed} have no safe common signed integer type "
                          f"({wider}); set promote_unsafe")
        return u64_integer_promotion_target
    if a.bits != b.bits:
        return a if a.bits > b.bits else b
    if promote_unsafe:
        names = {a.name, b.name}
        if names == {"f8e4m3", "f8e5m2"}:
            return et_table.from_name("f16")
        if names == {"f16", "bf16"}:
            return et_table.from_name("f32")
    raise Refused(f"{a} and {b} have no common type with these attributes"
                  + ("" if promote_unsafe else "; promote_unsafe would allow one"))


def _is_scalar(shape) -> bool:
    return shape.is_static and len(shape) == 0


@register
class ConvertPromoteTypes(Op):
    spec = OpSpec(
        type="ConvertPromoteTypes",
        numerics="exact",
        since=14,
        until=16,
        attrs=(Attr("promote_unsafe", "bool", default=False,
                    doc="allow promotions that widen bits, lose precision or range"),
               Attr("pytorch_scalar_promotion", "bool", default=False,
                    doc="a scalar of the same kind (both integer or both float) takes the "
                        "other input's type"),
               Attr("u64_integer_promotion_target", "element_type", default=et_table.from_name(
                   "f32"), doc="the common type of u64 and a signed integer")),
        inputs=(Input("input_0", TypeSet(SUPPORTED), doc="a tensor"),
                Input("input_1", TypeSet(SUPPORTED), doc="a tensor")),
        outputs=(Output("output_0", "input_0 in the common type"),
                 Output("output_1", "input_1 in the common type")),
        doc="Converts two tensors to their common element type by OpenVINO's promotion rules.",
        codes=(Code("IR323", "promotion-refused", ERROR,
                    "convert the inputs yourself, or set promote_unsafe=true"),),
        passes_values=True,
    )

    @staticmethod
    def infer(ctx):
        a, b = ctx.input_type(0), ctx.input_type(1)
        try:
            et = common_type(a.element_type, b.element_type,
                             promote_unsafe=ctx.attrs["promote_unsafe"],
                             pytorch_scalar_promotion=ctx.attrs["pytorch_scalar_promotion"],
                             u64_integer_promotion_target=ctx.attrs[
                                 "u64_integer_promotion_target"],
                             a_scalar=_is_scalar(a.shape), b_scalar=_is_scalar(b.shape))
        except Refused as e:
            ctx.error("IR323", str(e))
        return [TensorType(et, a.shape), TensorType(et, b.shape)]

    @staticmethod
    def kernel(input_0, input_1, *, promote_unsafe, pytorch_scalar_promotion,
               u64_integer_promotion_target):
        et = common_type(et_table.from_dtype(input_0.dtype), et_table.from_dtype(input_1.dtype),
                         promote_unsafe=promote_unsafe,
                         pytorch_scalar_promotion=pytorch_scalar_promotion,
                         u64_integer_promotion_target=u64_integer_promotion_target,
                         a_scalar=input_0.ndim == 0, b_scalar=input_1.ndim == 0)
        return convert(input_0, et), convert(input_1, et)
