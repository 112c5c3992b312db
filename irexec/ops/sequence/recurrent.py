"""The arithmetic of OpenVINO's recurrent cells and sequences, shared by RNN, GRU and LSTM.

Gate orders are OpenVINO's: LSTM ``f, i, c, o`` (weights formats of LSTM-1 are reordered to it),
GRU ``z, r, h``. ``clip`` > 0 clamps every gate's pre-activation to [-clip, clip] (0 means no
clip, as OpenVINO writes the default). A sequence follows OpenVINO's reference: the reverse
direction reverses each batch's first ``length`` steps, runs forward and reverses the outputs
back; when some length differs from the sequence length, outputs past a batch's length are 0 and
its final state is the one at its last step (0 for a length of 0).

f16 and bf16 compute in f32 and round once per output, f32 and f64 in their own type.
"""

from __future__ import annotations

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.spec import Attr

ACTIVATIONS = ("relu", "sigmoid", "tanh")


def attrs(hidden: bool = True, activations: tuple[str, ...] = ("sigmoid", "tanh", "tanh"),
          direction: bool = False) -> tuple[Attr, ...]:
    out = [
        Attr("hidden_size", "uint", doc="the size of the hidden state"),
        Attr("activations", "string_list", default=activations,
             doc=f"the gates' activation functions (relu, sigmoid, tanh); default "
                 f"{','.join(activations)}"),
        Attr("activations_alpha", "float_list", default=(), doc="unused by these activations"),
        Attr("activations_beta", "float_list", default=(), doc="unused by these activations"),
        Attr("clip", "float", default=0.0,
             doc="clamp gate pre-activations to [-clip, clip]; 0 or inf for none"),
    ]
    if direction:
        out.append(Attr("direction", "enum", values=("forward", "reverse", "bidirectional"),
                        doc="the direction(s) to walk the sequence"))
    return tuple(out)


def _act(name: str):
    if name == "relu":
        return lambda x: np.maximum(x, 0, out=x)
    if name == "sigmoid":
        def sigmoid(x):
            # 1 / (1 + exp(-x)) without overflow warnings for large |x|.
            with np.errstate(over="ignore"):
                return np.reciprocal(1 + np.exp(-x))
        return sigmoid
    if name == "tanh":
        return np.tanh
    raise OpError(f"activation '{name}' is not one of {', '.join(ACTIVATIONS)}", code="IR302")


def check_activations(names, count: int) -> None:
    if len(names) < count:
        raise OpError(f"activations lists {len(names)} functions; this cell needs {count}",
                      code="IR302")
    for n in names[:count]:
        _act(n.strip().lower())


def compute_dtype(dtype: np.dtype) -> np.dtype:
    return dtype if dtype in (np.float32, np.float64) else np.dtype(np.float32)


class Gates:
    """Activation functions with the clip applied first."""

    def __init__(self, names, clip: float):
        self.fns = [_act(n.strip().lower()) for n in names]
        self.clip = clip if clip > 0 and np.isfinite(clip) else None

    def __call__(self, i: int, x: np.ndarray, clip: bool = True) -> np.ndarray:
        if self.clip is not None and clip:
            x = np.clip(x, -self.clip, self.clip)
        return self.fns[i](x)


def rnn_step(x_w, h, R, gates: Gates):
    """Ht = f(Xt*W^T + Ht-1*R^T + B), with ``x_w`` = Xt*W^T + B."""
    return gates(0, x_w + h @ R.T)


def gru_step(x_w, h, R, b_rh, gates: Gates, linear_before_reset: bool):
    """``x_w`` = Xt*W^T + the biases that add to it (z, r, and h's W bias, or h's W+R bias)."""
    n = h.shape[-1]
    h_r = h @ R[:2 * n].T
    z = gates(0, x_w[:, :n] + h_r[:, :n])
    r = gates(0, x_w[:, n:2 * n] + h_r[:, n:])
    if linear_before_reset:
        cand = gates(1, x_w[:, 2 * n:] + r * (h @ R[2 * n:].T + b_rh))
    else:
        cand = gates(1, x_w[:, 2 * n:] + (r * h) @ R[2 * n:].T)
    return (1 - z) * cand + z * h


def lstm_step(x_w, h, c, R, gates: Gates, peepholes=None, input_forget: bool = False):
    """``x_w`` = Xt*W^T + B in gate order f, i, c, o; ``peepholes`` (f, i, o) for LSTM-1."""
    n = h.shape[-1]
    g = x_w + h @ R.T
    f_pre, i_pre, c_pre, o_pre = g[:, :n], g[:, n:2 * n], g[:, 2 * n:3 * n], g[:, 3 * n:]
    if peepholes is not None:
        f_pre = f_pre + peepholes[0] * c
        i_pre = i_pre + peepholes[1] * c
    f = gates(0, f_pre)
    i = 1 - f if input_forget else gates(0, i_pre)
    cand = gates(1, c_pre)
    c_new = f * c + i * cand
    if peepholes is not None:
        o_pre = o_pre + peepholes[2] * c_new
    o = gates(0, o_pre)
    return o * gates(2, c_new, clip=False), c_new


def reverse_by_lengths(x: np.ndarray, lengths: np.ndarray, axis: int = 1) -> np.ndarray:
    """Each batch's (axis 0) first ``length`` steps along ``axis`` reversed (ReverseSequence)."""
    out = x.copy()
    for b, n in enumerate(lengths):
        if n > 1:
            index = [b] + [slice(None)] * (x.ndim - 1)
            index[axis] = slice(0, int(n))
            out[tuple(index)] = x[tuple(index)][::-1] if axis == 1 else \
                np.flip(x[tuple(index)], axis - 1)
    return out


def run_direction(X, lengths, states, step, reverse: bool):
    """One direction of a sequence: X [batch, T, input] already multiplied by W^T (plus biases)
    as ``X`` [batch, T, gates]; ``states`` the initial states ([batch, hidden] each); ``step``
    maps (x_w, *states) to the new states (hidden first). Returns Y [batch, T, hidden] and the
    final states."""
    batch, steps = X.shape[0], X.shape[1]
    lengths = np.asarray(lengths).astype(np.int64).reshape(-1)
    masked = bool((lengths != steps).any())
    if reverse:
        X = reverse_by_lengths(X, lengths)
    hidden = states[0].shape[-1]
    Y = np.zeros((batch, steps, hidden), dtype=X.dtype)
    finals = [np.zeros_like(s) for s in states] if masked else None
    for t in range(steps):
        new = step(X[:, t], *states)
        new = new if isinstance(new, tuple) else (new,)
        if masked:
            alive = (t < lengths)[:, None]
            new = tuple(np.where(alive, s, 0) for s in new)
            last = (t == lengths - 1)[:, None]
            finals = [np.where(last, s, f) for s, f in zip(new, finals)]
        Y[:, t] = new[0]
        states = new
    if not masked:
        finals = list(states)
    if reverse:
        Y = reverse_by_lengths(Y, lengths)
    return Y, finals


def sequence(X, lengths, initial, W, R, B, direction: str, make_step, x_bias):
    """Every direction of a sequence op. ``initial`` is a list of [batch, dirs, hidden] states;
    W/R/B carry the directions first. ``x_bias(B_d)`` is the bias added to X*W^T per direction,
    ``make_step(R_d, B_d)`` the step function. Returns Y [batch, dirs, T, hidden] and the final
    states [batch, dirs, hidden], in the input's element type."""
    out_dtype = X.dtype
    dt = compute_dtype(out_dtype)
    X, W, R, B = (a.astype(dt, copy=False) for a in (X, W, R, B))
    initial = [s.astype(dt, copy=False) for s in initial]
    dirs = ["forward", "reverse"] if direction == "bidirectional" else [direction]
    ys, finals = [], [[] for _ in initial]
    for d, name in enumerate(dirs):
        xw = X @ W[d].T + x_bias(B[d])
        y, fin = run_direction(xw, lengths, [s[:, d] for s in initial], make_step(R[d], B[d]),
                               name == "reverse")
        ys.append(y)
        for k, f in enumerate(fin):
            finals[k].append(f)
    Y = np.stack(ys, axis=1).astype(out_dtype, copy=False)
    return (Y, *(np.stack(f, axis=1).astype(out_dtype, copy=False) for f in finals))


# --- shapes ------------------------------------------------------------------------------------

def merge_dim(a: Dimension, b: Dimension, what: str) -> Dimension:
    merged = a.merge(b)
    if merged is None:
        raise OpError(f"{what}: {a} and {b} differ", code="IR307")
    return merged


def dim(shape: PartialShape, i: int) -> Dimension:
    return shape[i] if shape.rank_is_static else Dimension.dynamic()


FORMATS = ("fico", "icof", "ifco", "ifoc", "iofc")


def to_fico(a: np.ndarray, fmt: str, axis: int = 0) -> np.ndarray:
    """Gate blocks of an LSTM-1 weight or bias reordered from ``fmt`` to f, i, c, o."""
    if fmt == "fico":
        return a
    parts = np.split(a, 4, axis=axis)
    return np.concatenate([parts[fmt.index(g)] for g in "fico"], axis=axis)
