"""Which op class serves a layer: looked up by type (case-insensitive) and version name.

A version name is a family and a number: ``opset8`` (OpenVINO's opsets), ``irexec1`` (irexec's
own ops, numbered on their own) or ``onnx10`` (ONNX's ai.onnx opsets: the ONNX reader gives every
node of an ONNX model the version ``onnxN``, N being the model's ai.onnx opset, and ops registered
with ``family="onnx"`` and ``since`` = ONNX's since_version serve them). The one rule, within the family the layer names: a layer of
``version="<family>N"`` is served by the registration of its type in that family with the highest
``since <= N``, provided that registration's ``until`` (the last version holding it) is not below
N. Users add their own ops with :func:`register`.

The built-in ops are found, not listed: every module in the category folders under
``irexec/ops/`` (``movement/``, ``arithmetic/`` ...) is imported the first time an op is looked
up, and registers its ops with :func:`register` as it is imported.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import threading
from pathlib import Path

from irexec.diagnostics import codes
from irexec.ops import spec as spec_module
from irexec.ops.openvino_opsets import OPSETS
from irexec.ops.spec import Op

# lower-case type or alias -> {(family, since): op class}
_REGISTRY: dict[str, dict[tuple[str, int], type[Op]]] = {}
_VERSION = re.compile(r"([a-z]+)(\d{1,9})")
OPSET = "opset"  # OpenVINO's family; always known, even before any op is registered in another


class LookupFailure(LookupError):
    """Why no op serves a (type, version) pair, in one sentence."""


_loaded = False
_loading = threading.Lock()


def load_builtin() -> None:
    """Import every op module of the category folders once (each registers its ops)."""
    global _loaded
    if _loaded:
        return
    with _loading:
        if _loaded:
            return
        root = Path(__file__).parent
        for folder in sorted(p for p in root.iterdir() if (p / "__init__.py").is_file()):
            for info in pkgutil.iter_modules([str(folder)]):
                importlib.import_module(f"irexec.ops.{folder.name}.{info.name}")
        _loaded = True


def register(op: type[Op]) -> type[Op]:
    """Register an op class (usable as a decorator). A later registration of the same
    (type, family, since) replaces the earlier one, so users can override a built-in op. The
    op's own diagnostic codes join the code table."""
    spec = op.spec
    if not re.fullmatch(r"[a-z]+", spec.family):
        raise ValueError(f"version family {spec.family!r} of {spec.type} must be lower-case "
                         f"letters, such as 'opset' or 'irexec'")
    if spec.inputs and any(i.variadic is not None for i in spec.inputs[:-1]):
        raise ValueError(f"{spec.type}: only the last input may be variadic")
    for code in spec.codes:
        codes.register(code)
    for name in (spec.type, *spec.aliases):
        _REGISTRY.setdefault(name.lower(), {})[(spec.family, spec.since)] = op
    return op


# Ops declared with ``irexec.ops.spec.register`` (every built-in op module) come here.
spec_module._SINK.append(register)
while spec_module._DECLARED:
    register(spec_module._DECLARED.pop(0))


def unregister(op: type[Op]) -> None:
    """Remove a registration made with :func:`register` (the op's codes stay in the table)."""
    spec = op.spec
    for name in (spec.type, *spec.aliases):
        versions = _REGISTRY.get(name.lower(), {})
        if versions.get((spec.family, spec.since)) is op:
            del versions[(spec.family, spec.since)]
            if not versions:
                del _REGISTRY[name.lower()]


def families() -> list[str]:
    """Every known version family: ``opset`` first, then the others in use."""
    load_builtin()
    used = {family for versions in _REGISTRY.values() for family, _ in versions}
    return [OPSET, *sorted(used - {OPSET})]


def parse_version(version: str) -> tuple[str, int] | None:
    """``"opset8"`` -> ``("opset", 8)``; None unless it is a known family and a number."""
    m = _VERSION.fullmatch(version.strip())
    if m is None or m.group(1) not in families():
        return None
    return m.group(1), int(m.group(2))


def parse_opset(version: str) -> int | None:
    """The N of ``"opsetN"``; None for any other version name."""
    parsed = parse_version(version)
    return parsed[1] if parsed is not None and parsed[0] == OPSET else None


def default_version(type_name: str) -> str:
    """The version name to write for a type when none is given: ``opset1`` for OpenVINO's ops,
    the first registered version of the family otherwise (``irexec1``)."""
    load_builtin()
    versions = _REGISTRY.get(type_name.lower(), {})
    if not versions or any(family == OPSET for family, _ in versions):
        return f"{OPSET}1"
    family, since = min(versions)
    return f"{family}{since}"


def lookup(type_name: str, version: str) -> type[Op]:
    load_builtin()
    versions = _REGISTRY.get(type_name.lower())
    if not versions:
        parsed = parse_version(version)
        family = parsed[0] if parsed else None
        where = f" in the {family} family" if family else ""
        raise LookupFailure(f"operation type '{type_name}' (version '{version}') is not "
                            f"registered (registered types{where}: "
                            f"{', '.join(registered_types(family))})")
    canonical = next(iter(versions.values())).spec.type
    available = ", ".join(f"{canonical}-{versions[k].spec.since} ({versions[k].spec.opsets})"
                          for k in sorted(versions))
    parsed = parse_version(version)
    if parsed is None:
        names = " or ".join(f"'{f}1'" for f in families())
        raise LookupFailure(f"version '{version}' is not a version name like {names}; "
                            f"registered: {available}")
    family, n = parsed
    candidates = [s for f, s in versions if f == family and s <= n]
    # irexec's own registrations of OpenVINO's op types resolve only in the opsets that hold
    # them; a user's registration (a new version, an op of their own) by its versions alone.
    held = [k for k in sorted(OPSETS) if canonical in OPSETS[k]] if family == OPSET else []
    if candidates:
        op = versions[(family, max(candidates))]
        builtin = op.__module__.startswith("irexec.ops.")
        if (op.spec.until is None or n <= op.spec.until) and not (
                builtin and held and n in OPSETS and n not in held):
            return op
    if held and n not in held:
        raise LookupFailure(f"{canonical} is not in {family}{n} (OpenVINO's opsets holding it: "
                            f"{_ranges(held)})")
    raise LookupFailure(f"{canonical} is not in {family}{n}; registered: {available}")


def _ranges(numbers: list[int]) -> str:
    """[1, 2, 3, 5] -> 'opset1-opset3, opset5'."""
    parts, start = [], None
    for i, k in enumerate(numbers):
        if start is None:
            start = k
        if i + 1 == len(numbers) or numbers[i + 1] != k + 1:
            parts.append(f"opset{start}" if start == k else f"opset{start}-opset{k}")
            start = None
    return ", ".join(parts)


def registered_types(family: str | None = None) -> list[str]:
    """Every registered type, or those with a registration in ``family``."""
    load_builtin()
    return sorted({next(iter(v.values())).spec.type for v in _REGISTRY.values()
                   if family is None or any(f == family for f, _ in v)})


def families_of(type_name: str) -> set[str]:
    """The version families holding a registration of this type (empty if none)."""
    load_builtin()
    return {family for family, _ in _REGISTRY.get(type_name.lower(), {})}


def all_ops() -> list[type[Op]]:
    """Every registration once, ordered by type, then family (opset first), then version."""
    load_builtin()
    seen = {}
    for versions in _REGISTRY.values():
        for op in versions.values():
            spec = op.spec
            seen[(spec.type, spec.family != OPSET, spec.family, spec.since)] = op
    return [seen[k] for k in sorted(seen)]
