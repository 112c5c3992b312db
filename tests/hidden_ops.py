"""Tests of what irexec does with OpenVINO ops it does not run. As irexec comes to run every op
of OpenVINO's opsets, such ops are made for the test: the registrations of real ones are hidden
for its duration, in this process (:func:`hidden`) or in an ``irexec`` subprocess
(:func:`run_hiding`)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys

from irexec.ops import registry


@contextlib.contextmanager
def hidden(*types: str):
    """Unregister every version of these op types; register them again afterwards."""
    removed = [op for op in registry.all_ops() if op.spec.type in types]
    for op in removed:
        registry.unregister(op)
    try:
        yield
    finally:
        for op in removed:
            registry.register(op)


def main(argv: list[str]) -> int:
    """``python -m tests.hidden_ops TYPE,TYPE irexec-args…``"""
    from irexec.cli.main import main as irexec_main

    with hidden(*argv[0].split(",")):
        return irexec_main(argv[1:])


def run_hiding(types, *args, cwd=None) -> subprocess.CompletedProcess:
    """``irexec ARGS`` in a subprocess that does not run ``types``; text output."""
    env = {k: v for k, v in os.environ.items() if k != "IREXEC_DEBUG"}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, "-m", "tests.hidden_ops", ",".join(types),
                           *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
