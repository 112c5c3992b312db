"""Whole-model benchmark: ResNet-18 and MobileNet-V2 at 1x3x224x224 (issue 18's targets).

    python -m tools.bench models [--runs N] [--cache DIR] [--no-onnx]
    python -m tools.bench models --zoo DIR [--only NAME ...]
    python -m tools.bench models --nine [--zoo DIR] [--cache DIR]   # issue "Whole-model speed"
    python -m tools.bench models --kernels-alone MODEL.xml   # kernels alone against the call

The two networks are written here in plain torch.nn with the standard torchvision layouts
(ResNet-18: 64-128-256-512 basic blocks; MobileNet-V2: the 17 inverted residuals of width 1.0),
seeded random weights, converted by ``openvino.convert_model`` and saved as IR (f32) in the cache
folder, and exported to ONNX for ONNX's reference evaluator. For each model, in one run:

- latency: the best of ``--runs`` calls of irexec, of OpenVINO's CPU plugin (compiled with
  ``INFERENCE_PRECISION_HINT=f32``) and of irexec's precise mode (float64; issue 16's target:
  at most 3x the default mode), called in turn; and one call of ``onnx.reference``;
- peak memory: in a fresh process with irexec imported, the growth of the peak RSS while the
  model is read, compiled and called twice, against the weights plus the two largest
  activations (and, to show where it grows, the same growth once read and once compiled);
- where irexec's time goes, per op type (``irexec bench --per-op`` on the same file).

``--zoo DIR`` measures the models tools/model_zoo.py built in DIR instead (their saved example
inputs), as the whole-model speed issue asks: irexec and OpenVINO's CPU plugin (2 threads, the
f32 hint, dynamic quantization off) called in turn, the median of 5 calls after a warm-up (and,
beside it, the ratio of the best calls of as many more in turn); and the first result from a
fresh process (Python started, the library imported, the model read and compiled, one call),
the median of 3 fresh processes per side, also in turn (irexec's modules compiled to bytecode
first, as installed).

``--nine`` measures the nine models of the whole-model speed issue that way (ResNet-18, ResNet-50,
BERT tiny, MobileNet-V2, ViT tiny, EfficientNet-B0, GPT-2 tiny, Swin-T, Whisper tiny encoder).
ResNet-18 and MobileNet-V2 are the published architectures (``networks`` above) and ViT tiny is
ViT-Tiny/16 (transformers' ViTModel with timm's vit_tiny_patch16_224 configuration: width 192,
12 layers, 197 tokens), all at 224x224: the zoo's models of those names are smaller variants
(a quarter of ResNet-18's widths, five of MobileNet-V2's seven stages, a 2-layer ViT of width 48
on 32x32 images), made to keep CI short; ``--zoo DIR`` alone measures them. EfficientNet-B0 is
the zoo's (B0's published table), taken from ``--zoo DIR`` when built there (else built by
model_zoo's own code into ``--cache``) and reshaped by OpenVINO to 1x3x224x224. The others are
built here into ``--cache`` once: ResNet-50 (torchvision's layout, plain torch.nn) at 224, BERT
tiny (the zoo's configuration: 2 layers of width 32) and GPT-2 tiny (transformers' GPT2Model, 2
layers of width 32), both with dynamic batch and length, Swin-T (transformers' SwinModel, the
swin-tiny configuration) at 224, and a small Whisper encoder (transformers' WhisperEncoder: 2
layers of width 64, 80 mel bins, 200 frames), all with seeded random weights, converted by
``openvino.convert_model``.

    python -m tools.bench models --nine --zoo /work/zoo --cache .bench-models

Needs torch, OpenVINO and onnx (the ``zoo``, ``oracle`` and ``onnx`` extras).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import irexec  # noqa: E402
from tools.bench.compute import alternate, openvino_call  # noqa: E402


def networks():
    import torch
    from torch import nn

    def conv_bn(cin, cout, k, s, groups=1, act=True, relu6=False):
        layers = [nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False),
                  nn.BatchNorm2d(cout)]
        if act:
            layers.append(nn.ReLU6() if relu6 else nn.ReLU())
        return nn.Sequential(*layers)

    class Basic(nn.Module):
        def __init__(self, cin, cout, s):
            super().__init__()
            self.a, self.b = conv_bn(cin, cout, 3, s), conv_bn(cout, cout, 3, 1, act=False)
            self.skip = conv_bn(cin, cout, 1, s, act=False) if s != 1 or cin != cout \
                else nn.Identity()

        def forward(self, x):
            return torch.relu(self.b(self.a(x)) + self.skip(x))

    class ResNet18(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(conv_bn(3, 64, 7, 2), nn.MaxPool2d(3, 2, 1))
            blocks, cin = [], 64
            for i, w in enumerate((64, 128, 256, 512)):
                blocks += [Basic(cin, w, 1 if i == 0 else 2), Basic(w, w, 1)]
                cin = w
            self.blocks = nn.Sequential(*blocks)
            self.fc = nn.Linear(512, 1000)

        def forward(self, x):
            x = self.blocks(self.stem(x))
            return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))

    class Inverted(nn.Module):
        def __init__(self, cin, cout, s, t):
            super().__init__()
            mid = cin * t
            layers = [conv_bn(cin, mid, 1, 1, relu6=True)] if t != 1 else []
            layers += [conv_bn(mid, mid, 3, s, groups=mid, relu6=True),
                       conv_bn(mid, cout, 1, 1, act=False)]
            self.body = nn.Sequential(*layers)
            self.residual = s == 1 and cin == cout

        def forward(self, x):
            return x + self.body(x) if self.residual else self.body(x)

    class MobileNetV2(nn.Module):
        def __init__(self):
            super().__init__()
            layers, cin = [conv_bn(3, 32, 3, 2, relu6=True)], 32
            for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                               (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):
                for i in range(n):
                    layers.append(Inverted(cin, c, s if i == 0 else 1, t))
                    cin = c
            layers.append(conv_bn(cin, 1280, 1, 1, relu6=True))
            self.features = nn.Sequential(*layers)
            self.classifier = nn.Linear(1280, 1000)

        def forward(self, x):
            x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
            return self.classifier(torch.flatten(x, 1))

    return {"resnet18": ResNet18, "mobilenet_v2": MobileNetV2}


def _bn_stats(module):
    """``module`` with non-trivial batch-norm statistics (random weights leave them 0 and 1)."""
    from torch import nn

    for m in module.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    return module


def build(name: str, cache: Path) -> tuple[Path, Path]:
    """The model's IR and ONNX files in ``cache`` (built once)."""
    xml, onnx_path = cache / f"{name}_224.xml", cache / f"{name}_224.onnx"
    if xml.exists() and onnx_path.exists():
        return xml, onnx_path
    import openvino as ov
    import torch

    torch.manual_seed(0)
    module = _bn_stats(networks()[name]()).eval()
    example = torch.randn(1, 3, 224, 224)
    with torch.no_grad():
        ov.save_model(ov.convert_model(module, example_input=example,
                                       input=[ov.PartialShape([1, 3, 224, 224])]), xml,
                      compress_to_fp16=False)
        torch.onnx.export(module, (example,), str(onnx_path), dynamo=False,
                          input_names=["x"], output_names=["y"], opset_version=17)
    return xml, onnx_path


PEAK = """
import json, sys, numpy as np, irexec
from irexec.runtime.inputs import make_inputs
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
open("/proc/self/clear_refs", "w").write("5")
before = status("VmRSS")
model = irexec.read_model(sys.argv[1])
read = status("VmHWM") - before
compiled = irexec.compile_model(model)
built = status("VmHWM") - before
inputs = make_inputs(model, {}, 0)
compiled(inputs)
compiled(inputs)
print(json.dumps({"growth": status("VmHWM") - before, "read": read, "compiled": built}))
"""


def sizes(xml: Path) -> tuple[int, int]:
    """The weights' bytes, and the two largest activations' bytes (outputs of layers that run)."""
    model = irexec.read_model(xml)
    weights = sum(n.value.nbytes for n in model.nodes if n.type == "Constant"
                  and n.value is not None)
    acts = sorted((int(np.prod(p.partial_shape.to_shape())) * p.element_type.dtype.itemsize
                   for n in model.nodes if n.type not in ("Constant", "Parameter", "Result")
                   for p in n.outputs if p.partial_shape.is_static), reverse=True)
    return weights, sum(acts[:2])


FIRST_IREXEC = """
import sys, numpy as np, irexec
inputs = dict(np.load(sys.argv[2]))
compiled = irexec.compile_model(irexec.read_model(sys.argv[1]))
compiled(inputs)
"""

FIRST_OPENVINO = """
import sys, numpy as np, openvino as ov
inputs = dict(np.load(sys.argv[2]))
core = ov.Core()
compiled = core.compile_model(core.read_model(sys.argv[1]), "CPU",
                              {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 2,
                               "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"})
compiled.create_infer_request().infer(inputs)
"""


def compile_bytecode() -> None:
    """irexec's modules compiled to bytecode (``__pycache__``, ignored by git), as ``pip install``
    leaves them and as OpenVINO's are: run from a source tree with ``PYTHONDONTWRITEBYTECODE``
    set, every fresh process compiles irexec's source again (0.5 s of the first result on the
    2-core machine), which no installed irexec pays."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "irexec")], check=True,
                   capture_output=True)


def first_result(script: str, xml: Path, npz: Path) -> float:
    """Seconds from starting a fresh Python to its first result (the process's whole life)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", script, str(xml), str(npz)], check=True, env=env,
                   capture_output=True)
    return time.perf_counter() - start


def zoo(cache: Path, only: list[str], runs: int = 5, fresh: int = 3) -> list[dict]:
    """The zoo's models (tools/model_zoo.py, built in ``cache``): steady call and first result,
    irexec against OpenVINO (see the module's docstring)."""
    chosen = [(xml.stem, xml) for xml in sorted(cache.glob("*.xml"))
              if (not only or xml.stem in only) and xml.with_suffix(".inputs.npz").exists()]
    return measure(chosen, runs, fresh)


# The whole-model speed issue's nine models: (label, where from, name). "zoo": an entry of
# tools/model_zoo.py; "bench": built by this file (BUILDERS).
NINE = (("ResNet-18", "bench", "resnet18_full"), ("ResNet-50", "bench", "resnet50"),
        ("BERT tiny", "bench", "bert_tiny"), ("MobileNet-V2", "bench", "mobilenet_v2_full"),
        ("ViT tiny", "bench", "vit_tiny_16"), ("EfficientNet-B0", "zoo", "efficientnet_b0"),
        ("GPT-2 tiny", "bench", "gpt2_tiny"), ("Swin-T", "bench", "swin_t"),
        ("Whisper tiny encoder", "bench", "whisper_tiny_encoder"))


# The zoo builds its CNNs at 64x64 (to keep CI short); the issue measured them at ImageNet's
# 224x224, where a call is mostly arithmetic rather than per-layer costs: the bench reshapes them.
AT_224 = ("efficientnet_b0",)


def at_224(xml: Path, cache: Path) -> Path:
    """The model of ``xml`` reshaped by OpenVINO to [1, 3, 224, 224] and saved in ``cache``
    (f32, as a user reshapes a converted model), with seeded random inputs; once."""
    out = cache / f"{xml.stem}_224.xml"
    npz = out.with_suffix(".inputs.npz")
    if out.exists() and npz.exists():
        return out
    import openvino as ov

    model = ov.Core().read_model(str(xml))
    model.reshape([1, 3, 224, 224])
    ov.save_model(model, str(out), compress_to_fp16=False)
    name = model.input(0).get_any_name()
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    np.savez(npz, **{name: x})
    return out


def _resnet50():
    import torch
    from torch import nn

    class Bottleneck(nn.Module):
        def __init__(self, cin, width, stride):
            super().__init__()
            cout = width * 4
            self.body = nn.Sequential(
                nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
                nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width),
                nn.ReLU(), nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout))
            self.skip = nn.Identity() if stride == 1 and cin == cout else nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            return torch.relu(self.body(x) + self.skip(x))

    class ResNet50(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64),
                                      nn.ReLU(), nn.MaxPool2d(3, 2, 1))
            layers, cin = [], 64
            for i, (width, count) in enumerate(((64, 3), (128, 4), (256, 6), (512, 3))):
                for j in range(count):
                    layers.append(Bottleneck(cin, width, 2 if i and not j else 1))
                    cin = width * 4
            self.layers = nn.Sequential(*layers)
            self.fc = nn.Linear(2048, 1000)

        def forward(self, x):
            x = self.layers(self.stem(x))
            return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))

    return _bn_stats(ResNet50()), {"x": np.random.default_rng(0).standard_normal((1, 3, 224, 224),
                                                                   dtype=np.float32)}


def _image():
    return np.random.default_rng(0).standard_normal((1, 3, 224, 224), dtype=np.float32)


def _published(name: str):
    """ResNet-18 or MobileNet-V2 as published (``networks``), at 224x224."""
    return _bn_stats(networks()[name]()), {"x": _image()}


def _vit_tiny():
    # ViT-Tiny/16 (timm's vit_tiny_patch16_224 configuration) as transformers' ViTModel:
    # width 192, 12 layers, 3 heads, 197 tokens
    import transformers

    config = transformers.ViTConfig(image_size=224, patch_size=16, hidden_size=192,
                                    num_hidden_layers=12, num_attention_heads=3,
                                    intermediate_size=768)
    return transformers.ViTModel(config, add_pooling_layer=False), {"pixel_values": _image()}


def _swin_t():
    import transformers

    config = transformers.SwinConfig(image_size=224, patch_size=4, embed_dim=96,
                                     depths=[2, 2, 6, 2], num_heads=[3, 6, 12, 24], window_size=7)
    return transformers.SwinModel(config), {
        "pixel_values": np.random.default_rng(0).standard_normal((1, 3, 224, 224),
                                                                 dtype=np.float32)}


def _whisper_tiny_encoder():
    import transformers
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    config = transformers.WhisperConfig(d_model=64, encoder_layers=2, encoder_attention_heads=2,
                                        encoder_ffn_dim=256, num_mel_bins=80,
                                        max_source_positions=100, vocab_size=100)
    return WhisperEncoder(config), {
        "input_features": np.random.default_rng(0).standard_normal((1, 80, 200),
                                                                   dtype=np.float32)}


def _tokens(*names):
    rng = np.random.default_rng(0)
    arrays = {"input_ids": rng.integers(0, 50, size=(2, 9), dtype=np.int64)}
    if "attention_mask" in names:
        arrays["attention_mask"] = np.ones((2, 9), dtype=np.int64)
        arrays["attention_mask"][1, 6:] = 0  # the second sequence padded
    return arrays


def _bert_tiny():
    # transformers 5 builds its masks with code that torch.jit.trace cannot follow (the zoo's
    # bert_tiny fails to convert for that reason): the wrapper hands BertModel the additive
    # 4-D mask itself, as transformers 4 computed it
    import torch
    import transformers

    class Bert(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = transformers.BertModel(transformers.BertConfig(
                vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                intermediate_size=64, max_position_embeddings=64))

        def forward(self, input_ids, attention_mask):
            keep = attention_mask[:, None, None, :].to(torch.float32)
            additive = (1.0 - keep) * torch.finfo(torch.float32).min
            return self.bert(input_ids=input_ids, attention_mask=additive).last_hidden_state

    return Bert(), _tokens("input_ids", "attention_mask")


def _gpt2_tiny():
    # transformers' GPT2Model with a tiny configuration; the causal mask handed in as an
    # additive 4-D mask (see _bert_tiny)
    import torch
    import transformers

    class GPT2(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gpt = transformers.GPT2Model(transformers.GPT2Config(
                vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=64))

        def forward(self, input_ids):
            n = input_ids.shape[1]
            causal = torch.triu(torch.full((n, n), torch.finfo(torch.float32).min), 1)
            return self.gpt(input_ids=input_ids, attention_mask=causal[None, None],
                            use_cache=False).last_hidden_state

    return GPT2(), _tokens("input_ids")


BUILDERS = {"resnet18_full": lambda: _published("resnet18"), "resnet50": _resnet50,
            "mobilenet_v2_full": lambda: _published("mobilenet_v2"),
            "vit_tiny_16": _vit_tiny, "bert_tiny": _bert_tiny, "gpt2_tiny": _gpt2_tiny,
            "swin_t": _swin_t, "whisper_tiny_encoder": _whisper_tiny_encoder}


def build_extra(name: str, cache: Path) -> Path:
    """One of BUILDERS' models as IR (f32) in ``cache`` with its example inputs beside it
    (``NAME.inputs.npz``, keyed by the model's input names); built once."""
    xml, npz = cache / f"{name}.xml", cache / f"{name}.inputs.npz"
    if xml.exists() and npz.exists():
        return xml
    import openvino as ov
    import torch

    torch.manual_seed(0)
    module, arrays = BUILDERS[name]()
    module = module.eval()
    example = tuple(torch.from_numpy(a) for a in arrays.values())
    # token inputs: dynamic batch and length, as the zoo's text models
    shapes = [ov.PartialShape([-1, -1] if a.dtype == np.int64 else list(a.shape))
              for a in arrays.values()]
    with torch.no_grad():
        model = ov.convert_model(module, example_input=example[0] if len(example) == 1
                                 else example, input=shapes)
    for port, key in zip(model.inputs, arrays):
        port.get_tensor().set_names({key})
    ov.save_model(model, xml, compress_to_fp16=False)
    np.savez(npz, **arrays)
    return xml


def nine(zoo_dir: Path | None, cache: Path, only: list[str], runs: int = 5,
         fresh: int = 3) -> list[dict]:
    """The issue's nine models (NINE), each found or built, then measured (``measure``)."""
    cache.mkdir(parents=True, exist_ok=True)
    chosen = []
    for label, origin, name in NINE:
        if only and name not in only and label not in only:
            continue
        if origin == "bench":
            xml = build_extra(name, cache)
        elif zoo_dir is not None and (zoo_dir / f"{name}.inputs.npz").exists():
            xml = zoo_dir / f"{name}.xml"
        else:
            from tools import model_zoo
            xml = cache / f"{name}.xml"
            if not (cache / f"{name}.inputs.npz").exists():
                model_zoo.build(next(e for e in model_zoo.ZOO if e.name == name), cache)
        if name in AT_224:
            xml = at_224(xml, cache)
        chosen.append((label, xml))
    return measure(chosen, runs, fresh)


def _shapes(npz: Path) -> str:
    return " ".join("x".join(map(str, a.shape)) for a in np.load(npz).values())


def measure(chosen: list[tuple[str, Path]], runs: int = 5, fresh: int = 3) -> list[dict]:
    """Each (label, IR file) with its saved inputs: irexec's steady call against OpenVINO's
    (alternating, the median of ``runs`` after a warm-up), then the first result from a fresh
    process, the median of ``fresh`` processes per side, in turn."""
    import statistics

    import openvino as ov
    compile_bytecode()
    rows = []
    for name, xml in chosen:
        npz = xml.with_suffix(".inputs.npz")
        inputs = dict(np.load(npz))
        compiled = irexec.compile_model(irexec.read_model(xml))
        core = ov.Core()
        request = core.compile_model(core.read_model(str(xml)), "CPU", {
            "INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 2,
            "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"}).create_infer_request()
        t_ours, t_ov = alternate([lambda: compiled(inputs),
                                  lambda: request.infer(inputs, share_inputs=True,
                                                        share_outputs=True)], runs, median=True)
        # the best of as many calls again, in turn: on a loaded machine the medians swing, the
        # best calls less
        b_ours, b_ov = alternate([lambda: compiled(inputs),
                                  lambda: request.infer(inputs, share_inputs=True,
                                                        share_outputs=True)], runs)
        firsts = [[], []]
        for _ in range(fresh):
            firsts[0].append(first_result(FIRST_IREXEC, xml, npz))
            firsts[1].append(first_result(FIRST_OPENVINO, xml, npz))
        f_ours, f_ov = (statistics.median(f) for f in firsts)
        row = {"model": name, "inputs": _shapes(npz), "irexec_ms": t_ours * 1e3,
               "openvino_ms": t_ov * 1e3, "ratio": t_ours / t_ov, "best_ratio": b_ours / b_ov,
               "first_irexec_s": f_ours, "first_openvino_s": f_ov, "first_ratio": f_ours / f_ov,
               "load": os.getloadavg()[0]}
        rows.append(row)
        print(json.dumps(row), flush=True)
    print("| model | inputs | irexec ms | OpenVINO ms | ratio | best-call ratio | "
          "first result irexec s | OpenVINO s | ratio | load |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['model']} | {r['inputs']} | {r['irexec_ms']:.3g} | {r['openvino_ms']:.3g} | "
              f"{r['ratio']:.2f}x | {r['best_ratio']:.2f}x | {r['first_irexec_s']:.2f} | "
              f"{r['first_openvino_s']:.2f} | {r['first_ratio']:.2f} | {r['load']:.1f} |")
    return rows


def kernels_alone(xml: Path, runs: int = 30) -> dict:
    """Each layer's kernel called alone on the arrays a traced call handed it, the median of
    ``runs`` calls, summed per op type; and the median whole call. What the call spends beyond
    the kernels is the run loop's (its per-layer and per-call work: what the plan's shape cache
    and fusions remove). Reads the compiled model's plan (``compiled.plan``)."""
    import collections
    import statistics

    npz = xml.with_suffix(".inputs.npz")
    model = irexec.read_model(xml)
    compiled = irexec.compile_model(model)
    if npz.exists():
        inputs = dict(np.load(npz))
    else:
        from irexec.runtime.inputs import make_inputs
        inputs = make_inputs(model, {}, 0)
    seen = {}
    compiled(inputs, trace=lambda layer, port, array: seen.__setitem__((layer.name, port), array))
    plan = compiled.plan
    arrays = dict(plan.constants)
    values = list(inputs.values())
    for i, slot in enumerate(plan.inputs):
        arrays[slot.slot] = next((inputs[n] for n in slot.names if n in inputs), values[i])
    per_type, layers = collections.defaultdict(float), collections.Counter()
    for step in plan.steps:
        args = [arrays.get(i) for i in step.inputs]
        for k, out in enumerate(step.outputs):
            arrays[out] = seen.get((step.layer, k))
        if any(a is None for a in args):
            continue  # (a layer the trace does not show alone)
        step.kernel(*args)
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            step.kernel(*args)
            times.append(time.perf_counter() - start)
        per_type[step.type] += statistics.median(times)
        layers[step.type] += 1
    calls = []
    for _ in range(runs):
        start = time.perf_counter()
        compiled(inputs)
        calls.append(time.perf_counter() - start)
    call, alone = statistics.median(calls), sum(per_type.values())
    print(f"{xml.name}: call {call * 1e3:.3f} ms (median of {runs}), kernels alone "
          f"{alone * 1e3:.3f} ms ({alone / call:.0%}), the rest {(call - alone) * 1e3:.3f} ms")
    for name, t in sorted(per_type.items(), key=lambda kv: -kv[1]):
        print(f"  {name:28s} {t * 1e6:9.1f} us  {layers[name]:4d} layers")
    return {"call_s": call, "kernels_s": alone, "per_type_s": dict(per_type)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=None,
                        help="timed calls per side (default 7; with --zoo/--nine 5, the "
                             "median taken)")
    parser.add_argument("--zoo", metavar="DIR", help="measure tools/model_zoo.py's models "
                        "built in DIR instead (steady call and first result)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="with --zoo/--nine: only this model (repeatable)")
    parser.add_argument("--cache", default=str(ROOT / ".bench-models"))
    parser.add_argument("--no-onnx", action="store_true", help="skip ONNX's reference evaluator")
    parser.add_argument("--nine", action="store_true", help="the whole-model speed issue's nine "
                        "models: those of the zoo from --zoo DIR (if given and built there), "
                        "the others built into --cache")
    parser.add_argument("--fresh", type=int, default=3, metavar="N",
                        help="with --zoo/--nine: fresh processes per side for the first result")
    parser.add_argument("--kernels-alone", metavar="XML", action="append", default=[],
                        help="each layer's kernel called alone on the arrays a traced call "
                             "gave it, per op type, against the whole call (repeatable)")
    args = parser.parse_args(argv)
    if args.kernels_alone:
        for xml in args.kernels_alone:
            kernels_alone(Path(xml), args.runs or 30)
        return 0
    if args.nine:
        known = {name for _, _, name in NINE} | {label for label, _, _ in NINE}
        unknown = [n for n in args.only if n not in known]
        if unknown:
            parser.error(f"--only {unknown[0]!r} is not one of the nine; choose from "
                         f"{', '.join(name for _, _, name in NINE)} (or their labels)")
        nine(Path(args.zoo) if args.zoo else None, Path(args.cache), args.only,
             runs=args.runs or 5, fresh=args.fresh)
        return 0
    if args.zoo:
        zoo(Path(args.zoo), args.only, runs=args.runs or 5, fresh=args.fresh)
        return 0
    args.runs = args.runs or 7
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in networks():
        xml, onnx_path = build(name, cache)
        x = np.random.default_rng(0).standard_normal((1, 3, 224, 224), dtype=np.float32)
        model = irexec.read_model(xml)
        compiled = irexec.compile_model(model)
        feed = {model.parameters[0].name: x}
        ours_out = list(compiled(feed).values())[0]
        theirs = openvino_call(xml, feed)
        theirs_out = list(theirs().values())[0]
        err = float(np.abs(ours_out - theirs_out).max() / max(np.abs(theirs_out).max(), 1e-9))
        precise = irexec.compile_model(model, config={"precision": "f64"})
        t_ours, t_ov, t_precise = alternate([lambda: compiled(feed), theirs,
                                             lambda: precise(feed)], args.runs)
        t_ref = None
        if not args.no_onnx:
            from onnx.reference import ReferenceEvaluator
            ref = ReferenceEvaluator(str(onnx_path))
            start = time.perf_counter()
            ref.run(None, {"x": x})
            t_ref = time.perf_counter() - start
        grown = json.loads(subprocess.run([sys.executable, "-c", PEAK, str(xml)], check=True,
                                          capture_output=True, text=True).stdout)
        peak = grown["growth"]
        weights, acts = sizes(xml)
        row = {"model": name, "irexec_ms": t_ours * 1e3, "openvino_ms": t_ov * 1e3,
               "x_openvino": t_ours / t_ov, "onnx_reference_ms": t_ref and t_ref * 1e3,
               "precise_ms": t_precise * 1e3, "precise_over_default": t_precise / t_ours,
               "x_faster_than_reference": t_ref and t_ref / t_ours,
               "peak_growth_mib": peak / 2**20,
               "peak_after_read_mib": grown["read"] / 2**20,
               "peak_after_compile_mib": grown["compiled"] / 2**20,
               "weights_mib": weights / 2**20,
               "two_largest_activations_mib": acts / 2**20,
               "peak_over_weights_plus_activations": peak / (weights + acts),
               "max_relative_difference": err}
        rows.append(row)
        print(json.dumps(row), flush=True)
        per_op = subprocess.run([sys.executable, "-m", "irexec", "bench", str(xml), "--per-op",
                                 "-n", str(args.runs)], capture_output=True, text=True)
        print(per_op.stdout[per_op.stdout.find("per op type"):], flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
