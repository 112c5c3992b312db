"""Einsum-7: sums of products over labelled axes, as an Einstein-summation equation says."""

import re

import numpy as np

from irexec.diagnostics.codes import ERROR, Code
from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.ir.shape_rules import broadcast_numpy
from irexec.ops.spec import register
from irexec.ops.rules import check_output_size
from irexec.ops.spec import NUMERIC, Attr, Input, Op, OpSpec, Output, TensorType, TypeVar

T = TypeVar("T", NUMERIC)
CODE = Code("IR338", "einsum-equation", ERROR,
            "write the equation as comma-separated input subscripts of letters (and at most one "
            "'...' each), optionally '->' and the output's, one subscript per input")
_SUBSCRIPT = re.compile(r"[a-zA-Z]*(\.\.\.)?[a-zA-Z]*")


def parse(equation: str, count: int) -> tuple[list[str], str]:
    """The input subscripts and the output one (implicit mode: the labels that occur once, in
    alphabetical order, after the ellipsis if any input has one). OpError IR338."""
    text = equation.replace(" ", "")
    if text.count("->") > 1:
        raise OpError(f"equation {equation!r} has more than one '->'", code="IR338")
    left, arrow, right = text.partition("->")
    inputs = left.split(",")
    if len(inputs) != count:
        raise OpError(f"equation {equation!r} has {len(inputs)} input subscripts but the layer "
                      f"has {count} inputs", code="IR338")
    for s in inputs + ([right] if arrow else []):
        if not _SUBSCRIPT.fullmatch(s):
            raise OpError(f"subscript {s!r} of equation {equation!r} is not letters with at most "
                          f"one '...'", code="IR338")
    if arrow:
        labels = set("".join(inputs).replace("...", ""))
        out_labels = right.replace("...", "")
        if len(set(out_labels)) != len(out_labels) or not set(out_labels) <= labels:
            raise OpError(f"output subscript {right!r} of equation {equation!r} repeats a label "
                          f"or names one no input has", code="IR338")
        if "..." in right and not any("..." in s for s in inputs):
            raise OpError(f"output subscript {right!r} has '...' but no input has",
                          code="IR338")
        return inputs, right
    joined = "".join(inputs).replace("...", "")
    once = sorted(c for c in set(joined) if joined.count(c) == 1)
    return inputs, ("..." if any("..." in s for s in inputs) else "") + "".join(once)


def output_shape(equation: str, shapes: list[PartialShape]) -> PartialShape:
    inputs, out = parse(equation, len(shapes))
    dims: dict[str, Dimension] = {}
    ellipsis = PartialShape([])
    for s, shape in zip(inputs, shapes):
        if not shape.rank_is_static:
            if "..." in s:
                ellipsis = PartialShape.dynamic()
            continue
        head, dots, tail = s.partition("...")
        labels = len(head) + len(tail)
        if len(shape) != labels and not (dots and len(shape) >= labels):
            raise OpError(f"subscript {s!r} names {labels} axes but its input has shape {shape}",
                          code="IR338")
        given = list(shape.dims[:len(head)]) + (list(shape.dims[len(shape) - len(tail):])
                                                if tail else [])
        if dots:
            ellipsis = broadcast_numpy(ellipsis, PartialShape(
                shape.dims[len(head):len(shape) - len(tail)]))
        for label, d in zip(head + tail, given):
            merged = dims.get(label, d).merge(d)
            if merged is None:
                raise OpError(f"label {label!r} stands for dims {dims[label]} and {d} in "
                              f"equation {equation!r}; they must be equal", code="IR307")
            dims[label] = merged
    head, dots, tail = out.partition("...")
    if dots and not ellipsis.rank_is_static:
        return PartialShape.dynamic()
    middle = list(ellipsis.dims) if dots else []
    return PartialShape([dims.get(c, Dimension.dynamic()) for c in head] + middle +
                        [dims.get(c, Dimension.dynamic()) for c in tail])


@register
class Einsum(Op):
    spec = OpSpec(
        type="Einsum",
        since=7,
        until=16,
        attrs=(Attr("equation", "string", doc="the Einstein-summation equation, e.g. "
                                                  "'ij,jk->ik'; upper- and lower-case letters "
                                                  "differ"),),
        inputs=(Input("inputs", T, variadic=1, doc="the operands, one per input subscript"),),
        outputs=(Output("output", "the sums of products the equation names", type=T),),
        doc="Einstein summation: multiplies the inputs along shared labels and sums over the "
            "labels the output leaves out (a repeated label within one input takes its "
            "diagonal; '...' stands for broadcast dims).",
        codes=(CODE,),
    )

    @staticmethod
    def infer(ctx):
        try:
            shape = output_shape(ctx.attrs["equation"], ctx.input_shapes())
        except OpError as e:
            ctx.error(e.code, str(e))
        return [TensorType(ctx.type_var("T"), shape)]

    @staticmethod
    def kernel(*inputs, equation):
        inputs_, out = parse(equation, len(inputs))
        shape = output_shape(equation, [PartialShape(a.shape) for a in inputs])
        check_output_size(shape.to_shape(), 8)
        dtype = inputs[0].dtype
        wide = dtype.kind == "f" and dtype not in (np.float32, np.float64)
        arrays = [a.astype(np.float32) for a in inputs] if wide else inputs
        # Contracted a pair at a time in the order numpy's greedy path finds (matrix products
        # by BLAS where a pair is one), with no intermediate larger than the largest operand
        # or the output: one pass over every label at once costs the product of all the dims
        # (ij,jk,kl,lm->im on 300x300 operands: 300**5 terms, minutes). OpenVINO's reference
        # contracts pairwise as well; the sums stay within the accumulating family's bound.
        optimize = "greedy" if len(arrays) > 1 else False
        result = np.einsum(",".join(inputs_) + "->" + out, *arrays, optimize=optimize)
        return np.asarray(result).astype(dtype, copy=False)
