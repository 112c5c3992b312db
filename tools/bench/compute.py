"""Benchmark irexec's compute kernels (MatMul, convolution, pooling, reduction, DFT, deformable
convolution) against numpy and OpenVINO's CPU plugin, as ratios measured in one run.

    python -m tools.bench compute [--runs N] [--case SUBSTRING]... [--no-openvino]

Every case is a one-layer IR model built with irexec's builder, saved to a temporary folder, read
back by ``irexec.read_model`` and run through ``irexec.compile_model``; OpenVINO reads the same
files (compiled with ``INFERENCE_PRECISION_HINT=f32``, an infer request with shared inputs and
outputs). Times are the best (or, with ``--median``, the median) of ``--runs`` calls after one
warm-up call; irexec and its references are timed alternately, so that the noise of a shared
machine falls on both, and the best of many calls is the figure least disturbed by it. MatMul is
compared with ``np.matmul`` on the same arrays (its target: at least 0.9x numpy's speed, i.e. a
time ratio of at most 1/0.9 = 1.11).
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


def _rng():
    return np.random.default_rng(0)


def matmul_case(sa, sb, layers=1):
    """A @ B; with ``layers`` > 1, that many MatMul layers of A, each with its own B, in one
    model, against as many np.matmul calls: the cost of a layer among others, without one
    call's fixed cost (checking inputs, setting up) falling on a single small product."""
    def build():
        a = _rng().standard_normal(sa, dtype=np.float32)
        m = ModelBuilder("matmul")
        x = m.parameter("a", "f32", list(sa))
        for i in range(layers):
            b = np.random.default_rng(i).standard_normal(sb, dtype=np.float32)
            m.result(m.op("MatMul", x, m.constant(b), name=f"y{i}"), f"out{i}")

        # numpy multiplies the very arrays irexec does: A, and each B as irexec holds it
        # (mapped from the .bin file), found in the compiled model's constants
        def reference(compiled):
            ws = list(compiled.plan.constants.values())
            return lambda: [np.matmul(a, w) for w in ws]
        return m.build(), {"a": a}, reference
    return build


def conv_case(shape, weights, op="Convolution", strides=(1, 1), pads=(1, 1)):
    def build():
        x = _rng().standard_normal(shape, dtype=np.float32)
        w = _rng().standard_normal(weights, dtype=np.float32)
        m = ModelBuilder("conv")
        y = m.op(op, m.parameter("x", "f32", list(shape)), m.constant(w), name="y",
                 strides=strides, pads_begin=pads, pads_end=pads, dilations=(1, 1))
        m.result(y, "out")
        return m.build(), {"x": x}, None
    return build


def pool_case(op, version, shape, **attrs):
    def build():
        x = _rng().standard_normal(shape, dtype=np.float32)
        m = ModelBuilder("pool")
        y = m.op(op, m.parameter("x", "f32", list(shape)), version=version, name="y", **attrs)
        m.result(y[0] if isinstance(y, tuple) else y, "out")
        return m.build(), {"x": x}, None
    return build


def interpolate_case(shape, size, mode, scales=None, **attrs):
    """Interpolate-11 of the two spatial axes to ``size`` (sizes mode), or by ``scales``
    (scales mode)."""
    def build():
        x = _rng().standard_normal(shape, dtype=np.float32)
        m = ModelBuilder("interpolate")
        defaults = dict(mode=mode, shape_calculation_mode="sizes",
                        coordinate_transformation_mode="half_pixel",
                        nearest_mode="round_prefer_floor", antialias=False,
                        pads_begin=(0, 0, 0, 0), pads_end=(0, 0, 0, 0), cube_coeff=-0.75)
        defaults.update(attrs)
        if scales is not None:
            defaults["shape_calculation_mode"] = "scales"
        values = np.array(size, np.int64) if scales is None else np.array(scales, np.float32)
        y = m.op("Interpolate", m.parameter("x", "f32", list(shape)),
                 m.constant(values), m.constant(np.array([2, 3], np.int64)),
                 version="opset11", name="y", **defaults)
        m.result(y, "out")
        return m.build(), {"x": x}, None
    return build


def reduce_case(shape, axes):
    def build():
        x = _rng().standard_normal(shape, dtype=np.float32)
        m = ModelBuilder("reduce")
        y = m.op("ReduceMean", m.parameter("x", "f32", list(shape)),
                 m.constant(np.array(axes, np.int64)), name="y", keep_dims=True)
        m.result(y, "out")
        return m.build(), {"x": x}, lambda: x.mean(axis=tuple(axes), keepdims=True)
    return build


def dft_case(shape, axes):
    def build():
        x = _rng().standard_normal(shape, dtype=np.float32)
        m = ModelBuilder("dft")
        y = m.op("DFT", m.parameter("x", "f32", list(shape)),
                 m.constant(np.array(axes, np.int64)), version="opset7", name="y")
        m.result(y, "out")
        z = np.ascontiguousarray(x[..., 0] + 1j * x[..., 1], dtype=np.complex64)
        return m.build(), {"x": x}, lambda: np.fft.fftn(z, axes=axes)
    return build


def deformable_case(shape, weights, deformable_group=1):
    def build():
        x = _rng().standard_normal(shape, dtype=np.float32)
        w = _rng().standard_normal(weights, dtype=np.float32)
        taps = weights[2] * weights[3]
        off = _rng().standard_normal((shape[0], 2 * deformable_group * taps) + shape[2:],
                                     dtype=np.float32)
        m = ModelBuilder("deformable")
        y = m.op("DeformableConvolution", m.parameter("x", "f32", list(shape)),
                 m.parameter("offsets", "f32", list(off.shape)), m.constant(w),
                 version="opset8", name="y", strides=(1, 1), pads_begin=(1, 1),
                 pads_end=(1, 1), dilations=(1, 1), deformable_group=deformable_group)
        m.result(y, "out")
        return m.build(), {"x": x, "offsets": off}, None
    return build


POOL3 = dict(kernel=(3, 3), strides=(2, 2), pads_begin=(1, 1), pads_end=(1, 1),
             rounding_type="floor", auto_pad="explicit")
CASES = {
    "MatMul [512,512]x[512,512]": matmul_case((512, 512), (512, 512)),
    "MatMul [8,128,768]x[768,768]": matmul_case((8, 128, 768), (768, 768)),
    "MatMul [1,768]x[768,3072]": matmul_case((1, 768), (768, 3072)),
    "MatMul [1,768]x[768,3072], 8 layers a call": matmul_case((1, 768), (768, 3072), 8),
    "Convolution 3x3 [1,64,56,56] 64->64": conv_case((1, 64, 56, 56), (64, 64, 3, 3)),
    "Convolution 3x3/2 [1,64,56,56] 64->128": conv_case((1, 64, 56, 56), (128, 64, 3, 3),
                                                        strides=(2, 2)),
    "Convolution 1x1 [1,256,56,56] 256->64": conv_case((1, 256, 56, 56), (64, 256, 1, 1),
                                                       pads=(0, 0)),
    "Convolution 7x7/2 [1,3,224,224] 3->64": conv_case((1, 3, 224, 224), (64, 3, 7, 7),
                                                       strides=(2, 2), pads=(3, 3)),
    "GroupConvolution depthwise 3x3 [1,64,56,56]": conv_case(
        (1, 64, 56, 56), (64, 1, 1, 3, 3), op="GroupConvolution"),
    "GroupConvolution depthwise 3x3/2 [1,96,112,112]": conv_case(
        (1, 96, 112, 112), (96, 1, 1, 3, 3), op="GroupConvolution", strides=(2, 2)),
    "MaxPool-14 3x3/2 [1,64,112,112] (values, indices)": pool_case(
        "MaxPool", "opset14", (1, 64, 112, 112), dilations=(1, 1), **POOL3),
    "MaxPool-1 3x3/2 [1,64,112,112]": pool_case("MaxPool", "opset1", (1, 64, 112, 112),
                                                **POOL3),
    "AvgPool-14 3x3/2 [1,64,112,112]": pool_case("AvgPool", "opset14", (1, 64, 112, 112),
                                                 **{"exclude-pad": False}, **POOL3),
    "AvgPool-14 2x2/2 [1,64,112,112]": pool_case(
        "AvgPool", "opset14", (1, 64, 112, 112), **{"exclude-pad": True},
        **dict(POOL3, kernel=(2, 2), pads_begin=(0, 0), pads_end=(0, 0))),
    "Interpolate nearest [1,64,112,112] -> 224x224": interpolate_case(
        (1, 64, 112, 112), (224, 224), "nearest"),
    "Interpolate linear_onnx [1,64,112,112] -> 224x224": interpolate_case(
        (1, 64, 112, 112), (224, 224), "linear_onnx"),
    "Interpolate cubic [1,64,112,112] -> 224x224": interpolate_case(
        (1, 64, 112, 112), (224, 224), "cubic"),
    "Interpolate linear [1,64,112,112] -> 224x224": interpolate_case(
        (1, 64, 112, 112), (224, 224), "linear"),
    "Interpolate linear antialias [1,64,112,112] -> 56x56": interpolate_case(
        (1, 64, 112, 112), (56, 56), "linear", antialias=True),
    "Interpolate nearest [1,64,112,112] scales 2x (asym floor)": interpolate_case(
        (1, 64, 112, 112), None, "nearest", scales=(2.0, 2.0),
        coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
    "Interpolate linear_onnx align_corners [1,64,112,112] -> 224": interpolate_case(
        (1, 64, 112, 112), (224, 224), "linear_onnx",
        coordinate_transformation_mode="align_corners"),
    "ReduceMean [1,512,28,28] axes 2,3": reduce_case((1, 512, 28, 28), [2, 3]),
    "DFT [4,256,256] axes 1,2 (complex)": dft_case((4, 256, 256, 2), [1, 2]),
    "DeformableConvolution 3x3 [1,64,28,28] 64->64": deformable_case((1, 64, 28, 28),
                                                                     (64, 64, 3, 3)),
}


def alternate(fns, runs: int, median: bool = False) -> list[float]:
    """Best (or median) time of each function, calling them in turn ``runs`` times after a
    warm-up, each run in a rotated order."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for r in range(runs):
        # each run starts from the next function, so that each follows every other equally
        # often: a function run right after another that shares its arrays finds them in the
        # cache, one run after OpenVINO (its own copy of the weights) does not
        for j in range(len(fns)):
            i = (r + j) % len(fns)
            t0 = time.perf_counter()
            fns[i]()
            times[i].append(time.perf_counter() - t0)
    return [statistics.median(t) if median else min(t) for t in times]


def openvino_call(xml, inputs, threads: int | None = None):
    import openvino as ov
    core = ov.Core()
    config = {"INFERENCE_PRECISION_HINT": "f32"}
    if threads:
        config["INFERENCE_NUM_THREADS"] = threads
    compiled = core.compile_model(core.read_model(str(xml)), "CPU", config)
    request = compiled.create_infer_request()
    feed = {i: v for i, v in enumerate(inputs.values())}
    return lambda: request.infer(feed, share_inputs=True, share_outputs=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--case", action="append", default=[])
    parser.add_argument("--no-openvino", action="store_true")
    parser.add_argument("--median", action="store_true", help="report medians, not the best")
    parser.add_argument("--openvino-threads", type=int, default=None,
                        help="OpenVINO's CPU threads (default: its own choice)")
    args = parser.parse_args(argv)
    try:
        import openvino  # noqa: F401
        have_ov = not args.no_openvino
    except ImportError:
        have_ov = False
    print(f"{'case':60} {'irexec ms':>10} {'numpy ms':>9} {'x numpy':>8} {'OpenVINO ms':>12} "
          f"{'x OpenVINO':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, build in CASES.items():
            if args.case and not any(c.lower() in name.lower() for c in args.case):
                continue
            model, inputs, reference = build()
            xml = os.path.join(tmp, "model.xml")
            irexec.save_model(model, xml)
            compiled = irexec.compile_model(irexec.read_model(xml))
            fns = [lambda: compiled(inputs)]
            if reference is not None and reference.__code__.co_argcount == 1:
                reference = reference(compiled)  # a reference on the compiled model's arrays
            if reference is not None:
                fns.append(reference)
            if have_ov:
                fns.append(openvino_call(xml, inputs, args.openvino_threads))
            times = alternate(fns, args.runs, args.median)
            ours = times[0]
            np_t = times[1] if reference is not None else None
            ov_t = times[-1] if have_ov else None
            print(f"{name:60} {ours * 1e3:10.2f} "
                  f"{'' if np_t is None else f'{np_t * 1e3:9.2f}':>9} "
                  f"{'' if np_t is None else f'{ours / np_t:8.2f}':>8} "
                  f"{'' if ov_t is None else f'{ov_t * 1e3:12.2f}':>12} "
                  f"{'' if ov_t is None else f'{ours / ov_t:10.2f}':>10}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
