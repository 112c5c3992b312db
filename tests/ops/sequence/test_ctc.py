"""The CTC ops: greedy decoding against a per-step loop, CTCLoss against the sum over every path
(enumerated), errors, and OpenVINO."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.errors import IRError
from tests.ops.build import run_op
from tests.ops.shapeops_oracle import check, openvino


def greedy_loop(scores, length, blank, merge):
    out, prev = [], -1
    for t in range(length):
        c = int(np.argmax(scores[t]))
        if c != blank and not (merge and c == prev):
            out.append(c)
        prev = c
    return out


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 3), t=st.integers(1, 6),
       c=st.integers(2, 4), merge=st.booleans())
def test_greedy_decoders_match_a_loop(seed, n, t, c, merge):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 3, (n, t, c)).astype(np.float32)  # ties: the first maximum wins
    lengths = rng.integers(0, t + 1, n).astype(np.int32)
    blank = int(rng.integers(0, c))
    decoded, counts = run_op("CTCGreedyDecoderSeqLen", data, lengths, np.array(blank, np.int32),
                             version="opset6", merge_repeated=merge,
                             classes_index_type="i64")[0]
    assert decoded.dtype == np.int64 and counts.dtype == np.int32
    mask = (np.arange(t) < lengths[:, None]).T.astype(np.float32)
    (old,), _ = run_op("CTCGreedyDecoder", data.transpose(1, 0, 2), mask, version="opset1",
                       ctc_merge_repeated=merge)
    assert old.shape == (n, t, 1, 1) and old.dtype == np.float32
    for i in range(n):
        want = greedy_loop(data[i], lengths[i], blank, merge)
        assert decoded[i].tolist() == want + [-1] * (t - len(want)) and counts[i] == len(want)
        want_old = greedy_loop(data[i], lengths[i], c - 1, merge)
        assert old[i, :, 0, 0].tolist() == want_old + [-1] * (t - len(want_old))


def test_greedy_decoder_1_stops_at_the_first_zero_of_the_mask():
    data = np.zeros((4, 1, 3), np.float32)
    data[:, 0, 0] = [1, 0, 1, 1]
    data[1, 0, 1] = 1
    mask = np.array([[1], [1], [0], [1]], np.float32)
    (out,), _ = run_op("CTCGreedyDecoder", data, mask, version="opset1")
    assert out[0, :, 0, 0].tolist() == [0, 1, -1, -1]


def spec_loss(logits, label, blank, merge):
    """-ln of the summed probability of every path (enumerated) that decodes to the label."""
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    total = 0.0
    for path in itertools.product(range(logits.shape[1]), repeat=logits.shape[0]):
        decoded, prev = [], None
        for c in path:
            if c != blank and not (merge and c == prev):
                decoded.append(c)
            prev = c
        if decoded == list(label):
            total += np.prod([p[t, c] for t, c in enumerate(path)])
    return -np.log(total) if total > 0 else np.inf


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), t=st.integers(1, 4), c=st.integers(2, 3),
       merge=st.booleans(), collapse=st.booleans(), unique=st.booleans())
def test_loss_is_the_sum_over_aligned_paths(seed, t, c, merge, collapse, unique):
    rng = np.random.default_rng(seed)
    n = 2
    logits = rng.standard_normal((n, t, c)).astype(np.float64)
    logit_len = rng.integers(0, t + 1, n).astype(np.int32)
    label_len = np.array([rng.integers(0, k + 1) for k in logit_len], np.int32)
    blank = int(rng.integers(0, c))
    labels = rng.choice([k for k in range(c) if k != blank], size=(n, t)).astype(np.int64)
    (got,), _ = run_op("CTCLoss", logits, logit_len, labels, label_len, np.array(blank, np.int64),
                       version="opset4", ctc_merge_repeated=merge,
                       preprocess_collapse_repeated=collapse, unique=unique)
    for i in range(n):
        target = list(labels[i, :label_len[i]])
        if unique:
            target = [v for j, v in enumerate(target) if v not in target[:j]]
        elif collapse:
            target = [v for j, v in enumerate(target) if j == 0 or v != target[j - 1]]
        want = spec_loss(logits[i, :logit_len[i]], target, blank, merge)
        if np.isinf(want):
            assert got[i] == np.inf
        else:
            np.testing.assert_allclose(got[i], want, rtol=1e-9)


def test_empty_label_is_the_all_blank_path():
    logits = np.log(np.array([[[0.25, 0.75], [0.5, 0.5]]], np.float32))
    (got,), _ = run_op("CTCLoss", logits, np.array([2], np.int32), np.zeros((1, 2), np.int32),
                       np.array([0], np.int32), version="opset4")
    np.testing.assert_allclose(got, [-np.log(0.75 * 0.5)], rtol=1e-6)


@pytest.mark.parametrize("lengths, label_lengths, code", [
    ([3, 1], [1, 1], "IR308"), ([2, 1], [1, 2], "IR308"), ([-1, 1], [0, 0], "IR308")])
def test_bad_lengths(lengths, label_lengths, code):
    with pytest.raises(IRError) as e:
        run_op("CTCLoss", np.zeros((2, 2, 3), np.float32), np.array(lengths, np.int32),
               np.zeros((2, 2), np.int32), np.array(label_lengths, np.int32), version="opset4")
    assert e.value.code == code


def test_bad_blank_and_lengths_for_the_decoder():
    for args, code in (([np.array([3, 1], np.int32)], "IR308"),
                       ([np.array([1, 1], np.int32), np.array(5, np.int32)], "IR325")):
        with pytest.raises(IRError) as e:
            run_op("CTCGreedyDecoderSeqLen", np.zeros((2, 2, 3), np.float32), *args,
                   version="opset6")
        assert e.value.code == code


def test_openvino_conformance(tmp_path):
    openvino()
    import openvino.opset1 as o1
    import openvino.opset4 as o4
    import openvino.opset6 as o6
    n, t, c = 3, 6, 5
    data = o1.parameter([n, t, c], np.float32)
    lens = o1.parameter([n], np.int32)
    blank = o1.parameter([], np.int32)
    labels = o1.parameter([n, t], np.int32)
    label_lens = o1.parameter([n], np.int32)
    tnc = o1.parameter([t, n, c], np.float32)
    mask = o1.parameter([t, n], np.float32)
    outs = []
    for merge in (True, False):
        dec = o6.ctc_greedy_decoder_seq_len(data, lens, blank, merge_repeated=merge)
        outs += [dec.output(0), dec.output(1)]
        outs.append(o1.ctc_greedy_decoder(tnc, mask, merge_repeated=merge).output(0))
    for merge, collapse, unique in ((True, False, False), (False, False, False),
                                    (True, True, False), (True, False, True)):
        outs.append(o4.ctc_loss(data, lens, labels, label_lens, blank,
                                preprocess_collapse_repeated=collapse, ctc_merge_repeated=merge,
                                unique=unique).output(0))
    rng = np.random.default_rng(7)
    feeds = []
    for _ in range(3):
        scores = rng.integers(0, 4, (n, t, c)).astype(np.float32)
        lengths = rng.integers(1, t + 1, n).astype(np.int32)
        feeds.append([scores, lengths, np.array(rng.integers(0, c), np.int32),
                      rng.integers(0, 3, (n, t)).astype(np.int32),
                      np.array([rng.integers(1, k + 1) // 2 + 1 for k in lengths], np.int32)
                      .clip(1, lengths), scores.transpose(1, 0, 2).copy(),
                      (np.arange(t)[:, None] < lengths[None, :]).astype(np.float32)])
        # labels avoid the blank: shift them past it
        feeds[-1][3] = np.where(feeds[-1][3] >= feeds[-1][2], feeds[-1][3] + 1, feeds[-1][3])
    check(tmp_path, outs, [data, lens, blank, labels, label_lens, tnc, mask], feeds,
          exact=False, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("label, blank", [(3, 2), (2, 2), (-1, 2)])
def test_labels_must_be_classes_other_than_the_blank(label, blank):
    with pytest.raises(IRError) as e:
        run_op("CTCLoss", np.zeros((1, 2, 3), np.float32), np.array([2], np.int32),
               np.array([[0, label]], np.int32), np.array([2], np.int32),
               np.array(blank, np.int32), version="opset4")
    assert e.value.code == "IR308"


def test_labels_past_their_length_are_not_read():
    (got,), _ = run_op("CTCLoss", np.zeros((1, 2, 3), np.float32), np.array([2], np.int32),
                       np.array([[0, 7]], np.int32), np.array([1], np.int32), version="opset4")
    assert np.isfinite(got).all()
