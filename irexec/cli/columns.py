"""Aligned text columns for the commands that print tables (info, compare)."""

from __future__ import annotations

from irexec.diagnostics import printable


def aligned(rows: list[tuple[str, ...]], indent: str = "  ") -> list[str]:
    """Each row as one line, its cells padded to the widest cell of their column; the last
    column is not padded (no trailing spaces)."""
    if not rows:
        return []
    rows = [tuple(map(printable.line, r)) for r in rows]  # a name is one line, whatever it holds
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return [indent + "  ".join([*(c.ljust(w) for c, w in zip(r, widths)), r[-1]]).rstrip()
            for r in rows]
