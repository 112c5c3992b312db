"""Run one IR file in irexec and in OpenVINO's CPU plugin and compare the outputs bit for bit.

OpenVINO is only a test oracle. The CPU plugin is compiled with ``INFERENCE_PRECISION_HINT=f32``
so that machines whose CPU prefers bf16 do not lower f32 layers (the default on AMX/AVX512-BF16
hosts is bf16); the ops under test are data movement and type conversion, which the hint does not
otherwise change.
"""

from __future__ import annotations

import numpy as np

import irexec
from irexec.cli.compare import from_openvino_tensor, openvino_tensor

OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"}


def bits(a: np.ndarray) -> np.ndarray:
    """The array's raw bits as unsigned integers of the same width (so NaN payloads and -0.0
    compare exactly); booleans stay booleans."""
    a = np.asarray(a)
    if a.dtype == np.bool_:
        return a
    return np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}")


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(bits(a), bits(b))


def run_irexec(xml, inputs: dict) -> dict[str, np.ndarray]:
    model = irexec.read_model(xml)
    return irexec.compile_model(model)(inputs)


def run_openvino(ov, xml, inputs: dict, names: list[str]) -> dict[str, np.ndarray]:
    """Outputs of OpenVINO's CPU plugin keyed by the names irexec uses: each irexec output name
    is looked up among the OpenVINO output's tensor names. Inputs are fed by Parameter friendly
    name."""
    core = ov.Core()
    model = core.read_model(str(xml))
    compiled = core.compile_model(model, "CPU", OV_CONFIG)
    by_friendly = {p.get_friendly_name(): i for i, p in enumerate(model.get_parameters())}
    feed = {}
    for name, value in inputs.items():
        feed[by_friendly.get(name, name)] = _ov_tensor(ov, value)  # friendly or tensor name
    request = compiled.create_infer_request()
    request.infer(feed)
    out = {}
    for name in names:
        matches = [o for o in compiled.outputs if name in o.get_names()]
        assert len(matches) == 1, (name, [o.get_names() for o in compiled.outputs])
        out[name] = from_openvino_tensor(ov, request.get_tensor(matches[0]))
    return out


def _ov_tensor(ov, value):
    """numpy -> what OpenVINO's infer takes, bit for bit for every element type (narrow types
    packed as OpenVINO holds them; see irexec.cli.compare)."""
    return openvino_tensor(ov, np.asarray(value))


def run_both(ov, xml, inputs: dict):
    ours = run_irexec(xml, inputs)
    theirs = run_openvino(ov, xml, inputs, list(ours))
    return ours, theirs
