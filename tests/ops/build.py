"""Run one op built with ModelBuilder: arrays are Parameters, ``Const(array)`` are Constants."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import irexec
from irexec.builder import ModelBuilder
from irexec.ir.element_type import from_dtype


@dataclass
class Const:
    value: np.ndarray


def run_op(type_name, *inputs, version, shapes=None, **attrs):
    """(outputs in order, model). ``shapes`` gives Parameters' partial shapes by position."""
    b = ModelBuilder()
    ports, feed = [], {}
    for i, a in enumerate(inputs):
        if isinstance(a, Const):
            ports.append(b.constant(np.asarray(a.value)))
            continue
        a = np.asarray(a)
        shape = (shapes or {}).get(i, list(a.shape))
        ports.append(b.parameter(f"p{i}", from_dtype(a.dtype), shape))
        feed[f"p{i}"] = a
    out = b.op(type_name, *ports, version=version, **attrs)
    outs = out if isinstance(out, tuple) else (out,)
    for j, o in enumerate(outs):
        b.result(o, f"r{j}")
    model = b.build()
    results = irexec.compile_model(model)(feed)
    return list(results.values()), model
