"""Axes and lengths given at run time (Parameters) are checked by the same rules, with the same
codes and messages, as when they are constants checked at read time."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

# (op, attributes, second input's element type, its bad value)
CASES = [
    ("Reverse", {"mode": "index"}, "i64", np.array([0, 3], np.int64)),
    ("Reverse", {"mode": "index"}, "i32", np.array([-4], np.int32)),
    ("Reverse", {"mode": "index"}, "u4", np.array([7], np.uint8)),
    ("Reverse", {"mode": "mask"}, "boolean", np.array([True, False])),
    ("ReverseSequence", {"batch_axis": 0, "seq_axis": 2}, "i32", np.array([5, 1], np.int32)),
    ("ReverseSequence", {"batch_axis": 0, "seq_axis": 2}, "f32", np.array([1, np.nan], np.float32)),
    ("ReverseSequence", {"batch_axis": 0, "seq_axis": 2}, "i64", np.array([1, -1], np.int64)),
    ("ReverseSequence", {"batch_axis": 1, "seq_axis": 0}, "i64", np.array([1, 2], np.int64)),
]


def _model(op, attrs, type_name, value, as_input):
    b = ModelBuilder("m")
    x = b.parameter("x", "f32", list(X.shape))
    if as_input:
        second = b.parameter("second", type_name, [-1])
    else:
        if type_name == "u4":
            import ml_dtypes
            value = value.astype(ml_dtypes.uint4)
        second = b.constant(value, type_name, name="second")
    b.result(b.op(op, x, second, name="layer", **attrs), "out")
    return b


def _diagnostic(error: irexec.IRError):
    assert len(error.diagnostics) == 1, [str(d) for d in error.diagnostics]
    d = error.diagnostics[0]
    return d.code, d.message, d.location.layer_name


@pytest.mark.parametrize("op, attrs, type_name, value", CASES,
                         ids=[f"{c[0]}-{c[2]}-{i}" for i, c in enumerate(CASES)])
def test_run_time_check_matches_read_time_check(op, attrs, type_name, value):
    with pytest.raises(irexec.IRError) as at_read:
        _model(op, attrs, type_name, value, as_input=False).build()
    compiled = irexec.compile_model(_model(op, attrs, type_name, value, as_input=True).build())
    if type_name == "u4":
        import ml_dtypes
        value = value.astype(ml_dtypes.uint4)
    with pytest.raises(irexec.IRError) as at_run:
        compiled({"x": X, "second": value})
    assert _diagnostic(at_run.value) == _diagnostic(at_read.value)
    assert _diagnostic(at_run.value)[0] != "IR605"
