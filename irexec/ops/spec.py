"""How an operation is described: its spec as data, its shape inference and its kernel.

An op is a class with three members:

* ``spec``   -- an :class:`OpSpec`: attributes (type, default, allowed values), inputs (element-type
  rule, rank rule, value domain) and outputs. The reader, the validator, the docs, the random-input
  generator and the generic checks in :mod:`irexec.infer` all read this one description.
* ``infer(ctx)`` -- given the inputs' element types and partial shapes (and constant values where
  known), return each output's :class:`TensorType`, or report problems through ``ctx``.
* ``kernel(*arrays, **attrs)`` -- numpy in, numpy out. Attributes arrive parsed, as keywords.
  A kernel reports bad run-time values by raising :class:`irexec.errors.OpError`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from irexec.ir.element_type import ElementType
from irexec.ir.shape import PartialShape

REQUIRED = type("REQUIRED", (), {"__repr__": lambda self: "REQUIRED"})()

# Attribute kinds the IR text can hold; io/ir_text.py parses and formats each one.
ATTR_KINDS = ("int", "uint", "bool", "string", "enum", "element_type", "shape", "partial_shape",
              "string_list")


@dataclass(frozen=True)
class Attr:
    name: str
    kind: str
    default: Any = REQUIRED
    values: tuple[str, ...] | None = None  # allowed values of an enum (lower case)
    doc: str = ""
    dynamic_ok: bool = False  # an element_type attribute that may be "dynamic"

    def __post_init__(self):
        if self.kind not in ATTR_KINDS:
            raise ValueError(f"unknown attribute kind {self.kind!r}")

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def coerce(self, value):
        """The attribute's value in its one in-memory form; ValueError saying what is wrong.
        Both the IR reader (after parsing the text) and the Python builder go through here."""
        return _COERCE[self.kind](self, value)


def _int(attr, value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{value!r} is not an integer")
    return int(value)


def _uint(attr, value):
    value = _int(attr, value)
    if value < 0:
        raise ValueError(f"{value} is negative; a non-negative integer is needed")
    return value


def _bool(attr, value):
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{value!r} is not a boolean")
    return bool(value)


def _string(attr, value):
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a string")
    return value


def _enum(attr, value):
    lowered = _string(attr, value).strip().lower()  # OpenVINO reads enums case-insensitively
    if attr.values is not None and lowered not in attr.values:
        raise ValueError(f"'{value}' is not one of: {', '.join(attr.values)}")
    return lowered


def _element_type(attr, value):
    from irexec.ir import element_type as table

    if isinstance(value, ElementType):
        return value
    return table.parse_name(_string(attr, value))


def _shape(attr, value):
    dims = tuple(_uint(attr, d) for d in value)
    return dims


def _partial_shape(attr, value):
    return value if isinstance(value, PartialShape) else PartialShape(value)


def _string_list(attr, value):
    if isinstance(value, str):
        raise ValueError(f"{value!r} is one string; a list of names is needed")
    return tuple(_string(attr, v) for v in value)


_COERCE = {"int": _int, "uint": _uint, "bool": _bool, "string": _string, "enum": _enum,
           "element_type": _element_type, "shape": _shape, "partial_shape": _partial_shape,
           "string_list": _string_list}


# --- element-type rules -----------------------------------------------------------------------

@dataclass(frozen=True)
class Types:
    """Which element types an input accepts: a named category."""

    # "numeric" is integers and floats: complex (numeric to ONNX) is left out, as irexec's
    # numeric kernels do not compute with it; "convertible" is what Convert/Cast compute with.
    category: str  # "any", "integer", "boolean", "numeric", "real", "convertible"
    _CHECKS: ClassVar[dict[str, Callable[[ElementType], bool]]] = {
        "any": lambda et: True,
        "integer": lambda et: et.is_integral,
        "boolean": lambda et: et.kind == "boolean",
        "numeric": lambda et: et.is_numeric,
        "real": lambda et: et.is_real,
        "convertible": lambda et: et.kind != "complex",
    }

    def allows(self, et: ElementType) -> bool:
        return et.is_dynamic or self._CHECKS[self.category](et)

    def describe(self) -> str:
        return {"any": "any type", "integer": "an integer type", "boolean": "boolean",
                "numeric": "a numeric type (not boolean)", "real": "a floating-point type",
                "convertible": "any type but complex64 and complex128"}[
            self.category]


@dataclass(frozen=True)
class ByAttr:
    """A rule that depends on an attribute's value, e.g. Reverse's axes: integers when
    ``mode=index``, booleans when ``mode=mask``. Works for element-type rules and value domains."""

    attr: str
    choices: dict[str, Any]

    def describe(self) -> str:
        return "; ".join(f"{t.describe()} when {self.attr}={v}" for v, t in self.choices.items())


def resolve(rule, attrs: dict):
    """The rule that applies for these attribute values (``None`` if the attribute has no rule)."""
    if isinstance(rule, ByAttr):
        return rule.choices.get(attrs.get(rule.attr))
    return rule


@dataclass(frozen=True)
class TypeSet:
    """Which element types an input accepts: a list of IR names, e.g. DirectML's lengths
    ``TypeSet(("u32", "u64"))``."""

    names: tuple[str, ...]

    def allows(self, et: ElementType) -> bool:
        return et.is_dynamic or et.name in self.names

    def describe(self) -> str:
        return "one of " + ", ".join(self.names)


ANY = Types("any")
INTEGER = Types("integer")
BOOLEAN = Types("boolean")
NUMERIC = Types("numeric")
CONVERTIBLE = Types("convertible")


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


# --- value domains: what values an input may hold (drives random inputs and value checks) -----

@dataclass(frozen=True)
class AnyValues:
    """Any value of the element type."""


@dataclass(frozen=True)
class AxisIndices:
    """Axis numbers of input ``of``: each in [-rank, rank-1]."""

    of: int = 0


@dataclass(frozen=True)
class AxisMask:
    """One boolean per axis of input ``of``."""

    of: int = 0


@dataclass(frozen=True)
class SequenceLengths:
    """One length per index along ``batch_axis`` of input ``of``, each in [low, dim(seq_axis)]."""

    of: int = 0
    batch_axis: str = "batch_axis"
    seq_axis: str = "seq_axis"
    low: int = 1


@dataclass(frozen=True)
class FibreLengths:
    """One length per fibre along ``axis_attr`` of input ``of``: the input's shape with 1 at that
    axis, each value in [low, dim(axis)]."""

    of: int = 0
    axis_attr: str = "axis"
    low: int = 0


@dataclass(frozen=True)
class Input:
    name: str
    types: Types | ByAttr = ANY
    rank: Rank | None = None
    domain: Any = AnyValues()
    optional: bool = False
    doc: str = ""


@dataclass(frozen=True)
class Output:
    name: str
    doc: str = ""


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

    def attr(self, name: str) -> Attr:
        for a in self.attrs:
            if a.name == name:
                return a
        raise KeyError(name)

    @functools.cached_property
    def min_inputs(self) -> int:
        return sum(1 for i in self.inputs if not i.optional)

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
    """Base class of registered operations. Subclass it, set ``spec``, write ``infer``/``kernel``."""

    spec: ClassVar[OpSpec]
    # kernel(*arrays, **attrs) -> array | tuple of arrays; None for Parameter/Constant/Result.
    kernel: ClassVar[Callable[..., np.ndarray] | None] = None
    # Optional: the same computation written over the first input, which it returns. The run
    # loop calls it instead of ``kernel`` only when that input dies at this layer and nothing
    # else can see it (a writeable C-contiguous array of numbers of at least 64 KiB); the op's
    # output must have the first input's shape and element type.
    kernel_in_place: ClassVar[Callable[..., np.ndarray] | None] = None

    @staticmethod
    def infer(ctx) -> list[TensorType]:
        """Default: one output with the first input's type and shape."""
        return [ctx.input_type(0)]
