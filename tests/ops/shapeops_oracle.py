"""Conformance helper for the shape, sort and generation op tests: build a model with OpenVINO's
Python API, save it as IR, run that file in irexec and in OpenVINO's CPU plugin (f32 precision
hint), and compare every output."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec.cli.compare import from_openvino_tensor, openvino_tensor
from tests.conformance.oracle import OV_CONFIG, same_bits


def openvino():
    return pytest.importorskip("openvino")


def check(tmp_path, outputs, parameters, feeds: list, *, exact=True, rtol=1e-5, atol=1e-6,
          name="model"):
    """Save ``ov.Model(outputs, parameters)``, then for each feed (a list of arrays in Parameter
    order) compare irexec's outputs with OpenVINO's: bit for bit when ``exact``, else within
    tolerance (integers always exactly). Returns irexec's outputs of the last feed."""
    ov = openvino()
    model = ov.Model(outputs, parameters, name)
    xml = tmp_path / f"{name}.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU", OV_CONFIG)
    ours_model = irexec.read_model(xml)
    assert [d for d in ours_model.diagnostics if d.severity == "error"] == []
    ours_compiled = irexec.compile_model(ours_model)
    names = [p.get_friendly_name() for p in model.get_parameters()]
    result = None
    request = compiled.create_infer_request()
    for feed in feeds:
        request.infer([openvino_tensor(ov, np.asarray(a)) for a in feed])
        ours = ours_compiled(dict(zip(names, feed)))
        assert len(ours) == len(compiled.outputs)
        for out, (key, mine) in zip(compiled.outputs, ours.items()):
            other = from_openvino_tensor(ov, request.get_tensor(out))
            mine = np.asarray(mine)
            assert mine.shape == other.shape, (key, mine.shape, other.shape, feed)
            if exact or mine.dtype.kind in "biu":
                assert same_bits(mine, other.astype(mine.dtype)) and mine.dtype == other.dtype, \
                    (key, mine, other, feed)
            else:
                np.testing.assert_allclose(mine.astype(np.float64), other.astype(np.float64),
                                           rtol=rtol, atol=atol)
        result = ours
    return result
