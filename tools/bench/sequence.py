"""Benchmark sub-graphs and recurrent ops against OpenVINO's CPU plugin (issue 19's targets), as
ratios measured in one run.

    python -m tools.bench sequence [--runs N] [--case SUBSTRING]...

The models are built with OpenVINO's Python API (so OpenVINO must be installed: it is also the
reference), saved as IR into a temporary folder, and read by both. A Loop of 1,000 iterations over
a small body (two element-wise layers on [1, 16]) is reported per iteration; an LSTMSequence of
100 steps, hidden size 256, batch 8 (input size 128) as one call. irexec and OpenVINO (compiled
with ``INFERENCE_PRECISION_HINT=f32``; an infer request with shared inputs and outputs) are
called in turn and the best (``--median``: the median) of ``--runs`` calls is kept for each.
For the Loop, the last column is the floor Python sets: the body's two numpy ufuncs, written
into preallocated arrays, in a plain Python loop of as many iterations.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import irexec  # noqa: E402
from tools.bench.compute import alternate, openvino_call  # noqa: E402


def loop_model(iterations: int):
    import openvino as ov
    import openvino.opset8 as o8

    x = o8.parameter([1, 16], np.float32, name="x")
    bx = o8.parameter([1, 16], np.float32, name="bx")
    y = o8.add(o8.multiply(bx, o8.constant(np.float32(0.999))), o8.constant(np.float32(0.5)))
    body = ov.Model([o8.constant(True).output(0), y.output(0)], [bx], "body")
    loop = o8.loop(o8.constant(np.int64(iterations)), o8.constant(True))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 0])
    loop.set_merged_input(bx, x.output(0), y.output(0))
    out = loop.get_iter_value(y.output(0), -1)
    model = ov.Model([out], [x], "loop_bench")
    return model, {"x": np.random.default_rng(0).standard_normal((1, 16), dtype=np.float32)}


def loop_floor(iterations: int, inputs: dict):
    """What the Loop's body costs in plain numpy: its two ufunc calls (written into
    preallocated arrays) in a Python loop of as many iterations, no interpreter around them."""
    scale, shift = np.array(0.999, np.float32), np.array(0.5, np.float32)
    x = inputs["x"]
    t, y = np.empty_like(x), np.empty_like(x)
    multiply, add = np.multiply, np.add

    def run():
        a, b = x.copy(), y
        for _ in range(iterations):
            multiply(a, scale, out=t)
            add(t, shift, out=b)
            a, b = b, a
        return a

    return run


def lstm_model(steps: int, hidden: int, batch: int, inputs: int):
    import openvino as ov
    import openvino.opset5 as o5

    rng = np.random.default_rng(0)
    x = o5.parameter([batch, steps, inputs], np.float32, name="x")
    h0 = o5.parameter([batch, 1, hidden], np.float32, name="h0")
    c0 = o5.parameter([batch, 1, hidden], np.float32, name="c0")
    lengths = o5.constant(np.full(batch, steps, np.int32))
    scale = 1 / np.sqrt(hidden)
    w = o5.constant((rng.standard_normal((1, 4 * hidden, inputs)) * scale).astype(np.float32))
    r = o5.constant((rng.standard_normal((1, 4 * hidden, hidden)) * scale).astype(np.float32))
    b = o5.constant((rng.standard_normal((1, 4 * hidden)) * scale).astype(np.float32))
    seq = o5.lstm_sequence(x, h0, c0, lengths, w, r, b, hidden, "forward")
    model = ov.Model([seq.output(0)], [x, h0, c0], "lstm_bench")
    feed = {"x": rng.standard_normal((batch, steps, inputs), dtype=np.float32),
            "h0": np.zeros((batch, 1, hidden), np.float32),
            "c0": np.zeros((batch, 1, hidden), np.float32)}
    return model, feed


CASES = {  # name: (model and inputs, calls per figure, the plain numpy floor or None)
    "Loop, 1,000 iterations of a 2-layer body [1,16] (per iteration)": (
        lambda: loop_model(1000), 1000, lambda inputs: loop_floor(1000, inputs)),
    "LSTMSequence 100 steps, hidden 256, batch 8, input 128": (
        lambda: lstm_model(100, 256, 8, 128), 1, None),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--case", action="append", default=[])
    parser.add_argument("--median", action="store_true",
                        help="the median of the runs instead of the best")
    args = parser.parse_args(argv)
    import openvino as ov

    print(f"{'case':66} {'irexec µs':>11} {'OpenVINO µs':>12} {'x OpenVINO':>10} "
          f"{'numpy µs':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (build, per, floor) in CASES.items():
            if args.case and not any(c.lower() in name.lower() for c in args.case):
                continue
            model, inputs = build()
            xml = os.path.join(tmp, "model.xml")
            ov.save_model(model, xml, compress_to_fp16=False)
            compiled = irexec.compile_model(irexec.read_model(xml))
            ours_out = list(compiled(inputs).values())[0]
            theirs = openvino_call(xml, inputs)
            theirs_out = list(theirs().values())[0]
            np.testing.assert_allclose(ours_out, theirs_out, rtol=1e-3, atol=1e-4)
            fns = [lambda: compiled(inputs), theirs]
            if floor is not None:
                plain = floor(inputs)
                np.testing.assert_allclose(plain(), ours_out, rtol=1e-6)
                fns.append(plain)
            t_ours, t_ov, *t_floor = alternate(fns, args.runs, median=args.median)
            least = f"{t_floor[0] / per * 1e6:9.2f}" if t_floor else f"{'':9}"
            print(f"{name:66} {t_ours / per * 1e6:11.2f} {t_ov / per * 1e6:12.2f} "
                  f"{t_ours / t_ov:10.2f} {least}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
