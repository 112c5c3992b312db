"""`irexec run` makes valid values for Parameters that feed the movement ops' shape, axes, index
and pad inputs (their value domains), so a model whose steering tensors are inputs runs."""

import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder
from irexec.runtime.inputs import make_inputs


def model():
    b = ModelBuilder()
    x = b.parameter("x", "f32", [2, 3, 4])
    p = b.parameter
    b.result(b.op("Reshape", x, p("shape", "i64", [2]), special_zero=False, name="reshape"))
    b.result(b.op("Transpose", x, p("order", "i32", [3]), name="transpose"))
    b.result(b.op("Gather", x, p("indices", "i64", [5]), p("axis", "i64", []), version="opset8",
                  name="gather"))
    b.result(b.op("Unsqueeze", x, p("new_axes", "i64", [2]), name="unsqueeze"))
    b.result(b.op("Squeeze", b.op("Unsqueeze", x, b.constant(np.array([0]))),
                  p("squeeze_axes", "i64", [1]), name="squeeze"))
    pads = p("pads", "i64", [3])
    b.result(b.op("Pad", x, pads, pads, version="opset12", pad_mode="reflect", name="pad"))
    b.result(b.op("VariadicSplit", x, b.constant(np.array(1)), p("lengths", "i64", [1]),
                  outputs=1, name="split")[0])
    b.result(b.op("Tile", x, p("repeats", "i64", [3]), name="tile"))
    b.result(b.op("Slice", x, p("start", "i64", [2]), p("stop", "i64", [2]),
                  p("step", "i64", [2]), p("slice_axes", "i64", [2]), version="opset8",
                  name="slice"))
    b.result(b.op("Broadcast", x, p("target", "i64", [4]), version="opset3", name="broadcast"))
    b.result(b.op("GatherElements", x, p("elements", "i32", [2, 3, 4]), axis=1,
                  version="opset6", name="gather_elements"))
    return b.build()


@pytest.mark.parametrize("seed", range(4))
def test_made_inputs_run(seed):
    m = model()
    inputs = make_inputs(m, {}, seed)
    assert set(inputs) == {n.name for n in m.parameters}
    out = irexec.compile_model(m)(inputs)
    assert out["reshape"].size == 24 and out["tile"].ndim == 3
    assert out["broadcast"].shape == (1, 2, 3, 4)
