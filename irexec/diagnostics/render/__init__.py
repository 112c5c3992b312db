"""Renderers: the diagnostics of the files checked, as one string in one output format.

Each renderer is a pure function ``render(results) -> str``. ``results`` lists one
``(path, diagnostics)`` pair per file checked, in the order the files were given; a file with no
diagnostic is still listed (the text summary counts it). A diagnostic's own ``location.file`` wins
over ``path`` where it is set. Checks never format anything; renderers never decide what is wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from irexec.diagnostics.diagnostic import FileDiagnostics
from irexec.diagnostics.render import json_format, sarif, text

Renderer = Callable[[Sequence[FileDiagnostics]], str]

RENDERERS: dict[str, Renderer] = {
    "text": text.render,
    "json": json_format.render,
    "sarif": sarif.render,
}
