"""A model's run imports the op modules of its own op types only (irexec/ops/op_index.py), so
start-up does not grow with the opset; whatever needs every op still finds every op."""

from __future__ import annotations

import subprocess
import sys

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


def test_a_type_the_index_lacks_loads_everything(monkeypatch):
    """A stale index (a type it does not list) costs time, never an op."""
    code = ("import sys\nfrom irexec.ops import registry, op_index\n"
            "op_index.MODULES.pop('relu')\n"
            "print(registry.lookup('Relu', 'opset1').spec.type)\n"
            "print(registry._loaded)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout.split()
    assert out == ["Relu", "True"]


def test_an_ops_code_is_known_before_its_module_loads():
    """Eye's own code (declared in its module) is found by the code table before any op module
    is imported: looking it up loads them."""
    code = ("from irexec.diagnostics import codes\nimport irexec.ops.registry\n"
            "print('IR339' in codes.CODES, codes.get('IR339').name, 'IR339' in codes.CODES)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout.split()
    assert out == ["False", "eye-size", "True"]
