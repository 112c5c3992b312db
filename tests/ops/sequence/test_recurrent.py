"""Recurrent cells and sequences: against a float64 loop written from the specification's
equations, against OpenVINO's CPU plugin (built with OpenVINO's Python opset API, saved as IR),
and the reverse direction against ReverseSequence -> forward -> ReverseSequence."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder

RTOL, ATOL = 2e-5, 2e-5  # f32 against float64 references and OpenVINO, per step accumulations


def sig(x):
    return 1 / (1 + np.exp(-x))


ACT = {"sigmoid": sig, "tanh": np.tanh, "relu": lambda x: np.maximum(x, 0)}


def lstm_reference(X, H, C, lengths, W, R, B, acts=("sigmoid", "tanh", "tanh"), reverse=False):
    """One direction, float64, step by step: OpenVINO's masking (0 past each length)."""
    f, g, h = (ACT[a] for a in acts)
    batch, steps, _ = X.shape
    n = H.shape[-1]
    Y = np.zeros((batch, steps, n))
    Ho, Co = np.zeros_like(H, dtype=np.float64), np.zeros_like(C, dtype=np.float64)
    for b in range(batch):
        hb, cb = H[b].astype(np.float64), C[b].astype(np.float64)
        order = range(lengths[b] - 1, -1, -1) if reverse else range(lengths[b])
        for t in order:
            gates = W @ X[b, t] + R @ hb + B
            ft, it, ct, ot = f(gates[:n]), f(gates[n:2 * n]), g(gates[2 * n:3 * n]), \
                f(gates[3 * n:])
            cb = ft * cb + it * ct
            hb = ot * h(cb)
            Y[b, t] = hb
        if lengths[b] > 0:
            Ho[b], Co[b] = hb, cb
    return Y, Ho, Co


def _lstm_model(batch, steps, size, hidden, direction, acts=None, dynamic=False):
    dirs = 2 if direction == "bidirectional" else 1
    b = ModelBuilder()
    shape = lambda *d: [-1] * len(d) if dynamic else list(d)  # noqa: E731
    ins = [b.parameter("X", "f32", shape(batch, steps, size)),
           b.parameter("H", "f32", shape(batch, dirs, hidden)),
           b.parameter("C", "f32", shape(batch, dirs, hidden)),
           b.parameter("L", "i32", shape(batch)),
           b.parameter("W", "f32", shape(dirs, 4 * hidden, size)),
           b.parameter("R", "f32", shape(dirs, 4 * hidden, hidden)),
           b.parameter("B", "f32", shape(dirs, 4 * hidden))]
    attrs = {"hidden_size": hidden, "direction": direction}
    if acts:
        attrs["activations"] = acts
    y, ho, co = b.op("LSTMSequence", *ins, version="opset5", name="lstm", **attrs)
    for port, name in ((y, "Y"), (ho, "Ho"), (co, "Co")):
        b.result(port, name)
    return b.build()


def _inputs(rng, batch, steps, size, hidden, dirs, lengths):
    f = lambda *s: rng.uniform(-1, 1, s).astype(np.float32)  # noqa: E731
    return {"X": f(batch, steps, size), "H": f(batch, dirs, hidden), "C": f(batch, dirs, hidden),
            "L": np.array(lengths, np.int32), "W": f(dirs, 4 * hidden, size),
            "R": f(dirs, 4 * hidden, hidden), "B": f(dirs, 4 * hidden)}


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("lengths", [[5, 5, 5], [5, 2, 0], [1, 3, 4]])
@pytest.mark.parametrize("dynamic", [False, True])
def test_lstm_sequence_matches_the_equations(direction, lengths, dynamic):
    rng = np.random.default_rng(len(direction) + sum(lengths))
    batch, steps, size, hidden = 3, 5, 4, 2
    dirs = 2 if direction == "bidirectional" else 1
    inputs = _inputs(rng, batch, steps, size, hidden, dirs, lengths)
    out = dict(zip(["Y", "Ho", "Co"], irexec.compile_model(
        _lstm_model(batch, steps, size, hidden, direction, dynamic=dynamic))(inputs).values()))
    names = ["forward", "reverse"] if dirs == 2 else [direction]
    for d, name in enumerate(names):
        Y, Ho, Co = lstm_reference(inputs["X"], inputs["H"][:, d], inputs["C"][:, d], lengths,
                                   inputs["W"][d], inputs["R"][d], inputs["B"][d],
                                   reverse=name == "reverse")
        np.testing.assert_allclose(out["Y"][:, d], Y, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(out["Ho"][:, d], Ho, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(out["Co"][:, d], Co, rtol=RTOL, atol=ATOL)


def test_reverse_direction_is_reverse_sequence_around_the_forward_pass():
    rng = np.random.default_rng(5)
    batch, steps, size, hidden, lengths = 3, 6, 3, 4, [6, 3, 1]
    inputs = _inputs(rng, batch, steps, size, hidden, 1, lengths)
    reverse = dict(zip(["Y", "Ho", "Co"], irexec.compile_model(
        _lstm_model(batch, steps, size, hidden, "reverse"))(inputs).values()))
    # ReverseSequence -> forward LSTMSequence -> ReverseSequence, all irexec kernels.
    b = ModelBuilder()
    X = b.parameter("X", "f32", [batch, steps, size])
    rest = [b.parameter(n, t, s) for n, t, s in (
        ("H", "f32", [batch, 1, hidden]), ("C", "f32", [batch, 1, hidden]),
        ("L", "i32", [batch]), ("W", "f32", [1, 4 * hidden, size]),
        ("R", "f32", [1, 4 * hidden, hidden]), ("B", "f32", [1, 4 * hidden]))]
    flipped = b.op("ReverseSequence", X, rest[2], batch_axis=0, seq_axis=1)
    y, _, _ = b.op("LSTMSequence", flipped, *rest, version="opset5", hidden_size=hidden,
                   direction="forward")
    b.result(y, "Yf")
    forward = next(iter(irexec.compile_model(b.build())(inputs).values()))[:, 0]
    # Y of the forward pass over the flipped input, flipped back per length.
    back = forward.copy()
    for i, n in enumerate(lengths):
        back[i, :n] = forward[i, :n][::-1]
    np.testing.assert_array_equal(reverse["Y"][:, 0], back)


def _ov_case(ops, kind, direction, lengths, rng, acts=None, clip=0.0, lbr=False):
    batch, steps, size, hidden = len(lengths), 4, 3, 5
    dirs = 2 if direction == "bidirectional" else 1
    gates = {"lstm": 4, "gru": 3, "rnn": 1}[kind]
    f = lambda *s: rng.uniform(-1, 1, s).astype(np.float32)  # noqa: E731
    feed = {"X": f(batch, steps, size), "H": f(batch, dirs, hidden),
            "L": np.array(lengths, np.int32), "W": f(dirs, gates * hidden, size),
            "R": f(dirs, gates * hidden, hidden),
            "B": f(dirs, (4 if lbr else gates) * hidden)}
    if kind == "lstm":
        feed["C"] = f(batch, dirs, hidden)
    params = {k: ops.parameter(v.shape, v.dtype, name=k) for k, v in feed.items()}
    consts = {k: ops.constant(feed[k]) for k in ("W", "R", "B")}
    kw = {} if acts is None else {"activations": acts}
    if kind == "lstm":
        node = ops.lstm_sequence(params["X"], params["H"], params["C"], params["L"],
                                 consts["W"], consts["R"], consts["B"], hidden, direction,
                                 clip=clip, **kw)
    elif kind == "gru":
        node = ops.gru_sequence(params["X"], params["H"], params["L"], consts["W"],
                                consts["R"], consts["B"], hidden, direction, clip=clip,
                                linear_before_reset=lbr, **kw)
    else:
        node = ops.rnn_sequence(params["X"], params["H"], params["L"], consts["W"],
                                consts["R"], consts["B"], hidden, direction, clip=clip, **kw)
    feed = {k: v for k, v in feed.items() if k not in consts}
    return node, [params[k] for k in feed], feed


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("variant", ["plain", "masked", "activations", "clip"])
def test_sequences_agree_with_openvino(tmp_path, kind, direction, variant):
    ov = pytest.importorskip("openvino")
    import openvino.opset5 as ops

    rng = np.random.default_rng(hash((kind, direction, variant)) % 2**32)
    lengths = [4, 2, 0] if variant == "masked" else [4, 4, 4]
    acts = None
    if variant == "activations":
        acts = {"lstm": ["tanh", "relu", "sigmoid"], "gru": ["tanh", "relu"],
                "rnn": ["relu"]}[kind]
    clip = 0.7 if variant == "clip" else 0.0
    lbr = kind == "gru" and variant in ("clip", "masked")
    node, params, feed = _ov_case(ops, kind, direction, lengths, rng, acts, clip, lbr)
    model = ov.Model(node.outputs(), params, "seq")
    path = tmp_path / "seq.xml"
    ov.save_model(model, path, compress_to_fp16=False)
    ours = list(irexec.compile_model(irexec.read_model(path))(feed).values())
    core = ov.Core()
    compiled = core.compile_model(core.read_model(path), "CPU",
                                  {"INFERENCE_PRECISION_HINT": "f32"})
    result = compiled(feed)
    theirs = [result[o] for o in compiled.outputs]
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", ["lstm4", "lstm1", "gru", "gru_lbr", "rnn"])
def test_cells_agree_with_openvino(tmp_path, kind):
    ov = pytest.importorskip("openvino")
    import openvino.opset1 as o1
    import openvino.opset4 as o4

    rng = np.random.default_rng(3)
    batch, size, hidden = 3, 4, 5
    f = lambda *s: rng.uniform(-1, 1, s).astype(np.float32)  # noqa: E731
    gates = {"lstm4": 4, "lstm1": 4, "gru": 3, "gru_lbr": 3, "rnn": 1}[kind]
    X, H = o4.parameter([batch, size], np.float32, name="X"), \
        o4.parameter([batch, hidden], np.float32, name="H")
    W, R = o4.constant(f(gates * hidden, size)), o4.constant(f(gates * hidden, hidden))
    feed = {"X": f(batch, size), "H": f(batch, hidden)}
    params = [X, H]
    if kind.startswith("lstm"):
        C = o4.parameter([batch, hidden], np.float32, name="C")
        params.append(C)
        feed["C"] = f(batch, hidden)
        B = o4.constant(f(4 * hidden))
        if kind == "lstm1":
            node = o1.lstm_cell(X, H, C, W, R, B, hidden)
        else:
            node = o4.lstm_cell(X, H, C, W, R, B, hidden, clip=0.5)
    elif kind.startswith("gru"):
        lbr = kind == "gru_lbr"
        B = o4.constant(f((4 if lbr else 3) * hidden))
        node = o4.gru_cell(X, H, W, R, B, hidden, linear_before_reset=lbr)
    else:
        node = o4.rnn_cell(X, H, W, R, o4.constant(f(hidden)), hidden,
                           activations=["sigmoid"], activations_alpha=[], activations_beta=[])
    path = tmp_path / "cell.xml"
    ov.save_model(ov.Model(node.outputs(), params, "cell"), path, compress_to_fp16=False)
    ours = list(irexec.compile_model(irexec.read_model(path))(feed).values())
    core = ov.Core()
    compiled = core.compile_model(core.read_model(path), "CPU",
                                  {"INFERENCE_PRECISION_HINT": "f32"})
    result = compiled(feed)
    for a, o in zip(ours, compiled.outputs):
        np.testing.assert_allclose(a, result[o], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("change, words", [
    ({"hidden_size": 3}, "hidden size and hidden_size"),
    ({"activations": ["sigmoid", "softsign", "tanh"]}, "activation 'softsign'"),
])
def test_bad_attributes_are_one_diagnostic(change, words):
    b = ModelBuilder()
    ins = [b.parameter(n, t, s) for n, t, s in (
        ("X", "f32", [2, 3, 4]), ("H", "f32", [2, 1, 2]), ("C", "f32", [2, 1, 2]),
        ("L", "i32", [2]), ("W", "f32", [1, 8, 4]), ("R", "f32", [1, 8, 2]),
        ("B", "f32", [1, 8]))]
    attrs = {"hidden_size": 2, "direction": "forward", **change}
    outs = b.op("LSTMSequence", *ins, version="opset5", name="lstm", **attrs)
    b.result(outs[0], "Y")
    with pytest.raises(irexec.IRError) as info:
        b.build()
    assert len(info.value.diagnostics) == 1 and words in str(info.value)


def test_constant_lengths_beyond_the_sequence_are_ir308():
    b = ModelBuilder()
    ins = [b.parameter(n, t, s) for n, t, s in (
        ("X", "f32", [2, 3, 4]), ("H", "f32", [2, 1, 2]), ("C", "f32", [2, 1, 2]))]
    lengths = b.constant(np.array([3, 4], np.int32))
    w = [b.parameter(n, "f32", s) for n, s in (("W", [1, 8, 4]), ("R", [1, 8, 2]),
                                                ("B", [1, 8]))]
    outs = b.op("LSTMSequence", *ins, lengths, *w, version="opset5", hidden_size=2,
                direction="forward")
    b.result(outs[1], "Ho")
    with pytest.raises(irexec.IRError) as info:
        b.build()
    assert info.value.code == "IR308" and "sequence_lengths[1] = 4" in str(info.value)
