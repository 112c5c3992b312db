"""The layers of irexec: no import circle, and no import from a lower layer up to a higher one.

Every import statement of every module counts, wherever it stands: at module level, inside a
function (a circle hidden in a function is still a circle) or under ``if TYPE_CHECKING:`` (a
lower layer that needs a higher one's types depends on it all the same). ``from P import name``
is an import of the module ``P.name`` when there is one, else of ``P`` itself, so a package's
``__init__`` that imports a submodule which imports from that ``__init__`` is a circle; import
from the module that defines the name instead.

``LAYERS`` is the one declaration of the order; docs/ARCHITECTURE.md shows it and
``test_architecture_shows_the_layers`` keeps the two alike. A module may import from its own
layer and any lower one. Every module must belong to a layer: a new top-level module or package
fails here until it is placed.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "irexec"

# Low to high. Each entry names a module and everything below it; "irexec" is the package's own
# __init__ (the public API) only.
LAYERS: list[tuple[str, ...]] = [
    ("irexec.version",),
    ("irexec.diagnostics",),
    ("irexec.errors", "irexec.gc_pause", "irexec.budget", "irexec.forksafe"),
    ("irexec.ir", "irexec.numerics"),
    ("irexec.kernels",),
    ("irexec.ops",),
    ("irexec.infer", "irexec.availability"),
    ("irexec.io",),
    ("irexec.runtime",),
    ("irexec.builder", "irexec.api", "irexec.properties", "irexec.pickling", "irexec.generation",
     "irexec", "irexec.opsets", "irexec.preprocess", *(f"irexec.opset{n}" for n in range(1, 18))),
    ("irexec.onnx_backend",),
    ("irexec.cli", "irexec.__main__", "irexec.batch"),
]


# --- reading the imports ----------------------------------------------------------------------

def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def find_modules(package: Path) -> dict[str, Path]:
    """Every module of the package, by dotted name (a package by its own name)."""
    root = package.parent
    return {module_name(p, root): p for p in sorted(package.rglob("*.py"))}


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute name a relative ``from`` import names."""
    if level == 0:
        return target or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _dynamic_target(node: ast.Call) -> str | None:
    """The module name, or the constant start of it, an ``importlib.import_module`` call
    names; None for any other call."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name != "import_module" or not node.args:
        return None
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        return str(arg.values[0].value)  # every module whose name starts so
    return None


def imports_of(module: str, path: Path, modules: dict[str, Path],
               dynamic: bool = False) -> set[str]:
    """The modules of the package that ``module`` imports, by any import statement anywhere;
    with ``dynamic``, also those an ``importlib.import_module`` call may name."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if dynamic and isinstance(node, ast.Call):
            target = _dynamic_target(node)
            if target is not None:
                found |= {m for m in modules if m == target or
                          (m.startswith(target) and target.endswith("."))}
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    found.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, is_package, node.level, node.module)
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in modules:
                    found.add(submodule)
                elif source in modules:
                    found.add(source)
    found.discard(module)
    return found


def import_graph(package: Path, dynamic: bool = False) -> nx.DiGraph:
    modules = find_modules(package)
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        graph.add_edges_from((name, target)
                             for target in imports_of(name, path, modules, dynamic))
    return graph


def layer_of(module: str, layers=LAYERS) -> int | None:
    """The index of the module's layer: its own entry, else the longest entry it lies below
    (the root package's entry covers its ``__init__`` only); None if it has none."""
    best, best_len = None, -1
    for index, entries in enumerate(layers):
        for entry in entries:
            root_only = "." not in entry
            hit = module == entry or (not root_only and module.startswith(entry + "."))
            if hit and len(entry) > best_len:
                best, best_len = index, len(entry)
    return best


def circles(graph: nx.DiGraph) -> list[list[str]]:
    """One circle for each group of modules that import each other."""
    found = []
    for group in nx.strongly_connected_components(graph):
        if len(group) > 1:
            found.append(nx.find_cycle(graph.subgraph(group))[0:])
    return [[a for a, _ in cycle] + [cycle[0][0]] for cycle in found]


def upward_arrows(graph: nx.DiGraph, layers=LAYERS) -> list[str]:
    return sorted(f"{a} (layer {layer_of(a, layers)}) imports {b} (layer {layer_of(b, layers)})"
                  for a, b in graph.edges
                  if layer_of(a, layers) is not None and layer_of(b, layers) is not None
                  and layer_of(a, layers) < layer_of(b, layers))


@pytest.fixture(scope="module")
def graph() -> nx.DiGraph:
    return import_graph(PACKAGE)


# --- irexec itself ----------------------------------------------------------------------------

def test_every_module_has_a_layer(graph):
    assert [m for m in graph if layer_of(m) is None] == []


def test_no_import_circle(graph):
    assert circles(graph) == []


def test_no_arrow_from_a_lower_layer_up(graph):
    assert upward_arrows(graph) == []


def test_no_import_circle_through_dynamic_imports():
    """The registry imports every op module (load_builtin); op modules declare their ops in
    irexec.ops.spec, never importing the registry back."""
    assert circles(import_graph(PACKAGE, dynamic=True)) == []


def test_function_level_imports_are_read(graph):
    # api.py imports the readers inside functions (onnx only when used): they must be seen.
    assert graph.has_edge("irexec.api", "irexec.io.onnx_reader")
    assert graph.has_edge("irexec.api", "irexec.io.ir_reader")


def render_layers(layers=LAYERS) -> str:
    """The order as docs/ARCHITECTURE.md writes it: one line, low to high."""
    def short(entry: str) -> str:
        return "`irexec/__init__`" if entry == "irexec" else f"`{entry.removeprefix('irexec.')}`"
    return " < ".join(", ".join(short(e) for e in entries) for entries in layers)


def test_architecture_shows_the_layers():
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert render_layers() in text, render_layers()


# --- the checker on packages made for it ------------------------------------------------------

def make_package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path / "pkg"


def test_a_submodule_importing_its_package_init_is_a_circle(tmp_path):
    package = make_package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/ops/__init__.py": "from pkg.ops import add\nfrom pkg.ops.spec import Spec\n",
        "pkg/ops/spec.py": "class Spec: pass\n",
        "pkg/ops/add.py": "from pkg.ops import Spec\n",  # the name, from the __init__
    })
    (circle,) = circles(import_graph(package))
    assert set(circle) == {"pkg.ops", "pkg.ops.add"}


def test_importing_a_submodule_by_from_is_no_circle(tmp_path):
    package = make_package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/ops/__init__.py": "from pkg.ops import add\n",
        "pkg/ops/spec.py": "class Spec: pass\n",
        "pkg/ops/add.py": "from pkg.ops import spec\nfrom pkg.ops.spec import Spec\n",
    })
    graph = import_graph(package)
    assert circles(graph) == []
    assert graph.has_edge("pkg.ops.add", "pkg.ops.spec")


def test_a_circle_through_a_function_level_import(tmp_path):
    package = make_package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "import pkg.b\n",
        "pkg/b.py": "def late():\n    from pkg import a\n",
    })
    assert len(circles(import_graph(package))) == 1


def test_relative_imports_are_resolved(tmp_path):
    package = make_package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low/__init__.py": "",
        "pkg/low/x.py": "from ..high import y\n",
        "pkg/high/__init__.py": "",
        "pkg/high/y.py": "",
    })
    layers = [("pkg.low",), ("pkg.high",)]
    assert upward_arrows(import_graph(package), layers) == [
        "pkg.low.x (layer 0) imports pkg.high.y (layer 1)"]


def test_an_upward_arrow_under_type_checking_counts(tmp_path):
    package = make_package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                      "    from pkg.high import Thing\n",
        "pkg/high.py": "from pkg import low\nclass Thing: pass\n",
    })
    layers = [("pkg.low",), ("pkg.high",)]
    assert upward_arrows(import_graph(package), layers) == [
        "pkg.low (layer 0) imports pkg.high (layer 1)"]


def test_a_circle_through_importlib_is_seen_when_asked(tmp_path):
    package = make_package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/registry.py": "import importlib\ndef load(name):\n"
                           "    importlib.import_module(f\"pkg.plugins.{name}\")\n",
        "pkg/plugins/__init__.py": "",
        "pkg/plugins/one.py": "from pkg.registry import load\n",
    })
    assert circles(import_graph(package)) == []
    (circle,) = circles(import_graph(package, dynamic=True))
    assert set(circle) == {"pkg.registry", "pkg.plugins.one"}


def test_layer_of_takes_the_longest_entry_and_the_root_only_for_itself():
    layers = [("pkg.ir",), ("pkg.ir.builder",), ("pkg",)]
    assert layer_of("pkg.ir.model", layers) == 0
    assert layer_of("pkg.ir.builder", layers) == 1
    assert layer_of("pkg", layers) == 2
    assert layer_of("pkg.unplaced", layers) is None
