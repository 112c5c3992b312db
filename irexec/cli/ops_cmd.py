"""``irexec ops [TYPE]``: the registered operations, or one op's spec."""

from __future__ import annotations

from irexec.errors import IRError
from irexec.ops import registry
from irexec.ops.spec import REQUIRED


def add_parser(sub) -> None:
    p = sub.add_parser("ops", help="list the operations irexec runs, or show one's spec")
    p.add_argument("type", nargs="?", help="an operation type, e.g. ReverseSequence")


def describe(op) -> str:
    spec = op.spec
    lines = [f"{spec.type}-{spec.since} ({spec.opsets}): {spec.doc}"]
    if spec.attrs:
        lines.append("  attributes:")
        for a in spec.attrs:
            default = "required" if a.default is REQUIRED else f"default {a.default}"
            allowed = f", one of {'|'.join(a.values)}" if a.values else ""
            lines.append(f"    {a.name} ({a.kind}, {default}{allowed}): {a.doc}")
    if spec.inputs:
        lines.append("  inputs:")
        for i, inp in enumerate(spec.inputs):
            rank = f", {inp.rank.describe()}" if inp.rank else ""
            lines.append(f"    {i} {inp.name} ({inp.types.describe()}{rank}): {inp.doc}")
    if spec.outputs:
        lines.append("  outputs:")
        for i, out in enumerate(spec.outputs):
            lines.append(f"    {i} {out.name}: {out.doc}")
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
