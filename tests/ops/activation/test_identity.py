"""Identity-16: a copy of any input, OpenVINO."""

import numpy as np
import pytest

from tests.ops.build import run_op
from tests.ops.shapeops_oracle import check, openvino
from tests.ops.support import PLAIN_TYPE_NAMES, dtype_of, random_values


@pytest.mark.parametrize("type_name", PLAIN_TYPE_NAMES + ["string"])
def test_returns_a_copy_bit_for_bit(type_name):
    data = random_values(type_name, (3, 2), np.random.default_rng(0))
    (out,), model = run_op("Identity", data, version="opset16")
    assert out is not data and not np.shares_memory(out, data) if data.dtype != object else True
    assert out.dtype == data.dtype and out.tobytes() == data.tobytes() \
        if data.dtype != object else out.tolist() == data.tolist()
    assert model.outputs[0].partial_shape == [3, 2]
    assert dtype_of(type_name) == out.dtype or type_name == "string"


def test_openvino_conformance(tmp_path):
    openvino()
    import openvino.opset16 as o
    p = o.parameter([-1, 3], np.float32)
    q = o.parameter([2], np.int64)
    check(tmp_path, [o.identity(p).output(0), o.identity(q).output(0)], [p, q],
          [[np.random.default_rng(1).standard_normal((n, 3)).astype(np.float32),
            np.array([5, -7], np.int64)] for n in (1, 4)])
