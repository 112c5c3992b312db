"""Make example inputs for a model from a seed, valid for the ops that read them.

Each Parameter's consumers say, through their op specs' value domains (irexec/ops/domains.py),
what values make sense: axis numbers within the data's rank, a mask with one entry per axis,
sequence lengths in [1, dim] ... Parameters whose every consumer takes any value are made first
(dynamic dims get a small size); inference with those concrete shapes then tells the others what
they must fit; each domain makes its own values.

Each input's values come from a generator seeded by the seed and the input's name only, so the
same seed gives an input the same values whatever else the model holds (an ONNX model and its
`irexec convert` output get the same inputs).
"""

from __future__ import annotations

import math
import zlib

import numpy as np

from irexec.errors import IRError
from irexec.infer import infer_types
from irexec.ir import element_type as et_table
from irexec.ir.element_type import ElementType, plain_values
from irexec.kernels.convert import convert
from irexec import budget
from irexec.ir.model import Model, Node
from irexec.ir.shape import PartialShape
from irexec.ops.spec import resolve
from irexec.diagnostics.diagnostic import Diagnostics

PREFERRED_SIZE = 3  # what a dynamic dim becomes when the model does not pin it
MAX_GENERATED = 2**27  # elements; a larger input must be given, not made up
MAX_GENERATED_STRINGS = 2**16  # each string is a Python object, made one at a time



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
        if consumer.op is not None and consumer.op.spec.passes_values and consumer.outputs:
            stack.append(iter(consumer.outputs[0].consumers))
            continue
        if consumer.op is None or consumer.op.spec.input_rule(port.index) is None:
            continue
        domain = resolve(consumer.op.spec.input_rule(port.index).domain, consumer.attrs)
        if domain is not None:
            return domain, consumer
    return None, None


def _concrete(shape: PartialShape) -> tuple[int, ...]:
    """The shape a generated input takes: each dynamic dim PREFERRED_SIZE, within the dim's
    interval; a dynamic rank becomes [3, 3]. The same size for every dim (a batch too: which
    dim is the batch is not known, and a time-major sequence of 1 would test little), so
    inputs whose dims must agree (input_ids and attention_mask) agree; the command line says
    what it chose (cli/common.py)."""
    if not shape.rank_is_static:
        return (PREFERRED_SIZE, PREFERRED_SIZE)
    sizes = []
    for d in shape:
        hi = d.max if d.max is not None else max(d.min, PREFERRED_SIZE)
        sizes.append(min(max(d.min, PREFERRED_SIZE), hi))
    return tuple(sizes)


def filled_dims(model: Model, inputs: dict, given) -> list[tuple[str, str, list[int]]]:
    """(input name, declared shape, shape made) of each generated input whose declared shape
    is not static: the dims irexec chose, which the command line says."""
    made = []
    for param in model.parameters:
        declared = param.attrs.get("shape")
        if param.name in given or param.name not in inputs or declared is None:
            continue
        if not declared.is_static:
            shape = [int(n) for n in np.shape(inputs[param.name])]
            made.append((param.name, str(declared), shape))
    return made


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
    try:
        values = domain.generate(rng, data_shape, consumer.attrs, declared, et.kind == "uint")
    except ValueError as e:
        raise _fail(param, f"{consumer.type} '{consumer.name}': {e}") from None
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
        if consumer.inputs[domain.of].source is param.outputs[0]:
            shape = domain.pin(shape, dependent.attrs["shape"], consumer.attrs)
    return shape


def _rng(seed: int, param: Node) -> np.random.Generator:
    """The generator of one input: the seed and the input's name, nothing else."""
    return np.random.default_rng([seed, zlib.crc32(param.name.encode("utf-8", "surrogatepass"))])


def make_inputs(model: Model, given: dict[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
    """Values for every Parameter not in ``given`` (keyed by layer name)."""
    made: dict[str, np.ndarray] = {}
    free, pending = [], []
    for param in model.parameters:
        if param.name in given:
            continue
        domain, consumer = _domain(param)
        if consumer is None or domain.own_shape:
            free.append((param, domain, consumer))
        else:
            pending.append((param, domain, consumer))
    for param, domain, consumer in free:
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
        if domain is None:
            made[param.name] = random_values(et, shape, _rng(seed, param))
        else:  # a domain of the input's own shape (Multinomial's non-negative weights)
            values = domain.generate(_rng(seed, param), shape, consumer.attrs, PartialShape(shape),
                                     et.kind == "uint")
            made[param.name] = convert(np.asarray(values), et)
    if pending:
        known = {**given, **made}
        overrides = {name: PartialShape(np.shape(v)) for name, v in known.items()}
        shapes = infer_types(model, Diagnostics(), overrides, check_declared=False)
        for param, domain, consumer in pending:
            made[param.name] = _dependent_value(param, domain, consumer, shapes,
                                                _rng(seed, param))
    return made
