"""Parameters, Constants and Results are found by their role (``Node.role``, from the op spec's
``role``), never by comparing a layer's type with their type names: a registration of another
name (an alias, a user's op, another family's) with the same role is then one of them too.

Only code that makes such a layer names its type (the builder, the ONNX reader), and the writer
spells Constant as the IR's "Const"."""

from __future__ import annotations

import ast

import numpy as np

from irexec.builder import ModelBuilder
from tests.test_layers import PACKAGE

NAMES = {"Parameter", "Result", "Constant", "Const"}


def _names_compared_with_type(tree: ast.AST):
    """(line, name) for each comparison of an ``x.type`` with one of NAMES."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if not any(isinstance(s, ast.Attribute) and s.attr == "type" for s in sides):
            continue
        for side in sides:
            values = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
            for v in values:
                if isinstance(v, ast.Constant) and v.value in NAMES:
                    yield node.lineno, v.value


def test_no_code_finds_them_by_type_name():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        wrong += [f"{path.relative_to(PACKAGE.parent)}:{line}: .type compared with {name!r}"
                  for line, name in _names_compared_with_type(tree)]
    assert not wrong, "\n".join(wrong)


def test_the_check_sees_a_comparison():
    code = 'a = [n for n in m.nodes if n.type == "Parameter"]\nb = x.type in ("Result", "Y")'
    assert sorted(name for _, name in _names_compared_with_type(ast.parse(code))) == \
        ["Parameter", "Result"]


def test_a_model_knows_its_layers_roles():
    b = ModelBuilder("roles")
    x = b.parameter("x", "f32", [2])
    y = b.op("Add", x, b.constant(np.ones(2, np.float32)))
    b.result(y, name="y")
    model = b.build()
    roles = {n.type: n.role for n in model.nodes}
    assert roles == {"Parameter": "parameter", "Constant": "constant", "Add": None,
                     "Result": "result"}
    assert [n.name for n in model.parameters] == ["x"]
    assert len(model.results) == 1 and model.results[0].role == "result"
