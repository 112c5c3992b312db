"""Benchmark irexec's data-movement kernels, its interpreter overhead and its random generator.

    python -m tools.bench kernels [--quick] [--runs N] [--case SUBSTRING]... [--no-openvino] [--json OUT]

Every case is a real IR file (written with irexec's own writer into a temporary directory), read
with ``irexec.read_model`` and run through ``irexec.compile_model``. Times are the median of
``--runs`` (>= 7 by default) calls after one warm-up call. Each kernel case is reported as a
ratio to ``np.copyto`` of the same bytes into a preallocated array, measured in the same run, so
that the noise of a shared machine cancels as far as it can; also against
``np.flip(x, axes).copy()`` on the same axes and, when OpenVINO is installed, against OpenVINO's
CPU plugin on the same IR file (an infer request with shared inputs and outputs: its best case).

Peak memory: before one irexec call the process's peak RSS is reset (``/proc/self/clear_refs``),
and the growth of the peak above the RSS before the call is reported, as a multiple of the
output's size (1.0 = the output and nothing else).

Overhead cases: a chain of Reverse layers on an [8, 16] tensor, each with its own axes constant;
the time to read (parse + validate + infer), to compile, and the cost per layer of a call.

Ratio cases (ops that compute rather than move bytes, e.g. NonMaxSuppression on 5,000 boxes x
80 classes): irexec's time over OpenVINO's CPU plugin on the same IR file, measured in the same
run; the outputs are checked to be the same.

Movement cases (``--case move``): Transpose, Concat, Gather, Tile, Pad, DepthToSpace and
SpaceToDepth on about 64 MiB, each a one-layer model, against the fastest of the plain numpy
expressions for the same result (``np.ascontiguousarray(x.transpose(p))``, ``np.concatenate``,
``np.take`` and ``x[:, idx]``, ``np.tile``, ``np.pad`` ...) and a memcpy of the output's bytes,
the three timed in turn within each run; the results are checked to be the same bytes as
numpy's. Targets (issue 17): at most numpy's time and at most 4x the memcpy.

Generator case: RandomUniform making 16 M f32 values (Philox4x32-10), as a ratio to numpy's own
``Generator.random`` filling as many f32 values, measured in the same run.
Embedding case: EmbeddingBagOffsets-15 over 100,000 indices, as a ratio to numpy's own gather and
``add.reduceat`` of the same bags, measured in the same run.

Batch case (``--case batch``): a ResNet-18-like model (built layer by layer, batch norm folded)
over 64 samples at 224 in this process (``--jobs 1``, BLAS as numpy starts it and held to one
thread), in two worker processes (``--jobs 2``: forked, and spawned), in two independent forked
processes each looping over half the samples (the pool's ideal), and on a two-worker
LocalCluster: every place in turn, three times, with wall time and the steady rate over the
middle of the arrivals; and the fixed cost per sample of ``irexec run --input-dir`` on a
one-layer model, with ``--jobs 2`` and on the cluster, as the time difference of 1,100 and 100
samples divided by 1,000 (start-up cancels). Results in docs/scale.md.

``--quick`` uses small sizes and fewer runs; CI runs it (tests/test_bench.py) so the bench keeps
working. Quick timings mean nothing. Results of a full run are kept in docs/performance.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import irexec  # noqa: E402
from irexec.builder import ModelBuilder  # noqa: E402

MIB = 1 << 20


@dataclass
class KernelCase:
    name: str
    build: object  # (scale) -> (Model, {input name: array}, flip axes or None)
    layers: int = 1  # the memcpy reference copies the tensor this many times (bytes moved)


@dataclass
class Row:
    name: str
    nbytes: int
    irexec: float
    memcpy: float
    flip: float | None
    openvino: float | None
    peak: float | None  # growth of peak RSS during one call, in output sizes
    same_as_openvino: bool | None = None
    extra: dict = field(default_factory=dict)


# ---- the cases -------------------------------------------------------------------------------

def _rng():
    return np.random.default_rng(0)


def _f32(shape):
    return _rng().standard_normal(shape, dtype=np.float32)


def _reverse(shape, axes, mode="index"):
    def build(scale):
        shp = _scaled(shape, scale)
        b = ModelBuilder("bench_reverse")
        data = b.parameter("data", "f32", shp)
        if mode == "mask":
            axis = b.constant(np.array([i in axes for i in range(len(shp))]), name="mask")
        else:
            axis = b.constant(np.array(axes, np.int64), name="axes")
        b.result(b.op("Reverse", data, axis, mode=mode, name="reversed"), name="out")
        return b.build(), {"data": _f32(shp)}, tuple(axes)
    return build


def _reverse_sequence(shape, batch_axis, seq_axis, dtype="f32"):
    def build(scale):
        shp = _scaled(shape, scale)
        b = ModelBuilder("bench_reverse_sequence")
        data = b.parameter("data", dtype, shp)
        lengths = _rng().integers(1, shp[seq_axis] + 1, shp[batch_axis]).astype(np.int32)
        seq = b.constant(lengths, name="seq_lengths")
        b.result(b.op("ReverseSequence", data, seq, batch_axis=batch_axis, seq_axis=seq_axis,
                      name="reversed"), name="out")
        if dtype == "i8":
            x = _rng().integers(-128, 128, shp, dtype=np.int8)
        else:
            x = _f32(shp)
        return b.build(), {"data": x}, (seq_axis,)
    return build


def _chain4(shape):
    def build(scale):
        shp = _scaled(shape, scale)
        rng = _rng()
        b = ModelBuilder("bench_chain4")
        x = b.parameter("data", "f32", shp)
        x = b.op("Reverse", x, b.constant(np.array([2], np.int64)), mode="index")
        lengths0 = rng.integers(1, shp[1] + 1, shp[0]).astype(np.int32)
        x = b.op("ReverseSequence", x, b.constant(lengths0), batch_axis=0, seq_axis=1)
        x = b.op("Reverse", x, b.constant(np.array([0, 1], np.int64)), mode="index")
        lengths1 = rng.integers(1, shp[0] + 1, shp[1]).astype(np.int32)
        x = b.op("ReverseSequence", x, b.constant(lengths1), batch_axis=1, seq_axis=0)
        b.result(x, name="out")
        return b.build(), {"data": _f32(shp)}, None
    return build


def _scaled(shape, scale):
    """The shape with its leading dims divided by ``scale`` (at least 2 each)."""
    out = list(shape)
    i = 0
    while scale > 1 and i < len(out):
        step = min(scale, out[i] // 2)
        if step > 1:
            out[i] //= step
            scale //= step
        i += 1
    return out


KERNEL_CASES = [
    KernelCase("Reverse outermost axis [64,512,512] f32", _reverse([64, 512, 512], [0])),
    KernelCase("Reverse innermost axis [64,512,512] f32", _reverse([64, 512, 512], [2])),
    KernelCase("Reverse all axes [64,512,512] f32", _reverse([64, 512, 512], [0, 1, 2])),
    KernelCase("Reverse mask 101 [64,512,512] f32", _reverse([64, 512, 512], [0, 2], "mask")),
    KernelCase("ReverseSequence b0 s1 [64,512,512] f32",
               _reverse_sequence([64, 512, 512], 0, 1)),
    KernelCase("ReverseSequence b1 s0 [512,64,512] f32",
               _reverse_sequence([512, 64, 512], 1, 0)),
    KernelCase("ReverseSequence b0 s1 [4096,4096] i8",
               _reverse_sequence([4096, 4096], 0, 1, "i8")),
    KernelCase("chain Rev/RevSeq/Rev/RevSeq [64,512,512] f32", _chain4([64, 512, 512]), layers=4),
]


@dataclass
class RatioCase:
    """A case measured against OpenVINO only: build(scale) -> (Model, {input name: array})."""
    name: str
    build: object


def _nms(boxes: int, classes: int):
    def build(scale):
        n, c = max(boxes // scale, 50), max(classes // min(scale, 10), 2)
        rng = _rng()
        center = rng.uniform(0, 1, (1, n, 2))
        size = rng.uniform(0.02, 0.2, (1, n, 2))
        data = np.concatenate([center - size / 2, center + size / 2], -1).astype(np.float32)
        scores = rng.uniform(0, 1, (1, c, n)).astype(np.float32)
        b = ModelBuilder("bench_nms")
        outs = b.op("NonMaxSuppression", b.parameter("boxes", "f32", [1, n, 4]),
                    b.parameter("scores", "f32", [1, c, n]),
                    b.constant(np.int64(100), name="max_boxes"),
                    b.constant(np.float32(0.5), name="iou"),
                    b.constant(np.float32(0.05), name="score"), version="opset9",
                    sort_result_descending=False, name="nms")
        for i, o in enumerate(outs):
            b.result(o, name=f"out{i}")
        return b.build(), {"boxes": data, "scores": scores}
    return build


RATIO_CASES = [
    RatioCase("NonMaxSuppression-9 5000 boxes x 80 classes (iou 0.5, score 0.05, max 100)",
              _nms(5000, 80)),
]


@dataclass
class MoveCase:
    """A data-movement op as a one-layer model, against the best plain numpy expression for the
    same result: build(scale) -> (Model, {input name: array}, {numpy name: fn(inputs)})."""
    name: str
    build: object


def _one_layer(params, make, inputs, numpy):
    """A model of one op over ``params`` ({name: (type, shape)}); ``make(b, ports)`` adds it."""
    b = ModelBuilder("bench_move")
    ports = [b.parameter(p, t, list(shp)) for p, (t, shp) in params.items()]
    b.result(make(b, ports), name="out")
    return b.build(), inputs, numpy


def _on_data(shp, make, numpy):
    """One op on one f32 input "data" of shape ``shp``: ``make(b, port)`` adds it; ``numpy``
    maps a name to fn(x) computing the same from the array."""
    x = _f32(shp)
    return _one_layer({"data": ("f32", shp)}, lambda b, p: make(b, p[0]), {"data": x},
                      {k: (lambda i, fn=fn: fn(i["data"])) for k, fn in numpy.items()})


def _transpose(shape, perm):
    return lambda scale: _on_data(
        _scaled(shape, scale), lambda b, x: b.op("Transpose", x, b.constant(np.array(perm))),
        {"np.ascontiguousarray(x.transpose(p))": lambda x: np.ascontiguousarray(
            x.transpose(perm))})


def _concat(shapes, axis):
    def build(scale):
        shps = [_scaled(s, scale) for s in shapes]
        xs = {f"x{k}": _f32(s) for k, s in enumerate(shps)}
        return _one_layer({k: ("f32", v.shape) for k, v in xs.items()},
                          lambda b, p: b.op("Concat", *p, axis=axis), xs,
                          {"np.concatenate": lambda i: np.concatenate(list(i.values()), axis)})
    return build


def _gather(shape, count, axis):
    def build(scale):
        shp = _scaled(shape, scale)
        idx = _rng().integers(0, shp[axis], max(count // scale, 2)).astype(np.int64)
        sel = (slice(None),) * axis
        return _on_data(shp, lambda b, x: b.op("Gather", x, b.constant(idx),
                                                b.constant(np.int64(axis)), version="opset8"),
                        {"np.take": lambda x: np.take(x, idx, axis=axis),
                         "x[..., idx]": lambda x: x[sel + (idx,)]})
    return build


def _tile(shape, repeats):
    return lambda scale: _on_data(
        _scaled(shape, scale), lambda b, x: b.op("Tile", x, b.constant(np.array(repeats))),
        {"np.tile": lambda x: np.tile(x, repeats)})


def _pad(shape, begins, ends, mode):
    def build(scale):
        shp = _scaled(shape, scale)
        numpy = {"np.pad": lambda x: np.pad(x, list(zip(begins, ends)), mode=mode)}
        if mode == "constant":
            def zeros_then_copy(x):
                out = np.zeros([n + b + e for n, b, e in zip(shp, begins, ends)], np.float32)
                out[tuple(slice(b, b + n) for n, b in zip(shp, begins))] = x
                return out
            numpy["np.zeros + copy"] = zeros_then_copy
        return _on_data(shp, lambda b, x: b.op("Pad", x, b.constant(np.array(begins)),
                                                b.constant(np.array(ends)), version="opset12",
                                                pad_mode=mode), numpy)
    return build


def _depth_space(op, shape, mode, bs):
    def build(scale):
        n, h, w = _scaled([shape[0], shape[2] // bs, shape[3] // bs], scale)
        c, h, w = shape[1], h * bs, w * bs  # the channels and the blocks stay whole
        if op == "DepthToSpace":
            split = [n, bs, bs, c // bs ** 2, h, w] if mode == "blocks_first" else \
                [n, c // bs ** 2, bs, bs, h, w]
            order = (0, 3, 4, 1, 5, 2) if mode == "blocks_first" else (0, 1, 4, 2, 5, 3)
            final = [n, c // bs ** 2, h * bs, w * bs]
        else:
            split = [n, c, h // bs, bs, w // bs, bs]
            order = (0, 3, 5, 1, 2, 4) if mode == "blocks_first" else (0, 1, 3, 5, 2, 4)
            final = [n, c * bs ** 2, h // bs, w // bs]
        return _on_data([n, c, h, w], lambda b, x: b.op(op, x, mode=mode, block_size=bs),
                        {"np.ascontiguousarray(reshape, transpose)": lambda x: np.ascontiguousarray(
                            x.reshape(split).transpose(order)).reshape(final)})
    return build


MOVE_CASES = [
    MoveCase("move: Transpose 2D [8192,2048] f32", _transpose([8192, 2048], [1, 0])),
    MoveCase("move: Transpose NCHW->NHWC [16,64,128,128] f32",
             _transpose([16, 64, 128, 128], [0, 2, 3, 1])),
    MoveCase("move: Concat 2 x [4096,2048] f32 axis 0", _concat([[4096, 2048]] * 2, 0)),
    MoveCase("move: Concat 3 x [2730,2048] f32 axis 0", _concat([[2730, 2048]] * 3, 0)),
    MoveCase("move: Concat 2 x [8192,1024] f32 last axis", _concat([[8192, 1024]] * 2, 1)),
    MoveCase("move: Concat 4 x [8192,512] f32 last axis", _concat([[8192, 512]] * 4, 1)),
    MoveCase("move: Gather axis 0 [8192,2048] f32, 8192 indices", _gather([8192, 2048], 8192, 0)),
    MoveCase("move: Gather last axis [8192,2048] f32, 2048 indices",
             _gather([8192, 2048], 2048, 1)),
    MoveCase("move: Gather last axis [4096,4096] f32, 2048 indices",
             _gather([4096, 4096], 2048, 1)),
    MoveCase("move: Tile [2048,2048] f32 x [2,2]", _tile([2048, 2048], [2, 2])),
    MoveCase("move: Tile [16,64,64,64] f32 x [1,1,2,2]", _tile([16, 64, 64, 64], [1, 1, 2, 2])),
    MoveCase("move: Pad constant [16,64,126,126] f32 by 1 on H, W",
             _pad([16, 64, 126, 126], [0, 0, 1, 1], [0, 0, 1, 1], "constant")),
    MoveCase("move: Pad reflect [16,64,126,126] f32 by 1 on H, W",
             _pad([16, 64, 126, 126], [0, 0, 1, 1], [0, 0, 1, 1], "reflect")),
    MoveCase("move: DepthToSpace blocks_first 2 [4,256,128,128] f32",
             _depth_space("DepthToSpace", [4, 256, 128, 128], "blocks_first", 2)),
    MoveCase("move: SpaceToDepth blocks_first 2 [4,64,256,256] f32",
             _depth_space("SpaceToDepth", [4, 64, 256, 256], "blocks_first", 2)),
]


def chain_model(n: int):
    b = ModelBuilder(f"bench_chain_{n}")
    x = b.parameter("data", "f32", [8, 16])
    for i in range(n):
        x = b.op("Reverse", x, b.constant(np.array([i % 2], np.int64), name=f"axes_{i}"),
                 mode="index", name=f"reverse_{i}")
    b.result(x, name="out")
    return b.build()


# ---- measuring -------------------------------------------------------------------------------

def median_time(fn, runs: int, warmup: int = 1) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _status(key: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def peak_growth(fn) -> int | None:
    """Bytes by which the peak RSS grows above the current RSS while ``fn`` runs (Linux)."""
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset the peak RSS (VmHWM) to the current RSS
    except OSError:
        return None
    before = _status("VmRSS")
    fn()
    peak = _status("VmHWM")
    return None if before is None or peak is None else max(0, peak - before)


def _openvino():
    try:
        import openvino
    except ImportError:
        return None
    return openvino


def run_kernel_case(case: KernelCase, scale: int, runs: int, ov, tmp: str) -> Row:
    model, inputs, axes = case.build(scale)
    xml = os.path.join(tmp, "kernel.xml")
    irexec.save_model(model, xml)
    compiled = irexec.compile_model(irexec.read_model(xml))
    data = inputs["data"]
    out_name = compiled.output_names()[0]
    ours = compiled(inputs)[out_name]

    def call():
        compiled(inputs)

    dst = np.empty_like(data)
    t_memcpy = median_time(lambda: np.copyto(dst, data), runs) * case.layers
    t_ours = median_time(call, runs)
    t_flip = median_time(lambda: np.flip(data, axes).copy(), runs) if axes else None
    grow = peak_growth(call)
    peak = grow / ours.nbytes if grow is not None and ours.nbytes else None
    t_ov, same = None, None
    if ov is not None:
        core = ov.Core()
        request = core.compile_model(core.read_model(xml), "CPU").create_infer_request()
        result = request.infer(list(inputs.values()), share_inputs=True, share_outputs=True)
        theirs = next(iter(result.values()))
        same = theirs.shape == ours.shape and theirs.tobytes() == ours.tobytes()
        t_ov = median_time(lambda: request.infer(list(inputs.values()), share_inputs=True,
                                                 share_outputs=True), runs)
        del request, result, theirs
    return Row(case.name, ours.nbytes, t_ours, t_memcpy, t_flip, t_ov, peak, same)


def run_move_case(case: MoveCase, scale: int, runs: int, tmp: str) -> dict:
    """irexec's call, the fastest of the numpy expressions and a memcpy of the output's bytes
    (np.copyto into a preallocated array), interleaved run by run so that the load of a shared
    machine falls on all three alike; the medians."""
    model, inputs, numpy = case.build(scale)
    xml = os.path.join(tmp, "move.xml")
    irexec.save_model(model, xml)
    compiled = irexec.compile_model(irexec.read_model(xml))
    out_name = compiled.output_names()[0]
    ours = compiled(inputs)[out_name]
    same = all(ours.shape == fn(inputs).shape and ours.tobytes() == fn(inputs).tobytes()
               for fn in numpy.values())
    src, dst = np.empty_like(ours), np.empty_like(ours)
    src[...] = ours
    del ours
    fns = {"irexec": lambda: compiled(inputs), "memcpy": lambda: np.copyto(dst, src)}
    fns.update({name: (lambda fn=fn: fn(inputs)) for name, fn in numpy.items()})
    times = {name: [] for name in fns}
    for fn in fns.values():
        fn()
    for _ in range(runs):
        for name, fn in fns.items():
            gc.collect()
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    t = {name: statistics.median(v) for name, v in times.items()}
    best = min(numpy, key=lambda name: t[name])
    return {"case": case.name, "nbytes": dst.nbytes, "irexec_s": t["irexec"],
            "numpy_s": t[best], "numpy": best, "memcpy_s": t["memcpy"], "same": same,
            "numpy_all_s": {name: t[name] for name in numpy}}


def move_table(rows: list[dict]) -> str:
    head = ("| case | output MiB | irexec ms | best numpy ms (expression) | memcpy ms | "
            "irexec / numpy | irexec / memcpy |")
    lines = [head, "|" + " --- |" * (head.count("|") - 1)]
    for r in rows:
        lines.append(f"| {r['case'][len('move: '):]} | {r['nbytes'] / MIB:.3g} | "
                     f"{_ms(r['irexec_s'])} | {_ms(r['numpy_s'])} ({r['numpy']}) | "
                     f"{_ms(r['memcpy_s'])} | {r['irexec_s'] / r['numpy_s']:.2f} | "
                     f"{r['irexec_s'] / r['memcpy_s']:.2f} |")
    missed = [r["case"][len("move: "):] for r in rows if r["irexec_s"] > r["numpy_s"]
              or r["irexec_s"] > 4 * r["memcpy_s"]]
    lines.append("")
    lines.append("targets (<= numpy, <= 4x memcpy): "
                 + ("all met" if not missed else "MISSED by " + ", ".join(missed)))
    different = [r["case"] for r in rows if not r["same"]]
    if different:
        lines.append(f"DIFFERENT from numpy: {', '.join(different)}")
    return "\n".join(lines)


def run_ratio_case(case: RatioCase, scale: int, runs: int, ov, tmp: str) -> dict:
    model, inputs = case.build(scale)
    xml = os.path.join(tmp, "ratio.xml")
    irexec.save_model(model, xml)
    compiled = irexec.compile_model(irexec.read_model(xml))
    ours = compiled(inputs)
    row = {"case": case.name, "irexec_s": median_time(lambda: compiled(inputs), runs)}
    if ov is not None:
        core = ov.Core()
        request = core.compile_model(core.read_model(xml), "CPU",
                                     {"INFERENCE_PRECISION_HINT": "f32"}).create_infer_request()
        feed = list(inputs.values())
        request.infer(feed)
        theirs = [request.get_output_tensor(i).data.copy() for i in range(len(ours))]
        row["same_as_openvino"] = all(
            a.shape == b.shape and np.array_equal(a, b.astype(a.dtype))
            for a, b in zip(ours.values(), theirs))
        row["openvino_s"] = median_time(lambda: request.infer(feed), runs)
    return row


def ratio_table(rows: list[dict]) -> str:
    head = "| case | irexec ms | OpenVINO ms | irexec / OpenVINO | same result |"
    lines = [head, "|" + " --- |" * (head.count("|") - 1)]
    for r in rows:
        ov = r.get("openvino_s")
        same = r.get("same_as_openvino")
        lines.append(f"| {r['case']} | {_ms(r['irexec_s'])} | {_ms(ov)} | "
                     f"{_ratio(None if ov is None else r['irexec_s'] / ov)} | "
                     f"{'-' if same is None else 'yes' if same else 'NO'} |")
    mismatch = [r["case"] for r in rows if r.get("same_as_openvino") is False]
    if mismatch:
        lines.append(f"DIFFERENT from OpenVINO: {', '.join(mismatch)}")
    return "\n".join(lines)


def run_overhead_case(n: int, runs: int, ov, tmp: str, ov_compile: bool) -> dict:
    xml = os.path.join(tmp, f"chain_{n}.xml")
    irexec.save_model(chain_model(n), xml)
    few = max(3, runs // 3)
    t_read = median_time(lambda: irexec.read_model(xml), few, warmup=1)
    model = irexec.read_model(xml)
    t_compile = median_time(lambda: irexec.compile_model(model), few, warmup=1)
    compiled = irexec.compile_model(model)
    x = _f32([8, 16])
    t_call = median_time(lambda: compiled({"data": x}), runs, warmup=2)
    got = compiled({"data": x})[compiled.output_names()[0]]
    row = {"layers": n, "read_s": t_read, "compile_s": t_compile, "call_s": t_call,
           "per_layer_us": t_call / n * 1e6}
    if ov is not None and ov_compile:
        core = ov.Core()
        start = time.perf_counter()
        ov_model = core.read_model(xml)
        row["ov_read_s"] = time.perf_counter() - start
        start = time.perf_counter()
        ov_compiled = core.compile_model(ov_model, "CPU")
        row["ov_compile_s"] = time.perf_counter() - start
        request = ov_compiled.create_infer_request()
        t_ov = median_time(lambda: request.infer([x], share_inputs=True, share_outputs=True),
                           runs, warmup=2)
        theirs = next(iter(request.infer([x]).values()))
        row["ov_call_s"] = t_ov
        row["ov_per_layer_us"] = t_ov / n * 1e6
        row["same_as_openvino"] = bool(np.array_equal(theirs, got))
    return row


def memory_chain(n: int, shape, tmp: str) -> dict:
    """Peak RSS growth of one call of a chain of ``n`` Reverse layers, in tensor sizes (the
    caller's input excluded): each intermediate must be freed after its last use."""
    b = ModelBuilder("bench_memory_chain")
    x = b.parameter("data", "f32", shape)
    for i in range(n):
        x = b.op("Reverse", x, b.constant(np.array([i % len(shape)], np.int64)), mode="index")
    b.result(x, name="out")
    xml = os.path.join(tmp, "memory_chain.xml")
    irexec.save_model(b.build(), xml)
    compiled = irexec.compile_model(irexec.read_model(xml))
    data = _f32(shape)
    grow = peak_growth(lambda: compiled({"data": data}))
    return {"case": f"chain of {n} Reverse layers on {data.nbytes / MIB:.3g} MiB: peak RSS "
                    f"growth of a call, in tensor sizes",
            "value": None if grow is None else grow / data.nbytes}


def memory_unused_weights(gib: float, tmp: str) -> dict:
    """RSS growth to read, compile and run a model whose .bin holds ``gib`` GiB of weights no
    Result uses (a sparse file: nothing is written to disk)."""
    b = ModelBuilder("bench_unused_weights")
    x = b.parameter("data", "f32", [8, 16])
    b.result(b.op("Reverse", x, b.constant(np.array([1], np.int64)), mode="index"), name="out")
    xml = os.path.join(tmp, "unused_weights.xml")
    irexec.save_model(b.build(), xml)
    bin_path = os.path.splitext(xml)[0] + ".bin"
    offset = -(-os.path.getsize(bin_path) // 64) * 64
    count = int(gib * (1 << 30)) // 4
    layer = (f'<layer id="900" name="unused_weights" type="Const" version="opset1">'
             f'<data element_type="f32" shape="{count}" offset="{offset}" size="{count * 4}"/>'
             f'<output><port id="0" precision="FP32"><dim>{count}</dim></port></output></layer>')
    with open(xml) as f:
        text = f.read()
    with open(xml, "w") as f:
        f.write(text.replace("</layers>", layer + "\n</layers>", 1))
    os.truncate(bin_path, offset + count * 4)

    def run():
        compiled = irexec.compile_model(irexec.read_model(xml))
        compiled({"data": _f32([8, 16])})

    grow = peak_growth(run)
    return {"case": f"read + compile + run with {gib:g} GiB of unused weights: peak RSS "
                    f"growth, MiB", "value": None if grow is None else grow / MIB}


# ---- printing --------------------------------------------------------------------------------

def startup(runs: int) -> dict:
    """CPU time (user + system) of ``irexec run`` on a one-layer sample in a new process, the
    median of ``runs``, and of a process that only imports numpy and lxml, for scale."""
    import resource
    import subprocess

    sample = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples",
                          "reverse_index.xml")

    def cpu(command) -> float:
        times = []
        for _ in range(runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            times.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        return statistics.median(times)

    ours = cpu([sys.executable, "-m", "irexec", "run", sample])
    base = cpu([sys.executable, "-c", "import numpy, lxml.etree"])
    return {"case": "start-up: irexec run on a one-layer sample, CPU s (x numpy+lxml import)",
            "value": ours, "baseline": base}


def random_uniform_case(elements: int, runs: int, ov, tmp: str) -> dict:
    """RandomUniform (f32, alignment tensorflow: Philox4x32-10) making ``elements`` values, as a
    saved IR run by irexec, against numpy's own generator (``Generator.random``, Philox4x64 or
    PCG64, into a preallocated array) filling the same number of f32 values, in the same run;
    OpenVINO's CPU plugin on the same file when installed."""
    b = ModelBuilder()
    out = b.op("RandomUniform", b.constant(np.array([elements], np.int64)),
               b.constant(np.float32(0)), b.constant(np.float32(1)), version="opset8",
               output_type="f32", global_seed=1, op_seed=2)
    b.result(out, "random")
    path = os.path.join(tmp, "random_uniform.xml")
    irexec.save_model(b.build(), path)
    compiled = irexec.compile_model(irexec.read_model(path))
    generator, buffer = np.random.default_rng(0), np.empty(elements, np.float32)
    row = {"case": f"RandomUniform f32 [{elements:,}]",
           "irexec": median_time(lambda: compiled({}), runs),
           "numpy": median_time(lambda: generator.random(out=buffer, dtype=np.float32), runs),
           "openvino": None}
    if ov is not None:
        request = ov.Core().compile_model(path, "CPU", {"INFERENCE_PRECISION_HINT": "f32"}) \
            .create_infer_request()
        row["openvino"] = median_time(lambda: request.infer({}), runs)
    return row


def random_table(rows: list[dict]) -> str:
    lines = ["| generator case | irexec ms | numpy Generator.random ms | irexec / numpy | "
             "OpenVINO CPU ms |", "| --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r['case']} | {_ms(r['irexec'])} | {_ms(r['numpy'])} | "
                     f"{r['irexec'] / r['numpy']:.1f}x | "
                     f"{_ms(r['openvino']) if r['openvino'] is not None else '-'} |")
    return "\n".join(lines)


def _ms(t):
    return "-" if t is None else f"{t * 1e3:.1f}"


def _ms2(t):
    return "-" if t is None else f"{t * 1e3:.2f}"


def _ratio(t):
    return "-" if t is None else f"{t:.2f}"


def kernel_table(rows: list[Row]) -> str:
    head = ("| case | MiB | irexec ms | memcpy ms | irexec / memcpy | np.flip ms | "
            "np.flip / irexec | OpenVINO ms | OpenVINO / irexec | peak RSS / output |")
    lines = [head, "|" + " --- |" * (head.count("|") - 1)]
    for r in rows:
        flip = None if r.flip is None else r.flip / r.irexec
        ov = None if r.openvino is None else r.openvino / r.irexec
        lines.append(f"| {r.name} | {r.nbytes / MIB:.3g} | {_ms(r.irexec)} | {_ms(r.memcpy)} | "
                     f"{r.irexec / r.memcpy:.2f} | {_ms(r.flip)} | {_ratio(flip)} | "
                     f"{_ms(r.openvino)} | {_ratio(ov)} | {_ratio(r.peak)} |")
    ratios = sorted(r.irexec / r.memcpy for r in rows)
    if ratios:
        lines.append("")
        lines.append(f"irexec / memcpy: median {statistics.median(ratios):.2f}, "
                     f"worst {ratios[-1]:.2f}")
    mismatch = [r.name for r in rows if r.same_as_openvino is False]
    if mismatch:
        lines.append(f"DIFFERENT from OpenVINO: {', '.join(mismatch)}")
    return "\n".join(lines)


def overhead_table(rows: list[dict]) -> str:
    head = ("| layers | read s | compile s | µs per layer | OpenVINO read s | "
            "OpenVINO compile s | OpenVINO µs per layer | per layer irexec / OpenVINO |")
    lines = [head, "|" + " --- |" * (head.count("|") - 1)]
    for r in rows:
        ovp = r.get("ov_per_layer_us")
        lines.append(
            f"| {r['layers']} | {r['read_s']:.3f} | {r['compile_s']:.3f} | "
            f"{r['per_layer_us']:.2f} | "
            + " | ".join("-" if r.get(k) is None else f"{r[k]:.3f}"
                         for k in ("ov_read_s", "ov_compile_s"))
            + f" | {_ratio(ovp)} | "
            f"{_ratio(None if ovp is None else r['per_layer_us'] / ovp)} |")
    return "\n".join(lines)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    ov = _openvino()
    return (f"{time.strftime('%Y-%m-%d %H:%M %Z')}; {cpu}, {os.cpu_count()} CPUs; "
            f"Python {platform.python_version()}, numpy {np.__version__}, "
            f"OpenVINO {ov.get_version() if ov else 'not installed'}")


def embedding_bag_case(count: int, runs: int, tmp: str) -> dict:
    """EmbeddingBagOffsets-15 (sum) over ``count`` indices into a [20000, 64] f32 table, in bags
    of 1 to 20, against the plain numpy gather-and-sum
    (``np.add.reduceat(table[indices], offsets)``) timed in the same run."""
    rng = _rng()
    table = rng.standard_normal((20000, 64), dtype=np.float32)
    indices = rng.integers(0, table.shape[0], count).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(rng.integers(1, 21, count))])
    offsets = offsets[offsets < count].astype(np.int64)
    b = ModelBuilder("bench_embedding_bag")
    ports = [b.parameter("table", "f32", list(table.shape)),
             b.parameter("indices", "i64", [count]),
             b.parameter("offsets", "i64", [len(offsets)])]
    b.result(b.op("EmbeddingBagOffsets", *ports, version="opset15"), "out")
    path = os.path.join(tmp, "embedding_bag.xml")
    irexec.save_model(b.build(), path)
    compiled = irexec.compile_model(irexec.read_model(path))
    feed = {"table": table, "indices": indices, "offsets": offsets}
    ours = median_time(lambda: compiled(feed), runs)
    plain = median_time(lambda: np.add.reduceat(table[indices], offsets, axis=0), runs)
    same = np.allclose(list(compiled(feed).values())[0],
                       np.add.reduceat(table[indices], offsets, axis=0), rtol=1e-5, atol=1e-5)
    return {"case": f"EmbeddingBagOffsets sum, {count:,} indices, {len(offsets):,} bags, "
                    f"[20000, 64] f32", "irexec_s": ours, "numpy_s": plain,
            "ratio": ours / plain, "same": bool(same)}


def llm_zoo_folder() -> Path:
    """Where tools/llm_zoo.py puts its models."""
    return Path(os.environ.get("IREXEC_ZOO", Path(__file__).resolve().parent.parent / ".zoo")) \
        / "llm"


def llm_case(folder: Path, runs: int, ov, prompt: int = 128, steps: int = 16) -> dict:
    """A decoder LLM of the LLM zoo (tools/llm_zoo.py), stateful: a prefill of ``prompt`` tokens
    and the decode steps after it (median of ``steps``), irexec and OpenVINO's CPU plugin (f32,
    KV cache in f32; the threads OPENBLAS_NUM_THREADS gives irexec's BLAS) in one run, a
    generation of each in turn. The best of ``runs`` generations for each figure; each step's
    length is new within a generation, as when generating (irexec remembers the shape
    arithmetic of fewer lengths than a generation holds).

    Also the floor of a decode step for a product-by-product interpreter: numpy's f32
    matrix-vector products over the step's weights as the plan holds them (decompressed to f32
    once), one after another, nothing else (``floor_step_s``, the best of ``runs`` passes in
    turn with the generations): the weights' memory read at BLAS's own thread count. OpenVINO
    reads the compressed weights; numpy has no product over packed 4-bit ones."""
    import irexec
    from irexec.generation import positions

    xml = folder / "openvino_model.xml"
    compiled = irexec.compile_model(irexec.read_model(xml))
    names = {p.any_name for p in compiled.inputs}

    def feeds():
        mask = np.ones((1, prompt), np.int64)
        ids = _rng().integers(4, 200, (1, prompt))
        yield _llm_feed(names, ids, mask, positions(mask))
        for s in range(steps):
            mask = np.ones((1, prompt + s + 1), np.int64)
            yield _llm_feed(names, np.array([[5]]), mask, positions(mask)[:, -1:])

    def generation(request):
        request.reset_state()
        times = []
        for feed in feeds():
            start = time.perf_counter()
            request.infer(feed)
            times.append(time.perf_counter() - start)
        return times[0], float(np.median(times[1:]))

    requests = {"irexec": compiled.create_infer_request()}
    if ov is not None:
        config = {"INFERENCE_PRECISION_HINT": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0",
                  "KV_CACHE_PRECISION": "f32"}
        threads = os.environ.get("OPENBLAS_NUM_THREADS")
        if threads:
            config["INFERENCE_NUM_THREADS"] = int(threads)
        core = ov.Core()
        requests["openvino"] = core.compile_model(core.read_model(str(xml)), "CPU", config) \
            .create_infer_request()
    products = _decode_products(compiled)

    def floor() -> float:
        start = time.perf_counter()
        for x, w in products:
            np.matmul(x, w)
        return time.perf_counter() - start

    # the sides alternate, a generation each, so that the machine's load falls on all
    best = {side: [float("inf"), float("inf")] for side in requests}
    floor_best = float("inf")
    for _ in range(runs):
        for side, request in requests.items():
            prefill, step = generation(request)
            best[side] = [min(best[side][0], prefill), min(best[side][1], step)]
        floor_best = min(floor_best, float(np.median([floor() for _ in range(steps)])))
    row = {"case": folder.name, "floor_step_s": floor_best,
           "floor_weights_mb": sum(w.nbytes for _, w in products) / 1e6}
    for side, (prefill, step) in best.items():
        row[f"{side}_prefill_s"], row[f"{side}_step_s"] = prefill, step
    return row


def _decode_products(compiled) -> list:
    """A decode step's matrix-vector products as plain numpy: for every 2-d f32 constant that
    a MatMul step of the plan (fused or not) reads, a vector times it (transposed, as a
    Linear layer's [out, in] weight is read)."""
    constants = compiled.plan.constants
    products, seen = [], set()
    for step in compiled.plan.steps:
        if "MatMul" not in step.type:
            continue
        for slot in step.inputs:
            w = constants.get(slot)
            if w is None or slot in seen or w.ndim != 2 or w.dtype != np.float32 \
                    or w.size < 1 << 12:
                continue
            seen.add(slot)
            products.append((np.ones((1, 1, w.shape[1]), np.float32), w.T))
    return products


def _llm_feed(names, ids, mask, pos) -> dict:
    feed = {"input_ids": ids, "attention_mask": mask}
    if "position_ids" in names:
        feed["position_ids"] = pos
    if "beam_idx" in names:
        feed["beam_idx"] = np.zeros(len(ids), np.int32)
    return feed


def llm_table(rows: list[dict]) -> str:
    lines = ["| LLM (tools/llm_zoo.py) | prefill 128 tokens: irexec ms | OpenVINO ms | ratio | "
             "decode step: irexec ms | OpenVINO ms | ratio | numpy f32 products of the step's "
             "weights (floor) ms | floor / OpenVINO |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        ovp, ovs = r.get("openvino_prefill_s"), r.get("openvino_step_s")
        floor = r.get("floor_step_s")
        lines.append(f"| {r['case']} | {_ms(r['irexec_prefill_s'])} | {_ms(ovp)} | "
                     f"{r['irexec_prefill_s'] / ovp if ovp else float('nan'):.2f} | "
                     f"{_ms2(r['irexec_step_s'])} | {_ms2(ovs)} | "
                     f"{r['irexec_step_s'] / ovs if ovs else float('nan'):.2f} | "
                     f"{_ms2(floor)} ({r.get('floor_weights_mb', 0):.1f} MB) | "
                     f"{floor / ovs if ovs and floor else float('nan'):.2f} |")
    return "\n".join(lines)


LLM_CASES = ("llama_tiny", "llama_1024_int4")


def api_call_case(runs: int) -> dict:
    """The Python API's cost on a one-layer model (Relu on [1, 64] f32, so the call's fixed cost
    is all there is): ``compiled(x)`` (a bare array, OpenVINO's form) against
    ``request.infer({"x": x})`` (the request path irexec had before OpenVINO's forms) and
    ``compiled({"x": x})``, called in turn in one run (median of 20 calls a sample). Target
    (issue "Drop-in for OpenVINO's Python API"): ``compiled(x)`` at most 1.2x ``infer``."""
    from tools.bench.compute import alternate

    b = ModelBuilder("one_layer")
    x_port = b.parameter("x", "f32", [1, 64])
    b.result(b.op("Relu", x_port, name="relu"))
    compiled = irexec.compile_model(b.build())
    request = compiled.create_infer_request()
    x = _rng().standard_normal((1, 64)).astype(np.float32)
    feed = {"x": x}
    calls = 20

    def repeat(fn):
        def many():
            for _ in range(calls):
                fn()
        return many

    t_bare, t_dict, t_infer = alternate(
        [repeat(lambda: compiled(x)), repeat(lambda: compiled(feed)),
         repeat(lambda: request.infer(feed))], runs * 5, median=True)
    same = np.array_equal(compiled(x)[0], request.infer(feed)[0])
    return {"case": "one-layer call [1,64]", "bare_s": t_bare / calls, "dict_s": t_dict / calls,
            "infer_s": t_infer / calls, "ratio": t_bare / t_infer, "same": same}


def _queue_model(quick: bool):
    """ResNet-18 at 224 (tools/bench/models.py: torch, converted by OpenVINO, cached in
    .bench-models), or with --quick (or without torch) a small convolution stack."""
    if not quick:
        try:
            from pathlib import Path

            from tools.bench.models import build

            cache = Path(__file__).resolve().parent.parent / ".bench-models"
            cache.mkdir(exist_ok=True)
            xml, _ = build("resnet18", cache)
            return "ResNet-18 [1,3,224,224]", irexec.read_model(xml)
        except ImportError:
            pass
    b = ModelBuilder("conv_stack")
    y = b.parameter("x", "f32", [1, 8, 32, 32])
    rng = _rng()
    for i in range(4):
        w = (rng.standard_normal((8, 8, 3, 3)) * 0.1).astype(np.float32)
        y = b.op("Relu", b.op("Convolution", y, b.constant(w), strides=[1, 1], pads_begin=[1, 1],
                              pads_end=[1, 1], dilations=[1, 1], name=f"conv{i}"))
    b.result(y)
    return "4 convolutions [1,8,32,32]", b.build()


def async_queue_case(runs: int, quick: bool) -> dict:
    """An AsyncInferQueue of 2 requests against the same two requests called in turn, each
    sample two inferences, alternated in one run. Target: the queue at least as fast (numpy
    releases the GIL in its large operations, so the two overlap where cores are free)."""
    from tools.bench.compute import alternate

    name, model = _queue_model(quick)
    compiled = irexec.compile_model(model)
    x = _rng().standard_normal(tuple(model.input(0).get_shape())).astype(np.float32)
    queue = irexec.AsyncInferQueue(compiled, 2)
    first, second = compiled.create_infer_request(), compiled.create_infer_request()

    def in_turn():
        first.infer(x)
        second.infer(x)

    def queued():
        queue.start_async(x)
        queue.start_async(x)
        queue.wait_all()

    t_turn, t_queue = alternate([in_turn, queued], runs, median=True)
    return {"case": f"AsyncInferQueue(2) on {name}, 2 inferences", "in_turn_s": t_turn,
            "queue_s": t_queue, "ratio": t_queue / t_turn,
            "same": np.array_equal(queue[0].results[0], first.results[0])}


def api_table(rows: list[dict]) -> str:
    lines = ["| API case | irexec ms | reference ms | ratio | target |",
             "| --- | --- | --- | --- | --- |"]
    for r in rows:
        if "bare_s" in r:
            lines.append(f"| {r['case']}: `compiled(x)` / `request.infer({{name: x}})` "
                         f"(`compiled({{name: x}})` {r['dict_s'] * 1e3:.4f} ms) | "
                         f"{r['bare_s'] * 1e3:.4f} | {r['infer_s'] * 1e3:.4f} | "
                         f"{r['ratio']:.2f} | <= 1.2 |")
        else:
            lines.append(f"| {r['case']}: queue / in turn | {_ms(r['queue_s'])} | "
                         f"{_ms(r['in_turn_s'])} | {r['ratio']:.2f} | <= 1.0 |")
        if not r["same"]:
            lines[-1] += " (DIFFERENT results)"
    return "\n".join(lines)


# --- datasets: worker processes and Dask (irexec/batch/) ---------------------------------------

def resnet18_like(size: int = 224, classes: int = 1000, width: int = 64):
    """ResNet-18's layers with batch norm folded (a bias Add after each convolution), built
    layer by layer with seeded weights: 7x7/2 stem, 3x3/2 max pool, four stages of two basic
    blocks (64-128-256-512, 1x1/2 projections), global average pool, fully connected."""
    rng = _rng()
    b = ModelBuilder("resnet18_like")

    def conv(x, c_in, c_out, k, stride, name):
        w = (rng.standard_normal((c_out, c_in, k, k)) * np.sqrt(2.0 / (c_in * k * k)))
        y = b.op("Convolution", x, b.constant(w.astype(np.float32)), strides=[stride, stride],
                 pads_begin=[k // 2] * 2, pads_end=[k // 2] * 2, dilations=[1, 1], name=name)
        bias = b.constant((rng.standard_normal((1, c_out, 1, 1)) * 0.01).astype(np.float32))
        return b.op("Add", y, bias, name=name + "/bias")

    x = b.parameter("image", "f32", [1, 3, size, size])
    x = b.op("Relu", conv(x, 3, width, 7, 2, "stem"), name="stem/relu")
    x = b.op("MaxPool", x, strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1], kernel=[3, 3],
             rounding_type="floor", auto_pad="explicit", name="pool")
    c_in = width
    for stage, c_out in enumerate([width, width * 2, width * 4, width * 8]):
        for block in range(2):
            stride = 2 if stage > 0 and block == 0 else 1
            name = f"layer{stage + 1}.{block}"
            y = b.op("Relu", conv(x, c_in, c_out, 3, stride, name + ".conv1"), name=name + ".relu1")
            y = conv(y, c_out, c_out, 3, 1, name + ".conv2")
            shortcut = conv(x, c_in, c_out, 1, stride, name + ".down") if stride != 1 or \
                c_in != c_out else x
            x = b.op("Relu", b.op("Add", y, shortcut, name=name + ".add"), name=name + ".relu2")
            c_in = c_out
    x = b.op("ReduceMean", x, b.constant(np.array([2, 3], np.int64)), keep_dims=False,
             name="avgpool")
    w = (rng.standard_normal((c_in, classes)) / np.sqrt(c_in)).astype(np.float32)
    x = b.op("MatMul", x, b.constant(w), transpose_a=False, transpose_b=False, name="fc")
    b.result(b.op("Add", x, b.constant(np.zeros((1, classes), np.float32)), name="fc/bias"),
             "logits")
    return b.build()


def _write_dataset(folder: str, count: int, shape, key: str) -> str:
    os.makedirs(folder, exist_ok=True)
    rng = _rng()
    for i in range(count):
        np.savez(os.path.join(folder, f"s{i:05d}.npz"),
                 **{key: rng.standard_normal(shape).astype(np.float32)})
    return folder


def _timed_outcomes(place, job, samples, compiled=None) -> tuple[float, float]:
    """(wall seconds from the start to the last outcome, steady samples per second).

    Steady: the rate over the middle of the run, between the arrivals (in the order outcomes
    arrive, not sample order) of the first and the last eighth: start-up, workers becoming ready
    one after the other, and the last samples finishing on fewer workers than started all fall
    outside it. (Stamps taken in sample order, from the first result, counted a worker that was
    ready late as part of the steady state.)"""
    started = time.perf_counter()
    arrivals = []
    for _, outcome in place.outcomes(job, samples, compiled):
        if not outcome.ok:
            raise RuntimeError(str(outcome.errors[0]))
        arrivals.append(time.perf_counter())
    return arrivals[-1] - started, _steady(arrivals)


def _steady(arrivals: list[float]) -> float:
    n = len(arrivals)
    skip = max(1, n // 8)
    if n - 2 * skip < 2:
        skip = 0
    first, last = arrivals[max(skip - 1, 0)], arrivals[n - 1 - skip]
    done = (n - 1 - skip) - max(skip - 1, 0)
    return done / (last - first) if last > first else float("nan")


def _independent(job, samples, workers: int = 2) -> tuple[float, float] | None:
    """The pool's ideal: ``workers`` forked copies of this process, each running its share of
    the samples in a plain loop with one BLAS thread, nothing sent between them. (wall, steady
    summed over the copies); None where fork is missing."""
    import multiprocessing

    from irexec.batch.work import limit_blas, run_sample

    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    context = multiprocessing.get_context("fork")
    results = context.Queue()

    def work(part):
        limit_blas(1)
        stamps = []
        for sample in part:
            if not run_sample(job, sample).ok:
                raise RuntimeError("a sample failed")
            stamps.append(time.perf_counter())
        results.put(stamps)

    started = time.perf_counter()
    processes = [context.Process(target=work, args=(samples[k::workers],))
                 for k in range(workers)]
    for process in processes:
        process.start()
    stamps = sorted(sum((results.get() for _ in processes), []))
    for process in processes:
        process.join()
    return stamps[-1] - started, _steady(stamps)


def _cli_seconds(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and every process it waited for: its local
    workers, not a cluster's) of ``irexec ARGV``."""
    import resource
    import subprocess

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    os.environ.get("PYTHONPATH")) if p)}
    def cpu():
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    started, cpu_started = time.perf_counter(), cpu()
    proc = subprocess.run([sys.executable, "-m", "irexec", *argv], env=env,
                          capture_output=True, text=True)
    seconds, cpu_seconds = time.perf_counter() - started, cpu() - cpu_started
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed")
    return seconds, cpu_seconds


def batch_cases(quick: bool, tmp: str) -> dict:
    """ResNet-18-like over 64 samples with --jobs 1, --jobs 2 and a 2-worker LocalCluster; the
    fixed cost per sample of a one-layer model through the command line, as the difference of
    two dataset sizes (start-up cancels)."""
    from irexec.batch.datasets import folder_samples
    from irexec.batch.pool import START_ENV
    from irexec.batch.runner import Place
    from irexec.batch.work import Job
    from irexec.pickling import ModelSource

    count, size, width = (4, 32, 8) if quick else (64, 224, 64)
    model = os.path.join(tmp, "resnet18_like.xml")
    irexec.save_model(resnet18_like(size, width=width), model)
    data = _write_dataset(os.path.join(tmp, "resnet_in"), count, [1, 3, size, size], "image")
    samples = folder_samples(data)
    job = Job(ModelSource.of_file(model, with_bytes=True))
    compiled = job.compiled()  # as `irexec run` has it before the samples (either --jobs)
    out = {"samples": count, "size": size}
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        threadpool_limits = None
    cluster = client = None
    try:
        import logging

        import dask
        from distributed import Client, LocalCluster

        from irexec.batch.dask_runner import WORKER_CONFIG

        with dask.config.set(WORKER_CONFIG):  # as --scheduler local starts its cluster
            cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.ERROR)
        client = Client(cluster)
        _timed_outcomes(Place(client=client), job, samples[:8])  # each worker compiles once
    except ImportError:
        pass

    def blas1():
        with threadpool_limits(limits=1):  # one worker's share of a 2-core machine
            return _timed_outcomes(Place(jobs=1), job, samples, compiled)

    def spawned():
        previous = os.environ.get(START_ENV)
        os.environ[START_ENV] = "spawn"
        try:
            return _timed_outcomes(Place(jobs=2), job, samples, compiled)
        finally:
            if previous is None:
                del os.environ[START_ENV]
            else:
                os.environ[START_ENV] = previous

    places = {"jobs1": lambda: _timed_outcomes(Place(jobs=1), job, samples, compiled),
              "jobs1_blas1": blas1 if threadpool_limits is not None else None,
              "jobs2": lambda: _timed_outcomes(Place(jobs=2), job, samples, compiled),
              "jobs2_spawn": spawned,
              "independent2": lambda: _independent(job, samples),
              "dask2": (lambda: _timed_outcomes(Place(client=client), job, samples))
              if client is not None else None}
    # Every place in turn, ``rounds`` times (a shared machine's load changes by the minute;
    # alternating gives each the same chances); each figure is the median of its rounds, and
    # each ratio the median of the ratios within a round.
    rounds = 1 if quick else 3
    runs = {name: [] for name, f in places.items() if f is not None}
    for _ in range(rounds):
        for name in runs:
            runs[name].append(places[name]())
    runs = {name: [r for r in got if r is not None] for name, got in runs.items()}
    out["rounds"] = rounds
    out["runs"] = runs
    for name, got in runs.items():
        out[name] = (statistics.median(r[0] for r in got),
                     statistics.median(r[1] for r in got)) if got else None
    out["ratios"] = {f"{a}/{b}": [statistics.median(runs[b][k][0] / runs[a][k][0]
                                                    for k in range(len(runs[a]))),
                                  statistics.median(runs[a][k][1] / runs[b][k][1]
                                                    for k in range(len(runs[a])))]
                     for a, b in (("jobs2", "jobs1"), ("independent2", "jobs1"),
                                  ("jobs2", "jobs1_blas1"),
                                  ("jobs1", "jobs1_blas1"), ("independent2", "jobs1_blas1"),
                                  ("jobs2", "independent2"), ("jobs2_spawn", "jobs1"),
                                  ("dask2", "jobs2"))
                     if runs.get(a) and runs.get(b)}
    # Fixed cost per sample: a one-layer model, N1 and N2 samples, through `irexec run`.
    b = ModelBuilder("one")
    b.result(b.op("Relu", b.parameter("x", "f32", [1, 16]), name="relu"), "y")
    one = os.path.join(tmp, "one.xml")
    irexec.save_model(b.build(), one)
    small, large = (10, 30) if quick else (100, 1100)
    fixed = {}
    for n in (small, large):
        _write_dataset(os.path.join(tmp, f"one_{n}"), n, [1, 16], "x")
    places = [("jobs2", ["--jobs", "2"])]
    if client is not None:
        places.append(("dask2", ["--scheduler", client.scheduler.address]))
    for name, extra in places:
        times = {}
        for n in (small, large):  # the better of two runs of each size
            tries = [_cli_seconds(["run", one, "--input-dir", os.path.join(tmp, f"one_{n}"),
                                   "--output-dir", os.path.join(tmp, f"one_out_{name}_{n}_{k}"),
                                   *extra]) for k in range(2)]
            times[n] = min(tries)
        fixed[name] = tuple((times[large][k] - times[small][k]) / (large - small)
                            for k in (0, 1))
    out["fixed"] = fixed
    if client is not None:
        client.close()
        cluster.close()
    return out


BATCH_PLACES = (("jobs1", "--jobs 1 (this process, BLAS on every core)"),
                ("jobs1_blas1", "--jobs 1, BLAS held to 1 thread"),
                ("jobs2", "--jobs 2 (2 forked workers)"),
                ("jobs2_spawn", "--jobs 2, workers spawned (IREXEC_WORKER_START=spawn)"),
                ("independent2", "2 independent forked processes, half the samples each "
                                 "(the pool's ideal)"),
                ("dask2", "LocalCluster, 2 workers of 1 thread"))


def batch_table(r: dict) -> str:
    one_wall, one_rate = r["jobs1"]
    lines = [f"ResNet-18-like at {r['size']}, {r['samples']} samples, every place in turn "
             f"{r['rounds']} times (medians; steady: between the first and the last eighth of "
             f"the arrivals):", "",
             "| where | wall s | samples/s (wall) | steady samples/s | throughput vs --jobs 1 "
             "(wall, steady) |", "| --- | --- | --- | --- | --- |"]
    for key, label in BATCH_PLACES:
        if r.get(key) is None:
            continue
        wall, rate = r[key]
        lines.append(f"| {label} | {wall:.2f} | {r['samples'] / wall:.2f} | {rate:.2f} | "
                     f"{one_wall / wall:.2f}x, {rate / one_rate:.2f}x |")
    lines.append("")
    lines.append("| ratio of throughputs (median of the rounds' ratios) | wall | steady |")
    lines.append("| --- | --- | --- |")
    short = {"jobs1": "--jobs 1", "jobs1_blas1": "--jobs 1 with 1 BLAS thread",
             "jobs2": "--jobs 2", "jobs2_spawn": "--jobs 2 spawned",
             "independent2": "2 independent processes", "dask2": "LocalCluster"}
    for pair, (wall, steady) in r["ratios"].items():
        a, b = pair.split("/")
        lines.append(f"| {short[a]} / {short[b]} | {wall:.2f}x | {steady:.2f}x |")
    lines.append("")
    lines.append("| fixed cost per sample (one-layer model, irexec run --input-dir) | wall ms | "
                 "CPU ms (irexec and its local workers) |")
    lines.append("| --- | --- | --- |")
    for key, (wall, cpu) in r["fixed"].items():
        label = "--jobs 2" if key == "jobs2" else "--scheduler (2-worker LocalCluster)"
        lines.append(f"| {label} | {wall * 1e3:.2f} | {cpu * 1e3:.2f}"
                     f"{' (the client only)' if key != 'jobs2' else ''} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few runs (for CI)")
    parser.add_argument("--runs", type=int, help="timed runs per measurement (default 7; 3 "
                                                 "with --quick)")
    parser.add_argument("--case", action="append", default=[],
                        help="run only cases whose name contains this (repeatable)")
    parser.add_argument("--no-openvino", action="store_true", help="skip OpenVINO even if "
                                                                   "installed")
    parser.add_argument("--no-openvino-compile", action="store_true",
                        help="skip OpenVINO on the overhead chains (its compile of the 10,000 "
                             "layer chain takes about a minute)")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    runs = args.runs or (3 if args.quick else 7)
    scale = 1024 if args.quick else 1
    chains = (10, 100) if args.quick else (1000, 10000)
    ov = None if args.no_openvino else _openvino()

    def wanted(name):
        return not args.case or any(c.lower() in name.lower() for c in args.case)

    print(machine())
    print(f"median of {runs} runs after warm-up{'; --quick: sizes / 1024' if args.quick else ''}")
    rows, overhead = [], []
    with tempfile.TemporaryDirectory(prefix="irexec-bench-") as tmp:
        for case in KERNEL_CASES:
            if wanted(case.name):
                rows.append(run_kernel_case(case, scale, runs, ov, tmp))
                r = rows[-1]
                print(f"  {r.name}: {_ms(r.irexec)} ms, {r.irexec / r.memcpy:.2f}x memcpy",
                      flush=True)
        moves = []
        for case in MOVE_CASES:
            if wanted(case.name):
                moves.append(run_move_case(case, scale, runs, tmp))
                r = moves[-1]
                print(f"  {r['case']}: {_ms(r['irexec_s'])} ms, "
                      f"{r['irexec_s'] / r['numpy_s']:.2f}x numpy, "
                      f"{r['irexec_s'] / r['memcpy_s']:.2f}x memcpy", flush=True)
        ratios = []
        for case in RATIO_CASES:
            if wanted(case.name):
                ratios.append(run_ratio_case(case, scale, runs, ov, tmp))
                r = ratios[-1]
                print(f"  {r['case']}: {_ms(r['irexec_s'])} ms, OpenVINO "
                      f"{_ms(r.get('openvino_s'))} ms", flush=True)
        for n in chains:
            name = f"chain of {n} Reverse layers [8,16]"
            if wanted(name):
                overhead.append(run_overhead_case(n, runs, ov, tmp,
                                                  not args.no_openvino_compile))
                print(f"  {name}: read {overhead[-1]['read_s']:.3f} s, compile "
                      f"{overhead[-1]['compile_s']:.3f} s, "
                      f"{overhead[-1]['per_layer_us']:.2f} µs per layer", flush=True)
        memory = []
        if wanted("memory"):
            memory.append(memory_chain(100, [64, 512, 512 * 4] if not args.quick else [4, 64, 64],
                                       tmp))
            memory.append(memory_unused_weights(1.0 if not args.quick else 0.01, tmp))
            for m in memory:
                print(f"  {m['case']}: {_ratio(m['value'])}", flush=True)
        if wanted("start-up"):
            s = startup(runs)
            memory.append({"case": s["case"], "value": s["value"] / s["baseline"]})
            print(f"  {s['case']}: {s['value']:.3f} s, {s['value'] / s['baseline']:.2f}x",
                  flush=True)
        generators = []
        if wanted("RandomUniform"):
            generators.append(random_uniform_case(16 << 20 if not args.quick else 1 << 14,
                                                  runs, ov, tmp))
            print(f"  {generators[-1]['case']}: "
                  f"{generators[-1]['irexec'] / generators[-1]['numpy']:.1f}x numpy", flush=True)
        llms = []
        for name in LLM_CASES:
            folder = llm_zoo_folder() / name
            if wanted(f"llm {name}") and (folder / "openvino_model.xml").is_file():
                llms.append(llm_case(folder, runs, ov))
                r = llms[-1]
                print(f"  llm {name}: prefill {_ms(r['irexec_prefill_s'])} ms, step "
                      f"{_ms(r['irexec_step_s'])} ms", flush=True)
        api = []
        if wanted("API"):
            api.append(api_call_case(runs))
            print(f"  {api[-1]['case']}: compiled(x) {api[-1]['ratio']:.2f}x infer", flush=True)
            api.append(async_queue_case(runs, args.quick))
            print(f"  {api[-1]['case']}: {api[-1]['ratio']:.2f}x in turn", flush=True)
        embedding = []
        if wanted("EmbeddingBag"):
            embedding.append(embedding_bag_case(100 if args.quick else 100_000, runs, tmp))
            print(f"  {embedding[-1]['case']}: {embedding[-1]['ratio']:.2f}x numpy", flush=True)
        batch = None
        if wanted("batch"):
            batch = batch_cases(args.quick, tmp)
            print(f"  batch: --jobs 2 {batch['ratios']['jobs2/jobs1'][0]:.2f}x --jobs 1 "
                  f"(wall)", flush=True)
    print()
    if embedding:
        print("| embedding case | irexec ms | numpy gather-and-sum ms | irexec / numpy |\n"
              "| --- | --- | --- | --- |")
        for e in embedding:
            print(f"| {e['case']} | {_ms(e['irexec_s'])} | {_ms(e['numpy_s'])} | "
                  f"{e['ratio']:.2f}{'' if e['same'] else ' (DIFFERENT from numpy)'} |")
        print()
    if api:
        print(api_table(api))
        print()
    if memory:
        print("| memory case | value |\n| --- | --- |")
        for m in memory:
            print(f"| {m['case']} | {_ratio(m['value'])} |")
        print()
    if rows:
        print(kernel_table(rows))
        print()
    if moves:
        print(move_table(moves))
        print()
    if ratios:
        print(ratio_table(ratios))
        print()
    if overhead:
        print(overhead_table(overhead))
    if generators:
        print()
        print(random_table(generators))
    if llms:
        print()
        print(llm_table(llms))
    if batch:
        print()
        print(batch_table(batch))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine(), "kernels": [r.__dict__ for r in rows],
                       "ratios": ratios, "movement": moves, "overhead": overhead,
                       "memory": memory, "generators": generators, "embedding": embedding,
                       "llm": llms, "api": api, "batch": batch},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
