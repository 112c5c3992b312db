"""Helpers for the data-movement tests: run one op through the public path with some inputs as
Constants and others as Parameters, and expect a diagnostic code at read time or at run time.

References in the tests are numpy expressions written from the specifications, never irexec code.
"""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec.ir import element_type as et_table
from irexec.builder import ModelBuilder


class Param:
    """An input given as a Parameter (its values arrive at run time), optionally with a partial
    shape other than the array's."""

    def __init__(self, value, shape=None, type_name: str | None = None):
        self.value = np.asarray(value) if not isinstance(value, np.ndarray) else value
        self.shape = list(self.value.shape) if shape is None else shape
        self.type_name = type_name


class Const:
    """An input given as a Constant of an explicit element type (u3/u6/nf4 codes, i4 ...)."""

    def __init__(self, value, type_name: str):
        self.value = value
        self.type_name = type_name


def _et(array: np.ndarray, type_name: str | None):
    return et_table.from_name(type_name) if type_name else et_table.from_dtype(array.dtype)


def build(op_type: str, inputs, version: str, outputs: int | None = None, **attrs):
    """A model of one layer named ``y``; ``inputs``: arrays (Constants), Const or Param. Returns
    (model builder, feeds)."""
    b = ModelBuilder(op_type.lower())
    ports, feeds = [], {}
    for i, x in enumerate(inputs):
        if isinstance(x, Param):
            ports.append(b.parameter(f"in{i}", _et(x.value, x.type_name), x.shape))
            feeds[f"in{i}"] = x.value
        elif isinstance(x, Const):
            ports.append(b.constant(x.value, x.type_name))
        else:
            ports.append(b.constant(np.asarray(x)))
    y = b.op(op_type, *ports, version=version, name="y", outputs=outputs, **attrs)
    for i, port in enumerate(y if isinstance(y, tuple) else (y,)):
        b.result(port, f"out{i}")
    return b, feeds


def run(op_type: str, *inputs, version: str = "opset16", outputs: int | None = None, **attrs):
    """The op's output (a tuple for several) for these inputs."""
    b, feeds = build(op_type, inputs, version, outputs, **attrs)
    result = list(irexec.compile_model(b.build())(feeds).values())
    return tuple(result) if len(result) > 1 or outputs else result[0]


def shape_of(op_type: str, *inputs, version: str = "opset16", outputs: int | None = None,
             **attrs):
    """The partial shape inference gives the layer's (first) output."""
    b, _ = build(op_type, inputs, version, outputs, **attrs)
    model = b.build()
    layer = next(n for n in model.nodes if n.name == "y")
    shapes = [p.partial_shape for p in layer.outputs]
    return shapes if outputs else shapes[0]


def read_error(op_type: str, *inputs, version: str = "opset16", outputs: int | None = None,
               **attrs) -> irexec.IRError:
    """The IRError building (reading) the model raises."""
    b, _ = build(op_type, inputs, version, outputs, **attrs)
    with pytest.raises(irexec.IRError) as info:
        b.build()
    return info.value


def run_error(op_type: str, *inputs, version: str = "opset16", outputs: int | None = None,
              **attrs) -> irexec.IRError:
    """The IRError the call raises (the model reads cleanly)."""
    b, feeds = build(op_type, inputs, version, outputs, **attrs)
    compiled = irexec.compile_model(b.build())
    with pytest.raises(irexec.IRError) as info:
        compiled(feeds)
    return info.value


def same_error_both_ways(op_type: str, const_inputs, param_inputs, code: str, *,
                         version: str = "opset16", outputs: int | None = None, **attrs) -> str:
    """The bad value gives ``code`` with the same message when it is a Constant (at read time)
    and when it arrives at run time. Returns the message."""
    at_read = read_error(op_type, *const_inputs, version=version, outputs=outputs, **attrs)
    at_run = run_error(op_type, *param_inputs, version=version, outputs=outputs, **attrs)
    assert [d.code for d in at_read.diagnostics] == [code], [str(d) for d in at_read.diagnostics]
    assert at_run.code == code, str(at_run)
    assert at_read.diagnostics[0].message == at_run.diagnostics[0].message
    return at_run.diagnostics[0].message
