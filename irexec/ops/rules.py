"""Shape rules for op specs: ``OpSpec(shape=...)`` takes one of these (or any function
``ctx -> [PartialShape, ...]``). They read the layer's input shapes, attributes and known input
values through the inference context and apply the shared partial-shape algebra of
:mod:`irexec.ir.shape_rules`; problems are OpErrors with a code, reported on the layer.

Also here: the attributes many ops share (``AUTO_BROADCAST``) and the checks several ops' own
``infer`` make (``check_output_size``, ``check_index_type``, ``infer_conversion``).
"""

from __future__ import annotations

from irexec.errors import OpError
from irexec.ir import shape_rules
from irexec.ir.shape import PartialShape
from irexec.kernels.convert import unsupported_reason
from irexec.ops.domains import as_int64
from irexec.ops.spec import CONVERTIBLE, Attr, TensorType
from irexec import budget

AUTO_BROADCAST = Attr("auto_broadcast", "enum", default="numpy", values=("none", "numpy", "pdpd"),
                      doc="how inputs of different shapes broadcast: none (shapes must be "
                          "equal), numpy, or pdpd (the second onto the first)")


def same_as(index: int = 0):
    """Every output has the shape of input ``index``."""
    def rule(ctx) -> list[PartialShape]:
        return [ctx.input_shape(index)] * len(ctx.spec.outputs)
    rule.__doc__ = f"same shape as input {index}"
    return rule


def broadcast(attr: str = "auto_broadcast"):
    """One output: the inputs broadcast by the ``auto_broadcast`` attribute's rule."""
    def rule(ctx) -> list[PartialShape]:
        mode = ctx.attrs.get(attr, "numpy")
        return [shape_rules.broadcast(ctx.input_shapes(), mode, ctx.attrs.get("axis", -1)
                                      if mode == "pdpd" else -1)]
    rule.__doc__ = f"the inputs broadcast by {attr} (none, numpy or pdpd)"
    return rule


def reduce(axes_input: int = 1, keep_dims: str = "keep_dims"):
    """One output: input 0 reduced over the axes given by input ``axes_input``."""
    def rule(ctx) -> list[PartialShape]:
        values = ctx.input_value(axes_input)
        axes = None if values is None else [int(a) for a in as_int64(values)]
        return [shape_rules.reduce(ctx.input_shape(0), axes, ctx.attrs[keep_dims])]
    rule.__doc__ = f"input 0 reduced over the axes of input {axes_input}; {keep_dims} keeps them"
    return rule


def concat(axis: str = "axis"):
    """One output: every input joined along the axis attribute."""
    def rule(ctx) -> list[PartialShape]:
        return [shape_rules.concat(ctx.input_shapes(), ctx.attrs[axis])]
    rule.__doc__ = f"the inputs joined along {axis}"
    return rule


def check_output_size(shape, itemsize: int, what: str = "the output") -> None:
    """OpError IR109 when a tensor of ``shape`` would exceed the memory budget
    (irexec/budget.py): for kernels whose output size comes from values (Range, Eye,
    OneHot, Einsum), checked before allocating."""
    problem = budget.shape_problem(tuple(int(d) for d in shape), itemsize)
    if problem is not None:
        raise OpError(f"{what}: {problem}", code="IR109")


def check_index_type(ctx, attr: str) -> None:
    """IR302 unless the element_type attribute ``attr`` is i32 or i64 (OpenVINO's rule for the
    index outputs of ShapeOf, NonZero, TopK, Unique, Bucketize, Eye ...)."""
    et = ctx.attrs[attr]
    if et.name not in ("i32", "i64"):
        ctx.error("IR302", f"{attr} is {et}; it must be i32 or i64")


def infer_conversion(ctx, attr: str) -> list[TensorType]:
    """The output of a conversion to the type in attribute ``attr`` (Convert-1, ONNX Cast)."""
    target = ctx.attrs[attr]
    if not CONVERTIBLE.allows(target):
        ctx.error("IR302", f"{attr} is {target}; irexec converts to {CONVERTIBLE.describe()}")
    else:
        check_convertible(ctx, attr, ctx.input_type(0).element_type, target)
    return [TensorType(target, ctx.input_type(0).shape)]


def check_convertible(ctx, what: str, source, target) -> None:
    """IR302 if OpenVINO cannot convert ``source`` elements to ``target`` (the target named
    ``what``: Convert's attribute, ConvertLike's input); nothing while either is dynamic."""
    if not source.is_dynamic and not target.is_dynamic:
        reason = unsupported_reason(source, target)
        if reason:
            ctx.error("IR302", f"{what} is {target}, but {source} cannot be converted to "
                               f"{target}: {reason}")
