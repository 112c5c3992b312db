"""What several commands share. Commands import from here, never from each other."""

from __future__ import annotations

import sys


def print_warnings(diagnostics) -> None:
    for d in diagnostics:
        print(f"warning: {d}", file=sys.stderr)
