"""The one table of attribute kinds: for each kind, how its IR text is parsed, how a Python value
is checked into its one in-memory form, and how that form is written back as IR text.

The reader calls ``parse`` then ``coerce``; the Python builder calls ``coerce``; the writer and
``irexec ops`` call ``format``; the docs print ``describe``. ``format(parse(text))`` spells the
same value (floats in the shortest text that reads back exactly: ``1e-05``, ``-inf``, ``nan``).

NOTE for developers: the kinds know their IR text because an attribute's kind *is* its text
form; keeping parse, check and format in one row is what stops them drifting apart.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from irexec.ir import element_type as et_table
from irexec.ir import text
from irexec.ir.element_type import ElementType
from irexec.ir.shape import PartialShape

_FLOAT = re.compile(r"\s*[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|inf|infinity|nan)\s*",
                    re.IGNORECASE | re.ASCII)


@dataclass(frozen=True)
class AttrKind:
    name: str
    parse: Callable[[str], Any]  # IR text -> Python value (ValueError saying what was expected)
    coerce: Callable[[Any, Any], Any]  # (attr, value) -> the in-memory form, or ValueError
    format: Callable[[Any], str]  # the in-memory form -> IR text
    describe: str  # for docs and `irexec ops`


# --- scalars -----------------------------------------------------------------------------------

def _int(attr, value) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{value!r} is not an integer")
    return int(value)


def _uint(attr, value) -> int:
    value = _int(attr, value)
    if value < 0:
        raise ValueError(f"{value} is negative; a non-negative integer is needed")
    return value


def _bool(attr, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{value!r} is not a boolean")
    return bool(value)


def _string(attr, value) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a string")
    return value


def _enum(attr, value) -> str:
    lowered = _string(attr, value).strip().lower()  # OpenVINO reads enums case-insensitively
    if attr.values is not None and lowered not in attr.values:
        raise ValueError(f"'{value}' is not one of: {', '.join(attr.values)}")
    return lowered


def parse_float(t: str) -> float:
    if not _FLOAT.fullmatch(t):
        raise ValueError(f"'{text.short(t)}' is not a number (such as 0.5, 1e-05, -inf or nan)")
    return float(t)


def _float(attr, value) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                    np.floating)):
        raise ValueError(f"{value!r} is not a number")
    return float(value)


def format_float(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(float(value))


def _element_type(attr, value) -> ElementType:
    if isinstance(value, ElementType):
        return value
    return et_table.parse_name(_string(attr, value))


# --- lists -------------------------------------------------------------------------------------

def _split(t: str) -> list[str]:
    """``1,2,3`` (spaces and brackets tolerated); empty text is an empty list."""
    t = t.strip(text.SPACE)  # ASCII spaces only, as for every number (irexec/ir/text.py)
    if t.startswith("[") and t.endswith("]"):
        t = t[1:-1]
    if t.strip(text.SPACE) == "":
        return []
    return t.split(",")


def _list_of(coerce_one):
    def coerce(attr, value):
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise ValueError(f"{value!r} is not a list")
        return tuple(coerce_one(attr, v) for v in value)
    return coerce


def _parse_list(parse_one):
    return lambda t: tuple(parse_one(part.strip(text.SPACE)) for part in _split(t))


def _format_list(format_one):
    return lambda values: ",".join(format_one(v) for v in values)


def _shape(attr, value) -> tuple[int, ...]:
    return tuple(_uint(attr, d) for d in value)


def _partial_shape(attr, value) -> PartialShape:
    return value if isinstance(value, PartialShape) else PartialShape(value)


def _string_list(attr, value) -> tuple[str, ...]:
    if isinstance(value, str):
        raise ValueError(f"{value!r} is one string; a list of names is needed")
    return tuple(_string(attr, v) for v in value)


KINDS: dict[str, AttrKind] = {k.name: k for k in (
    AttrKind("int", text.parse_int, _int, str, "an integer"),
    AttrKind("uint", text.parse_uint, _uint, str, "a non-negative integer"),
    AttrKind("bool", text.parse_bool, _bool, lambda v: "true" if v else "false",
             "true or false"),
    AttrKind("float", parse_float, _float, format_float, "a number (inf and nan allowed)"),
    AttrKind("string", lambda t: t, _string, str, "text"),
    AttrKind("enum", lambda t: text.ascii_name(t, "one of the listed words"), _enum, str,
             "one of the listed words"),
    AttrKind("element_type", text.parse_element_type, _element_type, lambda v: v.name,
             "an element type name (f32, i64 ...)"),
    AttrKind("int_list", _parse_list(text.parse_int), _list_of(_int), _format_list(str),
             "comma-separated integers, possibly none"),
    AttrKind("uint_list", _parse_list(text.parse_uint), _list_of(_uint), _format_list(str),
             "comma-separated non-negative integers, possibly none"),
    AttrKind("float_list", _parse_list(parse_float), _list_of(_float),
             _format_list(format_float), "comma-separated numbers, possibly none"),
    AttrKind("bool_list", _parse_list(text.parse_bool), _list_of(_bool),
             _format_list(lambda v: "true" if v else "false"),
             "comma-separated booleans, possibly none"),
    AttrKind("shape", text.parse_static_shape, _shape, _format_list(str),
             "a static shape: comma-separated sizes"),
    AttrKind("partial_shape", text.parse_partial_shape, _partial_shape,
             text.format_partial_shape, "a partial shape (?, intervals like 2..10, ... for any "
                                        "rank)"),
    AttrKind("string_list", lambda t: tuple(text.split_names(t)), _string_list, text.join_names,
             "comma-separated names (\\, inside a name)"),
)}
