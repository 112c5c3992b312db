"""``irexec COMMAND ...``: dispatch, and the one place that turns errors into exit codes.

Exit codes: 0 success, 1 a problem with the model or inputs (one line per problem on stderr),
2 a usage error (argparse), 3 an internal error (a bug in irexec; IREXEC_DEBUG=1 shows the
traceback), 130 after Ctrl-C, 128 + the signal's number after SIGTERM or SIGHUP, within a
fraction of a second even inside a long kernel (cli/interruptible.py). However a command ends,
no temporary file it was writing survives (irexec/io/safe_write.py).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import traceback

from irexec.cli import (bench, compare_dataset, convert, generate, graph, info, interruptible,
                        ops_cmd, run, validate)
from irexec.cli.usage import UsageError
from irexec.errors import IRError
from irexec.diagnostics import printable
from irexec.io import files, safe_write

COMMANDS = {"run": run, "validate": validate, "ops": ops_cmd, "convert": convert, "info": info,
            "graph": graph, "compare": compare_dataset, "bench": bench, "generate": generate}


def build_parser() -> argparse.ArgumentParser:
    from irexec import __version__

    parser = argparse.ArgumentParser(
        prog="irexec", description="Read, check and run OpenVINO IR models with numpy.")
    parser.add_argument("--version", action="version", version=f"irexec {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMANDS.values():
        module.add_parser(sub)
    for command in sub.choices.values():
        files.add_option(command)
    return parser


def main(argv=None) -> int:
    printable.configure_streams()  # printing never fails on a name (diagnostics/printable.py)
    parser = build_parser()
    args = parser.parse_args(argv)
    with safe_write.signals_as_exceptions():
        code = _execute(parser, args)
    if argv is None and interruptible.abandoned():
        # A signal stopped the command while a worker thread computes (cli/interruptible.py):
        # leave now rather than wait for the interpreter's shutdown beside a running kernel.
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)
    return code


def _execute(parser, args) -> int:
    try:
        with files.no_symlinks(args.no_follow_symlinks):
            return COMMANDS[args.command].execute(args)
    except UsageError as e:  # found after parsing: one line, as argparse's own last line
        print(f"irexec {args.command}: error: {printable.line(e)}", file=sys.stderr)
        return 2
    except IRError as e:
        for d in e.diagnostics:
            print(f"error: {d}", file=sys.stderr)
        return 1
    except MemoryError:
        print("error: not enough memory for this model and these inputs", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except safe_write.Terminated as e:
        print(f"stopped by {e}", file=sys.stderr)
        return 128 + e.signum
    except BrokenPipeError:
        return 0
    except Exception as e:  # a bug in irexec: say so in one line, keep the trace on request
        if os.environ.get("IREXEC_DEBUG"):
            traceback.print_exc()
        print(f"irexec: internal error: {type(e).__name__}: {printable.line(e)} (this is a bug "
              f"in irexec; run with IREXEC_DEBUG=1 for a traceback and please report it)",
              file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
