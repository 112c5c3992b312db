"""One-layer models of every registered op on the tensors it accepts, for
tests/ops/test_every_op.py.

``cases(op)`` gives a fixed, seeded sample of cases per registration: the op's element types
(those its first input's rule allows, from ``TYPES``) crossed with the shapes that break kernels
(``SCENARIOS``: rank 0, an empty dimension, rank 0 broadcast against rank 3 both ways, and a
plain rank-3 tensor as the baseline). Inputs are Parameters; their values come from the run-time
input generator (irexec/runtime/inputs.py), which reads the op spec's value domains, so axes,
shapes and indices are valid for the data they go with. Attributes take their defaults, required
ones a value by kind (``_generic_attr``) unless ``ATTRS`` gives the op's own.

``run_case`` builds, compiles and runs a case and returns what happened: ``("refused", code)``
for a clean IRError at any stage, ``("ran", outputs, model)`` otherwise. Any other exception
propagates: that is the bug the test looks for.
"""

from __future__ import annotations

import dataclasses
import zlib

import numpy as np

import irexec
from irexec.builder import ModelBuilder
from irexec.errors import IRError
from irexec.ir import element_type as et_table
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.openvino_opsets import OPSETS
from irexec.ops.spec import ByAttr, TypeVar, resolve
from irexec.runtime.inputs import make_inputs

SEED = 20261129
# The element types tried, in order of preference: the first the op allows is always tried,
# then others by a seeded choice. Narrow types (i4, u1, f8 ...) and strings have their own tests.
TYPES = ["f32", "f16", "bf16", "f64", "i32", "i64", "i8", "u8", "boolean", "u16", "u64"]
TYPES_PER_OP = 2

# name -> (shape of input 0, shape of the other inputs that take any rank)
SCENARIOS = {
    "rank3": ([2, 3, 4], [2, 3, 4]),
    "rank0": ([], []),
    "empty": ([2, 0, 3], [2, 0, 3]),
    "rank0_vs_rank3": ([], [2, 3, 4]),
    "rank3_vs_rank0": ([2, 3, 4], []),
}

# Ops that a one-layer model of Parameters cannot hold: bodies, variables, the IR's own layers.
NOT_ONE_LAYER = {"TensorIterator", "Loop", "If", "ReadValue", "Assign"}


@dataclasses.dataclass
class Case:
    op: type
    scenario: str
    main_type: str
    attrs: dict
    inputs: list  # (element type name, PartialShape) per input port
    outputs: int | None  # for ops whose number of outputs varies
    constants: dict = dataclasses.field(default_factory=dict)  # input index -> value

    @property
    def id(self) -> str:
        s = self.op.spec
        return f"{s.type}-{s.family}{s.since}-{self.scenario}-{self.main_type}"


def _generic_attr(attr, rank: int):
    kind = attr.kind
    spatial = max(rank - 2, 1)
    if attr.values:
        return attr.values[0]
    return {
        "int": 1, "uint": 1, "float": 0.5, "bool": False, "string": "x",
        "element_type": "f32", "int_list": [0] * spatial, "uint_list": [1] * spatial,
        "float_list": [1.0], "bool_list": [False], "shape": [1],
        "partial_shape": PartialShape([1]),
    }.get(kind, None)


# Required attributes an op needs a real value of (the generic one is refused).
ATTRS = {
    "Einsum": lambda rank: {"equation": "...,...->..."},
    "Convert": lambda rank: {"destination_type": "f32"},
    "Cast": lambda rank: {"to": "f32"},
    "Clamp": lambda rank: {"min": -1.0, "max": 2.0},
    "Concat": lambda rank: {"axis": 0},
    "FakeConvert": lambda rank: {"destination_type": "f8e4m3"},
    "FakeQuantize": lambda rank: {"levels": 256},
    "DepthToSpace": lambda rank: {"mode": "blocks_first"},
    "SpaceToDepth": lambda rank: {"mode": "blocks_first"},
    "Pad": lambda rank: {"pad_mode": "constant"},
    "Reverse": lambda rank: {"mode": "index"},
    "TopK": lambda rank: {"axis": 0, "mode": "max", "sort": "value"},
    "Split": lambda rank: {"num_splits": 1},
    "StridedSlice": lambda rank: {"begin_mask": [0], "end_mask": [0]},
    "Reshape": lambda rank: {"special_zero": False},
    "OneHot": lambda rank: {"axis": -1},
    "GatherElements": lambda rank: {"axis": 0},
    "LRN": lambda rank: {"alpha": 1e-4, "beta": 0.75, "bias": 1.0, "size": 3},
    "MVN": lambda rank: {"normalize_variance": True, "eps": 1e-9, "eps_mode": "inside_sqrt"},
    "NormalizeL2": lambda rank: {"eps": 1e-9, "eps_mode": "add"},
    "Range": lambda rank: {"output_type": "f32"},
    "Eye": lambda rank: {"output_type": "f32"},
    "RandomUniform": lambda rank: {"output_type": "f32"},
    "Multinomial": lambda rank: {"convert_type": "i64", "with_replacement": True,
                                 "log_probs": False},
    "AvgPool": lambda rank: dict(_window(rank), **{"exclude-pad": False}),
    "MaxPool": lambda rank: _window(rank),
}


# Inputs an op needs shaped or valued its own way: type -> fn(scenario shapes) -> {index:
# ("shape", dims) | ("const", value)}. Values the generator cannot know (TopK's k) are
# Constants; shapes that must agree with the data (MatMul's inner dims) follow it.
def _inner(first, others):
    b = list(others)
    if len(b) >= 2:
        b[-2], b[-1] = (first[-1] if first else 1), b[-2]
    return {1: ("shape", b)}


def _complex(first, others):  # a last axis of 2 (real, imaginary)
    return {0: ("shape", list(first[:-1]) + [2] if first else [2])}


INPUTS = {
    "TopK": lambda f, o: {1: ("const", 1)},
    "MatMul": _inner,
    "DFT": _complex, "IDFT": _complex, "IRDFT": _complex,
    "Multinomial": lambda f, o: {1: ("const", 2)},
    "Eye": lambda f, o: {0: ("const", 3), 1: ("const", 2)},
    "Col2Im": lambda f, o: {1: ("const", [3, 3]), 2: ("const", [1, 2])},
    "STFT": lambda f, o: {2: ("const", 2), 3: ("const", 1)},
    "PriorBox": lambda f, o: {0: ("const", [2, 2]), 1: ("const", [8, 8])},
    "PriorBoxClustered": lambda f, o: {0: ("const", [2, 2]), 1: ("const", [8, 8])},
    "NMSRotated": lambda f, o: {2: ("const", 2), 3: ("const", 0.5), 4: ("const", 0.1)},
}


def _window(rank: int) -> dict:
    n = max(rank - 2, 1)
    return {"kernel": [1] * n, "strides": [1] * n, "pads_begin": [0] * n, "pads_end": [0] * n,
            "dilations": [1] * n}  # (the plugin needs dilations of pooling 8 and later)


def _rng(*key) -> np.random.Generator:
    return np.random.default_rng([SEED, zlib.crc32("/".join(map(str, key)).encode())])


def _allowed_types(rule, attrs) -> list[str]:
    rule = resolve(rule, attrs)
    if rule is None:
        return list(TYPES)
    return [t for t in TYPES if rule.allows(et_table.from_name(t))]


def _input_types(spec, count: int, main: str, attrs) -> list[str]:
    bound: dict[str, str] = {}
    chosen = []
    for i in range(count):
        rule = spec.input_rule(i)
        types = rule.types if rule is not None else None
        if isinstance(types, ByAttr):
            types = resolve(types, attrs)
        if isinstance(types, TypeVar):
            if types.name not in bound:
                ok = _allowed_types(types, attrs)
                bound[types.name] = main if main in ok else (ok[0] if ok else main)
            chosen.append(bound[types.name])
            continue
        ok = _allowed_types(types, attrs) if types is not None else list(TYPES)
        if i == 0 or main in ok and not (rule and rule.domain is not None):
            chosen.append(main if main in ok else (ok[0] if ok else main))
        else:
            preferred = [t for t in ("i64", "i32") if t in ok]
            chosen.append((preferred or ok or [main])[0])
    return chosen


def _input_shape(rule, index: int, scenario: str) -> PartialShape:
    first, others = SCENARIOS[scenario]
    dims = list(first if index == 0 else others)
    rank = rule.rank if rule is not None else None
    if rule is not None and rule.domain is not None and index > 0:
        # values made to fit the data: one value as a scalar where the rule allows it, else a
        # dynamic length the generator chooses
        if rank is not None and rank.allows(0):
            return PartialShape([])
        return PartialShape([Dimension.dynamic()]) if rank is None or rank.allows(1) \
            else PartialShape.dynamic()
    if rank is not None and not rank.allows(len(dims)):
        target = rank.exact if rank.exact is not None else (
            rank.min if rank.min is not None and len(dims) < rank.min else rank.max)
        dims = ([2] * max(target - len(dims), 0) + dims)[-target:] if target else []
    return PartialShape(dims)


def cases(op) -> list[Case]:
    """The sample of cases of one registration (empty for ops no one-layer model holds)."""
    spec = op.spec
    if spec.role is not None or spec.bodies or spec.type in NOT_ONE_LAYER:
        return []
    count = spec.min_inputs + (1 if spec.max_inputs is None and spec.min_inputs < 2 else 0)
    count = max(count, 1) if spec.inputs else 0
    out = []
    for scenario in SCENARIOS:
        rank = len(SCENARIOS[scenario][0])
        attrs = {a.name: _generic_attr(a, rank) for a in spec.attrs if a.required}
        names = {a.name for a in spec.attrs}
        attrs.update({k: v for k, v in ATTRS.get(spec.type, lambda r: {})(rank).items()
                      if k in names})
        first_rule = spec.input_rule(0)
        allowed = _allowed_types(first_rule.types, attrs) if first_rule is not None else TYPES
        if not allowed:
            continue
        rng = _rng(spec.type, spec.family, spec.since, scenario)
        picks = [allowed[0]] + list(rng.choice(allowed[1:], size=min(TYPES_PER_OP - 1,
                                                                      len(allowed) - 1),
                                               replace=False))
        for main in picks:
            types = _input_types(spec, count, str(main), attrs)
            shapes = [_input_shape(spec.input_rule(i), i, scenario) for i in range(count)]
            constants = {}
            special = INPUTS.get(spec.type)
            for i, (how, value) in (special(*SCENARIOS[scenario]) if special else {}).items():
                if i >= count:
                    continue
                if how == "shape":
                    shapes[i] = PartialShape(value)
                else:
                    constants[i] = value
            variadic_out = any(o.variadic for o in spec.outputs)
            out.append(Case(op, scenario, str(main), dict(attrs), list(zip(types, shapes)),
                            1 if variadic_out else None, constants))
    return out


def version(spec) -> str:
    """The first version name that the registration serves (OpenVINO's opsets do not all hold
    every op from its registration's ``since``: LSTMSequence-1 is in opset5's predecessors only
    as an internal op)."""
    if spec.family == "opset":
        last = spec.until or max(OPSETS)
        for n in range(spec.since, last + 1):
            if any(t.lower() == spec.type.lower() for t in OPSETS.get(n, ())):
                return f"opset{n}"
    return f"{spec.family}{spec.since}"


def build(case: Case):
    b = ModelBuilder(case.id)
    ports = []
    for i, (t, shape) in enumerate(case.inputs):
        value = case.constants.get(i)
        ports.append(b.parameter(f"in{i}", t, shape) if value is None
                     else b.constant(np.asarray(value, dtype=et_table.from_name(t).dtype)))
    spec = case.op.spec
    out = b.op(spec.type, *ports, version=version(spec), outputs=case.outputs, name="layer",
               **case.attrs)
    for i, port in enumerate(out if isinstance(out, tuple) else (out,)):
        port.names = [f"out{i}"]  # one tensor name per output (the builder gives the layer's)
        b.result(port, f"out{i}")
    return b.build()


def run_case(case: Case, precise: bool = False):
    """("refused", codes) or ("ran", outputs, model, inputs)."""
    try:
        model = build(case)
        inputs = make_inputs(model, {}, SEED)
        compiled = irexec.compile_model(model)
        outputs = list(compiled(inputs).values())
        if precise:
            exact = irexec.compile_model(model, config={"precision": "f64"})
            outputs = (outputs, list(exact(inputs).values()))
    except IRError as e:
        return ("refused", [d.code for d in e.diagnostics])
    return ("ran", outputs, model, inputs)


def magnitude(inputs) -> float:
    """A bound on the terms an accumulating op adds (the inputs are in [-10, 10))."""
    floats = [np.abs(v.astype(np.float64)) for v in inputs.values()
              if np.asarray(v).dtype.kind == "f" or str(np.asarray(v).dtype) == "bfloat16"]
    if not floats:
        return 1.0
    total = sum(float(f.sum()) for f in floats) + 1
    top = max((float(f.max()) for f in floats if f.size), default=0.0) + 1
    return total * top
