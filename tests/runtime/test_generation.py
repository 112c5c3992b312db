"""Greedy generation (irexec/generation.py, ``irexec generate``) on small hand-made decoders in
optimum-intel's two layouts: stateful (the cache in a ReadValue/Assign variable, reordered by
beam_idx) and stateless (past_key_values.* in, present.* out). Their tokens are checked against
a plain numpy loop that recomputes the whole sequence at every step (no cache), so the cache,
the growing mask, the positions and the left padding must all be right; the loop's own rules
(ties, end of sequence, padding) against a scripted runner."""

from __future__ import annotations

import json

import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder
from irexec.errors import IRError
from irexec.generation import Generation, Port, decode, left_padded, positions

V, H, MAXPOS = 23, 8, 64
RNG = np.random.default_rng(7)
EMBED = RNG.normal(size=(V, H)).astype(np.float32)
POS = RNG.normal(size=(MAXPOS, H)).astype(np.float32) * 0.5
OUT = RNG.normal(size=(V, H)).astype(np.float32)


def _hidden(b, ids, pos):
    h = b.op("Gather", b.constant(EMBED), ids, b.constant(np.array(0, np.int64)),
             version="opset8", batch_dims=0)
    if pos is None:
        return h
    p = b.op("Gather", b.constant(POS), pos, b.constant(np.array(0, np.int64)),
             version="opset8", batch_dims=0)
    return b.op("Add", h, p)


def _head(b, h, everything, mask):
    m = b.op("Unsqueeze", b.op("Convert", mask, destination_type="f32"),
             b.constant(np.array([2], np.int64)))
    total = b.op("ReduceSum", b.op("Multiply", everything, m),
                 b.constant(np.array([1], np.int64)), keep_dims=True)
    count = b.op("ReduceSum", m, b.constant(np.array([1], np.int64)), keep_dims=True)
    context = b.op("Divide", total, count)
    return b.op("MatMul", b.op("Tanh", b.op("Add", h, context)), b.constant(OUT),
                transpose_a=False, transpose_b=True, name="logits")


def stateful_decoder(with_positions=True, initializer=True):
    """``initializer``: the cache starts as optimum-intel's Broadcast of zeros to [batch, 0, H];
    without, as the ReadValue's own zeros (the form OpenVINO's CPU plugin also runs on a model
    without attention: it refuses the Broadcast there)."""
    b = ModelBuilder("toy_stateful")
    ids = b.parameter("input_ids", "i64", [-1, -1])
    mask = b.parameter("attention_mask", "i64", [-1, -1])
    pos = b.parameter("position_ids", "i64", [-1, -1]) if with_positions else None
    beams = b.parameter("beam_idx", "i32", [-1])
    h = _hidden(b, ids, pos)
    # the cache before the first step: zeros of [batch, 0, H], as optimum-intel builds it
    batch = b.op("Gather", b.op("ShapeOf", ids, version="opset3"),
                 b.constant(np.array([0], np.int64)), b.constant(np.array(0, np.int64)),
                 version="opset8", batch_dims=0)
    shape = b.op("Concat", batch, b.constant(np.array([0, H], np.int64)), axis=0)
    init = b.op("Broadcast", b.constant(np.array(0, np.float32)), shape, version="opset3")
    past = b.op("ReadValue", *[init] * initializer, version="opset6", variable_id="kv",
                variable_type="f32", variable_shape=irexec.PartialShape([-1, -1, H]))
    past = b.op("Gather", past, beams, b.constant(np.array(0, np.int64)), version="opset8",
                batch_dims=0)
    everything = b.op("Concat", past, h, axis=1)
    b.op("Assign", everything, version="opset6", variable_id="kv")
    b.result(_head(b, h, everything, mask))
    return b.build()


def stateless_decoder():
    b = ModelBuilder("toy_stateless")
    ids = b.parameter("input_ids", "i64", [-1, -1])
    mask = b.parameter("attention_mask", "i64", [-1, -1])
    pos = b.parameter("position_ids", "i64", [-1, -1])
    past = b.parameter("past_key_values.0.key", "f32", [-1, -1, H])
    h = _hidden(b, ids, pos)
    everything = b.op("Concat", past, h, axis=1, name="present.0.key")
    b.result(_head(b, h, everything, mask))
    b.result(everything)
    return b.build()


def reference(prompts, steps, pad=0, with_positions=True):
    """Greedy tokens by recomputing the whole left-padded sequence at every step."""
    ids, mask = left_padded(prompts, pad)
    out = [[] for _ in prompts]
    for _ in range(steps):
        pos = positions(mask)
        h = EMBED[ids] + (POS[pos] if with_positions else 0)
        m = mask[..., None].astype(np.float32)
        context = (h * m).sum(1, keepdims=True) / m.sum(1, keepdims=True)
        logits = np.tanh(h[:, -1:] + context) @ OUT.T
        chosen = np.argmax(logits[:, -1], axis=-1)
        for row, t in enumerate(chosen):
            out[row].append(int(t))
        ids = np.concatenate([ids, chosen[:, None]], axis=1)
        mask = np.concatenate([mask, np.ones((len(prompts), 1), np.int64)], axis=1)
    return out


PROMPTS = [[[3, 9, 4]], [[3, 9, 4], [5], [1, 2, 3, 4, 5, 6]], [[7, 7], [8, 2, 11]]]


@pytest.mark.parametrize("prompts", PROMPTS, ids=["one", "three", "two"])
def test_stateful_generation_matches_a_full_recomputation(prompts):
    compiled = irexec.compile_model(stateful_decoder())
    got = irexec.generate(compiled, prompts, max_new_tokens=12)
    assert got == reference(prompts, 12)
    # the state is reset at the start of each generation: the same tokens again
    assert irexec.generate(compiled, prompts, max_new_tokens=12) == got


def test_a_cache_without_initializer():
    compiled = irexec.compile_model(stateful_decoder(initializer=False))
    prompts = [[3, 9, 4], [5]]
    assert irexec.generate(compiled, prompts, max_new_tokens=8) == reference(prompts, 8)


def test_a_model_without_position_ids():
    compiled = irexec.compile_model(stateful_decoder(with_positions=False))
    prompts = [[3, 9, 4], [5]]
    assert irexec.generate(compiled, prompts, max_new_tokens=8) == \
        reference(prompts, 8, with_positions=False)


@pytest.mark.parametrize("prompts", PROMPTS, ids=["one", "three", "two"])
def test_stateless_generation_matches_a_full_recomputation(prompts):
    compiled = irexec.compile_model(stateless_decoder())
    assert irexec.generate(compiled, prompts, max_new_tokens=12) == reference(prompts, 12)


def test_one_prompt_as_a_flat_list_or_an_array():
    compiled = irexec.compile_model(stateful_decoder())
    expected = reference([[3, 9, 4]], 5)
    assert irexec.generate(compiled, [3, 9, 4], max_new_tokens=5) == expected
    assert irexec.generate(compiled, np.array([[3, 9, 4]]), max_new_tokens=5) == expected


def test_a_model_that_is_no_decoder_is_a_clear_error():
    b = ModelBuilder("plain")
    b.result(b.op("Relu", b.parameter("x", "f32", [2])))
    with pytest.raises(IRError) as e:
        irexec.generate(irexec.compile_model(b.build()), [[1, 2]])
    assert e.value.diagnostics[0].code == "IR620" and "input_ids" in str(e.value)


def test_a_token_outside_the_vocabulary_is_a_clear_error():
    compiled = irexec.compile_model(stateful_decoder())
    with pytest.raises(IRError, match="outside the vocabulary"):
        irexec.generate(compiled, [[1, V]], max_new_tokens=2)


# --- the loop's rules, with a scripted runner -----------------------------------------------

class Scripted:
    """A stateful 'model' whose logits say which token each step chooses, recording feeds."""

    def __init__(self, logits_per_step):
        self.script = logits_per_step
        self.inputs = [Port("input_ids", np.dtype(np.int64), (None, None)),
                       Port("attention_mask", np.dtype(np.int64), (None, None)),
                       Port("position_ids", np.dtype(np.int64), (None, None)),
                       Port("beam_idx", np.dtype(np.int32), (None,))]
        self.outputs = ["logits"]
        self.feeds = []
        self.resets = 0

    def reset(self):
        self.resets += 1

    def __call__(self, feed, wanted):
        self.feeds.append({k: v.copy() for k, v in feed.items()})
        step = self.script[len(self.feeds) - 1]
        batch, length = feed["input_ids"].shape
        logits = np.zeros((batch, length, 6), np.float32)
        logits[:, -1, :] = step
        return {"logits": logits}


def test_ties_take_the_lowest_index():
    runner = Scripted([np.array([[0, 1, 3, 3, 0, 3], [2, 2, 0, 0, 0, 0]], np.float32)])
    assert decode(runner, [[1], [2]], 1).tokens == [[2], [0]]


def test_left_padding_mask_and_positions_as_transformers_makes_them():
    steps = [np.eye(6, dtype=np.float32)[[4, 5]]] * 3
    runner = Scripted(steps)
    made = decode(runner, [[1, 2, 3], [5]], 3, pad_token_id=0)
    assert made.tokens == [[4, 4, 4], [5, 5, 5]]
    first, second, third = runner.feeds
    np.testing.assert_array_equal(first["input_ids"], [[1, 2, 3], [0, 0, 5]])
    np.testing.assert_array_equal(first["attention_mask"], [[1, 1, 1], [0, 0, 1]])
    np.testing.assert_array_equal(first["position_ids"], [[0, 1, 2], [1, 1, 0]])
    np.testing.assert_array_equal(first["beam_idx"], [0, 1])
    assert first["beam_idx"].dtype == np.int32
    np.testing.assert_array_equal(second["input_ids"], [[4], [5]])
    np.testing.assert_array_equal(second["attention_mask"], [[1, 1, 1, 1], [0, 0, 1, 1]])
    np.testing.assert_array_equal(second["position_ids"], [[3], [1]])
    np.testing.assert_array_equal(third["position_ids"], [[4], [2]])
    assert runner.resets == 1


def test_end_of_sequence_stops_a_prompt_and_pads_its_later_steps():
    # prompt 1 ends at step 2, prompt 2 at step 4; as transformers, the end token is fed back
    # once, then the pad token
    eye = np.eye(6, dtype=np.float32)
    runner = Scripted([eye[[1, 3]], eye[[2, 4]], eye[[1, 5]], eye[[1, 2]], eye[[1, 1]]])
    made = decode(runner, [[1], [1]], 5, pad_token_id=0, eos_token_id=2, keep_logits=True)
    assert made.tokens == [[1, 2], [3, 4, 5, 2]]
    assert len(runner.feeds) == 4  # every prompt had ended
    np.testing.assert_array_equal(runner.feeds[2]["input_ids"], [[2], [4]])
    np.testing.assert_array_equal(runner.feeds[3]["input_ids"], [[0], [5]])
    assert len(made.logits) == 4 and made.logits[0].shape == (2, 6)


# --- the command -------------------------------------------------------------------------------

def _cli(*args):
    from tests.cli.inproc import irexec_cli

    return irexec_cli("generate", *args)


def test_command_prints_tokens_per_prompt_and_json(tmp_path):
    xml = tmp_path / "toy.xml"
    irexec.save_model(stateful_decoder(), xml)
    expected = reference([[3, 9, 4], [5]], 6)
    code, out, err = _cli(xml, "--prompt-ids", "3,9,4", "--prompt-ids", "5",
                          "--max-new-tokens", "6")
    assert code == 0, err
    assert out.splitlines() == [f"prompt {i + 1}: {' '.join(map(str, t))}"
                                for i, t in enumerate(expected)]
    code, out, err = _cli(xml, "--prompt-ids", "3,9,4", "--prompt-ids", "5",
                          "--max-new-tokens", "6", "--format", "json")
    assert code == 0 and json.loads(out) == {"tokens": expected}


def test_command_reads_a_folder_and_its_end_of_sequence_token(tmp_path):
    irexec.save_model(stateful_decoder(), tmp_path / "openvino_model.xml")
    tokens = reference([[3, 9, 4]], 6)[0]
    eos = tokens[2]
    (tmp_path / "generation_config.json").write_text(json.dumps({"eos_token_id": eos}))
    code, out, err = _cli(tmp_path, "--prompt-ids", "3,9,4", "--max-new-tokens", "6",
                          "--format", "json")
    assert code == 0, err
    assert json.loads(out)["tokens"] == [tokens[:tokens.index(eos) + 1]]


def test_command_errors_are_one_line(tmp_path):
    b = ModelBuilder("plain")
    b.result(b.op("Relu", b.parameter("x", "f32", [2])))
    xml = tmp_path / "plain.xml"
    irexec.save_model(b.build(), xml)
    code, out, err = _cli(xml, "--prompt-ids", "1,2")
    assert code == 1 and "needs a decoder" in err and len(err.strip().splitlines()) == 1
    toy = tmp_path / "toy.xml"
    irexec.save_model(stateful_decoder(), toy)
    for args in (["--prompt-ids", "1,x"], [], ["--prompt", "hello"],
                 ["--prompt-ids", "1", "--max-new-tokens", "-1"]):
        code, out, err = _cli(toy, *args)
        assert code == 2 and len(err.strip().splitlines()) == 1, (args, err)


def test_command_compares_with_openvino(tmp_path):
    pytest.importorskip("openvino")
    xml = tmp_path / "toy.xml"
    irexec.save_model(stateful_decoder(initializer=False), xml)
    code, out, err = _cli(xml, "--prompt-ids", "3,9,4", "--prompt-ids", "5",
                          "--max-new-tokens", "8", "--compare", "openvino")
    assert code == 0, err
    assert out.splitlines()[2:] == ["prompt 1: the 8 tokens are OpenVINO's",
                                    "prompt 2: the 8 tokens are OpenVINO's"]


def test_command_says_in_one_line_when_openvino_cannot_run_the_model(tmp_path):
    pytest.importorskip("openvino")
    xml = tmp_path / "toy.xml"
    irexec.save_model(stateful_decoder(), xml)  # the CPU plugin refuses this cache's shape
    code, out, err = _cli(xml, "--prompt-ids", "3,9,4", "--compare", "openvino")
    assert code == 1 and err.startswith("error: OpenVINO") and len(err.strip().splitlines()) == 1


def test_comparison_names_the_first_differing_step_with_both_margins():
    from irexec.cli.generate import comparison

    ours = Generation([[1, 2, 3]], [np.array([[0, 5, 1]], np.float32)] * 3)
    theirs = Generation([[1, 2, 4]], [np.array([[0, 5, 4.5]], np.float32)] * 3)
    (entry,) = comparison(ours, theirs)
    assert entry["step"] == 3 and entry["irexec"] == 3 and entry["openvino"] == 4
    assert entry["irexec_margin"] == pytest.approx(4.0)
    assert entry["openvino_margin"] == pytest.approx(0.5)


# --- encoder-decoders ----------------------------------------------------------------------------

class ScriptedEncoder:
    def __init__(self):
        self.inputs = [Port("input_ids", np.dtype(np.int64), (None, None)),
                       Port("attention_mask", np.dtype(np.int64), (None, None))]
        self.outputs = ["last_hidden_state"]
        self.feeds = []

    def reset(self):
        pass

    def __call__(self, feed, wanted):
        self.feeds.append(feed)
        return {"last_hidden_state": np.ones(feed["input_ids"].shape + (4,), np.float32)}


class ScriptedDecoder(Scripted):
    def __init__(self, script):
        super().__init__(script)
        self.inputs = [Port("encoder_attention_mask", np.dtype(np.int64), (None, None)),
                       Port("input_ids", np.dtype(np.int64), (None, None)),
                       Port("encoder_hidden_states", np.dtype(np.float32), (None, None, 4)),
                       Port("beam_idx", np.dtype(np.int32), (None,))]


def test_encoder_decoder_loop_feeds_as_transformers():
    from irexec.generation import decode_seq2seq

    eye = np.eye(6, dtype=np.float32)
    encoder, decoder = ScriptedEncoder(), ScriptedDecoder([eye[[3, 4]], eye[[2, 5]], eye[[1, 2]]])
    made = decode_seq2seq(encoder, decoder, [[4, 5, 2], [3, 2]], 5, pad_token_id=0,
                          eos_token_id=2, decoder_start_token_id=0)
    assert made.tokens == [[3, 2], [4, 5, 2]]
    (fed,) = encoder.feeds  # the encoder runs once, its batch padded on the right
    np.testing.assert_array_equal(fed["input_ids"], [[4, 5, 2], [3, 2, 0]])
    np.testing.assert_array_equal(fed["attention_mask"], [[1, 1, 1], [1, 1, 0]])
    first, second, third = decoder.feeds
    np.testing.assert_array_equal(first["input_ids"], [[0], [0]])  # the start token
    np.testing.assert_array_equal(second["input_ids"], [[3], [4]])
    np.testing.assert_array_equal(third["input_ids"], [[2], [5]])
    np.testing.assert_array_equal(third["encoder_attention_mask"], fed["attention_mask"])
    assert third["encoder_hidden_states"].shape == (2, 3, 4) and decoder.resets == 1


def test_an_encoder_without_hidden_states_is_a_clear_error():
    from irexec.generation import decode_seq2seq

    encoder = ScriptedEncoder()
    encoder.outputs = ["something"]
    with pytest.raises(IRError, match="last_hidden_state"):
        decode_seq2seq(encoder, ScriptedDecoder([]), [[1]], 2)
