"""``irexec bench MODEL``: how long a model takes to read, compile and run, on this machine.

Times one model (the fixed suite that measures irexec itself against memcpy, numpy and OpenVINO
is ``python -m tools.bench``): read_model and compile_model once, then ``--warmup`` calls and
``--runs`` timed calls on the same inputs (given with --input, else generated from --seed). It
reports the latency of a call (median, 90th and 99th percentiles, fastest, slowest), the
throughput (calls are made one after another: inferences per second is the number of timed
calls over their total time), the median's bytes per second (inputs plus outputs) and the peak
resident memory. ``--per-op`` adds where a call's time goes, per op type, as shares of the time
spent in layers (they add up to 100%), and the time outside the layers (the run loop, checks
of inputs, copies of outputs) on a line of its own. A progress bar shows on a terminal, never
when piped.
"""

from __future__ import annotations

import resource
import sys
import time

import numpy as np

from irexec.api import compile_model, read_model
from irexec.cli import common
from irexec.cli.progress import Progress
from irexec.cli.usage import UsageError
from irexec.runtime import fusion


def add_parser(sub) -> None:
    p = sub.add_parser("bench", help="time reading, compiling and running a model",
                       description="Time read_model, compile_model and repeated calls of one "
                                   "model on the same inputs; print the median call and the "
                                   "peak memory.")
    common.add_model_arguments(p)
    common.add_input_arguments(p)
    common.add_shape_argument(p)
    p.add_argument("--runs", "-n", type=int, default=20, help="timed calls (default 20)")
    p.add_argument("--warmup", type=int, default=2, help="untimed calls first (default 2)")
    p.add_argument("--precise", action="store_true",
                   help="time precise mode: every floating op computed in float64, rounded "
                        f"once to its layer's type ({common.doc('numerics.md')})")
    common.add_decompression_argument(p)
    p.add_argument("--per-op", action="store_true",
                   help="also show where a call's time goes, per op type (time per call, "
                        "share, layers; measured on the timed calls)")


def _duration(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale or unit == "us":
            return f"{seconds / scale:.3g} {unit}"
    raise AssertionError


def _rate(nbytes: int, seconds: float) -> str:
    if seconds <= 0:
        return "-"
    rate = nbytes / seconds
    for unit in ("B/s", "KiB/s", "MiB/s", "GiB/s"):
        if rate < 1024 or unit == "GiB/s":
            return f"{rate:.3g} {unit}"
        rate /= 1024
    raise AssertionError


def _peak_rss_mib() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def execute(args) -> int:
    if args.runs < 1:
        raise UsageError("argument --runs: must be at least 1")
    if args.warmup < 0:
        raise UsageError("argument --warmup: must be 0 or more")
    start = time.perf_counter()
    model = read_model(args.model, args.weights)
    read_time = time.perf_counter() - start
    common.print_warnings([d for d in model.diagnostics if d.code != common.NOT_IMPLEMENTED])
    common.apply_shapes(model, args.shape, args.model)
    start = time.perf_counter()
    compiled = compile_model(model, config=common.compile_config(args))
    compile_time = time.perf_counter() - start
    given = common.load_inputs(args.input, compiled, args.model)
    inputs = common.complete_inputs(model, given, args.seed)
    common.say_filled_dims(model, inputs, given)
    input_bytes = sum(np.asarray(v).nbytes for v in inputs.values())
    times = []
    output_bytes = 0
    profile: dict[str, float] | None = {} if args.per_op else None
    with Progress(args.warmup + args.runs) as progress:
        for i in range(args.warmup + args.runs):
            warm = i < args.warmup
            progress.start("warm-up" if warm else f"run {i - args.warmup + 1}")
            start = time.perf_counter()
            outputs = compiled(inputs, profile=None if warm else profile)
            elapsed = time.perf_counter() - start
            if not warm:
                times.append(elapsed)
            output_bytes = sum(np.asarray(v).nbytes for v in outputs.values())
            del outputs
            progress.advance()
    median = float(np.median(times))
    p90, p99 = (float(v) for v in np.percentile(times, [90, 99]))
    total = float(sum(times))
    layers = sum(1 for n in model.nodes if n.role not in ("parameter", "constant", "result"))
    plural = "s" * (layers != 1)
    print(f"model:      {args.model} ({layers} layer{plural} to run, "
          f"{len(model.nodes)} in all)")
    print(f"read:       {_duration(read_time)}")
    print(f"compile:    {_duration(compile_time)}{' (precise mode)' * args.precise}")
    print(f"call:       median {_duration(median)}, p90 {_duration(p90)}, p99 "
          f"{_duration(p99)}, fastest {_duration(min(times))}, slowest {_duration(max(times))} "
          f"({args.runs} run{'s' * (args.runs != 1)} after {args.warmup} warm-up)")
    rate = f"{args.runs / total:.4g}" if total > 0 else "-"
    print(f"throughput: {rate} inferences/s (one call at a time)")
    print(f"data:       {input_bytes + output_bytes} bytes in and out per call, "
          f"{_rate(input_bytes + output_bytes, median)} at the median")
    print(f"memory:     peak resident {_peak_rss_mib():.1f} MiB")
    if profile is not None:
        print("\n".join(per_op_lines(model, profile, args.runs, total / args.runs,
                                      fusion.fused_names(compiled.plan))))
    return 0


def per_op_lines(model, profile: dict[str, float], runs: int, mean_call: float,
                 fused: dict[str, str] | None = None) -> list[str]:
    """The table of ``--per-op``: op types by their time per call (averaged over the timed
    calls), largest first, each with its share of the time spent in layers (the shares add up
    to 100%) and how many layers of the type ran; then the time outside the layers, against the
    mean call of the same runs. ``fused``: the plan's fused steps (runtime/fusion.py), named by
    their pattern ("LayerNorm (fused)"), by the layer id their time is counted under."""
    by_id = {str(n.id): n for n in model.nodes}
    fused = fused or {}
    seconds: dict[str, float] = {}
    layers: dict[str, int] = {}
    for layer_id, total in profile.items():
        key = f"{fused[layer_id]} (fused)" if layer_id in fused else \
            f"{by_id[layer_id].type}-{by_id[layer_id].version}"
        seconds[key] = seconds.get(key, 0.0) + total / runs
        layers[key] = layers.get(key, 0) + 1
    spent = sum(seconds.values())
    rows = [("op type", "per call", "share", "layers")]
    for key in sorted(seconds, key=lambda k: -seconds[k]):
        share = f"{100 * seconds[key] / spent:.1f}%" if spent > 0 else "-"
        rows.append((key, _duration(seconds[key]), share, str(layers[key])))
    rows.append(("in layers", _duration(spent), "100%" if spent > 0 else "-",
                 str(sum(layers.values()))))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["per op type (time per call; share of the time in layers; layers folded into "
             "constants take none):"]
    for r in rows:
        lines.append("  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                      for i, (c, w) in enumerate(zip(r, widths))).rstrip())
    outside = max(mean_call - spent, 0.0)
    share = f" ({100 * outside / mean_call:.1f}% of the mean call)" if mean_call > 0 else ""
    lines.append(f"outside layers: {_duration(outside)} per call{share}: the run loop, input "
                 f"checks, output copies")
    return lines
