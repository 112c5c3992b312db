"""Text: one line per problem in the form compilers use, so editors and terminals link to it.

    model.xml:17:5: IR306 axis-out-of-range: layer 'flip' (Reverse): axis 5 is out of range [-2, 1]
      help: axes lie in [-rank, rank-1]
    1 error, 0 warnings in 1 file

``:col`` is left out when the column is unknown, ``:line:col`` when the line is.
"""

from __future__ import annotations

from collections.abc import Sequence

from irexec.diagnostics import printable
from irexec.diagnostics.diagnostic import Diagnostic, FileDiagnostics, Location


def position(path: str, loc: Location) -> str:
    """``file``, ``file:line`` or ``file:line:col``."""
    where = loc.file or path
    if loc.line is not None:
        where += f":{loc.line}"
        if loc.column is not None:
            where += f":{loc.column}"
    return where


def layer_part(loc: Location) -> str:
    """``layer 'flip' (Reverse): `` or nothing: the layer in the IR's own terms, when known."""
    if loc.layer_name is not None:
        named = f"layer '{loc.layer_name}'"
    elif loc.layer_id is not None:
        named = f"layer id {loc.layer_id}"  # a layer without a usable name still has an id
    else:
        return ""
    return f"{named} ({loc.layer_type}): " if loc.layer_type else f"{named}: "


def format_diagnostic(path: str, d: Diagnostic) -> list[str]:
    info = d.info
    head = f"{position(path, d.location)}: {d.code} {info.name}: "
    lines = [printable.line(head + layer_part(d.location) + d.message)]  # one line, always
    if info.help:
        lines.append(f"  help: {info.help}")
    return lines


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary(results: Sequence[FileDiagnostics]) -> str:
    diags = [d for _, ds in results for d in ds]
    errors = sum(d.is_error for d in diags)
    return (f"{plural(errors, 'error')}, {plural(len(diags) - errors, 'warning')} "
            f"in {plural(len(results), 'file')}")


def render(results: Sequence[FileDiagnostics]) -> str:
    lines = [line for path, diags in results for d in diags for line in format_diagnostic(path, d)]
    lines.append(summary(results))
    return "\n".join(lines) + "\n"
