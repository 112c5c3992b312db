"""The LLM zoo (tools/llm_zoo.py): decoders exported by optimum-intel from tiny random configs.
Each validates clean, agrees with OpenVINO on the prefill's logits (within the numeric contract),
and generates 16 greedy tokens identical to OpenVINO's (KV cache in f32) and to transformers'
``generate`` on the torch checkpoint it was exported from, for a batch of two prompts of
different lengths (left-padded).

The models are read from ``$IREXEC_ZOO/llm`` (``python tools/llm_zoo.py``). Without it, the
tiny Llama in int4 is exported here when torch, transformers and optimum-intel are installed;
every other model is skipped (``IREXEC_REQUIRE_ZOO=1`` makes a missing one a failure).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import irexec
from irexec import numerics
from irexec.generation import IrexecRunner, decode, left_padded, positions
from irexec.ir import element_type as et_table
from tools import llm_zoo

PROMPTS = [[1, 45, 17, 99, 3, 8], [1, 60, 7]]
NEW = 16
REQUIRED = bool(os.environ.get("IREXEC_REQUIRE_ZOO"))
BUILT_HERE = "llama_tiny_int4"  # exported by the fixture when the zoo is not there
OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0",
             "KV_CACHE_PRECISION": "f32"}


def _have_exporter() -> bool:
    try:
        import optimum.intel  # noqa: F401
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except Exception:
        return False
    return True


@pytest.fixture(scope="session")
def here(tmp_path_factory):
    return tmp_path_factory.mktemp("llm_zoo")


def _folder(name: str, here):
    folder = llm_zoo.default_out() / name
    if (folder / "zoo.key").is_file():
        return folder
    if name == BUILT_HERE and _have_exporter():
        return llm_zoo.build(llm_zoo.BY_NAME[name], here)
    if REQUIRED:
        pytest.fail(f"{name} is not in the zoo ({folder}); build it: python tools/llm_zoo.py")
    pytest.skip(f"{name}: not in the zoo (python tools/llm_zoo.py)")


NAMES = llm_zoo.TESTED


CAUSAL = [n for n in NAMES if llm_zoo.BY_NAME[n].kind == "causal"]
SEQ2SEQ = [n for n in NAMES if llm_zoo.BY_NAME[n].kind == "seq2seq"]
SEQ2SEQ_PROMPTS = [[5, 17, 99, 3, 2], [8, 22, 2]]  # the encoder's input, ending in </s>


def _xmls(folder):
    return sorted(folder.glob("openvino*model.xml"))


@pytest.mark.parametrize("name", NAMES)
def test_validates_clean(name, here):
    for xml in _xmls(_folder(name, here)):
        model, diags = irexec.api.check_model(xml)
        assert model is not None and [str(d) for d in diags] == [], xml.name


def _feed(compiled, ids, mask):
    names = {p.any_name: p for p in compiled.inputs}
    feed = {"input_ids": ids, "attention_mask": mask}
    if "position_ids" in names:
        feed["position_ids"] = positions(mask)
    if "beam_idx" in names:
        feed["beam_idx"] = np.arange(len(ids), dtype=np.int32)
    for name, port in names.items():
        if name.startswith("past_key_values"):
            runner = IrexecRunner(compiled)
            from irexec.generation import Layout

            layout = Layout(runner)
            for p in layout.past:
                feed[p.name] = layout.empty_past(p, len(ids))
            break
    return feed


@pytest.mark.parametrize("name", CAUSAL)
def test_prefill_agrees_with_openvino(name, here):
    ov = pytest.importorskip("openvino")
    xml = _folder(name, here) / "openvino_model.xml"
    compiled = irexec.compile_model(irexec.read_model(xml))
    ids, mask = left_padded(PROMPTS, 0)
    feed = _feed(compiled, ids, mask)
    ours = compiled(feed)["logits"]
    core = ov.Core()
    request = core.compile_model(core.read_model(str(xml)), "CPU", OV_CONFIG) \
        .create_infer_request()
    request.infer(feed)
    theirs = request.get_tensor("logits").data
    real = mask.astype(bool)  # the padding's logits are not compared
    tol = numerics.tolerance("accumulating", et_table.from_name("f32"))
    scale = float(np.abs(theirs[real]).max())
    bad = tol.outside(ours[real], theirs[real], scale * 64)
    assert not bad.any(), float(np.abs(ours[real] - theirs[real]).max())


def _transformers_tokens(folder):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    model = transformers.AutoModelForCausalLM.from_pretrained(str(folder / "torch")).eval()
    ids, mask = left_padded(PROMPTS, 0)
    with torch.no_grad():
        out = model.generate(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask),
                             max_new_tokens=NEW, do_sample=False, pad_token_id=0,
                             eos_token_id=2)
    tokens = []
    for row in out[:, ids.shape[1]:].tolist():
        if 2 in row:
            row = row[:row.index(2) + 1]
        tokens.append(row)
    return tokens


@pytest.mark.parametrize("name", CAUSAL)
def test_generates_the_tokens_of_openvino_and_transformers(name, here):
    ov = pytest.importorskip("openvino")
    from irexec.cli.generate import OpenVINORunner

    folder = _folder(name, here)
    xml = folder / "openvino_model.xml"
    compiled = irexec.compile_model(irexec.read_model(xml))
    ours = irexec.generate(compiled, PROMPTS, max_new_tokens=NEW, pad_token_id=0,
                           eos_token_id=2)
    entry = llm_zoo.BY_NAME[name]
    if not entry.extra.get("bf16_cache"):
        # optimum-intel's stateless export rounds the past keys and values to bf16 and back;
        # the CPU plugin then computes the cache's path in bf16 too (docs/compatibility.md)
        # and its tokens part from the IR's where the margins are small: transformers decides
        theirs = decode(OpenVINORunner(ov, xml, None), PROMPTS, NEW, 0, 2).tokens
        assert ours == theirs
    if entry.weights == "f32":  # compressed: torch has the uncompressed model
        assert ours == _transformers_tokens(folder)


@pytest.mark.parametrize("name", SEQ2SEQ)
def test_encoder_decoder_generates_the_tokens_of_openvino_and_transformers(name, here):
    ov = pytest.importorskip("openvino")
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from irexec.cli.generate import OpenVINORunner
    from irexec.generation import decode_seq2seq, right_padded

    folder = _folder(name, here)
    encoder, decoder = (folder / "openvino_encoder_model.xml",
                        folder / "openvino_decoder_model.xml")
    ours = irexec.generate(irexec.compile_model(irexec.read_model(decoder)), SEQ2SEQ_PROMPTS,
                           max_new_tokens=NEW, eos_token_id=2,
                           encoder=irexec.compile_model(irexec.read_model(encoder)))
    assert any(len(set(t)) > 1 for t in ours)  # not a degenerate run
    theirs = decode_seq2seq(OpenVINORunner(ov, encoder, None), OpenVINORunner(ov, decoder, None),
                            SEQ2SEQ_PROMPTS, NEW, 0, 2).tokens
    assert ours == theirs
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(str(folder / "torch")).eval()
    ids, mask = right_padded(SEQ2SEQ_PROMPTS, 0)
    with torch.no_grad():
        out = model.generate(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask),
                             max_new_tokens=NEW, do_sample=False)
    expected = []
    for row in out[:, 1:].tolist():  # after the decoder's start token
        expected.append(row[:row.index(2) + 1] if 2 in row else row)
    assert ours == expected


def test_prompt_text_through_the_exported_tokenizer(here):
    pytest.importorskip("transformers")
    from tests.cli.inproc import irexec_cli

    folder = _folder(BUILT_HERE, here)
    code, out, err = irexec_cli("generate", folder, "--prompt", "the cat is on the hill",
                                "--max-new-tokens", "4", "--format", "json")
    assert code == 0, err
    import json

    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    ids = tokenizer("the cat is on the hill")["input_ids"]
    got = json.loads(out)
    compiled = irexec.compile_model(irexec.read_model(folder / "openvino_model.xml"))
    expected = irexec.generate(compiled, [ids], max_new_tokens=4, eos_token_id=2)
    assert got["tokens"] == expected
    assert got["text"] == [tokenizer.decode(t) for t in expected]
