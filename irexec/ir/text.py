"""The text forms IR files give to values: attribute kinds, shape strings, dims and tensor names.

Parsers raise ``ValueError`` with a sentence that says what was expected; the reader adds the file,
line and layer. Each ``format_*`` is the exact inverse used by the writer.
"""

from __future__ import annotations

from irexec.ir import element_type as et_table
from irexec.ir.element_type import ElementType
from irexec.ir.shape import Dimension, PartialShape

from irexec.ir.numbers import (  # noqa: F401  (the text forms of numbers, re-exported)
    _INT, _MAX_DIM, SPACE, is_uint, parse_int, parse_uint, short)
from irexec.ir.shape import (  # noqa: F401  (the text forms of shapes, re-exported)
    _strip_brackets, parse_dimension, parse_partial_shape)


def parse_bool(text: str) -> bool:
    lowered = text.strip(SPACE).lower()
    if lowered in ("true", "1"):
        return True
    if lowered in ("false", "0"):
        return False
    raise ValueError(f"'{text}' is not a boolean (true, false, 1 or 0)")


def ascii_name(text: str, what: str) -> str:
    """Names of types and enum values are ASCII: refuse the rest before a Unicode-aware
    lower() or strip() could turn one into another (the Kelvin sign lowers to k)."""
    if not text.isascii():
        raise ValueError(f"'{short(text)}' is not {what}: it holds characters that are not "
                         f"ASCII")
    return text


def parse_element_type(text: str) -> ElementType:
    return et_table.parse_name(ascii_name(text, "an element type name"))


def parse_precision(text: str) -> ElementType:
    try:
        return et_table.from_precision(ascii_name(text, "a precision"))
    except KeyError:
        raise ValueError(f"'{text}' is not a precision (such as FP32, f32, I64, BOOL)") from None


def parse_static_shape(text: str) -> tuple[int, ...]:
    t = _strip_brackets(text)
    if t == "":
        return ()
    dims = []
    for part in t.split(","):
        dim = parse_dimension(part)
        if not dim.is_static:
            raise ValueError(f"dimension '{part.strip(SPACE)}' is not a fixed size; a Const shape "
                             f"is static")
        dims.append(dim.min)
    return tuple(dims)


def parse_dim_element(text: str | None) -> Dimension:
    """The text of a port's ``<dim>``: a size, or -1 for a dynamic one."""
    t = text.strip(SPACE) if text else ""
    if t.isdigit() and t.isascii() and len(t) <= 18:  # plain digits below 2**63: the common case
        return Dimension.static(int(t))
    if not _INT.fullmatch(t) or int(t) < -1:
        raise ValueError(f"<dim> holds '{t}'; it must be a non-negative integer or -1")
    value = int(t)
    if value > _MAX_DIM:
        raise ValueError(f"<dim> holds '{t}', which is too large")
    return Dimension.dynamic() if value == -1 else Dimension.static(value)


def split_names(text: str) -> list[str]:
    """Tensor names: comma-separated, ``\\,`` is a comma inside a name; spaces are kept."""
    if "\\" not in text:
        return [n for n in text.split(",") if n != ""]
    names, current, i = [], [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and text[i + 1] == ",":
            current.append(",")
            i += 2
            continue
        if c == ",":
            names.append("".join(current))
            current = []
        else:
            current.append(c)
        i += 1
    names.append("".join(current))
    return [n for n in names if n != ""]


def join_names(names) -> str:
    return ",".join(n.replace(",", "\\,") for n in names)


def format_partial_shape(shape: PartialShape) -> str:
    if not shape.rank_is_static:
        return "..."
    return ",".join(str(d) for d in shape)
