"""When no registered op serves a layer: is its type a real OpenVINO op irexec lacks (the model
is fine; irexec reads, checks and draws it but cannot run that layer), or a mistake (a type or
version no OpenVINO opset has)?

OpenVINO's own opsets are data (irexec/ops/openvino_opsets.py), so the answer needs no OpenVINO.
"""

from __future__ import annotations

import difflib
from collections import Counter

from irexec.ops import registry
from irexec.ops.openvino_opsets import OPENVINO_VERSION, OPSETS

_ALL_TYPES = sorted(set().union(*OPSETS.values()))
_BY_LOWER = {t.lower(): t for t in _ALL_TYPES}


def opsets_holding(type_name: str) -> list[int]:
    """The numbers of OpenVINO's opsets holding this type (exact spelling)."""
    return [n for n, types in OPSETS.items() if type_name in types]


def is_openvino_op(type_name: str, version: str) -> bool:
    """Whether OpenVINO's opset ``version`` (``"opset8"``) holds ``type_name``: a layer irexec
    cannot serve is then OpenVINO's, not a mistake."""
    n = registry.parse_opset(version)
    return n is not None and type_name in OPSETS.get(n, ())


def spans(numbers: list[int]) -> str:
    """[1, 3, 4, 5] -> "opset1, opset3 to opset5"."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"opset{r[0]}" if len(r) == 1 else f"opset{r[0]} to opset{r[-1]}"
                     for r in runs)


def closest(type_name: str) -> str | None:
    """The OpenVINO or registered op type spelled most like ``type_name`` (a typo's fix)."""
    found = closest_names(type_name, 1)
    return found[0] if found else None


def closest_names(type_name: str, n: int = 3) -> list[str]:
    """Up to ``n`` OpenVINO or registered op types spelled like ``type_name``, closest first
    (only the one that differs in case alone, when there is one)."""
    names = {**_BY_LOWER, **{t.lower(): t for t in registry.registered_types()}}
    if type_name.lower() in names and names[type_name.lower()] != type_name:
        return [names[type_name.lower()]]  # only the case differs
    matches = difflib.get_close_matches(type_name.lower(), list(names), n=n, cutoff=0.75)
    return [names[m] for m in matches if names[m] != type_name]


def explain(type_name: str, version: str, failure: Exception) -> str:
    """The error for a layer no op serves and no OpenVINO opset holds as written: the
    registry's reason, then what OpenVINO has."""
    text = str(failure)
    n = registry.parse_opset(version)
    holding = opsets_holding(type_name)
    if n is not None and n not in OPSETS:
        return (f"{text}; OpenVINO {OPENVINO_VERSION} has opset1 to opset{max(OPSETS)} only, "
                f"no opset{n}")
    if holding:
        if registry.families_of(type_name):  # irexec has it, in other versions: say which
            return f"{text}; OpenVINO has {type_name} in {spans(holding)}"
        return (f"operation type '{type_name}' is not in {version}: OpenVINO has it in "
                f"{spans(holding)} (irexec does not run it yet)")
    if registry.parse_version(version) is not None and registry.parse_version(version)[0] != \
            registry.OPSET:
        return text  # irexec's or ONNX's family: OpenVINO's opsets say nothing
    fixes = [f"'{name}'" for name in closest_names(type_name)]
    hint = (f"; did you mean {', '.join(fixes[:-1])}{' or ' * (len(fixes) > 1)}{fixes[-1]}?"
            if fixes else "")
    if registry.families_of(type_name):  # irexec has it in other versions: the registry says
        return f"{text}; no OpenVINO opset has it either{hint}"
    # The type, the opset and the closest names only: the full list is `irexec ops`.
    return (f"operation type '{type_name}' ({version}) is unknown: neither irexec nor any "
            f"OpenVINO opset has it{hint or '; `irexec ops` lists the types there are'}")


def not_run_summary(nodes) -> str:
    """``Add (opset1, 100 layers), Relu (opset1 and opset6, 3 layers)``: the layers' op types,
    each with the versions used and its count, in order of first appearance."""
    counts: Counter = Counter()
    versions: dict[str, list[str]] = {}
    for node in nodes:
        counts[node.type] += 1
        seen = versions.setdefault(node.type, [])
        if node.version not in seen:
            seen.append(node.version)
    parts = []
    for type_name, count in counts.items():
        used = " and ".join(versions[type_name])
        parts.append(f"{type_name} ({used}, {count} layer{'s' * (count != 1)})")
    return ", ".join(parts)


def cannot_run_message(nodes) -> str:
    """One sentence naming every op type of ``nodes`` (the layers irexec cannot run)."""
    types = len({n.type for n in nodes})
    return (f"irexec cannot run {types} op type{'s' * (types != 1)} of this model yet: "
            f"{not_run_summary(nodes)}")
