"""Greedy generation with a decoder LLM as optimum-intel exports it: ``irexec.generate``.

NOTE for developers: generation is a loop over one compiled model. This module owns the prompt,
the left padding, the growing attention mask and positions and the stop rule; the runtime owns
the state (the KV cache in ReadValue/Assign variables of an infer request). The loop talks to a
*runner* (``reset()``, ``inputs``, ``__call__(feed) -> {output name: array}``), so the same loop
drives irexec and, for ``irexec generate --compare openvino``, OpenVINO's CPU plugin: what the
two generate differs only by what their models compute.

The two layouts optimum-intel writes:

* **stateful** (its default): inputs ``input_ids``, ``attention_mask``, ``position_ids`` (not
  every architecture), ``beam_idx``; output ``logits``; the keys and values of past positions in
  the model's variables, reset at the start of each generation.
* **stateless** (``stateful=False``): the same inputs plus ``past_key_values.N.key`` /
  ``.value`` (each [batch, heads, past length, head size], empty at the first step), and outputs
  ``present.N.key`` / ``.value``, fed back as the next step's past.

Prompts of different lengths are padded on the left, as transformers' ``generate`` pads a batch
for a decoder: the attention mask is 0 over the padding, and a position is the number of real
tokens before it (1 over the padding, as transformers fills it). Decoding is greedy: the next
token is the argmax of the last position's logits, the lowest index on ties (numpy's argmax). A
prompt whose sequence has produced the end-of-sequence token is finished: its later tokens are
the pad token (as transformers writes them) and are not reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from irexec.diagnostics.diagnostic import Location
from irexec.errors import IRError

IDS, MASK, POSITIONS, BEAMS, LOGITS = ("input_ids", "attention_mask", "position_ids",
                                       "beam_idx", "logits")
PAST, PRESENT = "past_key_values", "present"


@dataclass
class Generation:
    """What one generation made: the new tokens of each prompt (up to and including the
    end-of-sequence token, if one came), and with ``keep_logits`` the last position's logits of
    every step ([batch, vocabulary] each, f32)."""

    tokens: list[list[int]]
    logits: list[np.ndarray] = field(default_factory=list)


@dataclass(frozen=True)
class Port:
    name: str
    dtype: np.dtype
    shape: tuple  # dims, None where dynamic


class IrexecRunner:
    """Runs a compiled irexec model with one infer request (its own variables)."""

    def __init__(self, compiled):
        self.compiled = compiled
        self.request = compiled.create_infer_request()
        self.inputs = []
        for port in compiled.inputs:
            et, shape = port.element_type, port.partial_shape
            dims = tuple(d.get_length() if d.is_static else None for d in shape) \
                if shape is not None and shape.rank_is_static else ()
            dtype = np.dtype(np.int64) if et is None or et.is_dynamic else np.dtype(et.dtype)
            self.inputs.append(Port(port.any_name, dtype, dims))
        self.outputs = [port.any_name for port in compiled.outputs]
        self.vocabulary = _vocabulary(compiled.outputs)
        self.location = Location(getattr(compiled.model, "path", None))

    def reset(self) -> None:
        self.request.reset_state()

    def __call__(self, feed: dict, wanted: Sequence[str]) -> dict[str, np.ndarray]:
        results = self.request.infer(feed)
        return {name: np.asarray(results[name]) for name in wanted}


def _vocabulary(outputs) -> int | None:
    """The logits' last dim where the model says it."""
    for port in outputs:
        if port.any_name == LOGITS and port.partial_shape is not None \
                and port.partial_shape.rank_is_static and len(port.partial_shape) \
                and port.partial_shape[-1].is_static:
            return port.partial_shape[-1].get_length()
    return None


def _error(message: str, location) -> IRError:
    return IRError.make("IR620", message, location)


class Layout:
    """Which of optimum-intel's inputs and outputs a model has."""

    def __init__(self, runner):
        names = {p.name: p for p in runner.inputs}
        location = getattr(runner, "location", Location())
        if IDS not in names or LOGITS not in runner.outputs:
            raise _error(f"generate needs a decoder as optimum-intel exports it (an input "
                         f"'{IDS}' and an output '{LOGITS}'); this model's inputs are "
                         f"{', '.join(sorted(names)) or 'none'} and its outputs "
                         f"{', '.join(runner.outputs) or 'none'}", location)
        self.ports = names
        self.location = location
        self.past = [p for p in runner.inputs if p.name.startswith(PAST)]
        self.present = {}
        for p in self.past:
            out = PRESENT + p.name[len(PAST):]
            if out not in runner.outputs:
                raise _error(f"the model takes '{p.name}' but has no output '{out}' to feed it "
                             f"back", location)
            self.present[p.name] = out
        known = {IDS, MASK, POSITIONS, BEAMS} | {p.name for p in self.past}
        other = sorted(set(names) - known)
        if other:
            raise _error(f"generate does not know what to give the model's input"
                         f"{'s' * (len(other) > 1)} {', '.join(map(repr, other))} (it feeds "
                         f"{', '.join(sorted(known - {p.name for p in self.past}))} and "
                         f"{PAST}.*)", location)

    def dtype(self, name: str) -> np.dtype:
        return self.ports[name].dtype

    def empty_past(self, port: Port, batch: int) -> np.ndarray:
        """A past of length 0: the batch in the first dim, 0 in the one other dynamic dim (the
        length), the static dims as they are."""
        dims = list(port.shape)
        lengths = [i for i, d in enumerate(dims) if d is None and i > 0]
        if not dims or dims[0] not in (None, batch) or len(lengths) != 1:
            raise _error(f"cannot tell the batch and the past length of input '{port.name}' "
                         f"(shape {list(port.shape)}; expected [batch, ..., length, ...] with "
                         f"those two dims dynamic)", self.location)
        dims[0], dims[lengths[0]] = batch, 0
        return np.zeros(dims, port.dtype)


def left_padded(prompts: Sequence[Sequence[int]], pad: int) -> tuple[np.ndarray, np.ndarray]:
    """The prompts as one [batch, longest] array padded on the left, and its attention mask."""
    longest = max(len(p) for p in prompts)
    ids = np.full((len(prompts), longest), pad, np.int64)
    mask = np.zeros((len(prompts), longest), np.int64)
    for row, prompt in enumerate(prompts):
        if len(prompt):
            ids[row, longest - len(prompt):] = prompt
            mask[row, longest - len(prompt):] = 1
    return ids, mask


def positions(mask: np.ndarray) -> np.ndarray:
    """transformers' positions for a mask: the count of real tokens before each one, and 1
    where the mask is 0."""
    pos = np.cumsum(mask, axis=-1) - 1
    return np.where(mask == 0, 1, pos).astype(np.int64)


def stop_tokens(max_new_tokens: int, eos_token_id) -> set[int]:
    """The ids that end a sequence (``eos_token_id``: none, one or several); ValueError for a
    negative ``max_new_tokens``."""
    if max_new_tokens < 0:
        raise ValueError("max_new_tokens must be 0 or more")
    if eos_token_id is None:
        return set()
    return {int(eos_token_id)} if np.ndim(eos_token_id) == 0 else {int(e) for e in eos_token_id}


def check_prompts(prompts, vocabulary: int | None, location=None) -> list[list[int]]:
    if isinstance(prompts, np.ndarray):
        prompts = prompts.tolist() if prompts.ndim == 2 else [prompts.tolist()]
    elif prompts and not isinstance(prompts[0], (list, tuple, np.ndarray)):
        prompts = [prompts]  # one prompt
    prompts = [[int(t) for t in p] for p in prompts]
    if not prompts or any(not p for p in prompts):
        raise _error("every prompt needs at least one token", location or Location())
    for i, prompt in enumerate(prompts):
        bad = [t for t in prompt if t < 0 or vocabulary is not None and t >= vocabulary]
        if bad:
            top = f"0 to {vocabulary - 1}" if vocabulary is not None else "0 or more"
            raise _error(f"prompt {i + 1} holds token id {bad[0]}, outside the vocabulary "
                         f"({top})", location or Location())
    return prompts


def decode(runner, prompts, max_new_tokens: int = 16, pad_token_id: int = 0,
           eos_token_id: int | Sequence[int] | None = None,
           keep_logits: bool = False) -> Generation:
    """Greedy generation of up to ``max_new_tokens`` tokens for each prompt with ``runner``."""
    layout = Layout(runner)
    vocabulary = getattr(runner, "vocabulary", None)
    location = getattr(runner, "location", None)
    prompts = check_prompts(prompts, vocabulary, location)
    eos = stop_tokens(max_new_tokens, eos_token_id)
    batch = len(prompts)
    ids, mask = left_padded(prompts, pad_token_id)
    runner.reset()
    past = {p.name: layout.empty_past(p, batch) for p in layout.past}
    wanted = [LOGITS] + list(layout.present.values())
    tokens: list[list[int]] = [[] for _ in prompts]
    finished = np.zeros(batch, bool)
    made = Generation(tokens)
    step_ids, step_pos = ids, positions(mask)
    for _ in range(max_new_tokens):
        feed = {IDS: step_ids.astype(layout.dtype(IDS))}
        if MASK in layout.ports:
            feed[MASK] = mask.astype(layout.dtype(MASK))
        if POSITIONS in layout.ports:
            feed[POSITIONS] = step_pos.astype(layout.dtype(POSITIONS))
        if BEAMS in layout.ports:
            feed[BEAMS] = np.arange(batch, dtype=layout.dtype(BEAMS))
        feed.update(past)
        out = runner(feed, wanted)
        logits = out[LOGITS]
        if logits.ndim != 3 or logits.shape[0] != batch:
            raise _error(f"the model's logits have shape {list(logits.shape)}; generate needs "
                         f"[batch, positions, vocabulary]", location or Location())
        last = np.asarray(logits[:, -1, :], np.float32)
        if keep_logits:
            made.logits.append(last.copy())
        if vocabulary is None:  # a model that does not say: after the first step
            vocabulary = last.shape[-1]
            check_prompts(prompts, vocabulary, location)
        chosen = np.argmax(last, axis=-1)  # ties: the lowest index
        chosen = np.where(finished, pad_token_id, chosen)
        for row in np.flatnonzero(~finished):
            tokens[row].append(int(chosen[row]))
        if eos:
            finished |= np.isin(chosen, list(eos))
        if finished.all():
            break
        past = {name: out[present] for name, present in layout.present.items()}
        step_ids = chosen.reshape(batch, 1).astype(np.int64)
        mask = np.concatenate([mask, np.ones((batch, 1), mask.dtype)], axis=1)
        step_pos = positions(mask)[:, -1:]
    return made


ENCODER_STATES, ENCODER_MASK, ENCODER_OUTPUT = ("encoder_hidden_states", "encoder_attention_mask",
                                               "last_hidden_state")


def right_padded(prompts: Sequence[Sequence[int]], pad: int) -> tuple[np.ndarray, np.ndarray]:
    """The prompts padded on the right (an encoder's batch, as its tokenizer pads it)."""
    longest = max(len(p) for p in prompts)
    ids = np.full((len(prompts), longest), pad, np.int64)
    mask = np.zeros((len(prompts), longest), np.int64)
    for row, prompt in enumerate(prompts):
        ids[row, :len(prompt)] = prompt
        mask[row, :len(prompt)] = 1
    return ids, mask


def decode_seq2seq(encoder, decoder, prompts, max_new_tokens: int = 16, pad_token_id: int = 0,
                   eos_token_id: int | Sequence[int] | None = None,
                   decoder_start_token_id: int = 0, keep_logits: bool = False) -> Generation:
    """Greedy generation with an encoder-decoder as optimum-intel exports it (T5, BART,
    Whisper's text side ...): the encoder runs once on the prompts (padded on the right, with
    their attention mask); the stateful decoder (inputs ``input_ids``,
    ``encoder_hidden_states``, ``encoder_attention_mask``, ``beam_idx``; its self- and
    cross-attention caches in its state) starts from ``decoder_start_token_id`` and is fed one
    token a step."""
    location = getattr(decoder, "location", None) or Location()
    names = {p.name: p for p in encoder.inputs}
    if IDS not in names or ENCODER_OUTPUT not in encoder.outputs:
        raise _error(f"the encoder needs an input '{IDS}' and an output '{ENCODER_OUTPUT}' "
                     f"(optimum-intel's encoder model)", getattr(encoder, "location", location))
    ports = {p.name: p for p in decoder.inputs}
    known = {IDS, ENCODER_STATES, ENCODER_MASK, BEAMS, MASK}
    if IDS not in ports or ENCODER_STATES not in ports or LOGITS not in decoder.outputs \
            or set(ports) - known:
        raise _error(f"the decoder needs inputs '{IDS}' and '{ENCODER_STATES}' (and may take "
                     f"'{ENCODER_MASK}', '{BEAMS}'), its cache in its state, and an output "
                     f"'{LOGITS}'; it has inputs {', '.join(sorted(ports))}", location)
    prompts = check_prompts(prompts, getattr(decoder, "vocabulary", None), location)
    eos = stop_tokens(max_new_tokens, eos_token_id)
    batch = len(prompts)
    ids, mask = right_padded(prompts, pad_token_id)
    feed = {IDS: ids.astype(names[IDS].dtype)}
    if MASK in names:
        feed[MASK] = mask.astype(names[MASK].dtype)
    encoder.reset()
    states = encoder(feed, [ENCODER_OUTPUT])[ENCODER_OUTPUT]
    decoder.reset()
    made = Generation([[] for _ in prompts])
    finished = np.zeros(batch, bool)
    step_ids = np.full((batch, 1), decoder_start_token_id, np.int64)
    decoded = 1
    for _ in range(max_new_tokens):
        feed = {IDS: step_ids.astype(ports[IDS].dtype), ENCODER_STATES: states}
        if ENCODER_MASK in ports:
            feed[ENCODER_MASK] = mask.astype(ports[ENCODER_MASK].dtype)
        if MASK in ports:
            feed[MASK] = np.ones((batch, decoded), ports[MASK].dtype)
        if BEAMS in ports:
            feed[BEAMS] = np.arange(batch, dtype=ports[BEAMS].dtype)
        logits = decoder(feed, [LOGITS])[LOGITS]
        last = np.asarray(logits[:, -1, :], np.float32)
        if keep_logits:
            made.logits.append(last.copy())
        chosen = np.where(finished, pad_token_id, np.argmax(last, axis=-1))
        for row in np.flatnonzero(~finished):
            made.tokens[row].append(int(chosen[row]))
        if eos:
            finished |= np.isin(chosen, list(eos))
        if finished.all():
            break
        step_ids = chosen.reshape(batch, 1).astype(np.int64)
        decoded += 1
    return made


def generate(compiled_model, prompt_ids, max_new_tokens: int = 16, *, pad_token_id: int = 0,
             eos_token_id: int | Sequence[int] | None = None, encoder=None,
             decoder_start_token_id: int = 0) -> list[list[int]]:
    """Greedy generation with a compiled decoder (stateful or stateless, as optimum-intel
    exports it): the new tokens of each prompt. ``prompt_ids``: one prompt (a list of token
    ids) or several (a list of lists, or a 2-D array), padded on the left with
    ``pad_token_id`` to one batch. Generation stops at ``max_new_tokens`` or when every prompt
    has produced ``eos_token_id`` (included in its tokens).

    An encoder-decoder (optimum-intel's ``openvino_encoder_model.xml`` and
    ``openvino_decoder_model.xml``): ``compiled_model`` is the decoder and ``encoder`` the
    compiled encoder; the prompts are the encoder's input (padded on the right) and the decoder
    starts from ``decoder_start_token_id``."""
    runner = IrexecRunner(compiled_model)
    if encoder is not None:
        return decode_seq2seq(IrexecRunner(encoder), runner, prompt_ids, max_new_tokens,
                              pad_token_id, eos_token_id, decoder_start_token_id).tokens
    return decode(runner, prompt_ids, max_new_tokens, pad_token_id, eos_token_id).tokens
