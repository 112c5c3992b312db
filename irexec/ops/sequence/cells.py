"""RNNCell-3, GRUCell-3, LSTMCell-1 and LSTMCell-4: one step of a recurrent network
(irexec/ops/sequence/recurrent.py holds the arithmetic)."""

import numpy as np

from irexec.ir.shape import PartialShape
from irexec.ops.spec import register
from irexec.ops.sequence import recurrent as rc
from irexec.ops.spec import (REAL, Attr, Input, Op, OpSpec, Output, Rank, TensorType, TypeVar)

T = TypeVar("T", REAL)
MATRIX, VECTOR = Rank(exact=2), Rank(exact=1)


def _infer(gates: int, activations: int, bias: int | None = None):
    """[batch, hidden] states from X [batch, input], H [batch, hidden], W [gates*hidden, input],
    R [gates*hidden, hidden], B [bias*hidden]; every dim checked where known."""
    def infer(ctx):
        hidden = ctx.attrs["hidden_size"]
        rc.check_activations(ctx.attrs["activations"], activations)
        x = ctx.input_shape(0)
        batch = rc.dim(x, 0)
        for i, name in ((1, "initial_hidden_state"), (2, "initial_cell_state")):
            if i < ctx.num_inputs and ctx.spec.inputs[i].name == name:
                s = ctx.input_shape(i)
                batch = rc.merge_dim(batch, rc.dim(s, 0), f"batch of input 0 and {name}")
                rc.merge_dim(rc.dim(s, 1), PartialShape([hidden])[0], f"{name}'s hidden size "
                                                                      f"and hidden_size")
        names = [i.name for i in ctx.spec.inputs]
        w, r, b = names.index("W"), names.index("R"), names.index("B")
        want = PartialShape([gates * hidden])[0]
        for i in (w, r):
            rc.merge_dim(rc.dim(ctx.input_shape(i), 0), want,
                         f"input {i} ({names[i]}) rows and {gates} * hidden_size")
        rc.merge_dim(rc.dim(ctx.input_shape(w), 1), rc.dim(x, 1), "W's columns and X's input size")
        rc.merge_dim(rc.dim(ctx.input_shape(r), 1), PartialShape([hidden])[0],
                     "R's columns and hidden_size")
        size = (bias or gates) * hidden
        if ctx.attrs.get("linear_before_reset"):
            size = 4 * hidden
        rc.merge_dim(rc.dim(ctx.input_shape(b), 0), PartialShape([size])[0],
                     f"B's size and {size // hidden} * hidden_size")
        out = TensorType(ctx.type_var("T"), PartialShape([batch, hidden]))
        return [out] * len(ctx.spec.outputs)
    return infer


def _run(step, X, states, W, R, B, x_bias):
    dtype = X.dtype
    dt = rc.compute_dtype(dtype)
    X, W, R, B = (a.astype(dt, copy=False) for a in (X, W, R, B))
    states = [s.astype(dt, copy=False) for s in states]
    new = step(X @ W.T + x_bias(B), *states)
    new = new if isinstance(new, tuple) else (new,)
    new = tuple(s.astype(dtype, copy=False) for s in new)
    return new if len(new) > 1 else new[0]


def _cell_spec(type_, since, until, inputs, outputs, attrs, doc):
    return OpSpec(type=type_, numerics="accumulating", since=since, until=until, attrs=attrs,
                  inputs=tuple(Input(n, T, rank, doc=d, optional=o) for n, rank, d, o in inputs),
                  outputs=tuple(Output(n, d, type=T) for n, d in outputs), doc=doc)


X_IN = ("X", MATRIX, "[batch, input_size]", False)
H_IN = ("initial_hidden_state", MATRIX, "[batch, hidden_size]", False)
C_IN = ("initial_cell_state", MATRIX, "[batch, hidden_size]", False)


@register
class RNNCell(Op):
    spec = _cell_spec(
        "RNNCell", 1, None,
        (X_IN, H_IN, ("W", MATRIX, "[hidden_size, input_size]", False),
         ("R", MATRIX, "[hidden_size, hidden_size]", False),
         ("B", VECTOR, "[hidden_size]", False)),
        (("Ho", "the next hidden state [batch, hidden_size]"),),
        rc.attrs(activations=("tanh",)),
        "One step of a simple recurrent network: H' = f(X*W^T + H*R^T + B).")
    infer = staticmethod(_infer(1, 1))

    @staticmethod
    def kernel(X, H, W, R, B, *, hidden_size, activations, clip, **_):
        gates = rc.Gates(activations, clip)
        return _run(lambda xw, h: rc.rnn_step(xw, h, R.astype(xw.dtype), gates),
                    X, [H], W, R, B, lambda b: b)


def _gru_bias(b, linear_before_reset):
    n = b.shape[-1] // (4 if linear_before_reset else 3)
    return b[:3 * n] if linear_before_reset else b


@register
class GRUCell(Op):
    spec = _cell_spec(
        "GRUCell", 3, None,
        (X_IN, H_IN, ("W", MATRIX, "[3 * hidden_size, input_size], gates z, r, h", False),
         ("R", MATRIX, "[3 * hidden_size, hidden_size], gates z, r, h", False),
         ("B", VECTOR, "[3 * hidden_size], or [4 * hidden_size] with linear_before_reset (h's "
                       "W and R biases apart)", False)),
        (("Ho", "the next hidden state [batch, hidden_size]"),),
        (*rc.attrs(activations=("sigmoid", "tanh")),
         Attr("linear_before_reset", "bool", default=False,
              doc="apply the linear transform before multiplying by the reset gate")),
        "One step of a gated recurrent unit.")
    infer = staticmethod(_infer(3, 2))

    @staticmethod
    def kernel(X, H, W, R, B, *, hidden_size, activations, clip, linear_before_reset, **_):
        gates = rc.Gates(activations, clip)
        n = hidden_size

        def step(xw, h):
            b = B.astype(xw.dtype)
            return rc.gru_step(xw, h, R.astype(xw.dtype), b[3 * n:] if linear_before_reset
                               else None, gates, linear_before_reset)
        return _run(step, X, [H], W, R, B, lambda b: _gru_bias(b, linear_before_reset))


@register
class LSTMCell1(Op):
    spec = _cell_spec(
        "LSTMCell", 1, 3,
        (X_IN, H_IN, C_IN, ("W", MATRIX, "[4 * hidden_size, input_size]", False),
         ("R", MATRIX, "[4 * hidden_size, hidden_size]", False),
         ("B", VECTOR, "[4 * hidden_size]", False),
         ("P", VECTOR, "[3 * hidden_size] peephole weights (f, i, o)", True)),
        (("Ho", "the next hidden state"), ("Co", "the next cell state")),
        (*rc.attrs(), Attr("input_forget", "bool", default=False,
                           doc="couple the input and forget gates (i = 1 - f)"),
         Attr("weights_format", "enum", default="fico", values=rc.FORMATS,
              doc="the order of the gate blocks in W, R and B")),
        "One step of a long short-term memory network, with optional peepholes.")
    infer = staticmethod(_infer(4, 3))

    @staticmethod
    def kernel(X, H, C, W, R, B, P=None, *, hidden_size, activations, clip, input_forget,
               weights_format, **_):
        gates = rc.Gates(activations, clip)
        W, R, B = (rc.to_fico(a, weights_format) for a in (W, R, B))

        def step(xw, h, c):
            p = None if P is None else np.split(P.astype(xw.dtype), 3)
            return rc.lstm_step(xw, h, c, R.astype(xw.dtype), gates, p, input_forget)
        return _run(step, X, [H, C], W, R, B, lambda b: b)


@register
class LSTMCell4(Op):
    spec = _cell_spec(
        "LSTMCell", 4, None,
        (X_IN, H_IN, C_IN, ("W", MATRIX, "[4 * hidden_size, input_size], gates f, i, c, o",
                            False),
         ("R", MATRIX, "[4 * hidden_size, hidden_size], gates f, i, c, o", False),
         ("B", VECTOR, "[4 * hidden_size]", False)),
        (("Ho", "the next hidden state"), ("Co", "the next cell state")),
        rc.attrs(),
        "One step of a long short-term memory network.")
    infer = staticmethod(_infer(4, 3))

    @staticmethod
    def kernel(X, H, C, W, R, B, *, hidden_size, activations, clip, **_):
        gates = rc.Gates(activations, clip)
        return _run(lambda xw, h, c: rc.lstm_step(xw, h, c, R.astype(xw.dtype), gates),
                    X, [H, C], W, R, B, lambda b: b)
