"""RNNSequence-5, GRUSequence-5, LSTMSequence-1 and LSTMSequence-5: a recurrent cell over every
time step, forward, reverse or both, with per-batch sequence lengths (irexec/ops/sequence/
recurrent.py holds the arithmetic and OpenVINO's masking rule)."""

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.spec import register
from irexec.ops.sequence import recurrent as rc
from irexec.ops.spec import (INTEGER, REAL, Attr, Input, Op, OpSpec, Output, Rank, TensorType,
                             TypeVar)

T = TypeVar("T", REAL)
R3, R2, R1 = Rank(exact=3), Rank(exact=2), Rank(exact=1)


def _infer(gates: int, activations: int, states: int):
    def infer(ctx):
        hidden = ctx.attrs["hidden_size"]
        rc.check_activations(ctx.attrs["activations"], activations)
        dirs = 2 if ctx.attrs["direction"] == "bidirectional" else 1
        H = Dimension.static(hidden)
        D = Dimension.static(dirs)
        x = ctx.input_shape(0)
        batch, steps, size = rc.dim(x, 0), rc.dim(x, 1), rc.dim(x, 2)
        for i in range(1, 1 + states):
            s = ctx.input_shape(i)
            name = ctx.spec.inputs[i].name
            batch = rc.merge_dim(batch, rc.dim(s, 0), f"X's batch and {name}'s")
            rc.merge_dim(rc.dim(s, 1), D, f"{name}'s directions and the direction attribute")
            rc.merge_dim(rc.dim(s, 2), H, f"{name}'s hidden size and hidden_size")
        lengths = ctx.input_shape(1 + states)
        batch = rc.merge_dim(batch, rc.dim(lengths, 0), "X's batch and sequence_lengths' size")
        w, r, b = (ctx.input_shape(i) for i in range(2 + states, 5 + states))
        rows = Dimension.static(gates * hidden)
        for name, s in (("W", w), ("R", r), ("B", b)):
            rc.merge_dim(rc.dim(s, 0), D, f"{name}'s directions and the direction attribute")
        rc.merge_dim(rc.dim(w, 1), rows, f"W's rows and {gates} * hidden_size")
        rc.merge_dim(rc.dim(r, 1), rows, f"R's rows and {gates} * hidden_size")
        rc.merge_dim(rc.dim(w, 2), size, "W's columns and X's input size")
        rc.merge_dim(rc.dim(r, 2), H, "R's columns and hidden_size")
        bias = 4 * hidden if ctx.attrs.get("linear_before_reset") else gates * hidden
        rc.merge_dim(rc.dim(b, 1), Dimension.static(bias), f"B's size and {bias // hidden} * "
                                                           f"hidden_size")
        values = ctx.input_value(1 + states)
        if values is not None and steps.is_static:
            v = np.asarray(values).astype(np.int64).reshape(-1)
            bad = (v < 0) | (v > steps.min)
            if bad.any():
                raise OpError(f"sequence_lengths[{int(np.flatnonzero(bad)[0])}] = "
                              f"{int(v[bad][0])} is not in [0, {steps.min}]", code="IR308")
        et = ctx.type_var("T")
        y = TensorType(et, PartialShape([batch, D, steps, H]))
        return [y] + [TensorType(et, PartialShape([batch, D, H]))] * states
    return infer


def _spec(type_, since, until, gates, states, extra_attrs=(), extra_inputs=(), doc="",
          activations=("sigmoid", "tanh", "tanh")):
    inputs = [Input("X", T, R3, doc="[batch, seq_length, input_size]"),
              Input("initial_hidden_state", T, R3, doc="[batch, num_directions, hidden_size]")]
    if states == 2:
        inputs.append(Input("initial_cell_state", T, R3,
                            doc="[batch, num_directions, hidden_size]"))
    inputs += [Input("sequence_lengths", INTEGER, R1,
                     doc="[batch]: each batch's real length, in [0, seq_length]"),
               Input("W", T, R3, doc=f"[num_directions, {gates} * hidden_size, input_size]"),
               Input("R", T, R3, doc=f"[num_directions, {gates} * hidden_size, hidden_size]"),
               Input("B", T, R2, doc=f"[num_directions, {gates} * hidden_size]"),
               *extra_inputs]
    outputs = [Output("Y", "[batch, num_directions, seq_length, hidden_size]: every step's "
                           "hidden state, 0 past a batch's length", type=T),
               Output("Ho", "[batch, num_directions, hidden_size]: the last hidden state",
                      type=T)]
    if states == 2:
        outputs.append(Output("Co", "[batch, num_directions, hidden_size]: the last cell state",
                              type=T))
    return OpSpec(type=type_, numerics="accumulating", since=since, until=until,
                  attrs=(*rc.attrs(direction=True, activations=activations), *extra_attrs),
                  inputs=tuple(inputs), outputs=tuple(outputs), doc=doc)


@register
class RNNSequence(Op):
    spec = _spec("RNNSequence", 5, None, 1, 1, activations=("tanh",),
                 doc="A simple recurrent network over a sequence.")
    infer = staticmethod(_infer(1, 1, 1))

    @staticmethod
    def kernel(X, H, lengths, W, R, B, *, hidden_size, activations, clip, direction, **_):
        gates = rc.Gates(activations, clip)
        return rc.sequence(X, lengths, [H], W, R, B, direction,
                           lambda r, b: (lambda xw, h: rc.rnn_step(xw, h, r, gates)),
                           lambda b: b)


@register
class GRUSequence(Op):
    spec = _spec("GRUSequence", 5, None, 3, 1, activations=("sigmoid", "tanh"),
                 extra_attrs=(Attr("linear_before_reset", "bool", default=False,
                                   doc="apply the linear transform before the reset gate"),),
                 doc="A gated recurrent unit over a sequence.")
    infer = staticmethod(_infer(3, 2, 1))

    @staticmethod
    def kernel(X, H, lengths, W, R, B, *, hidden_size, activations, clip, direction,
               linear_before_reset, **_):
        gates = rc.Gates(activations, clip)
        n = hidden_size

        def make_step(r, b):
            b_rh = b[3 * n:] if linear_before_reset else None
            return lambda xw, h: rc.gru_step(xw, h, r, b_rh, gates, linear_before_reset)
        return rc.sequence(X, lengths, [H], W, R, B, direction, make_step,
                           lambda b: b[:3 * n])


@register
class LSTMSequence5(Op):
    spec = _spec("LSTMSequence", 5, None, 4, 2,
                 doc="A long short-term memory network over a sequence.")
    infer = staticmethod(_infer(4, 3, 2))

    @staticmethod
    def kernel(X, H, C, lengths, W, R, B, *, hidden_size, activations, clip, direction, **_):
        gates = rc.Gates(activations, clip)
        return rc.sequence(X, lengths, [H, C], W, R, B, direction,
                           lambda r, b: (lambda xw, h, c: rc.lstm_step(xw, h, c, r, gates)),
                           lambda b: b)


@register
class LSTMSequence1(Op):
    spec = _spec("LSTMSequence", 1, 4, 4, 2,
                 extra_attrs=(Attr("input_forget", "bool", default=False,
                                   doc="couple the input and forget gates (i = 1 - f)"),
                              Attr("weights_format", "enum", default="fico", values=rc.FORMATS,
                                   doc="the order of the gate blocks in W, R and B")),
                 extra_inputs=(Input("P", T, R2, optional=True,
                                     doc="[num_directions, 3 * hidden_size] peepholes (f, i, o)"),),
                 doc="A long short-term memory network over a sequence, with optional "
                     "peepholes.")
    infer = staticmethod(_infer(4, 3, 2))

    @staticmethod
    def kernel(X, H, C, lengths, W, R, B, P=None, *, hidden_size, activations, clip, direction,
               input_forget, weights_format, **_):
        gates = rc.Gates(activations, clip)
        W, R, B = (rc.to_fico(a, weights_format, axis=1) for a in (W, R, B))
        dirs = {}

        def make_step(r, b):
            d = dirs.setdefault("next", 0)
            dirs["next"] = d + 1
            p = None if P is None else np.split(P[d].astype(r.dtype), 3)
            return lambda xw, h, c: rc.lstm_step(xw, h, c, r, gates, p, input_forget)
        return rc.sequence(X, lengths, [H, C], W, R, B, direction, make_step, lambda b: b)
