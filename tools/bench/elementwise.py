"""Element-wise ops on 64 MiB: irexec's call against the bare numpy expression (issue 16).

    python -m tools.bench elementwise [--mib 64] [--runs 7] [--case SUBSTRING]

Each case is a one-layer model (built with irexec's builder) whose input is ``--mib`` MiB of
f32 (or the same number of f16 elements); the time of ``compiled(inputs)`` is compared with the
numpy expression that computes the same result on the same arrays (uniform in [0.5, 2]; the
"signs mixed" cases: standard normal), measured in the same run: the four calls of a case
(numpy and irexec, f32 and f16) take turns, ``--runs`` rounds after a warm-up, and each reports
its median (``--best``: its fastest call), so that a busy machine slows them alike
(``--cpu-time``: the process's CPU time instead of the wall clock's, which a machine shared with
other busy processes inflates less). Reported:
irexec / numpy for each case, and for f16 the f16 time / the f32 time of the same op. Targets:
<= 1.2x numpy; f16 <= 2x f32.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import irexec  # noqa: E402
from irexec.builder import ModelBuilder  # noqa: E402


def _alternating(fns: list, runs: int, best: bool, clock=time.perf_counter) -> list[float]:
    """Each call's median (or fastest) time, the calls taking turns."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(runs):
        for fn, t in zip(fns, times):
            start = clock()
            fn()
            t.append(clock() - start)
    return [min(t) if best else statistics.median(t) for t in times]


def _compiled(op, et, n, inputs, version=None, **attrs):
    b = ModelBuilder()
    ports = [b.parameter(f"in{i}", t, [n]) for i, t in enumerate(inputs)]
    b.result(b.op(op, *ports, version=version, **attrs), name="out")
    return irexec.compile_model(b.build())


# name, op, input types ("T": the case's type), numpy expression, attributes
CASES = [
    ("Add", "Add", ("T", "T"), lambda a, b: np.add(a, b), {}),
    ("Multiply", "Multiply", ("T", "T"), lambda a, b: np.multiply(a, b), {}),
    ("Divide", "Divide", ("T", "T"), lambda a, b: np.divide(a, b), {}),
    ("Maximum", "Maximum", ("T", "T"), lambda a, b: np.maximum(a, b), {}),
    ("SquaredDifference", "SquaredDifference", ("T", "T"),
     lambda a, b: np.square(np.subtract(a, b)), {}),
    ("Sqrt", "Sqrt", ("T",), lambda a: np.sqrt(a), {}),
    ("Exp", "Exp", ("T",), lambda a: np.exp(a), {}),
    ("Tanh", "Tanh", ("T",), lambda a: np.tanh(a), {}),
    ("Less", "Less", ("T", "T"), lambda a, b: np.less(a, b), {}),
    ("Less (signs mixed)", "Less", ("N", "N"), lambda a, b: np.less(a, b), {}),
    ("Maximum (signs mixed)", "Maximum", ("N", "N"), lambda a, b: np.maximum(a, b), {}),
    ("Select", "Select", ("boolean", "T", "T"), lambda c, a, b: np.where(c, a, b), {}),
]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=64)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--case", action="append", default=[])
    parser.add_argument("--best", action="store_true", help="the fastest call, not the median")
    parser.add_argument("--cpu-time", action="store_true",
                        help="the process's CPU time, not the wall clock's")
    args = parser.parse_args(argv)
    n = args.mib * 2**20 // 4
    rng = np.random.default_rng(0)
    base = {"f32": [rng.uniform(0.5, 2, n).astype(np.float32) for _ in range(2)]}
    base["f16"] = [x.astype(np.float16) for x in base["f32"]]
    mixed = {"f32": [rng.normal(size=n).astype(np.float32) for _ in range(2)]}
    mixed["f16"] = [x.astype(np.float16) for x in mixed["f32"]]
    cond = rng.integers(0, 2, n).astype(bool)
    print(f"{n} elements ({args.mib} MiB of f32), {'best' if args.best else 'median'} of "
          f"{args.runs} ({'CPU' if args.cpu_time else 'wall'} time), the calls of a case "
          f"alternating")
    print(f"{'case':<22}{'type':<6}{'numpy s':>10}{'irexec s':>10}{'ratio':>8}{'f16/f32':>9}")
    for name, op, types, expr, attrs in CASES:
        if args.case and not any(c.lower() in name.lower() for c in args.case):
            continue
        calls = []
        for et in ("f32", "f16"):
            arrays, it = [], iter(mixed[et] if "N" in types else base[et])
            for t in types:
                arrays.append(cond if t == "boolean" else next(it))
            compiled = _compiled(op, et, n, [et if t in "TN" else t for t in types], **attrs)
            feed = {f"in{i}": a for i, a in enumerate(arrays)}
            calls += [lambda e=expr, a=arrays: e(*a), lambda c=compiled, f=feed: c(f)]
        times = _alternating(calls, args.runs, args.best,
                             time.process_time if args.cpu_time else time.perf_counter)
        for k, et in enumerate(("f32", "f16")):
            bare, ours = times[2 * k], times[2 * k + 1]
            f16 = f"{ours / times[1]:9.2f}" if et == "f16" else ""
            print(f"{name:<22}{et:<6}{bare:10.4f}{ours:10.4f}{ours / bare:8.2f}{f16}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
