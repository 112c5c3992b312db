"""``irexec ops [TYPE]``: the registered operations, or one op's spec; ``irexec ops --coverage``:
which op types of OpenVINO's opsets irexec runs.

``op_info`` puts a spec into words once; ``describe`` prints them and ``tools/gen_docs.py`` writes
them into ``docs/ops.md``. The coverage report is computed from the registry and OpenVINO's own
per-opset table (``irexec.ops.openvino_opsets``, data in the repository: no OpenVINO needed).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from irexec.cli import common
from irexec.cli.usage import UsageError
from irexec.errors import IRError
from irexec import availability, numerics
from irexec.ops import openvino_opsets, registry
from irexec.ops.spec import REQUIRED


def _did_you_mean(type_name: str) -> str:
    """``: did you mean 'Relu'?`` with the closest names (up to three), or where the list is."""
    fixes = [f"'{name}'" for name in availability.closest_names(type_name)]
    if not fixes:
        return ": `irexec ops` lists the registered types"
    return f": did you mean {', '.join(fixes[:-1])}{' or ' * (len(fixes) > 1)}{fixes[-1]}?"


def add_parser(sub) -> None:
    p = sub.add_parser("ops", help="list the operations irexec runs, or show one's spec",
                       description="List the registered operations, show one op's spec, or "
                                   "(--coverage) report which op types and versions of "
                                   "OpenVINO's opsets irexec runs.")
    p.add_argument("type", nargs="?", help="an operation type, e.g. ReverseSequence")
    p.add_argument("--coverage", action="store_true",
                   help="every op type of OpenVINO's opset1-%d, whether irexec runs it in each "
                        "opset that holds it, a count and the missing ones (exit 0 even while "
                        "some are missing)" % max(openvino_opsets.OPSETS))
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="output format of --coverage (default: text)")


@dataclass(frozen=True)
class AttrInfo:
    name: str
    kind: str
    required: bool
    default: str | None  # the default value as `irexec ops` shows it; None when required
    allowed: tuple[str, ...] | None
    doc: str


@dataclass(frozen=True)
class PortInfo:
    index: int
    name: str
    types: str | None  # the element-type rule in words (inputs only)
    rank: str | None  # the rank rule in words, None when any rank is accepted (inputs only)
    doc: str


@dataclass(frozen=True)
class OpInfo:
    """One op's spec in words: what ``irexec ops TYPE`` prints and ``docs/ops.md`` tabulates."""

    type: str
    since: int
    opsets: str
    aliases: tuple[str, ...]
    doc: str
    numerics: str  # the numeric family (irexec/numerics.py), which sets the tolerances
    attrs: tuple[AttrInfo, ...]
    inputs: tuple[PortInfo, ...]
    outputs: tuple[PortInfo, ...]


def op_info(op) -> OpInfo:
    spec = op.spec
    return OpInfo(
        type=spec.type, since=spec.since, opsets=spec.opsets, aliases=spec.aliases, doc=spec.doc,
        numerics=numerics.family(spec),
        attrs=tuple(AttrInfo(a.name, a.kind, a.required,
                             None if a.default is REQUIRED else
                             '"' + a.format(a.default) + '"',
                             a.values, a.doc) for a in spec.attrs),
        inputs=tuple(PortInfo(i, inp.name, inp.types.describe(),
                              inp.rank.describe() if inp.rank else None, inp.doc)
                     for i, inp in enumerate(spec.inputs)),
        outputs=tuple(PortInfo(i, out.name, None, None, out.doc)
                      for i, out in enumerate(spec.outputs)),
    )


def describe(op) -> str:
    info = op_info(op)
    lines = [f"{info.type}-{info.since} ({info.opsets}): {info.doc}",
             f"  numerics: {info.numerics} ({numerics.FAMILY_DOCS[info.numerics]}; "
             f"{common.doc('numerics.md')})"]
    if info.attrs:
        lines.append("  attributes:")
        for a in info.attrs:
            default = "required" if a.required else f"default {a.default}"
            allowed = f", one of {'|'.join(a.allowed)}" if a.allowed else ""
            lines.append(f"    {a.name} ({a.kind}, {default}{allowed}): {a.doc}")
    if info.inputs:
        lines.append("  inputs:")
        for inp in info.inputs:
            rank = f", {inp.rank}" if inp.rank else ""
            lines.append(f"    {inp.index} {inp.name} ({inp.types}{rank}): {inp.doc}")
    if info.outputs:
        lines.append("  outputs:")
        for out in info.outputs:
            lines.append(f"    {out.index} {out.name}: {out.doc}")
    return "\n".join(lines)


@dataclass(frozen=True)
class TypeCoverage:
    """One OpenVINO op type: the opsets holding it, those irexec runs it in, and the irexec
    registrations (``Type-since``) serving them."""

    type: str
    opsets: tuple[int, ...]
    runs: tuple[int, ...]
    versions: tuple[str, ...]

    @property
    def missing(self) -> tuple[int, ...]:
        return tuple(n for n in self.opsets if n not in self.runs)


def coverage() -> list[TypeCoverage]:
    """Every op type of OpenVINO's opsets (``openvino_opsets.OPSETS``), by name, with the opsets
    in which irexec's registry serves a layer of that type (``version="opsetN"``)."""
    table = openvino_opsets.OPSETS
    out = []
    for name in sorted({t for types in table.values() for t in types}, key=str.lower):
        opsets = tuple(n for n in sorted(table) if name in table[n])
        runs, versions = [], []
        for n in opsets:
            try:
                op = registry.lookup(name, f"{registry.OPSET}{n}")
            except registry.LookupFailure:
                continue
            runs.append(n)
            version = f"{op.spec.type}-{op.spec.since}"
            if version not in versions:
                versions.append(version)
        out.append(TypeCoverage(name, opsets, tuple(runs), tuple(versions)))
    return out


def spans(numbers) -> str:
    """``(1, 2, 3, 5)`` -> ``"opset1-3, opset5"``."""
    parts, numbers = [], sorted(numbers)
    i = 0
    while i < len(numbers):
        j = i
        while j + 1 < len(numbers) and numbers[j + 1] == numbers[j] + 1:
            j += 1
        first, last = numbers[i], numbers[j]
        parts.append(f"opset{first}" if first == last else f"opset{first}-{last}")
        i = j + 1
    return ", ".join(parts)


def coverage_data() -> dict:
    """The coverage report as plain data (what ``--format json`` prints)."""
    rows = coverage()
    pairs = sum(len(r.opsets) for r in rows)
    return {
        "openvino": openvino_opsets.OPENVINO_VERSION,
        "opsets": sorted(openvino_opsets.OPSETS),
        "types": len(rows),
        "types_run": sum(1 for r in rows if not r.missing),
        "types_partly_run": sum(1 for r in rows if r.runs and r.missing),
        "pairs": pairs,
        "pairs_run": sum(len(r.runs) for r in rows),
        "missing": [{"type": r.type, "opsets": list(r.missing)} for r in rows if r.missing],
        "ops": [{"type": r.type, "opsets": list(r.opsets), "runs": list(r.runs),
                 "versions": list(r.versions)} for r in rows],
    }


def coverage_text(data: dict) -> str:
    first, last = data["opsets"][0], data["opsets"][-1]
    lines = [f"OpenVINO {data['openvino']} opset{first}-{last}: irexec runs {data['types_run']} "
             f"of {data['types']} op types in every opset that holds them"
             + (f" ({data['types_partly_run']} more in some)" if data["types_partly_run"] else "")
             + f"; {data['pairs_run']} of {data['pairs']} (op type, opset) pairs", ""]
    width = max(len(o["type"]) for o in data["ops"])
    for o in data["ops"]:
        if not o["runs"]:
            status = "MISSING"
        elif len(o["runs"]) < len(o["opsets"]):
            status = f"runs {spans(o['runs'])} ({', '.join(o['versions'])}); missing " \
                     f"{spans(sorted(set(o['opsets']) - set(o['runs'])))}"
        else:
            status = f"runs ({', '.join(o['versions'])})"
        lines.append(f"{o['type']:<{width}}  {spans(o['opsets']):<24} {status}")
    lines.append("")
    if data["missing"]:
        lines.append(f"missing ({len(data['missing'])}): " + ", ".join(
            m["type"] if len(m["opsets"]) == len(next(o for o in data["ops"]
                                                       if o["type"] == m["type"])["opsets"])
            else f"{m['type']} ({spans(m['opsets'])})" for m in data["missing"]))
    else:
        lines.append("missing: none")
    return "\n".join(lines)


def execute(args) -> int:
    if args.coverage:
        if args.type:
            raise UsageError("--coverage takes no operation type")
        data = coverage_data()
        print(json.dumps(data, indent=2) if args.format == "json" else coverage_text(data))
        return 0
    ops = registry.all_ops()
    if args.type:
        chosen = [op for op in ops if args.type.lower() in
                  (op.spec.type.lower(), *(a.lower() for a in op.spec.aliases))]
        if not chosen:
            raise IRError.make("IR103", f"operation type '{args.type}' is not registered"
                                        f"{_did_you_mean(args.type)}")
        print("\n\n".join(describe(op) for op in chosen))
        return 0
    width = max(len(op.spec.type) for op in ops)
    for op in ops:
        print(f"{op.spec.type:<{width}}  v{op.spec.since}  {op.spec.opsets:<22} {op.spec.doc}")
    return 0
