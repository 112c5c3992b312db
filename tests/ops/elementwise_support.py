"""Helpers for the element-wise op tests: the tolerance for float results (set here, once), a
comparison that is bit-exact for integers and booleans, models built with irexec's builder, and
batched OpenVINO conformance models (many ops on the same inputs in one model)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

import irexec
from irexec.builder import ModelBuilder

# The ONE place the float tolerance of these tests lives (the lead may point it at the shared
# tolerance table later): rtol/atol for f32/f64, units in the last place for f16/bf16 (and the
# f8 types, computed through f32 and rounded once).
TOLERANCE = {
    "f32": {"rtol": 1e-6, "atol": 1e-6},
    "f64": {"rtol": 1e-6, "atol": 1e-6},
    "f16": {"ulps": 1},
    "bf16": {"ulps": 1},
    "f8e4m3": {"ulps": 1},
    "f8e5m2": {"ulps": 1},
}
# (mantissa bits, lowest normal exponent) for the ulp of the low-precision types
_FORMATS = {"f16": (10, -14), "bf16": (7, -126), "f8e4m3": (3, -6), "f8e5m2": (2, -14)}

FLOAT_TYPES = ["f32", "f64", "f16", "bf16"]
INT_TYPES = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
          "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
          "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "boolean": np.bool_,
          "f8e4m3": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2,
          "i4": ml_dtypes.int4, "u4": ml_dtypes.uint4}


def ulp(x: np.ndarray, type_name: str) -> np.ndarray:
    """The spacing of the type's values at |x| (x in float64)."""
    mantissa, low = _FORMATS[type_name]
    with np.errstate(divide="ignore"):
        e = np.floor(np.log2(np.abs(x)))
    e = np.where(np.isfinite(e), np.maximum(e, low), low)
    return np.exp2(e - mantissa)


def mismatches(actual, expected, type_name: str) -> np.ndarray:
    """A boolean mask of elements outside the tolerance (exact for integers and booleans; NaN
    must meet NaN, an infinity the same infinity)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if type_name not in TOLERANCE:
        assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
        return actual != expected
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    nan_a, nan_e = np.isnan(a), np.isnan(e)
    with np.errstate(invalid="ignore"):
        diff = np.abs(a - e)
        rule = TOLERANCE[type_name]
        if "ulps" in rule:
            allowed = rule["ulps"] * ulp(e, type_name)
        else:
            allowed = rule["atol"] + rule["rtol"] * np.abs(e)
        inf = np.isinf(a) | np.isinf(e)
        bad = np.where(inf, a != e, ~(diff <= allowed))
    return np.where(nan_a | nan_e, nan_a != nan_e, bad)


def assert_close(actual, expected, type_name: str, what: str = "") -> None:
    bad = mismatches(actual, expected, type_name)
    if bad.any():
        i = np.flatnonzero(bad.reshape(-1))
        raise AssertionError(f"{what}: {i.size} of {bad.size} elements differ ({type_name}); "
                             f"first at {i[:5].tolist()}: got "
                             f"{np.asarray(actual).reshape(-1)[i[:5]].tolist()}, expected "
                             f"{np.asarray(expected).reshape(-1)[i[:5]].tolist()}")


def run_op(type_name: str, *arrays, version: str | None = None, **attrs) -> np.ndarray:
    """One op over Parameters holding ``arrays``, run by irexec through the public path."""
    b = ModelBuilder()
    ports = []
    for i, a in enumerate(arrays):
        a = np.asarray(a)
        from irexec.ir import element_type as et_table
        ports.append(b.parameter(f"in{i}", et_table.from_dtype(a.dtype).name, list(a.shape)))
    b.result(b.op(type_name, *ports, version=version, name="op", **attrs), name="out")
    compiled = irexec.compile_model(b.build())
    (out,) = compiled({f"in{i}": np.asarray(a) for i, a in enumerate(arrays)}).values()
    return out


# --- OpenVINO --------------------------------------------------------------------------------

def ov_type(ov, type_name: str):
    return getattr(ov.Type, {"boolean": "boolean"}.get(type_name, type_name))


def ov_conformance(ov, tmp_path, inputs: dict, build, tag: str = "model"):
    """Build an OpenVINO model: Parameters named after ``inputs`` (name -> (type, array)),
    ``build(params) -> {output name: node}``; save it as IR (uncompressed), run it in irexec and
    OpenVINO's CPU plugin. Returns (irexec outputs, OpenVINO outputs) keyed by output name."""
    import openvino.opset16 as ops

    from tests.conformance.oracle import run_both

    params = {name: ops.parameter(list(np.shape(value)), ov_type(ov, t), name=name)
              for name, (t, value) in inputs.items()}
    outputs = build(params)
    results = []
    for name, node in outputs.items():
        node.output(0).get_tensor().set_names({name})
        results.append(ops.result(node))
    model = ov.Model(results, list(params.values()), tag)
    path = tmp_path / f"{tag}.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    return run_both(ov, path, {name: value for name, (t, value) in inputs.items()})
