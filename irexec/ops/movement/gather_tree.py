"""GatherTree-1: the full beams of a beam search, traced back from the last step's parents."""

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import PartialShape
from irexec.ops.spec import register
from irexec.ops.spec import (NUMERIC, SCALAR, VECTOR, Input, Op, OpSpec, Output, Rank, TensorType,
                             TypeVar)

T = TypeVar("T", NUMERIC)
RANK3 = Rank(exact=3)


def _merged(shapes) -> PartialShape:
    """step_ids and parent_idx agree; max_seq_len's dim is their batch dim."""
    a, b, lengths = shapes
    merged = a.merge(b)
    if merged is None:
        raise OpError(f"step_ids {a} and parent_idx {b} must have the same shape", code="IR307")
    if merged.rank_is_static and lengths.rank_is_static and \
            merged[1].merge(lengths[0]) is None:
        raise OpError(f"max_seq_len {lengths} must have one entry per batch (dim 1 of "
                      f"{merged})", code="IR307")
    return merged


@register
class GatherTree(Op):
    spec = OpSpec(
        type="GatherTree",
        since=1,
        until=16,
        inputs=(Input("step_ids", T, RANK3, doc="[max_time, batch, beam]: each step's token"),
                Input("parent_idx", T, RANK3, doc="[max_time, batch, beam]: each step's parent "
                                                  "beam, in [0, beam)"),
                Input("max_seq_len", T, VECTOR, doc="[batch]: each batch's length"),
                Input("end_token", T, SCALAR, doc="the token that ends a beam")),
        outputs=(Output("final_ids", "[max_time, batch, beam]: the traced beams", type=T),),
        doc="For each batch and beam, follows parent_idx back from the last step to rebuild the "
            "beam's tokens; steps past max_seq_len and after the first end_token are end_token.",
    )

    @staticmethod
    def infer(ctx):
        try:
            shape = _merged(ctx.input_shapes()[:3])
        except OpError as e:
            ctx.error(e.code, str(e))
        return [TensorType(ctx.type_var("T"), shape)]

    @staticmethod
    def kernel(step_ids, parent_idx, max_seq_len, end_token):
        _merged([PartialShape(a.shape) for a in (step_ids, parent_idx, max_seq_len)])
        time, batch, beam = step_ids.shape
        end = end_token.reshape(())
        out = np.empty_like(step_ids)
        out[...] = end
        lengths = np.minimum(max_seq_len.astype(np.int64), time)  # per batch
        b = np.arange(batch)[:, None]
        parent = np.broadcast_to(np.arange(beam), (batch, beam)).copy()
        for t in range(time - 1, -1, -1):  # one step of all beams at once
            live = (t < lengths)[:, None] & np.ones((1, beam), bool)
            out[t][live] = step_ids[t][b, parent][live]
            nxt = parent_idx[t][b, parent].astype(np.int64)
            bad = live & ((nxt < 0) | (nxt >= beam))
            if bad.any():
                raise OpError(f"parent_idx holds {int(nxt[bad][0])} at step {t}; parents must "
                              f"be in [0, {beam - 1}]", code="IR308")
            parent = np.where(live, nxt, parent)
        # After a beam's first end_token, everything is end_token.
        is_end = out == end
        seen = np.cumsum(is_end, axis=0) - is_end > 0
        out[seen] = end
        return out
