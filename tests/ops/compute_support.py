"""Shared by the tests of the compute ops (matrix, convolution, pooling, reduction, normalization):
the tolerance of accumulated float results, and OpenVINO conformance on models built with
OpenVINO's own Python opset API.

The tolerance is :func:`accumulation_tolerance`, the one place these tests say how close a float
result must be: relative to the sum of the magnitudes of the terms that were added (``magnitude``,
computed by the test in float64 from absolute values), so that a sum of large terms that cancel is
not held to a relative error it cannot have. On top, a result rounded to a narrow type (f16,
bf16) may differ by one unit in the last place of that type.
"""

from __future__ import annotations

import numpy as np

import irexec
from irexec.ir.element_type import from_name

# Units of float32's epsilon allowed per unit of summed magnitude: BLAS and OpenVINO's kernels
# add in different orders and with FMA or not; the error of a sum of n terms is bounded by
# about n*eps*sum|terms| and is in practice a small multiple of eps*sum|terms|.
EPS_UNITS = 16


def accumulation_tolerance(dtype, magnitude) -> np.ndarray:
    """How far a result of ``dtype`` may be from another runtime's, per element, when it sums
    terms whose absolute values add up to ``magnitude``."""
    dtype = np.dtype(dtype)
    magnitude = np.abs(np.asarray(magnitude, dtype=np.float64))
    if dtype.kind in "iub":
        return np.zeros_like(magnitude)
    compute_eps = np.finfo(np.float64).eps if dtype == np.float64 else np.finfo(np.float32).eps
    tol = EPS_UNITS * compute_eps * magnitude
    if dtype not in (np.float32, np.float64):  # rounded once to a narrow type: one ulp of it
        eps_out = float(np.finfo(dtype).eps) if dtype == np.float16 else 2.0 ** -7
        tiny = float(np.finfo(dtype).smallest_subnormal) if dtype == np.float16 else 2.0 ** -133
        tol = tol + eps_out * magnitude + tiny
    return tol


def assert_close(actual, expected, magnitude, what: str = "") -> None:
    """``actual`` within :func:`accumulation_tolerance` of ``expected`` (same dtype and shape;
    integers exactly; NaN where the other is NaN)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, (what, actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (what, actual.shape, expected.shape)
    if actual.dtype.kind in "iub":
        bad = actual != expected
    else:
        a = actual.astype(np.float64)
        e = expected.astype(np.float64)
        tol = accumulation_tolerance(actual.dtype, np.broadcast_to(magnitude, a.shape))
        with np.errstate(invalid="ignore"):
            bad = ~((np.abs(a - e) <= tol) | (np.isnan(a) & np.isnan(e)) | (a == e))
    if bad.any():
        i = np.flatnonzero(bad.reshape(-1))[:5]
        mag = np.broadcast_to(magnitude, actual.shape).reshape(-1)[i]
        triples = list(zip(actual.reshape(-1)[i].tolist(), expected.reshape(-1)[i].tolist(),
                           np.asarray(mag).tolist()))
        raise AssertionError(f"{what}: {int(bad.sum())} of {bad.size} elements differ; first "
                             f"(actual, expected, magnitude): {triples}")


# --- OpenVINO conformance -------------------------------------------------------------------------

OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}


def openvino_and_irexec(ov, tmp_path, params: list, outputs: list, inputs: list,
                        name: str = "case") -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Save an OpenVINO model (``params``: its Parameters; ``outputs``: the output ports to
    compare) as IR with f32 weights kept exact, read the files with irexec and with OpenVINO, run
    both on ``inputs`` (one array per Parameter) and return (irexec's, OpenVINO's) outputs."""
    names = [f"out{i}" for i in range(len(outputs))]
    for port, n in zip(outputs, names):
        port.get_tensor().set_names({n})
    for i, p in enumerate(params):
        p.set_friendly_name(f"in{i}")
    model = ov.Model(outputs, params, name)
    xml = tmp_path / f"{name}.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    feed = {f"in{i}": a for i, a in enumerate(inputs)}
    ours = irexec.compile_model(irexec.read_model(xml))(feed)
    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU", OV_CONFIG)
    request = compiled.create_infer_request()
    request.infer({i: _ov_value(ov, a) for i, a in enumerate(inputs)})
    theirs = []
    for n in names:
        port = next(o for o in compiled.outputs if n in o.get_names())
        theirs.append(_from_ov(request.get_tensor(port)))
    return [ours[n] for n in names], theirs


def _ov_value(ov, a: np.ndarray):
    a = np.ascontiguousarray(a)
    if a.dtype == np.dtype(from_name("bf16").dtype):
        t = ov.Tensor(ov.Type.bf16, list(a.shape))
        t.data.view(np.uint16)[...] = a.view(np.uint16)
        return t
    return a


def _from_ov(tensor) -> np.ndarray:
    if str(tensor.element_type) == "<Type: 'bfloat16'>" or tensor.element_type.get_type_name() \
            == "bf16":
        return np.array(tensor.data).view(np.uint16).view(from_name("bf16").dtype).copy()
    return np.array(tensor.data).copy()


def ov_type(type_name: str):
    """The OpenVINO Python element type for an IR type name."""
    import openvino as ov
    return getattr(ov.Type, {"boolean": "boolean", "f16": "f16", "bf16": "bf16", "f32": "f32",
                             "f64": "f64"}.get(type_name, type_name))


# --- running one layer ----------------------------------------------------------------------------

def build_layer(op_type: str, *inputs, version: str | None = None, consts=(), shapes=None,
                types=None, **attrs):
    """A model of one layer: input i is a Constant of ``inputs[i]`` when i is in ``consts``,
    else a Parameter ``in{i}`` (partial shape ``shapes[i]`` when given, element type
    ``types[i]`` when given). Returns the model and the feed for its Parameters."""
    from irexec.ir import element_type as et_table
    from irexec.builder import ModelBuilder

    b = ModelBuilder(op_type.lower())
    ports, feed = [], {}
    for i, a in enumerate(inputs):
        a = np.asarray(a)
        et = types[i] if types and types[i] else et_table.from_dtype(a.dtype)
        if i in consts:
            ports.append(b.constant(a, et))
        else:
            shape = shapes[i] if shapes and shapes[i] is not None else list(a.shape)
            ports.append(b.parameter(f"in{i}", et, shape))
            feed[f"in{i}"] = a
    out = b.op(op_type, *ports, version=version, name="y", **attrs)
    for i, port in enumerate(out if isinstance(out, tuple) else (out,)):
        port.names[:] = [f"y{i}"]
        b.result(port, f"r{i}")
    return b.build(), feed


def run_layer(op_type: str, *inputs, version: str | None = None, consts=(), shapes=None,
              types=None, **attrs):
    """Run one layer (see ``build_layer``): its output, or a tuple of its outputs."""
    model, feed = build_layer(op_type, *inputs, version=version, consts=consts, shapes=shapes,
                              types=types, **attrs)
    out = irexec.compile_model(model)(feed)
    values = [out[f"y{i}"] for i in range(len(out))]
    return values[0] if len(values) == 1 else tuple(values)


def layer_error(op_type: str, *inputs, version: str | None = None, consts=(), shapes=None,
                **attrs):
    """The IRError building (or, failing that, running) one layer raises; AssertionError if
    it raises none."""
    try:
        run_layer(op_type, *inputs, version=version, consts=consts, shapes=shapes, **attrs)
    except irexec.IRError as e:
        return e
    raise AssertionError(f"{op_type} {attrs} raised no error")
