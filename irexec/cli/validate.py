"""``irexec validate MODEL...``: check IR files and report every problem, in text, JSON or SARIF.

Exit 0 when no error was found (warnings too, with --strict), 1 otherwise, 2 on a usage error.
Whatever goes wrong with a file (unreadable, malformed XML) is a diagnostic in the chosen format,
so a CI job parsing JSON or SARIF never meets a line of another format.
"""

from __future__ import annotations

import re
import sys

from irexec import budget
from irexec.api import validate_file
from irexec.cli import common
from irexec.cli.usage import UsageError
from irexec.diagnostics import codes
from irexec.diagnostics.render import RENDERERS
from irexec.io import safe_write
from irexec.ops import registry

# A file that could not be checked at all is reported whatever --select says: otherwise a job
# selecting, say, IR3 would pass a corrupt file. --ignore still removes these on purpose.
UNCHECKED_FILE = {"IR001", "IR002", "IR003"}
NOT_AN_IR = "IR003"
PREFIX = re.compile(r"^IR\d{0,3}$")


def add_parser(sub) -> None:
    p = sub.add_parser(
        "validate", help="check IR files and report every problem at once",
        description="Check IR files against the operation specifications and report every "
                    "problem at once. CODES are comma-separated codes (IR306), names "
                    "(axis-out-of-range) or code prefixes (IR3).")
    p.add_argument("models", nargs="+", metavar="MODEL",
                   help="an IR .xml file (its .bin beside it)")
    p.add_argument("--format", choices=list(RENDERERS), default="text",
                   help="output format (default: text)")
    p.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    p.add_argument("--select", metavar="CODES",
                   help="report only these codes (files that cannot be read are always reported)")
    p.add_argument("--ignore", metavar="CODES", help="never report these codes")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE, not stdout")
    p.add_argument("--skip-non-ir", action="store_true",
                   help="silently skip XML files that are not IR (no <net> root), e.g. when a "
                        "pre-commit hook passes every *.xml")
    common.add_memory_budget_argument(p)


def parse_codes(option: str, text: str) -> set[str]:
    """The codes named by a comma-separated list of codes, names and code prefixes."""
    registry.load_builtin()  # the ops' own codes are part of the table
    chosen: set[str] = set()
    for token in filter(None, (t.strip() for t in text.split(","))):
        if token in codes.BY_NAME:
            chosen.add(codes.BY_NAME[token].code)
            continue
        matched = {c for c in codes.CODES if c.startswith(token.upper())}
        if not matched or not PREFIX.match(token.upper()):
            raise UsageError(f"argument {option}: '{token}' is not a diagnostic code, name or "
                             f"code prefix (for example IR306, axis-out-of-range or IR3)")
        chosen |= matched
    if not chosen:
        raise UsageError(f"argument {option}: no code given")
    return chosen


def keep(code: str, select: set[str] | None, ignore: set[str]) -> bool:
    if code in ignore:
        return False
    return select is None or code in select or code in UNCHECKED_FILE


def write_report(report: str, args) -> None:
    if args.output is None:
        sys.stdout.write(report)
        sys.stdout.flush()
        return
    data = report.encode("utf-8")
    try:  # exit 1 means problems found: a report that cannot be written is a usage error
        safe_write.write_file(args.output, lambda f: f.write(data), common.protected_files(args))
    except safe_write.WriteRefused as e:
        raise UsageError(f"argument --output: {e}") from None
    except OSError as e:
        raise UsageError(f"argument --output: cannot write '{args.output}': "
                         f"{e.strerror or e}") from None


def execute(args) -> int:
    if args.memory_budget is not None:
        with budget.limit(args.memory_budget):
            return _execute(args)
    return _execute(args)


def _execute(args) -> int:
    if args.output is not None:
        common.check_output("--output", args.output, args)
    select = parse_codes("--select", args.select) if args.select is not None else None
    ignore = parse_codes("--ignore", args.ignore) if args.ignore is not None else set()
    results = []
    for path in args.models:
        found = validate_file(path)
        if args.skip_non_ir and found and all(d.code == NOT_AN_IR for d in found):
            continue
        results.append((path, [d for d in found if keep(d.code, select, ignore)]))
    write_report(RENDERERS[args.format](results), args)
    diags = [d for _, ds in results for d in ds]
    failed = any(d.is_error for d in diags) or (args.strict and bool(diags))
    return 1 if failed else 0
