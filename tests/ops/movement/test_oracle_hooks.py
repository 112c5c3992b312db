"""`irexec compare` is told where OpenVINO's CPU plugin cannot serve as the oracle for a
movement layer (it crashes on, or corrupts, that data: docs/compatibility.md)."""

import numpy as np
import pytest

from tests.ops.movement.cases import Param, build


def layer(op_type, type_name, *rest, **attrs):
    from tests.ops.support import random_values

    x = random_values(type_name, (2, 4), np.random.default_rng(0))
    b, _ = build(op_type, [Param(x, type_name=type_name), *rest], "opset16",
                 attrs.pop("outputs", None), **attrs)
    model = b.build()
    node = next(n for n in model.nodes if n.name == "y")
    return node.op.openvino_refuses(node)


@pytest.mark.parametrize("type_name", ["u2", "nf4", "f4e2m1"])
def test_broken_types_are_refused(type_name):
    assert "crashes" in layer("Transpose", type_name, np.array([1, 0]))
    assert "crashes" in layer("Gather", type_name, np.array([0]), np.array(0))


def test_strings_refused_only_where_the_plugin_crashes():
    assert layer("Split", "string", np.array(1), outputs=2, num_splits=2)
    assert layer("Transpose", "string", np.array([1, 0])) is None
    assert layer("Transpose", "f32", np.array([1, 0])) is None
