"""What the random ops (RandomUniform, Multinomial) share: the seed rules."""

from __future__ import annotations

import secrets

from irexec.diagnostics.codes import WARNING, Code

SEED = Code("IR388", "random-seed-zero", WARNING,
            "set global_seed or op_seed to a non-zero value: with both 0 the numbers differ on "
            "every run (as in OpenVINO), so no two runs or runtimes can be compared")
MAX_SEED = (1 << 64) - 1


def seeds_warning(ctx) -> None:
    """IR388, and IR302 for a seed beyond 64 bits (shared with Multinomial)."""
    for name in ("global_seed", "op_seed"):
        if ctx.attrs.get(name, 0) > MAX_SEED:
            ctx.error("IR302", f"{name} is {ctx.attrs[name]}; seeds are 64-bit (at most "
                               f"{MAX_SEED})")
    if ctx.attrs.get("global_seed", 0) == 0 and ctx.attrs.get("op_seed", 0) == 0:
        ctx.warn("IR388", f"{ctx.spec.type} has global_seed and op_seed both 0: its numbers "
                          f"are drawn afresh on every call (OpenVINO's rule), not repeatable")


def draw_seed() -> int:
    """A fresh global seed for a layer whose seeds are both 0 (non-zero, from the OS)."""
    return secrets.randbits(63) | 1
