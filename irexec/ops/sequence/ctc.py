"""CTC (Connectionist Temporal Classification), one family: CTCGreedyDecoder-1,
CTCGreedyDecoderSeqLen-6 and CTCLoss-4.

The greedy decoders take the most likely class at each step (the first one among ties), drop a
step that repeats the previous step's class (with ``ctc_merge_repeated`` / ``merge_repeated``),
drop blanks, and pack what is left to the front of each row, filling the rest with -1.
CTCGreedyDecoder-1's sequence stops at its first zero in ``sequence_mask``; its blank is the last
class. Vectorized over batch and time: no loop over steps.

CTCLoss is the negative log of the summed probability of every path that decodes to the label
(Graves et al.): the forward (alpha) recursion over the label with blanks between its
characters, in float64 log space, one step per time step for the whole batch. With
``ctc_merge_repeated`` false a path's repeats are not merged, so each label character takes
exactly one step. ``unique`` keeps a label's first occurrences only;
``preprocess_collapse_repeated`` merges its runs. A label no path can reach gives +inf; an empty label gives the log probability
of all blanks.
"""

from __future__ import annotations

import numpy as np

from irexec.ir.element_type import from_name
from irexec.ir.shape import Dimension, PartialShape
from dataclasses import dataclass

from irexec.ops.domains import Domain, as_int64
from irexec.ops.rules import check_index_type
from irexec.ops.spec import (REAL, SCALAR_OR_VECTOR, SCALAR, SHAPE_INDEX, VECTOR, Attr, Input,
                             Op, OpSpec, Output, Rank, TensorType, TypeVar, register)

T_F = TypeVar("T_F", REAL)
T_I = TypeVar("T_I", SHAPE_INDEX)
T_2 = TypeVar("T_2", SHAPE_INDEX)


@dataclass(frozen=True)
class _Lengths(Domain):
    """Made for ``irexec run``: one length per batch entry of input ``of`` ([N, T, C]), in
    [low, high] and at most T; with ``last_class``, the scalar C - 1 (the default blank); with
    ``labels``, [N, T] labels of class 0."""

    of: int = 0
    low: int = 0
    high: int | None = None
    last_class: bool = False
    labels: bool = False

    def generate(self, rng, data_shape, attrs, declared, unsigned):
        if self.last_class:
            return np.array(max(data_shape[2] - 1, 0) if len(data_shape) == 3 else 0)
        n, t = (data_shape[0], data_shape[1]) if len(data_shape) == 3 else (1, 1)
        if self.labels:
            return np.zeros((n, t), np.int64)
        high = t if self.high is None else min(self.high, t)
        return rng.integers(min(self.low, high), high + 1, size=n)


def _greedy(classes: np.ndarray, valid: np.ndarray, blank: int, merge: bool):
    """classes [N, T] (argmax per step), valid [N, T] (inside the sequence): the decoded rows
    [N, T] (-1 after the end) and their lengths [N]."""
    prev = np.concatenate([np.full((classes.shape[0], 1), -1, classes.dtype), classes[:, :-1]],
                          axis=1)
    keep = valid & (classes != blank)
    if merge:
        keep &= classes != prev
    lengths = keep.sum(axis=1)
    out = np.full(classes.shape, -1, np.int64)
    rows, cols = np.nonzero(keep)
    slots = np.cumsum(keep, axis=1)[rows, cols] - 1
    out[rows, slots] = classes[rows, cols]
    return out, lengths


def _merge_dims(ctx, a: Dimension, b: Dimension, what: str) -> Dimension:
    m = a.merge(b)
    if m is None:
        ctx.error("IR307", f"{what}: {a} and {b} must be equal")
    return m


def _dims(shape: PartialShape, rank: int):
    return list(shape.dims) if shape.rank_is_static else [Dimension.dynamic()] * rank


@register
class CTCGreedyDecoder(Op):
    spec = OpSpec(
        type="CTCGreedyDecoder",
        since=1,
        until=16,
        attrs=(Attr("ctc_merge_repeated", "bool", default=True,
                    doc="drop a step whose class repeats the previous step's"),),
        inputs=(Input("data", T_F, Rank(exact=3), doc="[T, N, C]: scores per step and class; "
                                                      "the blank is class C-1"),
                Input("sequence_mask", T_F, Rank(exact=2),
                      doc="[T, N]: 1 inside each sequence, 0 after it (a sequence ends at its "
                          "first 0)")),
        outputs=(Output("output", "[N, T, 1, 1]: the decoded classes, -1 after the end",
                        type=T_F),),
        doc="Greedy (best-path) CTC decoding of a batch of score sequences.",
    )

    @staticmethod
    def infer(ctx):
        t, n, _ = _dims(ctx.input_shape(0), 3)
        mt, mn = _dims(ctx.input_shape(1), 2)
        t = _merge_dims(ctx, t, mt, "T (dim 0 of data and sequence_mask)")
        n = _merge_dims(ctx, n, mn, "N (dim 1 of data and sequence_mask)")
        return [TensorType(ctx.type_var("T_F"),
                           PartialShape._of((n, t, Dimension.static(1), Dimension.static(1))))]

    @staticmethod
    def kernel(data, sequence_mask, *, ctc_merge_repeated):
        classes = np.argmax(data, axis=2).T if data.shape[2] else \
            np.zeros(data.shape[1::-1], np.int64)
        valid = np.cumprod(sequence_mask.T != 0, axis=1).astype(bool)
        out, _ = _greedy(classes, valid, data.shape[2] - 1, ctc_merge_repeated)
        return out.astype(data.dtype).reshape(out.shape + (1, 1))


def _check_lengths(ctx, port: int, top: Dimension, what: str):
    value = ctx.input_value(port)
    if value is None:
        return None
    v = as_int64(value)
    limit = top.max
    bad = (v < 0) if limit is None else (v < 0) | (v > limit)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        ctx.error("IR308", f"{what}[{i}] = {int(v[i])} is not in [0, "
                           f"{limit if limit is not None else 'T'}] (the steps each sequence has)")
    return v


def _check_blank(ctx, port: int, classes: Dimension) -> None:
    if ctx.num_inputs <= port:
        return
    value = ctx.input_value(port)
    if value is None:
        return
    v = as_int64(value)
    if v.size != 1:
        ctx.error("IR307", f"blank_index holds {v.size} values; it must hold one")
    if classes.is_static and not 0 <= v[0] < classes.min:
        ctx.error("IR325", f"blank_index {int(v[0])} is not a class in [0, {classes.min - 1}]")


@register
class CTCGreedyDecoderSeqLen(Op):
    spec = OpSpec(
        type="CTCGreedyDecoderSeqLen",
        since=6,
        until=16,
        attrs=(Attr("merge_repeated", "bool", default=True,
                    doc="drop a step whose class repeats the previous step's"),
               Attr("classes_index_type", "element_type", default=from_name("i32"),
                    doc="the decoded classes' element type: i32 or i64"),
               Attr("sequence_length_type", "element_type", default=from_name("i32"),
                    doc="the decoded lengths' element type: i32 or i64")),
        inputs=(Input("data", T_F, Rank(exact=3), doc="[N, T, C]: scores per step and class"),
                Input("sequence_length", T_I, VECTOR, domain=_Lengths(),
                      doc="[N]: steps in each sequence, in [0, T]"),
                Input("blank_index", T_I, SCALAR_OR_VECTOR, optional=True,
                      doc="the blank class (one value; default C-1)")),
        outputs=(Output("decoded", "[N, T]: the decoded classes, -1 after the end",
                        type="@classes_index_type"),
                 Output("decoded_length", "[N]: how many classes each row decoded to",
                        type="@sequence_length_type")),
        doc="Greedy (best-path) CTC decoding of a batch of score sequences of given lengths.",
    )

    @staticmethod
    def infer(ctx):
        check_index_type(ctx, "classes_index_type")
        check_index_type(ctx, "sequence_length_type")
        n, t, c = _dims(ctx.input_shape(0), 3)
        (ln,) = _dims(ctx.input_shape(1), 1)
        n = _merge_dims(ctx, n, ln, "N (dim 0 of data and sequence_length)")
        _check_lengths(ctx, 1, t, "sequence_length")
        _check_blank(ctx, 2, c)
        return [TensorType(ctx.attrs["classes_index_type"], PartialShape._of((n, t))),
                TensorType(ctx.attrs["sequence_length_type"], PartialShape._of((n,)))]

    @staticmethod
    def kernel(data, sequence_length, blank_index=None, *, merge_repeated, classes_index_type,
               sequence_length_type):
        n, t, c = data.shape
        blank = int(as_int64(blank_index)[0]) if blank_index is not None else c - 1
        classes = np.argmax(data, axis=2) if c else np.zeros((n, t), np.int64)
        valid = np.arange(t) < as_int64(sequence_length).reshape(-1, 1)
        out, lengths = _greedy(classes, valid, blank, merge_repeated)
        return out.astype(classes_index_type.dtype), lengths.astype(sequence_length_type.dtype)


def _target(label: np.ndarray, unique: bool, collapse: bool) -> np.ndarray:
    if unique:
        _, first = np.unique(label, return_index=True)
        return label[np.sort(first)]
    if collapse and label.size:
        return label[np.concatenate([[True], label[1:] != label[:-1]])]
    return label


def ctc_loss(logits, logit_length, labels, label_length, blank, collapse, merge, unique):
    """The loss per batch entry, float64."""
    n, t_max, c = logits.shape
    x = logits.astype(np.float64)
    with np.errstate(all="ignore"):
        top = np.max(x, axis=2, keepdims=True) if c else x
        lp = x - top - np.log(np.sum(np.exp(x - top), axis=2, keepdims=True))
    lengths = as_int64(logit_length)
    label_lengths = as_int64(label_length)
    lab = as_int64(labels).reshape(n, -1)
    targets = [_target(lab[i, :label_lengths[i]], unique, collapse) for i in range(n)]
    lmax = max((len(tg) for tg in targets), default=0)
    s = 2 * lmax + 1
    ext = np.full((n, s), blank, np.int64)  # blank, l1, blank, l2, ..., blank
    for i, tg in enumerate(targets):
        ext[i, 1:2 * len(tg):2] = tg
    count = np.array([2 * len(tg) + 1 for tg in targets], np.int64).reshape(n)
    pos = np.arange(s)
    inside = pos < count.reshape(-1, 1)
    is_blank = (pos % 2 == 0)[None, :] | ~inside
    prev2 = np.concatenate([np.full((n, 2), -1, np.int64), ext], axis=1)[:, :s]
    skip = ~is_blank & (pos >= 2)[None, :]
    if merge:
        skip &= ext != prev2
    stay = np.ones((n, s), bool) if merge else is_blank
    neg = -np.inf
    rows = np.arange(n)
    alpha = np.full((n, s), neg)
    if t_max:
        first = lp[:, 0, :][rows[:, None], ext]
        alpha[:, :2] = np.where(pos[:2] < count.reshape(-1, 1), first[:, :2], neg)
    with np.errstate(invalid="ignore"):
        for step in range(1, t_max):  # one step of the recursion for the whole batch
            a1 = np.concatenate([np.full((n, 1), neg), alpha], axis=1)[:, :s]
            a2 = np.concatenate([np.full((n, 2), neg), alpha], axis=1)[:, :s]
            total = np.logaddexp(np.where(stay, alpha, neg), a1)
            total = np.logaddexp(total, np.where(skip, a2, neg))
            new = total + lp[:, step, :][rows[:, None], ext]
            new = np.where(inside, new, neg)
            alpha = np.where((step < lengths).reshape(-1, 1), new, alpha)
    last = count - 1
    end = alpha[rows, last]
    before = np.where(last >= 1, alpha[rows, np.maximum(last - 1, 0)], neg)
    loglik = np.logaddexp(end, before)
    loglik = np.where(lengths == 0, np.where(count == 1, 0.0, neg), loglik)
    return -loglik


@register
class CTCLoss(Op):
    spec = OpSpec(
        type="CTCLoss",
        since=4,
        until=16,
        attrs=(Attr("preprocess_collapse_repeated", "bool", default=False,
                    doc="merge runs of a repeated character in each label first"),
               Attr("ctc_merge_repeated", "bool", default=True,
                    doc="a path's repeated characters merge (false: every non-blank step is "
                        "one label character)"),
               Attr("unique", "bool", default=False,
                    doc="keep only each character's first occurrence in each label")),
        inputs=(Input("logits", T_F, Rank(exact=3), doc="[N, T, C]: unnormalized scores"),
                Input("logit_length", T_I, VECTOR, domain=_Lengths(low=1),
                      doc="[N]: steps in each sequence, in [0, T]"),
                Input("labels", T_2, Rank(exact=2), domain=_Lengths(labels=True),
                      doc="[N, T]: the targets, classes other than the blank"),
                Input("label_length", T_I, VECTOR, domain=_Lengths(high=1),
                      doc="[N]: each target's length, at most its logit_length"),
                Input("blank_index", T_2, SCALAR, optional=True, domain=_Lengths(last_class=True),
                      doc="the blank class (default C-1)")),
        outputs=(Output("output", "[N]: -log of the summed probability of the paths that "
                                  "decode to each label", type=T_F),),
        doc="The CTC loss of each sequence of a batch against its label.",
    )

    @staticmethod
    def infer(ctx):
        n, t, c = _dims(ctx.input_shape(0), 3)
        for port, what in ((1, "logit_length"), (3, "label_length")):
            (d,) = _dims(ctx.input_shape(port), 1)
            n = _merge_dims(ctx, n, d, f"N (dim 0 of logits and {what})")
        ln, lt = _dims(ctx.input_shape(2), 2)
        n = _merge_dims(ctx, n, ln, "N (dim 0 of logits and labels)")
        t = _merge_dims(ctx, t, lt, "T (dim 1 of logits and labels)")
        logit_len = _check_lengths(ctx, 1, t, "logit_length")
        label_len = _check_lengths(ctx, 3, t, "label_length")
        if logit_len is not None and label_len is not None:
            over = np.flatnonzero(label_len > logit_len)
            if over.size:
                i = int(over[0])
                ctx.error("IR308", f"label_length[{i}] = {int(label_len[i])} is above "
                                   f"logit_length[{i}] = {int(logit_len[i])}; a label never "
                                   f"has more characters than its sequence has steps")
        _check_blank(ctx, 4, c)
        labels = ctx.input_value(2)
        if labels is not None and label_len is not None and c.is_static:
            blank = c.min - 1
            if ctx.num_inputs > 4 and ctx.input_value(4) is not None:
                blank = int(as_int64(ctx.input_value(4))[0])
            lab = as_int64(labels).reshape(len(label_len), -1)
            used = np.arange(lab.shape[1]) < label_len.reshape(-1, 1)
            bad = used & ((lab < 0) | (lab >= c.min) | (lab == blank))
            if bad.any():
                i, j = (int(k) for k in np.argwhere(bad)[0])
                ctx.error("IR308", f"labels[{i}, {j}] = {int(lab[i, j])} is not a class in "
                                   f"[0, {c.min - 1}] other than the blank ({blank})")
        return [TensorType(ctx.type_var("T_F"), PartialShape._of((n,)))]

    @staticmethod
    def kernel(logits, logit_length, labels, label_length, blank_index=None, *,
               preprocess_collapse_repeated, ctc_merge_repeated, unique):
        blank = int(as_int64(blank_index)[0]) if blank_index is not None else logits.shape[2] - 1
        loss = ctc_loss(logits, logit_length, labels, label_length, blank,
                        preprocess_collapse_repeated, ctc_merge_repeated, unique)
        with np.errstate(over="ignore"):
            return loss.astype(logits.dtype)
