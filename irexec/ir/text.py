"""The text forms IR files give to values: attribute kinds, shape strings, dims and tensor names.

Parsers raise ``ValueError`` with a sentence that says what was expected; the reader adds the file,
line and layer. Each ``format_*`` is the exact inverse used by the writer.
"""

from __future__ import annotations

import re

from irexec.ir import element_type as et_table
from irexec.ir.element_type import ElementType
from irexec.ir.shape import Dimension, PartialShape

# Numbers in IR text are ASCII, as OpenVINO reads them: Python's \d, \s, int() and str.strip()
# would also take a fullwidth "\uff14" for 4, or an ideographic space around it.
SPACE = " \t\n\r\f\v"
_INT = re.compile(r"[ \t\n\r\f\v]*[-+]?[0-9]{1,20}[ \t\n\r\f\v]*")  # 20 digits: any 64-bit value
_MAX_DIM = 2**63 - 1


def parse_int(text: str) -> int:
    if text.isdigit() and text.isascii() and len(text) <= 19:  # plain digits: the common case
        return int(text)
    if not _INT.fullmatch(text):
        raise ValueError(f"'{short(text)}' is not an integer (of at most 20 digits)")
    value = int(text)
    if not -2**63 <= value < 2**64:
        raise ValueError(f"'{short(text)}' does not fit in 64 bits")
    return value


def short(text: str, limit: int = 40) -> str:
    """Echo user text in messages without flooding them."""
    return text if len(text) <= limit else text[:limit] + "..."


def is_uint(text: str) -> bool:
    if text.isdigit() and text.isascii() and len(text) <= 20:
        return True
    return bool(_INT.fullmatch(text)) and int(text) >= 0


def parse_uint(text: str) -> int:
    value = parse_int(text)
    if value < 0:
        raise ValueError(f"'{text}' is negative; a non-negative integer is needed")
    return value


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


def _strip_brackets(text: str) -> str:
    text = text.strip(SPACE)
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1].strip(SPACE)
    return text


def parse_dimension(text: str) -> Dimension:
    t = text.strip(SPACE)
    if t == "":
        raise ValueError("a dimension is empty (two commas in a row, or one at an end?)")
    if t in ("?", "-1"):
        return Dimension.dynamic()
    if ".." in t:
        lo_text, hi_text = t.split("..", 1)
        try:
            lo = parse_uint(lo_text) if lo_text.strip(SPACE) else 0
            hi = parse_uint(hi_text) if hi_text.strip(SPACE) else None
        except ValueError as e:
            raise ValueError(f"interval '{t}': {e}") from None
        if hi is not None and hi < lo:
            raise ValueError(f"interval '{t}' has its upper bound below its lower bound")
        return Dimension(lo, hi)
    if not _INT.fullmatch(t):
        raise ValueError(f"'{t}' is not a dimension (a size, ?, -1, or an interval like 2..10)")
    value = int(t)
    if value < 0:
        raise ValueError(f"dimension '{t}' is negative; use -1 or ? for a dynamic size")
    if value > _MAX_DIM:
        raise ValueError(f"dimension '{t}' is too large")
    return Dimension.static(value)


def parse_partial_shape(text: str) -> PartialShape:
    """``1,3,224,224``; ``?``/``-1`` dynamic; ``2..10``, ``..8``, ``3..`` intervals; ``...`` a
    dynamic rank; empty for a scalar. Brackets and spaces around are tolerated."""
    t = _strip_brackets(text)
    if t == "...":
        return PartialShape.dynamic()
    if t == "":
        return PartialShape([])
    return PartialShape([parse_dimension(part) for part in t.split(",")])


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
