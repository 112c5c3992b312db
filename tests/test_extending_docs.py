"""docs/extending.md's worked examples run as written and do what the text says."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import irexec
from irexec.ops import registry
from irexec.builder import ModelBuilder

DOC = Path(__file__).resolve().parents[1] / "docs" / "extending.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


@pytest.fixture(scope="module")
def hypot():
    namespace: dict = {}
    exec(compile(_blocks()[0], str(DOC), "exec"), namespace)  # registers Hypot (family mine)
    yield namespace["Hypot"]
    registry.unregister(namespace["Hypot"])  # other tests see only the built-in ops


def _model(a_type, a_shape, b_type, b_shape):
    b = ModelBuilder()
    a = b.parameter("a", a_type, a_shape)
    c = b.parameter("b", b_type, b_shape)
    b.result(b.op("Hypot", a, c, version="mine1", name="h"))
    return b.build()


def test_element_wise_example_infers_broadcasts_and_runs(hypot):
    model = _model("f32", [2, 1, 4], "f32", [3, 1])
    assert str(model.outputs[0].partial_shape) == "[2,3,4]"
    a = np.arange(8, dtype=np.float32).reshape(2, 1, 4)
    b = np.arange(3, dtype=np.float32).reshape(3, 1)
    out = irexec.compile_model(model)([a, b])["h"]
    np.testing.assert_array_equal(out, np.sqrt(a.astype(np.float64) ** 2 + b ** 2)
                                  .astype(np.float32))


def test_element_wise_example_errors_are_the_ones_the_doc_quotes(hypot):
    with pytest.raises(irexec.IRError) as info:
        _model("f32", [2], "f16", [2])
    assert info.value.code == "IR304"
    assert "input 1 (b) is f16 but input 0 (a) is f32; they must have the same element type" \
        in str(info.value)
    with pytest.raises(irexec.IRError) as info:
        _model("f32", [2, 3], "f32", [4])
    assert info.value.code == "IR307" and "[2,3]" in str(info.value) and "[4]" in str(info.value)


def test_element_wise_example_checks_dynamic_dims_per_call(hypot):
    compiled = irexec.compile_model(_model("f32", [-1], "f32", [-1]))
    with pytest.raises(irexec.IRError) as info:
        compiled([np.zeros(2, np.float32), np.zeros(3, np.float32)])
    assert info.value.code == "IR307"


def test_concat_example_is_the_shipped_op():
    shipped = (Path(irexec.__file__).parent / "ops" / "movement" / "concat.py").read_text()
    assert _blocks()[1].strip() in shipped
