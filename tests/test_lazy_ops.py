"""A model's run imports the op modules of its own op types only (irexec/ops/op_index.py), so
start-up does not grow with the opset; whatever needs every op still finds every op, and a stale
index is never a silent slow path (tests/validate/test_docs_fresh.py keeps the committed one
fresh)."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import sys, irexec
compiled = irexec.compile_model(irexec.read_model(sys.argv[1]))
print(sorted(m for m in sys.modules if m.startswith("irexec.ops.") and m.count(".") == 3))
"""


def _modules_after(code: str, *args) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    return eval(out.strip().splitlines()[-1])  # a printed list of module names


def test_a_model_imports_only_its_ops():
    assert _modules_after(PROBE, "samples/reverse_index.xml") == [
        "irexec.ops.infrastructure.constant", "irexec.ops.infrastructure.parameter",
        "irexec.ops.infrastructure.result", "irexec.ops.movement.reverse"]


def test_listing_the_ops_imports_every_module():
    code = ("import sys\nfrom irexec.ops import registry\nregistry.registered_types()\n"
            "print(sorted(m for m in sys.modules if m.startswith('irexec.ops.') "
            "and m.count('.') == 3))")
    from irexec.ops import registry

    every = {m for modules in registry.index().values() for m in modules}
    assert every <= set(_modules_after(code))


STALE = ("import sys\nfrom irexec.ops import registry, op_index\n{change}\n"
         "print(registry.lookup('Relu', 'opset1').spec.type)\n"
         "print(registry.lookup('Relu', 'opset8').spec.type)\n"
         "print(registry._loaded)")


def _stale_run(change: str) -> tuple[list[str], str]:
    done = subprocess.run([sys.executable, "-c", STALE.format(change=change)],
                          capture_output=True, text=True, check=True, timeout=120)
    return done.stdout.split(), done.stderr


@pytest.mark.parametrize("change", [
    "op_index.MODULES.pop('relu')",  # a type it lacks
    "op_index.MODULES['relu'] = ('irexec.ops.arithmetic.binary',)",  # moved to another module
    "op_index.MODULES['relu'] = ('irexec.ops.activation.gone',)",  # a module since removed
], ids=["lacks the type", "names another module", "names a missing module"])
def test_a_stale_index_costs_time_never_an_op_and_says_so_once(change):
    """Whatever is stale, the lookup still finds the op (every module imported), and the
    process says, once, that the index is stale and how to regenerate it."""
    out, err = _stale_run(change)
    assert out == ["Relu", "Relu", "True"]
    assert err.count("op_index.py is stale") == 1, err
    assert "python tools/gen_docs.py" in err


def test_a_fresh_index_says_nothing():
    out, err = _stale_run("")
    assert out == ["Relu", "Relu", "False"]  # only Relu's module was imported
    assert "stale" not in err


def test_an_ops_code_is_known_before_its_module_loads():
    """Eye's own code (declared in its module) is found by the code table before any op module
    is imported: looking it up loads them."""
    code = ("from irexec.diagnostics import codes\nimport irexec.ops.registry\n"
            "print('IR339' in codes.CODES, codes.get('IR339').name, 'IR339' in codes.CODES)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout.split()
    assert out == ["False", "eye-size", "True"]
