"""JSON: an array with one object per diagnostic, files in the order given, then file order.

    [
      {
        "code": "IR306",
        "name": "axis-out-of-range",
        "severity": "error",                      # "error" or "warning"
        "message": "axis 5 is out of range [-2, 1] for data of rank 2",
        "file": "model.xml",
        "line": 17,                               # 1-based, or null
        "column": 5,                              # 1-based, or null
        "layer": {"id": "2", "name": "flip", "type": "Reverse"},   # or null
        "help": "axes lie in [-rank, rank-1]"     # or null
      }
    ]

Every key is always present, in this order; scripts parse this, so keys are only ever added at the
end, never renamed. The layer id is the string the XML holds (it may be the very thing that is
wrong). The message does not repeat the layer: it is in ``layer``. Named json_format so that it
does not shadow the standard library's json inside this package.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from irexec.diagnostics.diagnostic import Diagnostic, FileDiagnostics, Location


def layer_object(loc: Location) -> dict[str, str | None] | None:
    if loc.layer_name is None and loc.layer_id is None and loc.layer_type is None:
        return None
    return {"id": loc.layer_id, "name": loc.layer_name, "type": loc.layer_type}


def to_object(path: str, d: Diagnostic) -> dict[str, Any]:
    loc = d.location
    return {
        "code": d.code,
        "name": d.info.name,
        "severity": d.severity,
        "message": d.message,
        "file": loc.file or path,
        "line": loc.line,
        "column": loc.column,
        "layer": layer_object(loc),
        "help": d.info.help or None,
    }


def render(results: Sequence[FileDiagnostics]) -> str:
    objects = [to_object(path, d) for path, diags in results for d in diags]
    return json.dumps(objects, indent=2) + "\n"
