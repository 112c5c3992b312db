"""Embedding bags, one family: EmbeddingBagOffsetsSum-3, EmbeddingBagPackedSum-3,
EmbeddingSegmentsSum-3, EmbeddingBagOffsets-15 and EmbeddingBagPacked-15 (reduction sum or mean).

Each gathers rows of an embedding table by index and reduces them per bag: a bag is a run of
``indices`` between two ``offsets`` (Offsets), a row of a 2-D ``indices`` (Packed), or the
indices sharing a ``segment_ids`` value (Segments). ``per_sample_weights`` scale each gathered
row (sum only); an empty bag gives the table's ``default_index`` row, or zeros without one (an
offsets ``default_index`` of -1 means zeros too).

Floats accumulate in f32 (f64 in f64) and round once; integers wrap, and an integer mean divides
the wrapped sum, truncating toward zero, as OpenVINO's reference does. Indices outside the table,
offsets that decrease or pass the end of ``indices`` and segment ids outside
``[0, num_segments)`` are errors (IR325, IR308). The kernel is one gather and one
``add.reduceat``: no loop over bags.
"""

from __future__ import annotations

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.kernels.numeric import compute_dtype, narrow
from irexec.ops.domains import Indices, SmallInts, SortedIds, as_int64
from irexec.ops.spec import (NUMERIC, SCALAR, SHAPE_INDEX, VECTOR, Attr, Input, Op, OpSpec,
                             Output, Rank, TensorType, TypeVar, register)

T = TypeVar("T", NUMERIC)
T_IND = TypeVar("T_IND", SHAPE_INDEX)

REDUCTION = Attr("reduction", "enum", default="sum", values=("sum", "mean"),
                 doc="sum: the (weighted) sum of a bag's rows; mean: their average (no "
                     "per_sample_weights)")


def _table_rows(shape: PartialShape, bags: Dimension) -> PartialShape:
    """The output shape: the table's with its first dim replaced by the bag count."""
    if not shape.rank_is_static:
        return PartialShape.dynamic()
    return PartialShape._of((bags,) + tuple(shape.dims[1:]))


def _merge(a: PartialShape, b: PartialShape, what: str) -> None:
    if a.merge(b) is None:
        raise OpError(f"{what}: shapes {a} and {b} must be the same", code="IR307")


def _check_indices(values, num_emb, what="indices") -> None:
    v = as_int64(values)
    bad = (v < 0) | (v >= num_emb)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise OpError(f"{what}[{i}] = {int(v[i])} is outside the embedding table's "
                      f"{num_emb} rows [0, {num_emb - 1}]", code="IR325")


def _check_default(values, num_emb, minus_one_ok: bool) -> None:
    v = int(as_int64(values)[0])
    if minus_one_ok and v == -1:
        return
    if not 0 <= v < num_emb:
        ok = "-1 (zeros) or " if minus_one_ok else ""
        raise OpError(f"default_index {v} is not {ok}a row of the embedding table "
                      f"[0, {num_emb - 1}]", code="IR325")


def _check_offsets(values, count) -> None:
    v = as_int64(values)
    if v.size == 0:
        return
    bad = (v < 0) | (v > count) if count is not None else (v < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        limit = f"[0, {count}]" if count is not None else "0 or more"
        raise OpError(f"offsets[{i}] = {int(v[i])} is not in {limit} (the number of indices)",
                      code="IR308")
    down = np.flatnonzero(np.diff(v) < 0)
    if down.size:
        i = int(down[0]) + 1
        raise OpError(f"offsets[{i}] = {int(v[i])} is below offsets[{i - 1}] = {int(v[i - 1])}; "
                      f"offsets never decrease", code="IR308")


def _num_emb(ctx) -> int | None:
    shape = ctx.input_shape(0)
    if shape.rank_is_static and len(shape) and shape[0].is_static:
        return shape[0].min
    return None


def _check_common(ctx, weights_port: int | None, default_port: int | None,
                  minus_one_ok: bool) -> None:
    """Weights only with sum and shaped as the indices; indices and default index in range."""
    if weights_port is not None and ctx.num_inputs > weights_port:
        if ctx.attrs.get("reduction", "sum") == "mean":
            ctx.error("IR303", f"per_sample_weights (input {weights_port}) are given but "
                               f"reduction is mean; only reduction sum takes weights")
        _merge(ctx.input_shape(1), ctx.input_shape(weights_port),
               "per_sample_weights must be shaped as indices")
    n = _num_emb(ctx)
    if n is None:
        return
    indices = ctx.input_value(1)
    if indices is not None:
        _check_indices(indices, n)
    if default_port is not None and ctx.num_inputs > default_port:
        value = ctx.input_value(default_port)
        if value is not None:
            _check_default(value, n, minus_one_ok)


def _reduce_bags(table, indices, starts, counts, weights, default_index, mean):
    """Rows of ``table`` gathered by ``indices`` and reduced per bag: bag b takes
    ``indices[starts[b]:starts[b]+counts[b]]``."""
    num_emb = table.shape[0]
    flat = table.reshape(num_emb, -1)
    ct = compute_dtype(table.dtype)
    idx = as_int64(indices)
    rows = np.take(flat, idx, axis=0).astype(ct, copy=False)
    if weights is not None:
        rows = rows * weights.reshape(-1, 1).astype(ct)
    out = np.zeros((len(starts), flat.shape[1]), ct)
    full = counts > 0
    if full.any() and rows.shape[1]:
        sums = np.add.reduceat(rows, starts[full], axis=0)
        # reduceat's last run reaches the end of indices: cut it to its bag's count
        last = int(np.flatnonzero(full)[-1])
        end = starts[last] + counts[last]
        if end < rows.shape[0]:
            sums[-1] = rows[starts[last]:end].sum(axis=0, dtype=ct)
        out[full] = sums
    out = narrow(out, table.dtype)
    if mean and full.any():
        n = counts[full].reshape(-1, 1)
        if out.dtype.kind in "iu":  # C++ integer division: truncation toward zero
            wide = np.uint64 if out.dtype.kind == "u" else np.int64
            s, m = out[full].astype(wide), n.astype(wide)
            q = s // m
            q = np.where((s < 0) & (q * m != s), q + 1, q)
            out[full] = q.astype(out.dtype)
        else:
            out[full] = narrow(out[full].astype(ct) / n.astype(ct), out.dtype)
    if default_index is not None:
        d = int(as_int64(default_index)[0])
        if d >= 0:
            out[~full] = flat[d]
    return out.reshape((len(starts),) + table.shape[1:])


def _offsets_kernel(table, indices, offsets, default_index=None, per_sample_weights=None, *,
                    reduction="sum"):
    off = as_int64(offsets)
    ends = np.append(off[1:], indices.shape[0]) if off.size else off
    return _reduce_bags(table, indices, off, ends - off, per_sample_weights, default_index,
                        reduction == "mean")


def _packed_kernel(table, indices, per_sample_weights=None, *, reduction="sum"):
    batch, per_bag = indices.shape
    starts = np.arange(batch, dtype=np.int64) * per_bag
    counts = np.full(batch, per_bag, np.int64)
    weights = None if per_sample_weights is None else per_sample_weights.reshape(-1)
    return _reduce_bags(table, indices.reshape(-1), starts, counts, weights, None,
                        reduction == "mean")


def _segments_kernel(table, indices, segment_ids, num_segments, default_index=None,
                     per_sample_weights=None):
    seg = as_int64(segment_ids)
    order = np.argsort(seg, kind="stable")
    seg = seg[order]
    n = int(as_int64(num_segments)[0])
    starts = np.searchsorted(seg, np.arange(n))
    counts = np.searchsorted(seg, np.arange(n), side="right") - starts
    weights = None if per_sample_weights is None else per_sample_weights[order]
    return _reduce_bags(table, indices[order], starts, counts, weights, default_index, False)


def _offsets_infer(minus_one_ok):
    def infer(ctx):
        _check_common(ctx, 4, 3, minus_one_ok)
        offsets = ctx.input_value(2)
        if offsets is not None:
            count = ctx.input_shape(1)
            _check_offsets(offsets, count[0].min if count.rank_is_static and count[0].is_static
                           else None)
        bags = ctx.input_shape(2)
        dim = bags[0] if bags.rank_is_static else Dimension.dynamic()
        return [TensorType(ctx.type_var("T"), _table_rows(ctx.input_shape(0), dim))]
    return infer


def _packed_infer(ctx):
    _check_common(ctx, 2, None, False)
    ind = ctx.input_shape(1)
    dim = ind[0] if ind.rank_is_static else Dimension.dynamic()
    return [TensorType(ctx.type_var("T"), _table_rows(ctx.input_shape(0), dim))]


def _segments_infer(ctx):
    _check_common(ctx, 5, 4, False)
    _merge(ctx.input_shape(1), ctx.input_shape(2), "segment_ids must be shaped as indices")
    count = ctx.input_value(3)
    dim = Dimension.dynamic()
    if count is not None:
        n = int(as_int64(count)[0])
        if n < 0:
            ctx.error("IR308", f"num_segments is {n}; it must be 0 or more")
        dim = Dimension.static(n)
        ids = ctx.input_value(2)
        if ids is not None:
            v = as_int64(ids)
            bad = (v < 0) | (v >= n)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                ctx.error("IR325", f"segment_ids[{i}] = {int(v[i])} is not a segment in "
                                   f"[0, num_segments - 1 = {n - 1}]")
    return [TensorType(ctx.type_var("T"), _table_rows(ctx.input_shape(0), dim))]


TABLE = Input("emb_table", T, Rank(min=1), doc="[num_emb, emb_dim1, ...]: one row per index")
INDICES_1D = Input("indices", T_IND, VECTOR, domain=Indices(0),
                   doc="[num_indices]: rows of emb_table, in [0, num_emb - 1]")
OFFSETS = Input("offsets", T_IND, VECTOR, domain=SortedIds(1),
                doc="[batch]: where each bag starts in indices; non-decreasing, at most "
                    "num_indices (equal starts make empty bags)")
WEIGHTS_1D = Input("per_sample_weights", T, VECTOR, optional=True,
                   doc="one weight per index (reduction sum only); default ones")


def _default(minus_one: bool) -> Input:
    extra = "; -1 also means zeros" if minus_one else ""
    return Input("default_index", T_IND, SCALAR, optional=True, domain=Indices(0),
                 doc=f"the row that fills an empty bag (zeros when absent{extra})")


def _op(name, spec, kernel, infer):
    return register(type(name, (Op,), {"spec": spec, "kernel": staticmethod(kernel),
                                       "infer": staticmethod(infer), "__doc__": spec.doc,
                                       "__module__": __name__}))


OUTPUT = Output("output", "[bags, emb_dim1, ...]: one reduced row per bag", type=T)

OPS = {}
for _name, _since, _attrs, _minus in (("EmbeddingBagOffsetsSum", 3, (), True),
                                      ("EmbeddingBagOffsets", 15, (REDUCTION,), True)):
    OPS[_name] = _op(_name, OpSpec(
        type=_name, since=_since, until=16, attrs=_attrs,
        inputs=(TABLE, INDICES_1D, OFFSETS, _default(_minus), WEIGHTS_1D),
        outputs=(OUTPUT,),
        doc=("Sums (reduction sum) or averages (mean) " if _attrs else "Sums ") +
            "bags of embedding-table rows; bag b is indices[offsets[b]:offsets[b+1]] (the last "
            "runs to the end of indices).",
    ), _offsets_kernel, _offsets_infer(_minus))

for _name, _since, _attrs in (("EmbeddingBagPackedSum", 3, ()),
                              ("EmbeddingBagPacked", 15, (REDUCTION,))):
    OPS[_name] = _op(_name, OpSpec(
        type=_name, since=_since, until=16, attrs=_attrs,
        inputs=(TABLE,
                Input("indices", T_IND, Rank(exact=2), domain=Indices(0),
                      doc="[batch, indices_per_bag]: one bag per row"),
                Input("per_sample_weights", T, Rank(exact=2), optional=True,
                      doc="the indices' shape: one weight per index (reduction sum only)")),
        outputs=(OUTPUT,),
        doc=("Sums (reduction sum) or averages (mean) " if _attrs else "Sums ") +
            "bags of embedding-table rows, one bag per row of a 2-D indices.",
    ), _packed_kernel, _packed_infer)

OPS["EmbeddingSegmentsSum"] = _op("EmbeddingSegmentsSum", OpSpec(
    type="EmbeddingSegmentsSum", since=3, until=16,
    inputs=(TABLE, INDICES_1D,
            Input("segment_ids", T_IND, VECTOR, domain=SortedIds(1, top=3),
                  doc="[num_indices]: the segment of each index, in [0, num_segments - 1] "
                      "(sorted, as the specification asks; any order sums the same)"),
            Input("num_segments", T_IND, SCALAR, domain=SmallInts(0, 3, 4),
                  doc="how many segments (output rows)"),
            _default(False), WEIGHTS_1D),
    outputs=(Output("output", "[num_segments, emb_dim1, ...]: one summed row per segment",
                    type=T),),
    doc="Sums the embedding-table rows of each segment; a segment no index names gets the "
        "default_index row, or zeros.",
), _segments_kernel, _segments_infer)
