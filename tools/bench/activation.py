"""Benchmark the activations and precise mode (issue 16's speed targets).

    python -m tools.bench activation [--quick] [--runs N]

* Each element-wise activation on a 64 MiB f32 tensor, run through irexec (a one-layer model,
  read from IR), as a ratio to the bare numpy expression of the same function on the same array
  (target: at most 1.2x); and its f16 time as a ratio to its f32 time on the same element count
  (target: at most 2x).
* Precise mode (``config={"precision": "f64"}``) against the default mode on a small CNN-like
  chain of float layers (target: at most 3x).

Times are medians of ``--runs`` calls after one warm-up call, each case measured in the same run
as its reference. ``--quick`` uses 1 MiB tensors (CI keeps the script working; quick timings mean
nothing). Results of a full run are kept in docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import irexec  # noqa: E402
from irexec.builder import ModelBuilder  # noqa: E402

# name -> (type, version, attrs, the bare numpy expression)
CASES = {
    "Relu": ("Relu", "opset1", {}, lambda x: np.maximum(x, 0)),
    "Sigmoid": ("Sigmoid", "opset1", {}, lambda x: 1 / (1 + np.exp(-x))),
    "HSigmoid": ("HSigmoid", "opset5", {}, lambda x: np.minimum(np.maximum(x + 3, 0), 6) / 6),
    "HSwish": ("HSwish", "opset4", {}, lambda x: x * np.minimum(np.maximum(x + 3, 0), 6) / 6),
    "SoftPlus": ("SoftPlus", "opset4", {}, lambda x: np.logaddexp(x, 0)),
    "SoftSign": ("SoftSign", "opset9", {}, lambda x: x / (1 + np.abs(x))),
    "Mish": ("Mish", "opset4", {}, lambda x: x * np.tanh(np.logaddexp(x, 0))),
    "Elu": ("Elu", "opset1", {"alpha": 1.0}, lambda x: np.where(x < 0, np.expm1(x), x)),
    "Clamp": ("Clamp", "opset1", {"min": -1.0, "max": 1.0}, lambda x: np.clip(x, -1.0, 1.0)),
    "Gelu tanh": ("Gelu", "opset7", {"approximation_mode": "tanh"},
                  lambda x: 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))),
    "Swish": ("Swish", "opset4", {}, lambda x: x / (1 + np.exp(-x))),
}


def median_time(fn, runs: int) -> float:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _one_layer(op, version, attrs, type_name, n, tmp):
    b = ModelBuilder()
    b.result(b.op(op, b.parameter("x", type_name, [n]), version=version, name="y", **attrs))
    path = os.path.join(tmp, f"{op}_{type_name}.xml")
    irexec.save_model(b.build(), path)
    return irexec.compile_model(irexec.read_model(path))


def activation_rows(nbytes: int, runs: int, tmp: str, only=()) -> list[tuple]:
    n = nbytes // 4
    x32 = np.random.default_rng(0).normal(size=n).astype(np.float32)
    x16 = x32.astype(np.float16)
    rows = []
    for name, (op, version, attrs, bare) in CASES.items():
        if only and not any(c.lower() in name.lower() for c in only):
            continue
        f32 = _one_layer(op, version, attrs, "f32", n, tmp)
        f16 = _one_layer(op, version, attrs, "f16", n, tmp)
        t_ir = median_time(lambda: f32({"x": x32}), runs)
        with np.errstate(all="ignore"):
            t_np = median_time(lambda: bare(x32), runs)
        t_16 = median_time(lambda: f16({"x": x16}), runs)
        rows.append((name, t_ir, t_np, t_16))
    return rows


def cnn_chain(shape):
    """A CNN-like chain of float layers (until convolutions land): per block PRelu, HSwish,
    Softmax over channels, Clamp, Gelu and Sigmoid."""
    rng = np.random.default_rng(1)
    b = ModelBuilder("cnn_like")
    y = b.parameter("x", "f32", list(shape))
    for _ in range(3):
        y = b.op("PRelu", y, b.constant(rng.uniform(0, 0.3, shape[1]).astype(np.float32)))
        y = b.op("HSwish", y, version="opset4")
        y = b.op("Softmax", y, version="opset8", axis=1)
        y = b.op("Clamp", y, min=0.0, max=0.5)
        y = b.op("Gelu", y, version="opset7")
        y = b.op("Sigmoid", y)
    b.result(y, "y")
    return b.build()


def precise_ratio(shape, runs: int) -> tuple[float, float]:
    model = cnn_chain(shape)
    x = np.random.default_rng(2).normal(size=shape).astype(np.float32)
    default = irexec.compile_model(model)
    precise = irexec.compile_model(model, config={"precision": "f64"})
    return (median_time(lambda: default({"x": x}), runs),
            median_time(lambda: precise({"x": x}), runs))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--runs", type=int, default=None)
    p.add_argument("--case", action="append", default=[],
                   help="only the activations whose name holds this (repeatable); no precise "
                        "mode")
    args = p.parse_args(argv)
    runs = args.runs or (2 if args.quick else 7)
    nbytes = (1 << 20) if args.quick else (64 << 20)
    with tempfile.TemporaryDirectory() as tmp:
        rows = activation_rows(nbytes, runs, tmp, args.case)
    print(f"activations on {nbytes >> 20} MiB of f32 (median of {runs}):")
    print(f"  {'op':<10} {'irexec ms':>10} {'numpy ms':>9} {'ratio':>6} {'f16/f32':>8}")
    for name, t_ir, t_np, t_16 in rows:
        print(f"  {name:<10} {t_ir * 1e3:>10.1f} {t_np * 1e3:>9.1f} {t_ir / t_np:>6.2f} "
              f"{t_16 / t_ir:>8.2f}")
    if args.case:
        return 0
    shape = (1, 16, 32, 32) if args.quick else (8, 64, 56, 56)
    t_default, t_precise = precise_ratio(shape, runs)
    print(f"precise mode on a CNN-like chain of 18 layers {list(shape)}: default "
          f"{t_default * 1e3:.1f} ms, precise {t_precise * 1e3:.1f} ms, "
          f"ratio {t_precise / t_default:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
