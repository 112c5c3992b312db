"""``irexec generate MODEL_OR_FOLDER --prompt-ids 1,2,3 [--prompt-ids ...] [--max-new-tokens N]
[--compare openvino] [--format text|json]``: greedy generation with a decoder LLM as optimum-intel
exports it (irexec/generation.py).

A folder is an optimum-intel export: ``openvino_model.xml`` with ``config.json`` and
``generation_config.json`` (the end-of-sequence and pad tokens come from there) and, for
``--prompt "text"``, its tokenizer files (transformers, an extra, encodes the prompt and decodes
the output). ``--compare openvino`` runs the same generation on OpenVINO's CPU plugin (f32
inference precision, dynamic quantization off, the KV cache in f32) and says for each prompt
whether the tokens agree, or the first step where they differ with both sides' top-2 margin of
the logits there.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from irexec.api import compile_model
from irexec.cli import common
from irexec.cli.usage import UsageError
from irexec.diagnostics import printable
from irexec.diagnostics.diagnostic import Location
from irexec.generation import Generation, IrexecRunner, Port, decode, decode_seq2seq

OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0",
             "KV_CACHE_PRECISION": "f32"}
INSTALL_OPENVINO = ("irexec generate --compare openvino needs OpenVINO, which is not installed "
                    "here; install it with: pip install openvino")
INSTALL_TRANSFORMERS = ("irexec generate --prompt needs transformers to read the export's "
                        "tokenizer; install it with: pip install transformers (or give token "
                        "ids with --prompt-ids)")
MODEL_FILE = "openvino_model.xml"
ENCODER_FILE, DECODER_FILE = "openvino_encoder_model.xml", "openvino_decoder_model.xml"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "generate", help="generate tokens greedily with a decoder LLM (optimum-intel's export)",
        description="Greedy generation with a decoder LLM exported by optimum-intel, stateful "
                    "(the KV cache in the model's state) or stateless (past key values as "
                    "inputs and outputs). Prompts of several lengths are padded on the left.")
    p.add_argument("model", metavar="MODEL_OR_FOLDER",
                   help=f"the model's .xml, or the folder optimum-intel exported ({MODEL_FILE}, "
                        "config.json, tokenizer files)")
    p.add_argument("--prompt-ids", action="append", default=[], metavar="ID,ID,...",
                   help="a prompt as token ids separated by commas; repeat for a batch")
    p.add_argument("--prompt", action="append", default=[], metavar="TEXT",
                   help="a prompt as text, encoded by the folder's tokenizer (needs "
                        "transformers); repeat for a batch")
    p.add_argument("--max-new-tokens", type=int, default=16, metavar="N",
                   help="tokens to generate per prompt (default 16)")
    p.add_argument("--eos-token-id", type=int, default=None, metavar="ID",
                   help="stop a prompt at this token (default: the folder's "
                        "generation_config.json or config.json; none for a bare .xml)")
    p.add_argument("--pad-token-id", type=int, default=None, metavar="ID",
                   help="the token that pads shorter prompts on the left (default: the "
                        "folder's, else the end-of-sequence token, else 0)")
    p.add_argument("--compare", choices=["openvino"], default=None,
                   help="also generate with OpenVINO's CPU plugin and compare token by token")
    p.add_argument("--format", choices=["text", "json"], default="text",
                   help='output: one line per prompt (text), or {"tokens": [[...], ...]} (json)')
    p.add_argument("--weights", default=None, help="the .bin (default: beside the .xml)")
    common.add_decompression_argument(p)


def _ids(text: str) -> list[int]:
    parts = [t.strip() for t in text.split(",")]
    try:
        ids = [int(t, 10) for t in parts]
    except ValueError:
        raise UsageError(f"argument --prompt-ids: {text[:60]!r} is not a list of token ids "
                         f"separated by commas (e.g. 1,2,3)") from None
    if not ids or any(i < 0 for i in ids):
        raise UsageError(f"argument --prompt-ids: {text[:60]!r}: token ids are whole numbers "
                         f"0 or more")
    return ids


def _paths(target: str) -> tuple[Path, Path | None, Path | None]:
    """The (decoder's) .xml, the export folder (None for a bare .xml) and an encoder-decoder's
    encoder .xml (else None)."""
    path = Path(target)
    if path.is_dir() and (path / ENCODER_FILE).is_file() and (path / DECODER_FILE).is_file():
        return path / DECODER_FILE, path, path / ENCODER_FILE
    if path.is_dir():
        xml = path / MODEL_FILE
        if not xml.is_file():
            found = sorted(path.glob("*.xml"))
            if len(found) != 1:
                raise UsageError(f"{target}: no {MODEL_FILE} in this folder"
                                 + (f" and {len(found)} other .xml files; give one"
                                    if found else ""))
            xml = found[0]
        return xml, path, None
    return path, None, None


def _config_tokens(folder: Path | None) -> tuple[object, object, object]:
    """eos_token_id, pad_token_id and decoder_start_token_id from an export's
    generation_config.json or config.json."""
    eos = pad = start = None
    if folder is None:
        return eos, pad, start
    for name in ("generation_config.json", "config.json"):
        try:
            data = json.loads((folder / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        eos = data.get("eos_token_id") if eos is None else eos
        pad = data.get("pad_token_id") if pad is None else pad
        start = data.get("decoder_start_token_id") if start is None else start
    return eos, pad, start


def _tokenizer(folder: Path | None):
    if folder is None:
        raise UsageError("--prompt needs the folder optimum-intel exported (with its tokenizer "
                         "files), not a bare .xml; or give token ids with --prompt-ids")
    try:
        from transformers import AutoTokenizer
    except ImportError:
        return None
    try:
        return AutoTokenizer.from_pretrained(str(folder))
    except Exception as e:  # transformers' own errors: one line
        raise UsageError(f"{folder}: cannot read a tokenizer there: "
                         f"{printable.line(str(e).splitlines()[0] if str(e) else e)}") from None


class OpenVINORunner:
    """The generation loop's runner on OpenVINO's CPU plugin (an oracle only)."""

    def __init__(self, ov, xml: Path, weights):
        core = ov.Core()
        model = core.read_model(str(xml), None if weights is None else str(weights))
        self.compiled = core.compile_model(model, "CPU", OV_CONFIG)
        self.request = self.compiled.create_infer_request()
        self.inputs = []
        for port in self.compiled.inputs:
            shape = tuple(d.get_length() if d.is_static else None for d in port.get_partial_shape())
            self.inputs.append(Port(port.get_any_name(), np.dtype(port.get_element_type()
                                                                  .to_dtype()), shape))
        self.outputs = [p.get_any_name() for p in self.compiled.outputs]
        self.location = Location(str(xml))

    def reset(self) -> None:
        self.request.reset_state()

    def __call__(self, feed, wanted):
        self.request.infer(feed)
        return {name: np.array(self.request.get_tensor(name).data) for name in wanted}


def _first_line(error: Exception) -> str:
    """OpenVINO's messages carry a C++ trail: the last line that says what is wrong."""
    lines = [s.strip() for s in str(error).replace("\\n", "\n").splitlines() if s.strip()]
    useful = [s for s in lines if not s.startswith(("Exception from", "Check '", "["))]
    return printable.line((useful or lines or [type(error).__name__])[-1])


def _margin(logits: np.ndarray) -> float:
    top = np.sort(np.asarray(logits, np.float64))[-2:]
    return float(top[1] - top[0]) if top.size == 2 else float("inf")


def comparison(ours: Generation, theirs: Generation) -> list[dict]:
    """Per prompt: equal, or the first step where the tokens differ with both top-2 margins."""
    found = []
    for row, (a, b) in enumerate(zip(ours.tokens, theirs.tokens)):
        step = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
        if step is None and len(a) == len(b):
            found.append({"prompt": row + 1, "same": True, "tokens": len(a)})
            continue
        if step is None:  # one side stopped (end of sequence) before the other
            step = min(len(a), len(b))
        entry = {"prompt": row + 1, "same": False, "step": step + 1,
                 "irexec": a[step] if step < len(a) else None,
                 "openvino": b[step] if step < len(b) else None}
        if step < len(ours.logits) and step < len(theirs.logits):
            entry["irexec_margin"] = _margin(ours.logits[step][row])
            entry["openvino_margin"] = _margin(theirs.logits[step][row])
        found.append(entry)
    return found


def _describe(entry: dict) -> str:
    if entry["same"]:
        return f"prompt {entry['prompt']}: the {entry['tokens']} tokens are OpenVINO's"
    text = (f"prompt {entry['prompt']}: differs from OpenVINO at step {entry['step']}: irexec "
            f"{entry['irexec']}, OpenVINO {entry['openvino']}")
    if "irexec_margin" in entry:
        text += (f" (top-2 logit margin: irexec {entry['irexec_margin']:.3g}, OpenVINO "
                 f"{entry['openvino_margin']:.3g})")
    return text


def execute(args) -> int:
    if args.max_new_tokens < 0:
        raise UsageError("argument --max-new-tokens: must be 0 or more")
    if not args.prompt_ids and not args.prompt:
        raise UsageError("give a prompt: --prompt-ids 1,2,3 (repeat for a batch) or --prompt "
                         "TEXT with an exported folder")
    prompts = [_ids(text) for text in args.prompt_ids]
    xml, folder, encoder_xml = _paths(args.model)
    tokenizer = None
    if args.prompt:
        tokenizer = _tokenizer(folder)
        if tokenizer is None:
            print(f"error: {INSTALL_TRANSFORMERS}", file=sys.stderr)
            return 1
        prompts += [list(tokenizer(text)["input_ids"]) for text in args.prompt]
    ov = None
    if args.compare:
        try:
            import openvino as ov
        except ImportError:
            print(f"error: {INSTALL_OPENVINO}", file=sys.stderr)
            return 1
    eos, pad, start = _config_tokens(folder)
    eos = args.eos_token_id if args.eos_token_id is not None else eos
    pad = args.pad_token_id if args.pad_token_id is not None else pad
    if pad is None:
        pad = eos if isinstance(eos, int) else (eos[0] if eos else 0)
    start = int(start) if isinstance(start, int) else int(pad)
    weights = args.weights

    def run(make):
        """The loop on the runners ``make(xml)`` gives: a decoder, or an encoder-decoder."""
        if encoder_xml is None:
            return decode(make(xml, weights), prompts, args.max_new_tokens, int(pad), eos,
                          keep_logits=bool(args.compare))
        return decode_seq2seq(make(encoder_xml, None), make(xml, None), prompts,
                              args.max_new_tokens, int(pad), eos, start,
                              keep_logits=bool(args.compare))

    def ours_runner(path, bin_path):
        args.model, args.weights = str(path), bin_path
        model = common.load_model(args, runs=True)
        return IrexecRunner(compile_model(model, config=common.compile_config(args)))

    ours = run(ours_runner)
    compared = None
    if args.compare:
        try:
            theirs = run(lambda path, bin_path: OpenVINORunner(ov, path, bin_path))
        except (RuntimeError, ValueError, TypeError) as e:  # OpenVINO's own errors
            print(f"error: OpenVINO could not generate with this model: {_first_line(e)}",
                  file=sys.stderr)
            return 1
        compared = comparison(ours, theirs)
    if args.format == "json":
        out = {"tokens": ours.tokens}
        if tokenizer is not None:
            out["text"] = [tokenizer.decode(t) for t in ours.tokens]
        if compared is not None:
            out["compare"] = compared
        print(json.dumps(out))
    else:
        for row, tokens in enumerate(ours.tokens):
            line = f"prompt {row + 1}: {' '.join(map(str, tokens))}"
            if tokenizer is not None:
                line += f"  {json.dumps(tokenizer.decode(tokens))}"
            print(printable.line(line))
        for entry in compared or ():
            print(_describe(entry))
    if compared is not None and not all(e["same"] for e in compared):
        return 1
    return 0
