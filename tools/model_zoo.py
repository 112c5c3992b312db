"""Build a zoo of real architectures as OpenVINO IR, exactly as users convert them.

    python tools/model_zoo.py --list                 # the models (no torch or OpenVINO needed)
    python tools/model_zoo.py [--only NAME]... [--cache DIR] [--force]
    python tools/model_zoo.py --bench [--docs docs/models.md]   # latency, irexec vs OpenVINO

Each model is built in PyTorch with seeded random weights (nothing is downloaded), converted with
``openvino.convert_model`` and saved with ``openvino.save_model`` (some with fp16 compression,
as converters ship them, some without) into the cache folder (default ``.zoo/``), beside its
example inputs (``NAME.inputs.npz``) and OpenVINO CPU's outputs at f32 inference precision
(``NAME.outputs.npz``, ``output_0``, ``output_1`` ... in model order). The architectures are written here in plain ``torch.nn`` (no
torchvision, which does not install beside the CPU build of torch on PyPI) following the
published designs at small sizes; BERT comes from a ``transformers`` config, the bidirectional
LSTM from Keras (TensorFlow), and three models are compressed by NNCF (int8 FakeQuantize, int4
weights). A rebuild skips the models already in the cache when this file and OpenVINO's version
are unchanged (``zoo.key``); a model that fails to build is named and the others still build
(exit 1).

Needs the ``zoo`` extra: ``pip install '.[oracle]' torch==2.13.0 '.[zoo]'`` (torch's CPU build,
transformers, tensorflow-cpu, nncf).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Entry:
    name: str
    what: str
    inputs: tuple  # ((name, shape, dtype), ...) of the example inputs
    fp16: bool = False  # saved with compress_to_fp16 (f16 Const -> Convert pairs)
    dynamic: tuple = ()  # input dims left dynamic at conversion: ((input index, dim), ...)
    needs: str = "torch"  # "torch", "transformers", "tensorflow" or "nncf" (and torch)
    extra: dict = field(default_factory=dict)


ZOO = [
    Entry("resnet18", "ResNet-18 (basic blocks, batch norm folded by the converter)",
          (("x", (1, 3, 64, 64), "f32"),), fp16=True),
    Entry("mobilenet_v2", "MobileNet-V2 (inverted residuals, depthwise convolutions, ReLU6)",
          (("x", (1, 3, 64, 64), "f32"),)),
    Entry("mobilenet_v3_small", "MobileNet-V3-small (hard-swish, squeeze-and-excitation)",
          (("x", (1, 3, 64, 64), "f32"),), fp16=True),
    Entry("squeezenet", "SqueezeNet 1.1 (fire modules, concatenation, global average pooling)",
          (("x", (1, 3, 64, 64), "f32"),)),
    Entry("shufflenet_v2", "ShuffleNet-V2 (channel split and shuffle)",
          (("x", (1, 3, 64, 64), "f32"),)),
    Entry("densenet_tiny", "DenseNet (dense blocks of concatenated features)",
          (("x", (1, 3, 32, 32), "f32"),)),
    Entry("convnext_tiny", "ConvNeXt block stack (depthwise 7x7, LayerNorm, GELU)",
          (("x", (1, 3, 32, 32), "f32"),)),
    Entry("vit_tiny", "a small Vision Transformer (patches, attention, LayerNorm, GELU)",
          (("x", (1, 3, 32, 32), "f32"),), fp16=True),
    Entry("lstm_tagger", "a 2-layer LSTM tagger over embeddings (dynamic batch and length)",
          (("tokens", (2, 7), "i64"),), dynamic=((0, 0), (0, 1))),
    Entry("bigru_tagger", "a bidirectional GRU text model (dynamic batch and length)",
          (("tokens", (2, 7), "i64"),), dynamic=((0, 0), (0, 1))),
    Entry("conv1d_audio", "a 1-D convolutional audio classifier",
          (("wave", (1, 1, 800), "f32"),)),
    Entry("bert_tiny", "a tiny BERT from its config (dynamic batch and sequence length)",
          (("input_ids", (2, 9), "i64"), ("attention_mask", (2, 9), "i64")),
          dynamic=((0, 0), (0, 1), (1, 0), (1, 1)), needs="transformers"),
    Entry("gpt_tiny", "a tiny GPT-style decoder: causal attention, learned positions from the "
          "dynamic length (transformers' GPT-2 does not convert with OpenVINO 2026.4: "
          "aten::diff)", (("input_ids", (2, 9), "i64"),), dynamic=((0, 0), (0, 1))),
    Entry("efficientnet_b0", "EfficientNet-B0 at its published widths (MBConv, SiLU, "
          "squeeze-and-excitation)", (("x", (1, 3, 64, 64), "f32"),), fp16=True),
    Entry("densenet121", "DenseNet-121 at its published widths (growth 32, blocks 6-12-24-16)",
          (("x", (1, 3, 32, 32), "f32"),)),
    Entry("regnet_x_200mf", "RegNetX-200MF (grouped bottlenecks, group width 8)",
          (("x", (1, 3, 64, 64), "f32"),), fp16=True),
    Entry("lraspp_mobilenet_v3", "LR-ASPP segmentation on a MobileNet-V3-small backbone "
          "(bilinear upsampling)", (("x", (1, 3, 64, 64), "f32"),)),
    Entry("ssdlite_detector", "an SSD-Lite detector: MobileNet-V2 backbone, two heads, anchor "
          "decoding, torchvision's nms (NonMaxSuppression)", (("x", (1, 3, 64, 64), "f32"),)),
    Entry("keras_bilstm", "a Keras bidirectional LSTM tagger (TensorFlow: Loop and "
          "ReverseSequence; dynamic batch and length)", (("tokens", (2, 7), "i32"),),
          dynamic=((0, 0), (0, 1)), needs="tensorflow"),
    Entry("resnet18_int8", "ResNet-18 quantized to int8 by NNCF's post-training quantization "
          "(FakeQuantize)", (("x", (1, 3, 64, 64), "f32"),), needs="nncf",
          extra={"base": "resnet18", "nncf": "int8", "int8_kernels": True}),
    Entry("gpt_tiny_int4", "the tiny GPT with weights compressed by NNCF: int4 asymmetric in "
          "groups of 16, int8 for the rest (u4 and u8 decompression subgraphs)",
          (("input_ids", (2, 9), "i64"),), dynamic=((0, 0), (0, 1)), needs="nncf",
          extra={"base": "gpt_tiny", "nncf": "INT4_ASYM"}),
    Entry("bert_tiny_int4", "the tiny BERT with weights compressed by NNCF: int4 symmetric in "
          "groups of 16, int8 for the rest (i4 and u8 decompression subgraphs)",
          (("input_ids", (2, 9), "i64"), ("attention_mask", (2, 9), "i64")),
          dynamic=((0, 0), (0, 1), (1, 0), (1, 1)), needs="nncf",
          extra={"base": "bert_tiny", "nncf": "INT4_SYM"}),
]


# --- architectures (plain torch.nn, small) -------------------------------------------------------

def _architectures():
    import torch
    from torch import nn
    from torch.nn import functional as F

    def conv_bn(cin, cout, k=3, s=1, groups=1, act=nn.ReLU):
        layers = [nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False),
                  nn.BatchNorm2d(cout)]
        if act is not None:
            layers.append(act())
        return nn.Sequential(*layers)

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.a = conv_bn(cin, cout, 3, stride)
            self.b = conv_bn(cout, cout, 3, 1, act=None)
            self.skip = (conv_bn(cin, cout, 1, stride, act=None)
                         if stride != 1 or cin != cout else nn.Identity())

        def forward(self, x):
            return F.relu(self.b(self.a(x)) + self.skip(x))

    class ResNet18(nn.Module):
        def __init__(self, classes=10):
            super().__init__()
            self.stem = nn.Sequential(conv_bn(3, 16, 7, 2), nn.MaxPool2d(3, 2, 1))
            widths, blocks, cin = (16, 32, 64, 128), [], 16
            for i, w in enumerate(widths):
                blocks += [BasicBlock(cin, w, 1 if i == 0 else 2), BasicBlock(w, w, 1)]
                cin = w
            self.blocks = nn.Sequential(*blocks)
            self.head = nn.Linear(cin, classes)

        def forward(self, x):
            x = self.blocks(self.stem(x))
            return self.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))

    class InvertedResidual(nn.Module):
        def __init__(self, cin, cout, stride, expand, act=nn.ReLU6, se=False, k=3):
            super().__init__()
            mid = cin * expand
            layers = [conv_bn(cin, mid, 1, act=act)] if expand != 1 else []
            layers.append(conv_bn(mid, mid, k, stride, groups=mid, act=act))
            if se:
                layers.append(SqueezeExcite(mid))
            layers.append(conv_bn(mid, cout, 1, act=None))
            self.body = nn.Sequential(*layers)
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            y = self.body(x)
            return x + y if self.residual else y

    class SqueezeExcite(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.a, self.b = nn.Conv2d(c, max(c // 4, 8), 1), nn.Conv2d(max(c // 4, 8), c, 1)

        def forward(self, x):
            s = F.adaptive_avg_pool2d(x, 1)
            return x * F.hardsigmoid(self.b(F.relu(self.a(s))))

    class MobileNetV2(nn.Module):
        def __init__(self, classes=10):
            super().__init__()
            cfg = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 2, 2), (6, 64, 1, 2), (6, 96, 1, 1)]
            layers, cin = [conv_bn(3, 32, 3, 2, act=nn.ReLU6)], 32
            for t, c, n, s in cfg:
                for i in range(n):
                    layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                    cin = c
            layers.append(conv_bn(cin, 256, 1, act=nn.ReLU6))
            self.features = nn.Sequential(*layers)
            self.head = nn.Sequential(nn.Dropout(0.2), nn.Linear(256, classes))

        def forward(self, x):
            return self.head(F.adaptive_avg_pool2d(self.features(x), 1).flatten(1))

    class MobileNetV3Small(nn.Module):
        def __init__(self, classes=10):
            super().__init__()
            hs = nn.Hardswish
            cfg = [(16, 1, 2, nn.ReLU, True, 3), (24, 4, 2, nn.ReLU, False, 3),
                   (24, 3, 1, nn.ReLU, False, 3), (40, 4, 2, hs, True, 5),
                   (48, 3, 1, hs, True, 5)]
            layers, cin = [conv_bn(3, 16, 3, 2, act=hs)], 16
            for c, t, s, act, se, k in cfg:
                layers.append(InvertedResidual(cin, c, s, t, act=act, se=se, k=k))
                cin = c
            layers.append(conv_bn(cin, 96, 1, act=hs))
            self.features = nn.Sequential(*layers)
            self.head = nn.Sequential(nn.Linear(96, 128), hs(), nn.Linear(128, classes))

        def forward(self, x):
            return self.head(F.adaptive_avg_pool2d(self.features(x), 1).flatten(1))

    class Fire(nn.Module):
        def __init__(self, cin, squeeze, expand):
            super().__init__()
            self.s = nn.Conv2d(cin, squeeze, 1)
            self.e1, self.e3 = nn.Conv2d(squeeze, expand, 1), nn.Conv2d(squeeze, expand, 3,
                                                                        padding=1)

        def forward(self, x):
            x = F.relu(self.s(x))
            return torch.cat([F.relu(self.e1(x)), F.relu(self.e3(x))], 1)

    class SqueezeNet(nn.Module):
        def __init__(self, classes=10):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, 32, 3, 2), nn.ReLU(), nn.MaxPool2d(3, 2, ceil_mode=True),
                Fire(32, 8, 32), Fire(64, 8, 32), nn.MaxPool2d(3, 2, ceil_mode=True),
                Fire(64, 16, 64))
            self.head = nn.Sequential(nn.Dropout(0.5), nn.Conv2d(128, classes, 1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1))

        def forward(self, x):
            return torch.flatten(self.head(self.features(x)), 1)

    class ShuffleUnit(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.stride = stride
            half = cout // 2
            if stride > 1:
                self.left = nn.Sequential(conv_bn(cin, cin, 3, stride, groups=cin, act=None),
                                          conv_bn(cin, half, 1))
            right_in = cin if stride > 1 else half
            self.right = nn.Sequential(conv_bn(right_in, half, 1),
                                       conv_bn(half, half, 3, stride, groups=half, act=None),
                                       conv_bn(half, half, 1))

        def forward(self, x):
            if self.stride == 1:
                a, b = x.chunk(2, dim=1)
                out = torch.cat([a, self.right(b)], 1)
            else:
                out = torch.cat([self.left(x), self.right(x)], 1)
            n, c, h, w = out.shape
            return out.view(n, 2, c // 2, h, w).transpose(1, 2).reshape(n, c, h, w)

    class ShuffleNetV2(nn.Module):
        def __init__(self, classes=10):
            super().__init__()
            self.stem = nn.Sequential(conv_bn(3, 24, 3, 2), nn.MaxPool2d(3, 2, 1))
            layers, cin = [], 24
            for cout, n in ((48, 2), (96, 2)):
                for i in range(n):
                    layers.append(ShuffleUnit(cin, cout, 2 if i == 0 else 1))
                    cin = cout
            self.stages = nn.Sequential(*layers)
            self.head = nn.Linear(cin, classes)

        def forward(self, x):
            return self.head(self.stages(self.stem(x)).mean([2, 3]))

    class DenseTiny(nn.Module):
        def __init__(self, classes=10, growth=8):
            super().__init__()
            self.stem = nn.Conv2d(3, 16, 3, padding=1, bias=False)
            self.layers = nn.ModuleList()
            c = 16
            for _ in range(4):
                self.layers.append(nn.Sequential(nn.BatchNorm2d(c), nn.ReLU(),
                                                 nn.Conv2d(c, growth, 3, padding=1,
                                                           bias=False)))
                c += growth
            self.transition = nn.Sequential(nn.BatchNorm2d(c), nn.ReLU(), nn.Conv2d(c, c, 1),
                                            nn.AvgPool2d(2))
            self.head = nn.Linear(c, classes)

        def forward(self, x):
            x = self.stem(x)
            for layer in self.layers:
                x = torch.cat([x, layer(x)], 1)
            return self.head(self.transition(x).mean([2, 3]))

    class ConvNeXtBlock(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
            self.norm = nn.LayerNorm(c, eps=1e-6)
            self.pw1, self.pw2 = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)
            self.gamma = nn.Parameter(torch.full((c,), 0.1))

        def forward(self, x):
            y = self.dw(x).permute(0, 2, 3, 1)
            y = self.pw2(F.gelu(self.pw1(self.norm(y))))
            return x + (self.gamma * y).permute(0, 3, 1, 2)

    class ConvNeXtTiny(nn.Module):
        def __init__(self, classes=10):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 32, 4, 4))
            self.blocks = nn.Sequential(ConvNeXtBlock(32), ConvNeXtBlock(32))
            self.down = nn.Conv2d(32, 64, 2, 2)
            self.blocks2 = nn.Sequential(ConvNeXtBlock(64))
            self.norm = nn.LayerNorm(64)
            self.head = nn.Linear(64, classes)

        def forward(self, x):
            x = self.blocks2(self.down(self.blocks(self.stem(x))))
            return self.head(self.norm(x.mean([2, 3])))

    class ViTTiny(nn.Module):
        def __init__(self, classes=10, dim=48, depth=2, heads=3, patch=8):
            super().__init__()
            self.patch = nn.Conv2d(3, dim, patch, patch)
            self.cls = nn.Parameter(torch.zeros(1, 1, dim))
            self.pos = nn.Parameter(torch.randn(1, 1 + (32 // patch) ** 2, dim) * 0.02)
            layer = nn.TransformerEncoderLayer(dim, heads, 2 * dim, dropout=0.0,
                                               activation="gelu", batch_first=True,
                                               norm_first=True)
            self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
            self.norm = nn.LayerNorm(dim)
            self.head = nn.Linear(dim, classes)

        def forward(self, x):
            x = self.patch(x).flatten(2).transpose(1, 2)
            x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.pos
            return self.head(self.norm(self.encoder(x))[:, 0])

    class LSTMTagger(nn.Module):
        def __init__(self, vocab=50, dim=16, hidden=24, tags=5):
            super().__init__()
            self.embed = nn.Embedding(vocab, dim)
            self.lstm = nn.LSTM(dim, hidden, num_layers=2, batch_first=True)
            self.out = nn.Linear(hidden, tags)

        def forward(self, tokens):
            y, _ = self.lstm(self.embed(tokens))
            return F.log_softmax(self.out(y), -1)

    class BiGRUTagger(nn.Module):
        def __init__(self, vocab=50, dim=16, hidden=20, tags=5):
            super().__init__()
            self.embed = nn.Embedding(vocab, dim)
            self.gru = nn.GRU(dim, hidden, batch_first=True, bidirectional=True)
            self.out = nn.Linear(2 * hidden, tags)

        def forward(self, tokens):
            y, _ = self.gru(self.embed(tokens))
            return self.out(y).argmax(-1)

    class Conv1dAudio(nn.Module):
        def __init__(self, classes=6):
            super().__init__()
            self.net = nn.Sequential(
                nn.Conv1d(1, 16, 9, 4), nn.BatchNorm1d(16), nn.ReLU(), nn.MaxPool1d(2),
                nn.Conv1d(16, 32, 5, 2), nn.BatchNorm1d(32), nn.ReLU(),
                nn.Conv1d(32, 32, 3, dilation=2), nn.ReLU())
            self.head = nn.Linear(32, classes)

        def forward(self, wave):
            return F.softmax(self.head(self.net(wave).mean(-1)), -1)

    class GPTBlock(nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.heads = heads
            self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
            self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"),
                                     nn.Linear(4 * dim, dim))

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
            q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2)
                       for z in (q, k, v))
            att = (q @ k.transpose(-2, -1)) / (c // self.heads) ** 0.5
            causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
            att = att.masked_fill(~causal, float("-inf")).softmax(-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, c)
            x = x + self.proj(y)
            return x + self.mlp(self.ln2(x))

    class GPTTiny(nn.Module):
        def __init__(self, vocab=100, dim=32, heads=2, depth=2, positions=64):
            super().__init__()
            self.tokens, self.positions = nn.Embedding(vocab, dim), nn.Embedding(positions, dim)
            self.blocks = nn.Sequential(*[GPTBlock(dim, heads) for _ in range(depth)])
            self.ln = nn.LayerNorm(dim)
            self.head = nn.Linear(dim, vocab, bias=False)

        def forward(self, input_ids):
            t = input_ids.shape[1]
            pos = torch.arange(t, device=input_ids.device)
            x = self.tokens(input_ids) + self.positions(pos)
            return self.head(self.ln(self.blocks(x)))

    class MBConv(nn.Module):
        """EfficientNet's block: expand, depthwise, squeeze-and-excitation (SiLU, sigmoid)."""

        def __init__(self, cin, cout, stride, expand, k):
            super().__init__()
            mid = cin * expand
            layers = [conv_bn(cin, mid, 1, act=nn.SiLU)] if expand != 1 else []
            layers.append(conv_bn(mid, mid, k, stride, groups=mid, act=nn.SiLU))
            self.body = nn.Sequential(*layers)
            squeeze = max(1, cin // 4)
            self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(mid, squeeze, 1),
                                    nn.SiLU(), nn.Conv2d(squeeze, mid, 1), nn.Sigmoid())
            self.project = conv_bn(mid, cout, 1, act=None)
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            y = self.body(x)
            y = self.project(y * self.se(y))
            return x + y if self.residual else y

    class EfficientNetB0(nn.Module):
        def __init__(self, classes=10):
            super().__init__()
            # (expand, channels, repeats, stride, kernel): B0's published table
            cfg = [(1, 16, 1, 1, 3), (6, 24, 2, 2, 3), (6, 40, 2, 2, 5), (6, 80, 3, 2, 3),
                   (6, 112, 3, 1, 5), (6, 192, 4, 2, 5), (6, 320, 1, 1, 3)]
            layers, cin = [conv_bn(3, 32, 3, 2, act=nn.SiLU)], 32
            for t, c, n, s, k in cfg:
                for i in range(n):
                    layers.append(MBConv(cin, c, s if i == 0 else 1, t, k))
                    cin = c
            layers.append(conv_bn(cin, 1280, 1, act=nn.SiLU))
            self.features = nn.Sequential(*layers)
            self.head = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, classes))

        def forward(self, x):
            return self.head(F.adaptive_avg_pool2d(self.features(x), 1).flatten(1))

    class DenseLayer(nn.Module):
        def __init__(self, cin, growth, bn_size=4):
            super().__init__()
            self.body = nn.Sequential(nn.BatchNorm2d(cin), nn.ReLU(),
                                      nn.Conv2d(cin, bn_size * growth, 1, bias=False),
                                      nn.BatchNorm2d(bn_size * growth), nn.ReLU(),
                                      nn.Conv2d(bn_size * growth, growth, 3, padding=1,
                                                bias=False))

        def forward(self, features):
            return self.body(torch.cat(features, 1))

    class DenseNet121(nn.Module):
        def __init__(self, classes=10, growth=32, blocks=(6, 12, 24, 16), init=64):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, init, 7, 2, 3, bias=False),
                                      nn.BatchNorm2d(init), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
            self.blocks, self.transitions = nn.ModuleList(), nn.ModuleList()
            c = init
            for i, n in enumerate(blocks):
                block = nn.ModuleList()
                for j in range(n):
                    block.append(DenseLayer(c + j * growth, growth))
                self.blocks.append(block)
                c += n * growth
                if i < len(blocks) - 1:
                    self.transitions.append(nn.Sequential(
                        nn.BatchNorm2d(c), nn.ReLU(), nn.Conv2d(c, c // 2, 1, bias=False),
                        nn.AvgPool2d(2, 2)))
                    c //= 2
            self.norm = nn.BatchNorm2d(c)
            self.head = nn.Linear(c, classes)

        def forward(self, x):
            x = self.stem(x)
            for i, block in enumerate(self.blocks):
                features = [x]
                for layer in block:
                    features.append(layer(features))
                x = torch.cat(features, 1)
                if i < len(self.transitions):
                    x = self.transitions[i](x)
            x = F.relu(self.norm(x))
            return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1))

    class RegNetBlock(nn.Module):
        """RegNetX's residual bottleneck: 1x1, grouped 3x3, 1x1 (bottleneck ratio 1)."""

        def __init__(self, cin, cout, stride, group_width):
            super().__init__()
            self.body = nn.Sequential(conv_bn(cin, cout, 1),
                                      conv_bn(cout, cout, 3, stride, groups=cout // group_width),
                                      conv_bn(cout, cout, 1, act=None))
            self.skip = (conv_bn(cin, cout, 1, stride, act=None)
                         if stride != 1 or cin != cout else nn.Identity())

        def forward(self, x):
            return F.relu(self.body(x) + self.skip(x))

    class RegNetX200MF(nn.Module):
        def __init__(self, classes=10):
            super().__init__()
            self.stem = conv_bn(3, 32, 3, 2)
            layers, cin = [], 32
            for width, depth in ((24, 1), (56, 1), (152, 4), (368, 7)):  # RegNetX-200MF
                for i in range(depth):
                    layers.append(RegNetBlock(cin, width, 2 if i == 0 else 1, 8))
                    cin = width
            self.stages = nn.Sequential(*layers)
            self.head = nn.Linear(cin, classes)

        def forward(self, x):
            return self.head(F.adaptive_avg_pool2d(self.stages(self.stem(x)), 1).flatten(1))

    class LRASPP(nn.Module):
        """LR-ASPP segmentation head on a MobileNet-V3-small backbone (stride 8 and 16)."""

        def __init__(self, classes=4):
            super().__init__()
            hs = nn.Hardswish
            self.low = nn.Sequential(conv_bn(3, 16, 3, 2, act=hs),
                                     InvertedResidual(16, 16, 2, 1, act=nn.ReLU, se=True),
                                     InvertedResidual(16, 24, 2, 4, act=nn.ReLU))
            self.high = nn.Sequential(InvertedResidual(24, 24, 1, 3, act=nn.ReLU),
                                      InvertedResidual(24, 40, 2, 4, act=hs, se=True, k=5),
                                      InvertedResidual(40, 48, 1, 3, act=hs, se=True, k=5),
                                      conv_bn(48, 96, 1, act=hs))
            self.cbr = conv_bn(96, 32, 1)
            self.scale = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(96, 32, 1, bias=False),
                                       nn.Sigmoid())
            self.low_classifier = nn.Conv2d(24, classes, 1)
            self.high_classifier = nn.Conv2d(32, classes, 1)

        def forward(self, x):
            low = self.low(x)
            high = self.high(low)
            y = self.cbr(high) * self.scale(high)
            y = F.interpolate(y, size=low.shape[-2:], mode="bilinear", align_corners=False)
            y = self.low_classifier(low) + self.high_classifier(y)
            return F.interpolate(y, size=x.shape[-2:], mode="bilinear", align_corners=False)

    class SSDLite(nn.Module):
        """An SSD-Lite detector: a MobileNet-V2 backbone, depthwise-separable heads on two
        feature maps, anchor decoding and class-agnostic non-maximum suppression (torchvision's
        ``nms``, which OpenVINO converts to NonMaxSuppression)."""

        def __init__(self, classes=3, anchors=2, size=64):
            super().__init__()
            r6 = nn.ReLU6
            self.stage8 = nn.Sequential(conv_bn(3, 16, 3, 2, act=r6),
                                        InvertedResidual(16, 16, 1, 1),
                                        InvertedResidual(16, 24, 2, 6),
                                        InvertedResidual(24, 32, 2, 6))
            self.stage16 = nn.Sequential(InvertedResidual(32, 64, 2, 6),
                                         InvertedResidual(64, 64, 1, 6))
            self.classes, self.anchors = classes, anchors

            def head(cin, per):
                return nn.Sequential(conv_bn(cin, cin, 3, groups=cin, act=r6),
                                     nn.Conv2d(cin, anchors * per, 1))
            self.cls = nn.ModuleList([head(32, classes), head(64, classes)])
            self.box = nn.ModuleList([head(32, 4), head(64, 4)])
            priors = []
            for cells, scales in ((size // 8, (0.1, 0.2)), (size // 16, (0.35, 0.5))):
                centres = (torch.arange(cells, dtype=torch.float32) + 0.5) / cells
                cy, cx = torch.meshgrid(centres, centres, indexing="ij")
                for_cells = [torch.stack([cx, cy, torch.full_like(cx, s),
                                          torch.full_like(cx, s * 1.5)], -1) for s in scales]
                priors.append(torch.stack(for_cells, 2).reshape(-1, 4))
            self.register_buffer("priors", torch.cat(priors))

        def _flat(self, x, per):
            n = x.shape[0]
            return x.permute(0, 2, 3, 1).reshape(n, -1, per)

        def forward(self, x):
            f8 = self.stage8(x)
            f16 = self.stage16(f8)
            logits = torch.cat([self._flat(h(f), self.classes)
                                for h, f in zip(self.cls, (f8, f16))], 1)[0]
            deltas = torch.cat([self._flat(h(f), 4) for h, f in zip(self.box, (f8, f16))], 1)[0]
            p = self.priors
            centre = p[:, :2] + 0.1 * deltas[:, :2] * p[:, 2:]
            size = p[:, 2:] * torch.exp(0.2 * deltas[:, 2:])
            boxes = torch.cat([centre - size / 2, centre + size / 2], 1)
            scores, labels = F.softmax(4.0 * logits, -1)[:, 1:].max(-1)
            keep = torch.ops.torchvision.nms(boxes, scores, 0.45)[:20]
            return boxes[keep], scores[keep], labels[keep] + 1

    return {"resnet18": ResNet18, "mobilenet_v2": MobileNetV2,
            "mobilenet_v3_small": MobileNetV3Small, "squeezenet": SqueezeNet,
            "shufflenet_v2": ShuffleNetV2, "densenet_tiny": DenseTiny,
            "convnext_tiny": ConvNeXtTiny, "vit_tiny": ViTTiny, "lstm_tagger": LSTMTagger,
            "bigru_tagger": BiGRUTagger, "conv1d_audio": Conv1dAudio, "gpt_tiny": GPTTiny,
            "efficientnet_b0": EfficientNetB0, "densenet121": DenseNet121,
            "regnet_x_200mf": RegNetX200MF, "lraspp_mobilenet_v3": LRASPP,
            "ssdlite_detector": SSDLite}


def _transformers_model(name: str):
    import transformers

    if name == "bert_tiny":  # the only transformers model
        config = transformers.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2,
                                         num_attention_heads=2, intermediate_size=64,
                                         max_position_embeddings=64)
        return transformers.BertModel(config)
    raise ValueError(name)


def _register_torchvision_nms() -> None:
    """``torch.ops.torchvision.nms`` without torchvision (which does not install beside the CPU
    build of torch): the same schema, a plain greedy implementation. OpenVINO's converter
    translates the traced ``torchvision::nms`` call to NonMaxSuppression, as it does for
    torchvision's detection models."""
    import torch

    if hasattr(torch.ops, "torchvision") and hasattr(torch.ops.torchvision, "nms"):
        return
    lib = torch.library.Library("torchvision", "DEF")
    lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")

    def nms(boxes, scores, iou_threshold):
        x1, y1, x2, y2 = boxes.unbind(1)
        area = (x2 - x1) * (y2 - y1)
        suppressed = torch.zeros(len(scores), dtype=torch.bool)
        keep = []
        for i in scores.argsort(descending=True).tolist():
            if suppressed[i]:
                continue
            keep.append(i)
            w = (torch.minimum(x2[i], x2) - torch.maximum(x1[i], x1)).clamp(min=0)
            h = (torch.minimum(y2[i], y2) - torch.maximum(y1[i], y1)).clamp(min=0)
            suppressed |= w * h / (area[i] + area - w * h) > iou_threshold
        return torch.tensor(keep, dtype=torch.int64)

    lib.impl("nms", nms, "CPU")
    _register_torchvision_nms.library = lib  # kept alive: the registration lives as long


def _keras_model(name: str, seed: int):
    """A Keras model (TensorFlow), converted by OpenVINO's TensorFlow frontend."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    tf.keras.utils.set_random_seed(seed)
    if name == "keras_bilstm":
        tokens = tf.keras.Input((None,), dtype="int32", name="tokens")
        x = tf.keras.layers.Embedding(50, 16)(tokens)
        x = tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(12, return_sequences=True))(x)
        return tf.keras.Model(tokens, tf.keras.layers.Dense(5)(x))
    raise ValueError(name)


# --- building ------------------------------------------------------------------------------------

def _example_inputs(entry: Entry, seed: int, shapes=None):
    import numpy as np

    rng = np.random.default_rng(seed)
    arrays = {}
    for i, (name, shape, dtype) in enumerate(entry.inputs):
        shape = shapes[i] if shapes else shape
        if dtype in ("i64", "i32"):
            low, high = (1, 2) if "mask" in name else (0, 50)
            arrays[name] = rng.integers(low, high, size=shape,
                                        dtype=np.int64 if dtype == "i64" else np.int32)
        else:
            arrays[name] = rng.standard_normal(shape).astype(np.float32)
    return arrays


def second_shapes(entry: Entry) -> list[tuple]:
    """Other input shapes for a dynamic model's second run: each dynamic dimension one less
    (a batch of 1, a shorter sequence), the same for every input."""
    return [tuple(n - 1 if (i, d) in entry.dynamic else n for d, n in enumerate(shape))
            for i, (_, shape, _) in enumerate(entry.inputs)]


def _torch_module(entry: Entry, seed: int):
    import torch

    name = entry.extra.get("base", entry.name)
    torch.manual_seed(seed)
    if name == "bert_tiny":
        module = _transformers_model(name)
    else:
        if name == "ssdlite_detector":
            _register_torchvision_nms()
        module = _architectures()[name]()
    return module.eval()


def _convert(entry: Entry, arrays: dict, seed: int):
    """The OpenVINO model of an entry, converted as users convert (and compressed by NNCF for
    the NNCF entries)."""
    import openvino as ov

    if entry.needs == "tensorflow":
        return ov.convert_model(_keras_model(entry.name, seed))
    import torch

    module = _torch_module(entry, seed)
    example = tuple(torch.from_numpy(a) for a in arrays.values())
    shapes = []
    for i, (name, shape, dtype) in enumerate(entry.inputs):
        dims = [-1 if (i, d) in entry.dynamic else n for d, n in enumerate(shape)]
        shapes.append(ov.PartialShape(dims))
    with torch.no_grad():
        model = ov.convert_model(module, example_input=example if len(example) > 1
                                 else example[0], input=shapes)
    if entry.needs != "nncf":
        return model
    import nncf

    if entry.extra["nncf"] == "int8":
        # Post-training quantization on a few seeded samples: FakeQuantize on activations
        # and weights.
        samples = [_example_inputs(entry, seed + 1 + k) for k in range(8)]
        feed = [{p.get_any_name(): a for p, a in zip(model.inputs, s.values())}
                for s in samples]
        return nncf.quantize(model, nncf.Dataset(feed), subset_size=len(feed),
                             fast_bias_correction=True)
    mode = getattr(nncf.CompressWeightsMode, entry.extra["nncf"])
    return nncf.compress_weights(model, mode=mode, group_size=16, ratio=0.6,
                                 all_layers=True)


def build(entry: Entry, cache: Path, seed: int = 0) -> dict:
    """Build one model into ``cache``; returns its figures (layers, op types, seconds)."""
    import numpy as np
    import openvino as ov

    start = time.perf_counter()
    arrays = _example_inputs(entry, seed)
    model = _convert(entry, arrays, seed)
    xml = cache / f"{entry.name}.xml"
    ov.save_model(model, xml, compress_to_fp16=entry.fp16)
    core = ov.Core()
    compiled = core.compile_model(core.read_model(xml), "CPU",
                                  {"INFERENCE_PRECISION_HINT": "f32",
                                   "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"})
    feed = {p.get_any_name(): arrays[n] for p, n in zip(compiled.inputs, arrays)}
    result = compiled(feed)
    # Converted outputs often have no tensor name: they are kept in model order.
    outputs = {f"output_{i}": np.asarray(result[o]) for i, o in enumerate(compiled.outputs)}
    np.savez(cache / f"{entry.name}.inputs.npz", **arrays)
    np.savez(cache / f"{entry.name}.outputs.npz", **outputs)
    saved = core.read_model(xml)
    types = sorted({op.get_type_name() for op in saved.get_ops()}
                   - {"Parameter", "Constant", "Result"})
    return {"name": entry.name, "layers": len(saved.get_ops()), "op_types": types,
            "seconds": time.perf_counter() - start}


def source(entry: Entry) -> str:
    """Where a model comes from, in words (docs/models.md)."""
    if entry.needs == "tensorflow":
        return "Keras (TensorFlow), openvino.convert_model"
    if entry.needs == "nncf":
        how = ("nncf.quantize" if entry.extra["nncf"] == "int8"
               else f"nncf.compress_weights {entry.extra['nncf']}")
        return f"{entry.extra['base']} converted, then {how}"
    if entry.needs == "transformers" or entry.extra.get("base") == "bert_tiny":
        return "transformers config, openvino.convert_model"
    return "torch.nn, openvino.convert_model"


def cache_key() -> str:
    """What a built model depends on: this file's content and OpenVINO's version. A cache
    built under another key is rebuilt."""
    import hashlib

    import openvino as ov

    digest = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
    return f"{digest} openvino {ov.get_version()}"


FILES = (".xml", ".bin", ".inputs.npz", ".outputs.npz")


def _built(cache: Path, name: str) -> bool:
    return all((cache / f"{name}{suffix}").is_file() for suffix in FILES)


def op_types(xml: Path) -> list[str]:
    """The op types of a saved model (bodies included), read from its XML."""
    from lxml import etree

    return sorted({layer.get("type") for layer in etree.parse(str(xml)).getroot().iter("layer")}
                  - {"Parameter", "Const", "Result"})


def build_all(chosen: list[Entry], cache: Path, force: bool = False) -> int:
    """Build the chosen models into ``cache``, skipping those already built under the same
    key; a model that fails is reported in one line and the others are still built. Writes
    ``build.json`` (each model's seconds). 0 when every model is there, else 1."""
    import json

    cache.mkdir(parents=True, exist_ok=True)
    key = cache_key()
    key_file = cache / "zoo.key"
    if force or not key_file.is_file() or key_file.read_text().strip() != key:
        for entry in ZOO:
            for suffix in FILES:
                (cache / f"{entry.name}{suffix}").unlink(missing_ok=True)
        key_file.write_text(key + "\n")
    record_file = cache / "build.json"
    record = json.loads(record_file.read_text()) if record_file.is_file() else {}
    failed = []
    start = time.perf_counter()
    for i, entry in enumerate(chosen, 1):
        head = f"[{i}/{len(chosen)}] {entry.name}:"
        if _built(cache, entry.name):
            print(f"{head} cached", flush=True)
            continue
        try:
            figures = build(entry, cache)
        except Exception as e:  # a converter's or NNCF's error: say it and go on
            line = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
            print(f"{head} FAILED: {type(e).__name__}: {line}", flush=True)
            failed.append(entry.name)
            continue
        record[entry.name] = round(figures["seconds"], 1)
        print(f"{head} {figures['layers']} layers, {len(figures['op_types'])} op types, "
              f"{figures['seconds']:.1f} s", flush=True)
    record_file.write_text(json.dumps(record, indent=1) + "\n")
    print(f"zoo: {len(chosen) - len(failed)} of {len(chosen)} models in {cache} "
          f"({time.perf_counter() - start:.0f} s)", flush=True)
    if failed:
        print(f"error: {len(failed)} model(s) did not build: {', '.join(failed)}",
              file=sys.stderr)
    return 1 if failed else 0


def _timed(run, least: float = 0.3, most: int = 50) -> float:
    """The median seconds of ``run()`` after one warm-up call, over at least three calls and
    ``least`` seconds."""
    import statistics

    run()
    times = []
    begin = time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - begin < least and len(times) < most):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def bench(chosen: list[Entry], cache: Path) -> list[dict]:
    """irexec's and OpenVINO CPU's (f32 inference precision) latency per model, measured in one
    run on this machine, and irexec's largest error against OpenVINO's saved outputs (relative
    to the outputs' largest magnitude)."""
    import numpy as np
    import openvino as ov

    import irexec

    core = ov.Core()
    rows = []
    for entry in chosen:
        xml = cache / f"{entry.name}.xml"
        row = {"name": entry.name}
        rows.append(row)
        if not _built(cache, entry.name):
            row["note"] = "not built"
            continue
        inputs = list(np.load(cache / f"{entry.name}.inputs.npz").values())
        saved = np.load(cache / f"{entry.name}.outputs.npz")
        compiled_ov = core.compile_model(core.read_model(xml), "CPU",
                                         {"INFERENCE_PRECISION_HINT": "f32",
                                          "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"})
        row["openvino_ms"] = 1000 * _timed(lambda: compiled_ov(inputs))
        try:
            compiled = irexec.compile_model(irexec.read_model(xml))
        except irexec.IRError as e:
            row["note"] = str(e).splitlines()[0].split(": ", 1)[-1]
            continue
        row["irexec_ms"] = 1000 * _timed(lambda: compiled(inputs))
        row["ratio"] = row["irexec_ms"] / row["openvino_ms"]
        worst = 0.0
        for i, ours in enumerate(compiled(inputs).values()):
            theirs = saved[f"output_{i}"]
            if ours.shape != theirs.shape:
                worst = float("inf")
                continue
            diff = np.abs(ours.astype(np.float64) - theirs.astype(np.float64)).max(initial=0)
            worst = max(worst, float(diff) / max(1.0, float(np.abs(theirs).max(initial=0))))
        row["error"] = worst
        # Both runtimes against irexec's precise mode (every float layer in float64, rounded
        # once per layer): the trusted reference of the numeric contract.
        precise = list(irexec.compile_model(irexec.read_model(xml),
                                            config={"precision": "f64"})(inputs).values())
        ours_all = list(compiled(inputs).values())
        row["irexec_vs_precise"] = _worst(ours_all, precise)
        row["openvino_vs_precise"] = _worst([saved[f"output_{i}"] for i in range(len(precise))],
                                            precise)
        print(f"{entry.name}: irexec {row['irexec_ms']:.1f} ms, OpenVINO "
              f"{row['openvino_ms']:.2f} ms ({row['ratio']:.1f}x)", flush=True)
    return rows


def _worst(got: list, reference: list) -> float:
    """The largest difference over all outputs, relative to each reference output's largest
    magnitude (at least 1); inf where the shapes differ."""
    import numpy as np

    worst = 0.0
    for a, b in zip(got, reference):
        if a.shape != b.shape:
            return float("inf")
        if a.dtype.kind not in "fc" and b.dtype.kind not in "fc":
            worst = max(worst, float(np.any(a != b)))
            continue
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64)).max(initial=0)
        worst = max(worst, float(diff) / max(1.0, float(np.abs(b.astype(np.float64)).max(
            initial=0))))
    return worst


BEGIN, END = "<!-- zoo table: written by tools/model_zoo.py --docs -->", "<!-- end of zoo table -->"


def docs_table(chosen: list[Entry], cache: Path, rows: list[dict]) -> str:
    import json

    record_file = cache / "build.json"
    record = json.loads(record_file.read_text()) if record_file.is_file() else {}
    by_name = {r["name"]: r for r in rows}
    lines = ["| model | from | layers | op types | build s | irexec ms | OpenVINO ms | ratio "
             "| largest error | irexec vs precise | OpenVINO vs precise |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for entry in chosen:
        xml = cache / f"{entry.name}.xml"
        r = by_name.get(entry.name, {})
        layers = ""
        types = ""
        if xml.is_file():
            from lxml import etree

            layers = str(sum(1 for _ in etree.parse(str(xml)).getroot().iter("layer")))
            types = ", ".join(op_types(xml))
        if "irexec_ms" in r:
            ratio = f"{r['ratio']:.1f}" if r["ratio"] < 10 else f"{r['ratio']:.0f}"
            timing = (f"{r['irexec_ms']:.1f} | {r['openvino_ms']:.2f} | {ratio}x "
                      f"| {r['error']:.1e} | {r['irexec_vs_precise']:.1e} "
                      f"| {r['openvino_vs_precise']:.1e}")
        else:
            timing = (f"— | {r['openvino_ms']:.2f} | — | {r.get('note', '')} | — | —"
                      if "openvino_ms" in r else
                      f"— | — | — | {r.get('note', 'not built')} | — | —")
        lines.append(f"| {entry.name} | {source(entry)} | {layers} | {types} "
                     f"| {record.get(entry.name, '')} | {timing} |")
    total = sum(record.get(e.name, 0) for e in chosen)
    lines += ["", f"Building these {len(chosen)} models took {total:.0f} s in all (conversion, "
              f"NNCF, saving and OpenVINO's reference run, one process, this 2-core machine)."]
    return "\n".join(lines)


def write_docs(path: Path, table: str) -> None:
    text = path.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"error: {path} has no zoo table markers ({BEGIN} ... {END})")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    path.write_text(f"{head}{BEGIN}\n{table}\n{END}{tail}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true", help="list the models and stop")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="build only this model (repeatable)")
    parser.add_argument("--cache", default=os.environ.get("IREXEC_ZOO", str(ROOT / ".zoo")),
                        help="where the models go (default .zoo/, or $IREXEC_ZOO)")
    parser.add_argument("--force", action="store_true",
                        help="rebuild models already in the cache")
    parser.add_argument("--bench", action="store_true",
                        help="do not build: time irexec and OpenVINO on the built models")
    parser.add_argument("--docs", metavar="MODELS_MD",
                        help="with --bench: write the zoo table into this file "
                             "(docs/models.md)")
    args = parser.parse_args(argv)
    if args.list:
        for e in ZOO:
            flags = ", ".join(f for f in ("fp16" if e.fp16 else "",
                                          "dynamic" if e.dynamic else "") if f)
            print(f"{e.name:20} {e.what}{f' ({flags})' if flags else ''}")
        return 0
    unknown = set(args.only) - {e.name for e in ZOO}
    if unknown:
        print(f"error: no zoo model named {', '.join(sorted(unknown))} (see --list)",
              file=sys.stderr)
        return 2
    if args.docs and not args.bench:
        print("error: --docs goes with --bench", file=sys.stderr)
        return 2
    cache = Path(args.cache)
    chosen = [e for e in ZOO if not args.only or e.name in args.only]
    if args.bench:
        rows = bench(chosen, cache)
        if args.docs:
            write_docs(Path(args.docs), docs_table(chosen, cache, rows))
        return 0
    return build_all(chosen, cache, args.force)


if __name__ == "__main__":
    sys.exit(main())
