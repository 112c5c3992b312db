"""Which op class serves a layer: looked up by type (case-insensitive) and opset version.

The one rule: a layer of ``version="opsetN"`` is served by the registration of its type with the
highest ``since <= N``, provided that registration's ``until`` (the last opset holding it) is not
below N. Users add their own ops with :func:`register`.
"""

from __future__ import annotations

import re

from irexec.ops.spec import Op

_REGISTRY: dict[str, dict[int, type[Op]]] = {}  # lower-case type or alias -> {since: op class}
_OPSET = re.compile(r"opset(\d{1,9})")


class LookupFailure(LookupError):
    """Why no op serves a (type, version) pair, in one sentence."""


def register(op: type[Op]) -> type[Op]:
    """Register an op class (usable as a decorator). A later registration of the same
    (type, since) replaces the earlier one, so users can override a built-in op."""
    spec = op.spec
    for name in (spec.type, *spec.aliases):
        _REGISTRY.setdefault(name.lower(), {})[spec.since] = op
    return op


def parse_opset(version: str) -> int | None:
    m = _OPSET.fullmatch(version.strip())
    return int(m.group(1)) if m else None


def lookup(type_name: str, version: str) -> type[Op]:
    versions = _REGISTRY.get(type_name.lower())
    if not versions:
        raise LookupFailure(f"operation type '{type_name}' (version '{version}') is not "
                            f"registered (registered types: {', '.join(registered_types())})")
    n = parse_opset(version)
    canonical = next(iter(versions.values())).spec.type
    available = ", ".join(f"{canonical}-{op.spec.since} ({op.spec.opsets})"
                          for op in sorted(versions.values(), key=lambda o: o.spec.since))
    if n is None:
        raise LookupFailure(f"version '{version}' is not an opset name like 'opset1'; "
                            f"registered: {available}")
    candidates = [s for s in versions if s <= n]
    if candidates:
        op = versions[max(candidates)]
        if op.spec.until is None or n <= op.spec.until:
            return op
    raise LookupFailure(f"{canonical} is not in opset{n}; registered: {available}")


def registered_types() -> list[str]:
    return sorted({next(iter(v.values())).spec.type for v in _REGISTRY.values()})


def all_ops() -> list[type[Op]]:
    seen = {}
    for versions in _REGISTRY.values():
        for op in versions.values():
            seen[(op.spec.type, op.spec.since)] = op
    return [seen[k] for k in sorted(seen)]
