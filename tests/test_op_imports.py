"""No op file imports another op file: what several ops share (spec helpers, value domains,
shape rules, kernels) lives in a shared module -- ``irexec/ops/rules.py``, ``domains.py``,
``windows.py``, ``values.py``, a category's own helper module (``convolution/common.py``,
``movement/slicing.py`` ...) or ``irexec/kernels/`` -- so an op file can be read, moved or
deleted on its own.

An op file is a module that registers an op (the registry knows each op class's module); every
import statement counts, wherever it stands (test_layers.py reads them).
"""

from __future__ import annotations

from irexec.ops import registry
from tests.test_layers import PACKAGE, find_modules, imports_of


def op_modules() -> set[str]:
    registry.load_builtin()
    return {op.__module__ for op in registry.all_ops() if op.__module__.startswith("irexec.")}


def test_the_op_files_are_found():
    found = op_modules()
    assert {"irexec.ops.movement.gather", "irexec.ops.arithmetic.binary",
            "irexec.ops.shape.shape_of"} <= found
    assert "irexec.ops.rules" not in found and "irexec.ops.movement.slicing" not in found


def test_no_op_file_imports_another_op_file():
    ops = op_modules()
    modules = find_modules(PACKAGE)
    wrong = sorted(f"{name} imports {target}" for name in sorted(ops)
                   for target in imports_of(name, modules[name], modules) if target in ops)
    assert not wrong, "\n".join(wrong)
