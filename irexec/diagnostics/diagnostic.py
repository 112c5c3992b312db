"""One problem found in a model or its inputs: what, where, and how to fix it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from irexec.diagnostics import codes, printable


@dataclass(frozen=True)
class Location:
    """Where a problem sits: the file, its XML line, and the layer when there is one."""

    file: str | None = None
    line: int | None = None
    layer_name: str | None = None
    layer_type: str | None = None
    layer_id: str | None = None
    column: int | None = None  # 1-based, of the element's "<" on its line


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    location: Location = field(default_factory=Location)

    @property
    def info(self) -> codes.Code:
        return codes.get(self.code)

    @property
    def severity(self) -> str:
        return self.info.severity

    @property
    def is_error(self) -> bool:
        return self.severity == codes.ERROR

    def where(self) -> str:
        loc = self.location
        parts = []
        if loc.file:
            parts.append(loc.file if loc.line is None else f"{loc.file}:{loc.line}")
        if loc.layer_name is not None:
            parts.append(f"layer '{loc.layer_name}' ({loc.layer_type})")
        return ": ".join(parts)

    def __str__(self) -> str:
        """One line: control characters in names and messages are escaped
        (irexec/diagnostics/printable.py), so no name can forge a line of irexec's output."""
        where = self.where()
        return printable.line(f"{where}: {self.message}" if where else self.message)


class Diagnostics:
    """A list that collects problems so a phase can report all of them at once."""

    def __init__(self):
        self.items: list[Diagnostic] = []

    def add(self, code: str, message: str, location: Location | None = None) -> Diagnostic:
        codes.get(code)  # an unknown code is our bug: fail loudly here, not in a renderer
        diag = Diagnostic(code, message, location or Location())
        self.items.append(diag)
        return diag

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.items if d.is_error]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.items if not d.is_error]

    def __iter__(self):
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


# What a renderer takes for each file checked: its path and its diagnostics.
FileDiagnostics = tuple[str, Sequence[Diagnostic]]
