"""The commands share code through irexec/cli/common.py (and describe.py), never by importing
each other's private helpers; main.py only dispatches (issue 13, item 6)."""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[2] / "irexec" / "cli"
COMMANDS = {"run", "validate", "ops_cmd", "convert", "info", "graph", "compare", "bench"}
SHARED = {"common", "describe", "columns", "progress", "usage", "child", "interruptible", "run_dir"}


def imported_cli_modules(path: Path) -> set[str]:
    """The irexec.cli modules a file imports, at any level (a function's imports count)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "irexec.cli":
                found |= {a.name for a in node.names}
            elif node.module.startswith("irexec.cli."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[2] for a in node.names
                      if a.name.startswith("irexec.cli.")}
    return found


def test_commands_import_only_the_shared_modules():
    for name in COMMANDS:
        imported = imported_cli_modules(CLI / f"{name}.py")
        assert imported <= SHARED, (name, imported - SHARED)


def test_shared_modules_import_no_command():
    for name in SHARED:
        assert not imported_cli_modules(CLI / f"{name}.py") & (COMMANDS | {"main"}), name


def test_main_only_dispatches():
    tree = ast.parse((CLI / "main.py").read_text(encoding="utf-8"))
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert functions == {"build_parser", "main", "_execute"}


def test_model_and_weights_are_declared_in_one_place():
    for name in COMMANDS:
        text = (CLI / f"{name}.py").read_text(encoding="utf-8")
        assert '"--weights"' not in text and 'add_argument("model"' not in text, name
