"""Make example inputs for a model from a seed, valid for the ops that read them.

Each Parameter's consumers say, through their op specs' value domains, what values make sense:
axis numbers within the data's rank, a mask with one entry per axis, sequence lengths in
[1, dim], per-fibre lengths in [0, dim] shaped like the data with 1 at the axis. Parameters
whose every consumer takes any value are made first (dynamic dims get a small size); inference
with those concrete shapes then tells the others what they must fit.
"""

from __future__ import annotations

import math

import numpy as np

from irexec.errors import IRError
from irexec.infer import infer_types
from irexec.ir import element_type as et_table
from irexec.ir.element_type import ElementType, plain_values
from irexec.kernels.convert import convert
from irexec.runtime import budget
from irexec.ir.model import Model, Node
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.spec import (AnyValues, AxisIndices, AxisMask, FibreLengths, SequenceLengths,
                             resolve)
from irexec.validate.diagnostic import Diagnostics

PREFERRED_SIZE = 3  # what a dynamic dim becomes when the model does not pin it
MAX_GENERATED = 2**27  # elements; a larger input must be given, not made up
MAX_GENERATED_STRINGS = 2**16  # each string is a Python object, made one at a time


# Layers that hand their input's values on unchanged (for the small integers generated here):
# OpenVINO's converter puts a Convert between an i64 Parameter and a layer reading i32 lengths.
PASS_VALUES = frozenset({"Convert"})


def _domain(param: Node, port_of=None):
    """The first specific value domain among the Parameter's consumers, with that consumer
    (looking through a Convert to the layers that read its output). Depth first with a stack
    of its own: a chain of 10,000 Converts must not meet Python's recursion limit."""
    stack = [iter((port_of or param.outputs[0]).consumers)]
    while stack:
        port = next(stack[-1], None)
        if port is None:
            stack.pop()
            continue
        consumer = port.node
        if consumer.type in PASS_VALUES and consumer.outputs:
            stack.append(iter(consumer.outputs[0].consumers))
            continue
        if consumer.op is None or port.index >= len(consumer.op.spec.inputs):
            continue
        domain = resolve(consumer.op.spec.inputs[port.index].domain, consumer.attrs)
        if domain is not None and not isinstance(domain, AnyValues):
            return domain, consumer
    return AnyValues(), None


def _concrete(shape: PartialShape) -> tuple[int, ...]:
    if not shape.rank_is_static:
        return (PREFERRED_SIZE, PREFERRED_SIZE)
    sizes = []
    for d in shape:
        hi = d.max if d.max is not None else max(d.min, PREFERRED_SIZE)
        sizes.append(min(max(d.min, PREFERRED_SIZE), hi))
    return tuple(sizes)


def random_values(et: ElementType, shape, rng: np.random.Generator) -> np.ndarray:
    """Values of any kind for a tensor: small integers, floats in [-10, 10), random booleans,
    complex numbers with both parts in [-10, 10), strings of 0 to 5 lower-case letters."""
    if et.kind == "string":
        sizes = rng.integers(0, 6, size=shape)
        letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
        out = np.empty(sizes.shape, dtype=object)
        out.reshape(-1)[:] = ["".join(rng.choice(letters, size=n)) for n in sizes.reshape(-1)]
        return out
    if et.kind == "complex":
        real, imag = rng.uniform(-10, 10, size=shape), rng.uniform(-10, 10, size=shape)
        return (real + 1j * imag).astype(et.dtype)
    if et.kind == "boolean":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if et.is_narrow and et.kind != "float":  # u1 .. u6, i4: any value; nf4: any code
        codes = rng.integers(0, et.max_code + 1, size=shape).astype(np.uint8)
        return et_table.from_codes(et, codes)
    if et.name == "f8e8m0":  # powers of two only, none negative
        return convert(rng.uniform(1 / 16, 16, size=shape).astype(np.float32), et)
    if et.is_narrow or et.name.startswith("f8"):  # f8e4m3, f8e5m2, f4e2m1: every value near 0
        return convert(rng.uniform(-6, 6, size=shape).astype(np.float32), et)
    if et.is_integral:
        info = np.iinfo(et.dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100) + 1, size=shape,
                            dtype=np.int64).astype(et.dtype)
    return rng.uniform(-10, 10, size=shape).astype(et.dtype)


def _fail(param: Node, message: str) -> IRError:
    return IRError.make("IR602", f"cannot make a value for input '{param.name}': {message}; "
                                 f"give it with --input {param.name}=FILE.npy", param.location)


def _dependent_value(param: Node, domain, consumer: Node, shapes: dict, rng) -> np.ndarray:
    et = param.attrs["element_type"]
    declared = param.attrs["shape"]
    data_port = consumer.inputs[domain.of].source
    data = shapes.get(data_port)
    if data is None or not data.shape.is_static:
        raise _fail(param, f"the shape of {consumer.type} '{consumer.name}' input {domain.of} is "
                           f"not known")
    data_shape = data.shape.to_shape()
    rank = len(data_shape)
    if isinstance(domain, AxisMask):
        values = rng.integers(0, 2, size=rank).astype(np.bool_)
    elif isinstance(domain, AxisIndices):
        count = _concrete(declared)[0] if declared.rank_is_static and len(declared) == 1 else 1
        if rank == 0 and count:
            raise _fail(param, "a scalar has no axes to name")
        low = 0 if et.kind == "uint" else -rank  # unsigned axes cannot be negative
        values = rng.integers(low, rank, size=count) if rank else np.zeros(0, np.int64)
    elif isinstance(domain, SequenceLengths):
        attrs = consumer.attrs
        b, s = attrs[domain.batch_axis] % rank, attrs[domain.seq_axis] % rank
        top = data_shape[s]
        low = min(domain.low, top)
        values = rng.integers(low, top + 1, size=data_shape[b])
    elif isinstance(domain, FibreLengths):
        axis = consumer.attrs[domain.axis_attr]
        if not 0 <= axis < rank:
            raise _fail(param, f"{consumer.type} '{consumer.name}' has axis {axis}, outside "
                               f"data of rank {rank}")
        shape = [1 if d == axis else n for d, n in enumerate(data_shape)]
        top = data_shape[axis]
        values = rng.integers(min(domain.low, top), top + 1, size=shape)
    else:
        raise _fail(param, f"no generator for {type(domain).__name__}")
    values = np.asarray(values)
    if et.is_narrow and et.kind != "float":  # i4, u1 .. u6: clipped to the type's range, an
        # axis or length stays valid (nearer 0, the same sign)
        low = -(1 << (et.bits - 1)) if et.kind == "int" else 0
        values = convert(np.clip(values.astype(np.int64), low, et.max_code >> (et.kind == "int")),
                         et)
    elif et.is_real and et.bits <= 8:  # f8, f4: lengths they cannot hold exactly become 1
        exact = np.trunc(plain_values(convert(values.astype(np.float32), et))) == values
        values = convert(np.where(exact, values, np.minimum(values, 1)).astype(np.float32), et)
    else:
        values = convert(values, et) if et.is_supported else values.astype(np.int64)
    if not declared.contains(values.shape):
        raise _fail(param, f"a valid value has shape {list(values.shape)} but the Parameter "
                           f"declares {declared}")
    return values


def _pinned_shape(param: Node, pending) -> PartialShape:
    """The Parameter's shape, narrowed by what the static shape of an input made from it must
    match: a seq_lengths of length n fixes the batch dim to n, a mask of length n the rank,
    per-fibre lengths every dim but the axis."""
    shape = param.attrs["shape"]
    for dependent, domain, consumer in pending:
        declared = dependent.attrs["shape"]
        if (isinstance(domain, FibreLengths) and declared.rank_is_static
                and consumer.inputs[domain.of].source is param.outputs[0]):
            axis = consumer.attrs[domain.axis_attr]
            if axis < len(declared):
                wanted = declared.replace(axis, shape[axis] if shape.rank_is_static
                                          and len(shape) == len(declared)
                                          else Dimension.dynamic())
                shape = shape.merge(wanted) or shape
            continue
        if (consumer.inputs[domain.of].source is not param.outputs[0]
                or not (declared.rank_is_static and len(declared) == 1 and declared[0].is_static)):
            continue
        n = declared[0].min
        if isinstance(domain, AxisMask) and not shape.rank_is_static:
            shape = PartialShape([Dimension.dynamic()] * n)
        elif isinstance(domain, SequenceLengths) and shape.rank_is_static:
            b = consumer.attrs[domain.batch_axis]
            merged = shape[b].merge(Dimension.static(n)) if -len(shape) <= b < len(shape) else None
            if merged is not None:
                shape = shape.replace(b % len(shape), merged)
    return shape


def make_inputs(model: Model, given: dict[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
    """Values for every Parameter not in ``given`` (keyed by layer name)."""
    rng = np.random.default_rng(seed)
    made: dict[str, np.ndarray] = {}
    free, pending = [], []
    for param in model.parameters:
        if param.name in given:
            continue
        domain, consumer = _domain(param)
        if consumer is None:
            free.append(param)
        else:
            pending.append((param, domain, consumer))
    for param in free:
        et = param.attrs["element_type"]
        if not et.is_supported:
            raise _fail(param, f"its element type is {et}")
        shape = _concrete(_pinned_shape(param, pending))
        limit = MAX_GENERATED_STRINGS if et.kind == "string" else MAX_GENERATED
        if math.prod(shape) > limit:
            raise _fail(param, f"its shape {list(shape)} holds {math.prod(shape)} elements, more "
                               f"than the {limit} irexec generates"
                               f"{' for a string input' if et.kind == 'string' else ''}")
        budget.check_shape(shape, et.dtype.itemsize, f"input '{param.name}'", param.location)
        made[param.name] = random_values(et, shape, rng)
    if pending:
        known = {**given, **made}
        overrides = {name: PartialShape(np.shape(v)) for name, v in known.items()}
        shapes = infer_types(model, Diagnostics(), overrides, check_declared=False)
        for param, domain, consumer in pending:
            made[param.name] = _dependent_value(param, domain, consumer, shapes, rng)
    return made
