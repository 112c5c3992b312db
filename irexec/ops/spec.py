"""How an operation is described: its spec as data, and its kernel.

An op is a class with two members that matter:

* ``spec``   -- an :class:`OpSpec`: attributes (kind, default, allowed values), inputs (element-type
  rule or type variable, rank rule, value domain, optional or variadic), outputs (element type,
  variable in number where the op is), and a shape rule. The reader, the validator, inference,
  the run-time checks of dynamic shapes, the docs, ``irexec ops`` and the random-input generator
  all read this one description.
* ``kernel(*arrays, **attrs)`` -- numpy in, numpy out (a tuple for several outputs); plain numpy,
  no checks: inputs reach it only after the spec's rules held for their shapes and values.

An op whose rules no shared shape rule expresses (value checks, warnings) overrides
``infer(ctx)``; see docs/extending.md.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from irexec.diagnostics.codes import Code
from irexec.ir.attrs import KINDS
from irexec.ir.element_type import ElementType
from irexec.ir.shape import PartialShape
from irexec.numerics import FAMILIES as NUMERIC_FAMILIES

REQUIRED = type("REQUIRED", (), {"__repr__": lambda self: "REQUIRED"})()


@dataclass(frozen=True)
class Attr:
    name: str
    kind: str  # a row of irexec.ir.attrs.KINDS
    default: Any = REQUIRED
    values: tuple[str, ...] | None = None  # allowed values of an enum (lower case)
    doc: str = ""
    dynamic_ok: bool = False  # an element_type attribute that may be "dynamic"
    on_layer: bool = False  # written on <layer>, not in <data> (Result's output_names)
    # Left out of a written IR while empty: an attribute OpenVINO cannot read when empty
    # (ROIPooling's output_size, which it reads, then indexes).
    omit_empty: bool = False

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown attribute kind {self.kind!r} (known: {', '.join(KINDS)})")

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def coerce(self, value):
        """The attribute's value in its one in-memory form; ValueError saying what is wrong.
        Both the IR reader (after parsing the text) and the Python builder go through here."""
        return KINDS[self.kind].coerce(self, value)

    def parse(self, text: str):
        """The value an IR text spells, checked (ValueError saying what is wrong)."""
        return self.coerce(KINDS[self.kind].parse(text))

    def format(self, value) -> str:
        """The IR text of a value (the inverse of ``parse``)."""
        return KINDS[self.kind].format(value)


# --- element-type rules -----------------------------------------------------------------------

_CATEGORIES: dict[str, tuple[Callable[[ElementType], bool], str]] = {
    "any": (lambda et: True, "any type"),
    "integer": (lambda et: et.is_integral, "an integer type"),
    "signed": (lambda et: et.kind == "int" or et.is_real, "a signed type (signed integer or "
                                                          "floating point)"),
    "boolean": (lambda et: et.kind == "boolean", "boolean"),
    "numeric": (lambda et: et.is_numeric, "a numeric type (not boolean)"),
    "real": (lambda et: et.is_real, "a floating-point type"),
    "integer_or_boolean": (lambda et: et.is_integral or et.kind == "boolean",
                           "an integer type or boolean"),
    "numeric_or_boolean": (lambda et: et.is_numeric or et.kind == "boolean",
                           "a numeric type or boolean"),
    "convertible": (lambda et: et.kind != "complex", "any type but complex64 and complex128"),
}


@dataclass(frozen=True)
class Types:
    """Which element types an input accepts: a named category (see ``_CATEGORIES``). "numeric"
    is integers and floats: complex (numeric to ONNX) is left out, as irexec's numeric kernels do
    not compute with it; "convertible" is what Convert/Cast compute with."""

    category: str

    def __post_init__(self):
        if self.category not in _CATEGORIES:
            raise ValueError(f"unknown type category {self.category!r}")

    def allows(self, et: ElementType) -> bool:
        return et.is_dynamic or _CATEGORIES[self.category][0](et)

    def describe(self) -> str:
        return _CATEGORIES[self.category][1]


@dataclass(frozen=True)
class TypeSet:
    """Which element types an input accepts: a list of IR names, e.g. ``TypeSet(("i32", "i64"))``."""

    names: tuple[str, ...]

    def allows(self, et: ElementType) -> bool:
        return et.is_dynamic or et.name in self.names

    def describe(self) -> str:
        return "one of " + ", ".join(self.names)


@dataclass(frozen=True)
class TypeVar:
    """A type variable: every input and output naming the same variable has one element type
    ("all T"), which must satisfy ``rule``. ``T = TypeVar("T", NUMERIC)``."""

    name: str
    rule: Types | TypeSet = Types("any")

    def allows(self, et: ElementType) -> bool:
        return self.rule.allows(et)

    def describe(self) -> str:
        return self.rule.describe()


@dataclass(frozen=True)
class ByAttr:
    """A rule that depends on an attribute's value, e.g. Reverse's axes: integers when
    ``mode=index``, booleans when ``mode=mask``. Works for element-type rules and value domains."""

    attr: str
    choices: dict[str, Any]

    def describe(self) -> str:
        return "; ".join(f"{t.describe()} when {self.attr}={v}" for v, t in self.choices.items())


UNKNOWN_BYTES = 1 << 62  # what an ``output_bytes`` bound gives where it cannot tell


def same_bytes(data, *_, **__) -> int:
    """``output_bytes`` of an op whose output holds the first input's elements in its type
    (Reshape, Squeeze, Unsqueeze)."""
    return data.nbytes


def resolve(rule, attrs: dict):
    """The rule that applies for these attribute values (``None`` if the attribute has no rule)."""
    if isinstance(rule, ByAttr):
        return rule.choices.get(attrs.get(rule.attr))
    return rule


ANY = Types("any")
INTEGER = Types("integer")
BOOLEAN = Types("boolean")
NUMERIC = Types("numeric")
REAL = Types("real")
CONVERTIBLE = Types("convertible")
SHAPE_INDEX = TypeSet(("i32", "i64"))  # axes, shapes and indices, as most OpenVINO ops take them


# --- rank rules -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rank:
    exact: int | None = None
    min: int | None = None
    max: int | None = None

    def allows(self, rank: int) -> bool:
        if self.exact is not None and rank != self.exact:
            return False
        return (self.min is None or rank >= self.min) and (self.max is None or rank <= self.max)

    def describe(self) -> str:
        if self.exact is not None:
            return f"rank {self.exact}"
        if self.max is not None:
            return f"rank {self.min or 0} to {self.max}"
        return f"rank >= {self.min}"


SCALAR = Rank(exact=0)
VECTOR = Rank(exact=1)
SCALAR_OR_VECTOR = Rank(max=1)


# --- ports --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Input:
    name: str
    types: Types | TypeSet | TypeVar | ByAttr = ANY
    rank: Rank | None = None
    domain: Any = None  # a value domain (irexec.ops.domains); None: any value
    optional: bool = False
    # Not None: this input repeats, at least ``variadic`` times (0 allowed); only the last may.
    variadic: int | None = None
    doc: str = ""


@dataclass(frozen=True)
class Output:
    name: str
    doc: str = ""
    # The element type: a TypeVar of the inputs, an IR type name ("boolean"), or the name of an
    # element_type attribute ("@destination_type"); None: the first input's (or the op's infer).
    type: TypeVar | str | None = None
    variadic: bool = False  # this output repeats (its count comes from the shape rule)


@dataclass(frozen=True)
class OpSpec:
    type: str
    since: int  # first version of its family (opsetN, irexecN) that holds this op version
    until: int | None = None  # last version that holds it; None = every later one
    attrs: tuple[Attr, ...] = ()
    inputs: tuple[Input, ...] = ()
    outputs: tuple[Output, ...] = ()
    aliases: tuple[str, ...] = ()  # other spellings of the type in IR files ("Const")
    doc: str = ""
    # The family of version names the op lives in: a layer says version="{family}N". "opset" is
    # OpenVINO's; "irexec" holds irexec's own ops (numbered on their own, from 1); "onnx" holds
    # ONNX's ai.onnx ops, numbered by ONNX's opset versions (since_version).
    family: str = "opset"
    # The shape rule: ctx -> one PartialShape per output (irexec.ops.rules holds the shared
    # ones); None: the op's own ``infer`` gives the outputs.
    shape: Callable | None = None
    # Diagnostic codes only this op raises; assembled into the one code table on registration.
    codes: tuple[Code, ...] = ()
    # Every output element is a copy of an input element (data movement): results must agree
    # bit for bit with any runtime, whatever the tolerances.
    exact: bool = False
    # How a float result is computed, which sets its tolerance (irexec/numerics.py: "exact",
    # "rounded", "transcendental" or "accumulating"); None: exact when ``exact``, else
    # accumulating, the loosest.
    numerics: str | None = None
    # Each float result is ONE correctly rounded IEEE operation (+, -, *, /, sqrt) of the
    # inputs: computed in f32, it is already what float64 rounded once gives (f32 holds more
    # than twice the significand bits of every narrower float, plus two, so rounding twice
    # cannot differ), and precise mode runs the default kernel (irexec/runtime/precise.py).
    one_rounding: bool = False
    # Hands its input's values on unchanged for small integers (so a generated input seen
    # through it keeps the domain its readers need): Convert.
    passes_values: bool = False
    # "parameter", "constant" or "result" for the IR's three infrastructure ops, "sink" for a
    # layer that runs for its effect though no Result needs it (Assign); None otherwise.
    role: str | None = None
    # "reads" or "writes" for the ops of a model's state (ReadValue, Assign): the graph check
    # pairs them by their ``variable_id`` attribute (IR208).
    variable: str | None = None
    # The sub-graphs the layer holds, by element name: ("body",) for TensorIterator and Loop,
    # ("then_body", "else_body") for If. Their kernels get them as ``bodies={name: run}``.
    bodies: tuple[str, ...] = ()
    # Inference may run the kernel on inputs whose values it knows (constant folding, at read
    # time for small tensors and when compiling for any): False for ops with state or chance.
    folds: bool = True
    # The kernel keeps something between the calls of a compiled model (RandomUniform's place in
    # its random stream): the plan hands it ``state=``, an irexec.kernels.state.LayerState of its
    # own per layer and compiled model.
    keeps_state: bool = False
    # The outputs depend on the inputs' shapes and element types only, never their values
    # (ShapeOf): what follows is shape arithmetic, run once per distinct input shape.
    reads_shapes_only: bool = False
    # The kernel's temporaries, where they can be larger than its outputs: ``scratch(node,
    # input_types, output_types)`` -> (bytes, what they are) or None, asked with static shapes
    # only; the memory rule (irexec/infer.py ``memory_problem``) holds them to the budget as it
    # holds every output.
    scratch: Callable | None = None

    # --- speed machinery: the plan reads these; an op computes the same without them ---------
    # ``in_place(*arrays, **attrs)``: the kernel's result written over its first input (an array
    # of the output's shape and element type). The run loop calls it only when that input dies at
    # the layer and Python's reference count proves nothing else can see it
    # (irexec/kernels/buffers.py); it must compute exactly what the kernel computes.
    in_place: Callable | None = None
    # The kernel's result may be a view of its first input (Reshape, Squeeze, Split ...): moving
    # no data is the fastest data movement. A view is never written through (a view keeps its base
    # referenced, so neither passes the reference-count proof while the other lives); the plan
    # hands the caller a copy where the first input is the caller's own or a constant.
    returns_view: bool = False
    # The kernel is ``data.reshape(dims)``, dims a function of data's shape and the other
    # inputs' values alone (Reshape, Squeeze, Unsqueeze): where those inputs are constants, a
    # call like one before reshapes to the dims the kernel found for that shape of data
    # (runtime/call_code.py).
    reshapes: bool = False
    # ``skip_unread(unread) -> kernel | None``: a kernel computing the outputs but those whose
    # indices are in the frozenset ``unread`` (None in their places), or None for that set; the
    # plan binds it where no layer reads those outputs (MaxPool's indices).
    skip_unread: Callable | None = None
    # ``(ufunc, kinds)``: the kernel is one call of the numpy ufunc when its arrays all have one
    # dtype of a type path in ``kinds`` (irexec/kernels/numeric.py's ``kind``); the loop fast
    # path (irexec/runtime/loop_code.py) calls the ufunc itself there, without the kernel's
    # dispatch on the element type (which costs more than the ufunc on a few floats).
    ufunc: tuple | None = None
    # ``output_bytes(*arrays, **attrs) -> int``: at least the bytes the outputs take for these
    # inputs, computed from their shapes and small values without the rules (a huge number
    # where it cannot tell). A call like one before (irexec/runtime/plan.py ``sized_check``)
    # guards the memory budget with it when a small integer input (a target shape) changes,
    # rather than running the layer's full check for every new value.
    output_bytes: Callable | None = None

    def __post_init__(self):
        if self.numerics is not None and self.numerics not in NUMERIC_FAMILIES:
            raise ValueError(f"{self.type}: unknown numeric family {self.numerics!r} "
                             f"(known: {', '.join(NUMERIC_FAMILIES)})")

    def attr(self, name: str) -> Attr:
        for a in self.attrs:
            if a.name == name:
                return a
        raise KeyError(name)

    @functools.cached_property
    def min_inputs(self) -> int:
        return sum(1 if i.variadic is None else i.variadic for i in self.inputs
                   if not i.optional)

    @functools.cached_property
    def max_inputs(self) -> int | None:
        return None if any(i.variadic is not None for i in self.inputs) else len(self.inputs)

    def input_rule(self, index: int) -> Input | None:
        """The Input that describes input port ``index`` (the variadic one repeats)."""
        if index < len(self.inputs):
            return self.inputs[index]
        if self.inputs and self.inputs[-1].variadic is not None:
            return self.inputs[-1]
        return None

    @property
    def opsets(self) -> str:
        first = f"{self.family}{self.since}"
        if self.until == self.since:
            return f"{first} only"
        if self.until is None:
            return f"{first} and later"
        return f"{first} to {self.family}{self.until}"


@dataclass(frozen=True)
class TensorType:
    """What inference knows about a tensor: its element type and partial shape."""

    element_type: ElementType
    shape: PartialShape


class Op:
    """Base class of registered operations. Subclass it, set ``spec`` and ``kernel``; override
    ``infer`` only for rules the spec cannot say (value checks, warnings, value-driven shapes)."""

    spec: ClassVar[OpSpec]
    # kernel(*arrays, **attrs) -> array | tuple of arrays; None for Parameter/Constant/Result.
    kernel: ClassVar[Callable[..., np.ndarray] | None] = None

    @staticmethod
    def infer(ctx) -> list[TensorType]:
        """Default: the spec's output types with the shapes of its shape rule (or, without a
        rule, the first input's shape)."""
        return ctx.default_outputs()

    # ``bounds(ctx) -> [(lower, upper) | None per output] | None``: the output values' bounds
    # from the inputs' (``ctx.input_bounds``), for ops whose bounds the generic rules of
    # irexec/ops/bounds.py do not give (ShapeOf of a partial shape, Range ...).
    bounds: ClassVar[Callable | None] = None

    # Hooks for the tools around the runtime (each optional):
    # ``to_openvino(builder, node, *inputs) -> output port(s)``: how `irexec convert` writes an
    # op of another family (ONNX) with OpenVINO's ops.
    to_openvino: ClassVar[Callable | None] = None
    # ``openvino_refuses(node) -> str | None``: why OpenVINO's CPU plugin cannot be used as an
    # oracle for this layer (it crashes or refuses), for `irexec compare`.
    openvino_refuses: ClassVar[Callable | None] = None


# --- declaring ops --------------------------------------------------------------------------------
# Op modules declare their ops here, not in the registry: the registry imports the op modules,
# so an op module importing the registry back would close an import circle. The registry hands
# in its own function when it is imported; ops declared before that wait in ``_DECLARED``.

_DECLARED: list[type[Op]] = []
_SINK: list[Callable[[type[Op]], object]] = []


def register(op: type[Op]) -> type[Op]:
    """Register an op class with the registry (usable as a decorator)."""
    if _SINK:
        _SINK[0](op)
    else:
        _DECLARED.append(op)
    return op

