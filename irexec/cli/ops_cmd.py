"""``irexec ops [TYPE]``: the registered operations, or one op's spec.

``op_info`` puts a spec into words once; ``describe`` prints them and ``tools/gen_docs.py`` writes
them into ``docs/ops.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

from irexec.errors import IRError
from irexec.ops import registry
from irexec.ops.spec import REQUIRED


def add_parser(sub) -> None:
    p = sub.add_parser("ops", help="list the operations irexec runs, or show one's spec")
    p.add_argument("type", nargs="?", help="an operation type, e.g. ReverseSequence")


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
    attrs: tuple[AttrInfo, ...]
    inputs: tuple[PortInfo, ...]
    outputs: tuple[PortInfo, ...]


def op_info(op) -> OpInfo:
    spec = op.spec
    return OpInfo(
        type=spec.type, since=spec.since, opsets=spec.opsets, aliases=spec.aliases, doc=spec.doc,
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
    lines = [f"{info.type}-{info.since} ({info.opsets}): {info.doc}"]
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


def execute(args) -> int:
    ops = registry.all_ops()
    if args.type:
        chosen = [op for op in ops if args.type.lower() in
                  (op.spec.type.lower(), *(a.lower() for a in op.spec.aliases))]
        if not chosen:
            raise IRError.make("IR103", f"operation type '{args.type}' is not registered "
                                        f"(registered: {', '.join(registry.registered_types())})")
        print("\n\n".join(describe(op) for op in chosen))
        return 0
    width = max(len(op.spec.type) for op in ops)
    for op in ops:
        print(f"{op.spec.type:<{width}}  v{op.spec.since}  {op.spec.opsets:<22} {op.spec.doc}")
    return 0
