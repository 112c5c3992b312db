"""The LLM zoo: decoder models (and an encoder-decoder) as people get them, exported by optimum-intel from tiny random
configs (transformers' architectures with seeded weights, a word-level tokenizer written here),
stateful by default, some compressed to int4/int8 by NNCF through optimum-intel's own options.

    python tools/llm_zoo.py [--out DIR] [NAME ...]   # default DIR: $IREXEC_ZOO/llm or .zoo/llm

Each model is a folder as ``optimum-cli export openvino`` writes it (openvino_model.xml/.bin,
config.json, generation_config.json, tokenizer files) beside the torch checkpoint it came from
(``torch/``), so tests can run transformers' own ``generate`` on the same weights
(tests/models/test_llm_zoo.py). A folder whose ``zoo.key`` matches this file's hash and the
installed versions is kept. Needs: torch, transformers, optimum-intel (``optimum[openvino]``),
nncf for the compressed ones.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VOCAB = 256
WORDS = ("the a an of to in and is was it for on with as at by from that this be are or not "
         "cat dog bird fish tree sun moon star river hill house road car boat city town king "
         "queen child man woman day night year time world life hand eye head door window "
         "red blue green black white big small old new good bad long short high low warm cold "
         "one two three four five six seven eight nine ten run walk see say make take give go "
         "come know think look want find tell ask work seem feel try leave call keep hold turn "
         "begin show hear play move live believe bring write sit stand lose pay meet include "
         "continue set learn change lead understand watch follow stop create speak read spend "
         "grow open win offer remember love consider appear buy wait serve die send expect "
         "build stay fall cut reach kill remain").split()


@dataclass(frozen=True)
class LLM:
    name: str
    family: str  # transformers' model_type
    config: dict  # the tiny config, beside vocab_size
    weights: str = "f32"  # f32, int4 (asymmetric, groups of 16), int4_sym, int8
    stateful: bool = True
    about: str = ""
    kind: str = "causal"  # or "seq2seq": an encoder and a stateful decoder
    extra: dict = field(default_factory=dict)


SMALL = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4)
LLMS = [
    LLM("llama_tiny", "llama", dict(SMALL, intermediate_size=128, num_key_value_heads=2),
        about="Llama (grouped-query attention, RoPE, RMSNorm, SwiGLU)"),
    LLM("llama_tiny_int4", "llama", dict(SMALL, intermediate_size=128, num_key_value_heads=2),
        weights="int4", about="the tiny Llama, int4 asymmetric weights in groups of 16"),
    LLM("llama_tiny_stateless", "llama",
        dict(SMALL, intermediate_size=128, num_key_value_heads=2), stateful=False,
        about="the tiny Llama with past key values as inputs and outputs (the export rounds "
              "them to bf16 and back)", extra={"bf16_cache": True}),
    LLM("qwen2_tiny_int8", "qwen2", dict(SMALL, intermediate_size=128, num_key_value_heads=2),
        weights="int8", about="Qwen2 (attention biases), int8 weights per channel"),
    LLM("mistral_tiny_int4", "mistral",
        dict(SMALL, intermediate_size=128, num_key_value_heads=2, sliding_window=None),
        weights="int4_sym", about="Mistral, int4 symmetric weights in groups of 16"),
    LLM("phi3_tiny", "phi3", dict(SMALL, intermediate_size=128, num_key_value_heads=4,
                                  pad_token_id=0), about="Phi-3 (fused qkv and gate-up)"),
    LLM("gpt_neox_tiny", "gpt_neox", dict(SMALL, intermediate_size=128, rotary_pct=0.5),
        about="GPT-NeoX (partial rotary, parallel attention and MLP)"),
    LLM("gpt2_tiny", "gpt2", dict(n_embd=64, n_layer=2, n_head=4, n_positions=128),
        about="GPT-2 (learned positions, no position_ids)"),
    LLM("t5_tiny", "t5", dict(d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2,
                              num_heads=4, decoder_start_token_id=0, pad_token_id=0),
        kind="seq2seq", about="T5, an encoder and a stateful decoder (self- and "
                              "cross-attention caches in its state)"),
]
# For tools/bench (kernels --case llm) only (not in the tests): a larger Llama, int4, as the speed target names it.
BENCH = [
    LLM("llama_1024_int4", "llama",
        dict(hidden_size=1024, num_hidden_layers=8, num_attention_heads=16,
             num_key_value_heads=8, intermediate_size=2816, vocab_size=32000),
        weights="int4", about="a random-config Llama: hidden 1024, 8 layers, int4 (bench)"),
]
BY_NAME = {m.name: m for m in LLMS + BENCH}
TESTED = [m.name for m in LLMS]


def default_out() -> Path:
    return Path(os.environ.get("IREXEC_ZOO", ROOT / ".zoo")) / "llm"


def key() -> str:
    import openvino
    import transformers

    h = hashlib.sha256(Path(__file__).read_bytes())
    h.update(f"{openvino.__version__} {transformers.__version__}".encode())
    return h.hexdigest()[:16]


def write_tokenizer(folder: Path, eos: int = 2):
    """A word-level tokenizer over WORDS (specials <pad> 0, <s> 1, </s> 2, <unk> 3)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, decoders
    from transformers import PreTrainedTokenizerFast

    vocab = {"<pad>": 0, "<s>": 1, "</s>": 2, "<unk>": 3}
    for word in WORDS:
        if len(vocab) == VOCAB:
            break
        vocab.setdefault(word, len(vocab))
    i = 0
    while len(vocab) < VOCAB:
        vocab.setdefault(f"w{i}", len(vocab))
        i += 1
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                   unk_token="<unk>", pad_token="<pad>")
    fast.save_pretrained(str(folder))
    return fast


def _torch_model(entry: LLM, folder: Path):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM

    torch.manual_seed(0)
    config = AutoConfig.for_model(entry.family, **{"vocab_size": VOCAB, "bos_token_id": 1,
                                                   "eos_token_id": 2, **entry.config})
    auto = AutoModelForSeq2SeqLM if entry.kind == "seq2seq" else AutoModelForCausalLM
    model = auto.from_config(config).eval()
    with torch.no_grad():  # larger weights than the init's: logits with clear winners
        for p in model.parameters():
            if p.dim() >= 2:
                p.mul_(4.0)
    model.generation_config.pad_token_id = 0
    model.save_pretrained(str(folder))
    write_tokenizer(folder)
    return model


def build(entry: LLM, out: Path) -> Path:
    """Export one model into ``out/NAME`` (kept if already built with the same key)."""
    folder = out / entry.name
    stamp = folder / "zoo.key"
    k = key()
    if stamp.is_file() and stamp.read_text() == k:
        return folder
    if folder.exists():
        shutil.rmtree(folder)
    pt = folder / "torch"
    pt.mkdir(parents=True)
    _torch_model(entry, pt)
    from optimum.intel import OVModelForCausalLM, OVModelForSeq2SeqLM, OVWeightQuantizationConfig

    options = {}
    if entry.weights == "int4":
        options["quantization_config"] = OVWeightQuantizationConfig(
            bits=4, sym=False, group_size=16, ratio=1.0)
    elif entry.weights == "int4_sym":
        options["quantization_config"] = OVWeightQuantizationConfig(
            bits=4, sym=True, group_size=16, ratio=1.0)
    elif entry.weights == "int8":
        options["quantization_config"] = OVWeightQuantizationConfig(bits=8)
    else:
        options["load_in_8bit"] = False
    exporter = OVModelForSeq2SeqLM if entry.kind == "seq2seq" else OVModelForCausalLM
    model = exporter.from_pretrained(str(pt), export=True, compile=False,
                                     stateful=entry.stateful, **options)
    model.save_pretrained(str(folder))
    write_tokenizer(folder)
    stamp.write_text(k)
    return folder


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", help=f"models to build (default the tested ones: "
                                            f"{', '.join(TESTED)}; also {', '.join(m.name for m in BENCH)})")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    out = args.out or default_out()
    failed = 0
    for name in args.names or TESTED:
        if name not in BY_NAME:
            print(f"unknown model {name!r} (known: {', '.join(BY_NAME)})", file=sys.stderr)
            return 2
        start = time.perf_counter()
        try:
            build(BY_NAME[name], out)
        except Exception as e:  # name it, build the others
            failed += 1
            print(f"{name}: FAILED: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
                  file=sys.stderr)
            continue
        print(f"{name}: {time.perf_counter() - start:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
