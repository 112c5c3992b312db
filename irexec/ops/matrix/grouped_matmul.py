"""GroupedMatMul-17: one matrix product per group (Mixture-of-Experts layers).

The two input combinations of OpenVINO 2026.4, told apart by the ranks; the weights ``mat_b``
are stored transposed, [G, N, K] (as a Linear layer's), in both:

* 2-D x 3-D: ``mat_a`` [tokens, K], ``mat_b`` [G, N, K], ``offsets`` [G]: the rows
  ``offsets[g-1]:offsets[g]`` of mat_a go through ``mat_b[g]``; output [tokens, N] (rows past the
  last offset stay zero, as OpenVINO's reference leaves them).
* 3-D x 3-D: ``mat_a`` [G, M, K], ``mat_b`` [G, N, K]: output [G, M, N]; ``offsets``, if given,
  are not read (OpenVINO accepts and ignores them).

The specification page also describes a 2-D x 2-D case with an untransposed ``mat_b``; OpenVINO
2026.4 refuses it (IR305 here), and its shape inference and reference kernel read ``mat_b`` as
[G, N, K], which irexec follows so that the IR OpenVINO writes reads and runs the same.
``offsets`` are cumulative token counts: non-decreasing, within [0, tokens]. Floats accumulate as
MatMul's do (f32, f64 in f64); integers wrap. One product per group: no loop over elements.
"""

from __future__ import annotations

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.kernels.numeric import compute_dtype, narrow
from irexec.ops.domains import as_int64
from irexec.ops.domains import SortedIds
from irexec.ops.spec import (NUMERIC, SHAPE_INDEX, VECTOR, Input, Op, OpSpec, Output, Rank,
                             TensorType, TypeVar, register)

T = TypeVar("T", NUMERIC)


def _same(a: Dimension, b: Dimension, what: str) -> Dimension:
    m = a.merge(b)
    if m is None:
        raise OpError(f"{what}: {a} and {b} must be equal", code="IR307")
    return m


def _check_offsets(values, tokens: Dimension) -> None:
    v = as_int64(values)
    top = tokens.min if tokens.is_static else None
    bad = (v < 0) if top is None else (v < 0) | (v > top)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise OpError(f"offsets[{i}] = {int(v[i])} is not in [0, {top if top is not None else '?'}]"
                      f" (the token count)", code="IR308")
    down = np.flatnonzero(np.diff(v) < 0)
    if down.size:
        i = int(down[0]) + 1
        raise OpError(f"offsets[{i}] = {int(v[i])} is below offsets[{i - 1}] = {int(v[i - 1])}; "
                      f"offsets are cumulative and never decrease", code="IR308")


@register
class GroupedMatMul(Op):
    spec = OpSpec(
        type="GroupedMatMul",
        since=17,
        inputs=(Input("mat_a", T, Rank(min=2, max=3),
                      doc="[tokens, K] (2-D x 3-D) or [G, M, K] (3-D x 3-D)"),
                Input("mat_b", T, Rank(min=2, max=3),
                      doc="[G, N, K]: each group's weights, transposed"),
                Input("offsets", SHAPE_INDEX, VECTOR, optional=True, domain=SortedIds(0),
                      doc="[G]: cumulative token counts; required with a 2-D mat_a, not read "
                          "with a 3-D one")),
        outputs=(Output("output", "[tokens, N] or [G, M, N] by the case", type=T),),
        doc="Grouped matrix products: each group's tokens (or batch entry) times its own "
            "matrix.",
    )

    @staticmethod
    def infer(ctx):
        a, b = ctx.input_shape(0), ctx.input_shape(1)
        has_offsets = ctx.num_inputs > 2
        et = ctx.type_var("T")
        if not (a.rank_is_static and b.rank_is_static):
            return [TensorType(et, PartialShape.dynamic())]
        ra, rb = len(a), len(b)
        if rb != 3:
            ctx.error("IR305", f"mat_a {a} is {ra}-D and mat_b {b} is {rb}-D; OpenVINO's cases "
                               f"are 2-D x 3-D and 3-D x 3-D (mat_b [G, N, K])")
        if ra == 3:
            g = _same(a[0], b[0], "the group counts (dim 0 of mat_a and mat_b)")
            _same(a[2], b[2], "K (dim 2 of mat_a and of mat_b)")
            return [TensorType(et, PartialShape._of((g, a[1], b[1])))]
        if not has_offsets:
            ctx.error("IR303", "a 2-D mat_a (2-D x 3-D) needs offsets (input 2)")
        off = ctx.input_shape(2)
        groups = off[0] if off.rank_is_static else Dimension.dynamic()
        _same(a[1], b[2], "K (dim 1 of mat_a and dim 2 of mat_b)")
        _same(groups, b[0], "the group counts (offsets and dim 0 of mat_b)")
        values = ctx.input_value(2)
        if values is not None:
            _check_offsets(values, a[0])
        return [TensorType(et, PartialShape._of((a[0], b[1])))]

    @staticmethod
    def kernel(mat_a, mat_b, offsets=None):
        ct = compute_dtype(mat_a.dtype)
        a = mat_a.astype(ct, copy=False)
        b = np.swapaxes(mat_b.astype(ct, copy=False), -1, -2)  # [G, K, N]
        if a.ndim == 3:
            return narrow(np.matmul(a, b), mat_a.dtype)
        ends = as_int64(offsets)
        starts = np.concatenate([[0], ends[:-1]])
        out = np.zeros((a.shape[0], b.shape[2]), ct)
        for g, (s, e) in enumerate(zip(starts.tolist(), ends.tolist())):  # one product a group
            if e > s:
                out[s:e] = a[s:e] @ b[g]
        return narrow(out, mat_a.dtype)
