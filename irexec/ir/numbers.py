"""Integers as IR text writes them (dims, sizes, attribute values): ASCII only, at most 64 bits.

Parsers raise ``ValueError`` with a sentence that says what was expected. ``ir/text.py`` (the
attribute kinds) and ``ir/shape.py`` (the text of dims and shapes) both read numbers here.
"""

from __future__ import annotations

import re

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
