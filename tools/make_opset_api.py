"""Regenerate irexec/opsets/signatures.py: the functions of OpenVINO's Python opset modules
(``openvino.opset1`` ... ``openvino.opset17``) as data: each function's name, parameters and
defaults, the op type it makes, which parameters feed the layer's input ports (in port order)
and which set which attribute.

    python tools/make_opset_api.py            # writes irexec/opsets/signatures.py
    python tools/make_opset_api.py --check    # exit 1 if the file differs from OpenVINO

The parameters and defaults come from ``inspect.signature``. The rest is read from each
function's source with ``ast``: OpenVINO's functions end in one
``NodeFactory.create("Type", inputs, {"attr": expression ...})`` call. The inputs are the
parameters named in that list (directly, through ``as_node``/``as_nodes`` or through a variable
assigned before), parameters appended afterwards (``inputs.append(as_node(p))``, always under an
``if``: optional) and a starred list (``as_nodes(*nodes)``: variadic). An attribute is the one
parameter its expression names and how the expression changes it (``.upper()``, an element
type's name); an expression that names no parameter is a fixed value when it is a literal.
What the source does not say so plainly is listed in OVERRIDES below, by hand, and a function
the reading cannot place is reported (the tool fails) rather than guessed.

OpenVINO is needed only to run this script; irexec reads the data file it writes.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import pprint
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "irexec" / "opsets" / "signatures.py"

# Functions irexec writes by hand (irexec/opsets/functions.py) where OpenVINO makes them with
# classes, not with the factory: the IR's infrastructure and the ops holding sub-graphs or
# variables (opset3's read_value and assign are factory functions, read as the others).
HANDWRITTEN = {"parameter", "constant", "result", "tensor_iterator", "loop", "if_op",
               "assign", "read_value"}

# What the source reading cannot see, by (defining module's opset, function name).
OVERRIDES: dict[tuple[int, str], dict] = {
    # Interpolate-1 takes its attributes as one dict; its keys are the IR's attribute names.
    (1, "interpolate"): {"attrs_from": "attrs"},
    # An optional input left out while a later one is given is filled with a constant of the
    # type of another input ("fill": (value, index of the input whose type it takes)).
    (13, "scaled_dot_product_attention"): {
        "inputs": [("query", "one", False), ("key", "one", False), ("value", "one", False),
                   ("attention_mask", "one", True, 0, 0), ("scale", "one", True)]},
    (15, "embedding_bag_offsets"): {
        "inputs": [("emb_table", "one", False), ("indices", "one", False),
                   ("offsets", "one", False), ("default_index", "one", True, -1, 1),
                   ("per_sample_weights", "one", True)]},
    # LSTMCell-1: OpenVINO's function adds a zero peephole input the IR's LSTMCell lacks, and
    # attributes of its own (weights_format, input_forget) no IR holds.
    (1, "lstm_cell"): {
        "inputs": [("X", "one", False), ("initial_hidden_state", "one", False),
                   ("initial_cell_state", "one", False), ("W", "one", False),
                   ("R", "one", False), ("B", "one", False)],
        "drop_attrs": ("weights_format", "input_forget")},
    # NormalizeL2: OpenVINO's function passes eps_mode as "mode", which its factory ignores (it
    # always makes eps_mode "add"); irexec sets the attribute the argument names
    # (docs/compatibility.md).
    (1, "normalize_l2"): {"attrs": {"eps_mode": ("param", "eps_mode", None)},
                          "drop_attrs": ("mode",)},
    # ROIPooling: the IR's pooled_h and pooled_w are output_roi's two numbers (output_size, a
    # deprecated keyword, wins when given), as OpenVINO writes them.
    (2, "roi_pooling"): {"attrs": {"pooled_h": ("param", "output_roi", "item0", "output_size"),
                                   "pooled_w": ("param", "output_roi", "item1", "output_size"),
                                   "output_roi": ("param", "output_roi", None, "output_size"),
                                   "output_size": ("param", "output_roi", None,
                                                   "output_size")}},
}

_TRANSFORMS = {"upper": "upper", "lower": "lower"}
_TYPE_FUNCS = {"get_element_type_str", "get_element_type", "get_dtype"}


class Unreadable(Exception):
    pass


def _default(value):
    """A default as plain data: literals as they are, element types as ("type", name)."""
    import numpy as np
    from openvino import Type

    if value is inspect.Parameter.empty:
        return ("required",)
    if isinstance(value, Type):
        return ("type", value.get_type_name())
    if isinstance(value, type) and issubclass(value, np.generic):
        from openvino.utils.types import get_element_type

        return ("type", get_element_type(value).get_type_name())
    if value is None or isinstance(value, (bool, int, float, str)):
        return ("value", value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, (bool, int, float, str))
                                                  for v in value):
        return ("value", list(value))
    raise Unreadable(f"default {value!r}")


def _op_type(function) -> str:
    source = textwrap.dedent(inspect.getsource(inspect.unwrap(function)))
    return next(c.args[0].value for c in ast.walk(ast.parse(source)) if isinstance(c, ast.Call)
                and isinstance(c.func, ast.Attribute) and c.func.attr == "create")


def _params(function) -> list[tuple]:
    out = []
    for p in inspect.signature(function).parameters.values():
        kind = {inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
                inspect.Parameter.KEYWORD_ONLY: "keyword"}.get(p.kind)
        if kind is None:
            raise Unreadable(f"parameter kind {p.kind} of {p.name}")
        out.append((p.name, kind, _default(p.default)))
    return out


def _names_in(node: ast.AST, params: set[str]) -> list[str]:
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in params]


def _input_items(expr: ast.AST, assigns: dict, params: set[str]) -> list[tuple[str, str]]:
    """[(param, "one" | "list")] an input expression names, in order."""
    if isinstance(expr, ast.Name) and expr.id in params:
        return [(expr.id, "one")]
    if isinstance(expr, ast.Name) and expr.id in assigns:
        return _input_items(assigns[expr.id], assigns, params)
    if isinstance(expr, ast.List):
        return [item for e in expr.elts for item in _input_items(e, assigns, params)]
    if isinstance(expr, ast.Starred):  # *param: a list of inputs; *local: the local's items
        if isinstance(expr.value, ast.Name) and expr.value.id in params:
            return [(expr.value.id, "list")]
        return _input_items(expr.value, assigns, params)
    if isinstance(expr, ast.IfExp):  # the longer branch (the rest come optional, see _read)
        both = [_input_items(e, assigns, params) for e in (expr.body, expr.orelse)]
        return max(both, key=len)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return (_input_items(expr.left, assigns, params)
                + _input_items(expr.right, assigns, params))
    if isinstance(expr, ast.Call):
        func = getattr(expr.func, "id", getattr(expr.func, "attr", None))
        if func in ("as_node", "as_nodes"):
            return [item for e in expr.args for item in _input_items(e, assigns, params)]
    raise Unreadable(f"input expression {ast.unparse(expr)}")


def _attr_rule(key: str, expr: ast.AST, params: set[str], local: dict | None = None):
    """How attribute ``key`` is made: ("param", name, transform) or ("value", literal)."""
    names = list(dict.fromkeys(_names_in(expr, params)))
    for n in ast.walk(expr):  # a local variable: the parameters its assignments name
        if not names and isinstance(n, ast.Name) and n.id in (local or {}):
            for value, _ in local[n.id]:
                for sub in _names_in(value, params):
                    if sub not in names:
                        names.append(sub)
                        expr = ast.Module(body=[ast.Expr(v) for v, _ in local[n.id]],
                                          type_ignores=[])
    if not names:
        try:
            return ("value", ast.literal_eval(expr))
        except ValueError:
            raise Unreadable(f"attribute {key}: {ast.unparse(expr)}") from None
    transform = None
    for n in ast.walk(expr):
        if isinstance(n, ast.Call):
            func = getattr(n.func, "attr", getattr(n.func, "id", None))
            if func in _TRANSFORMS:
                transform = _TRANSFORMS[func]
            elif func in _TYPE_FUNCS:
                transform = "element_type"
    return ("param", names[0], transform)


def _none_defaults(fn: ast.AST, params: set[str], local: dict) -> dict:
    """What the function puts in place of a parameter left None (``if p is None: p = ...``):
    ("value", literal), or ("repeat", literal, q): the literal once per element of parameter q
    (``[0] * len(strides)``)."""
    found = {}
    for node in ast.walk(fn):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
                and isinstance(node.test.left, ast.Name) and node.test.left.id in params
                and len(node.test.ops) == 1 and isinstance(node.test.ops[0], ast.Is)
                and isinstance(node.test.comparators[0], ast.Constant)
                and node.test.comparators[0].value is None and len(node.body) == 1
                and isinstance(node.body[0], ast.Assign)
                and isinstance(node.body[0].targets[0], ast.Name)
                and node.body[0].targets[0].id == node.test.left.id):
            continue
        param, value = node.test.left.id, node.body[0].value
        try:
            found[param] = ("value", ast.literal_eval(value))
            continue
        except ValueError:
            pass
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult) \
                and isinstance(value.left, ast.List) and len(value.left.elts) == 1:
            count = value.right
            if isinstance(count, ast.Name) and count.id in local:
                count = local[count.id][0][0]
            if isinstance(count, ast.Call) and getattr(count.func, "id", None) == "len" \
                    and isinstance(count.args[0], ast.Name) and count.args[0].id in params:
                found[param] = ("repeat", ast.literal_eval(value.left.elts[0]),
                                count.args[0].id)
    return found


def _read(function, module_opset: int, name: str) -> dict:
    override = OVERRIDES.get((module_opset, name), {})
    source = textwrap.dedent(inspect.getsource(inspect.unwrap(function)))
    fn = ast.parse(source).body[0]
    params_list = _params(function)
    params = {p[0] for p in params_list}
    creates = [c for c in ast.walk(fn) if isinstance(c, ast.Call)
               and isinstance(c.func, ast.Attribute) and c.func.attr == "create"]
    if len(creates) != 1 or not isinstance(creates[0].args[0], ast.Constant):
        raise Unreadable("not one create(\"Type\", ...) call")
    create = creates[0]
    op_type = create.args[0].value
    # Variables assigned before the call; when assigned in several branches, the longest.
    alternatives: dict[str, list[tuple[ast.AST, list]]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            try:
                items = _input_items(node.value, {}, params)
            except Unreadable:
                items = None
            alternatives.setdefault(node.targets[0].id, []).append((node.value, items))
    assigns = {}
    for target, values in alternatives.items():
        readable = [v for v in values if v[1] is not None]
        assigns[target] = max(readable, key=lambda v: len(v[1]))[0] if readable \
            else values[-1][0]
    inputs: list[list] = []
    if "inputs" in override:
        pass
    elif len(create.args) > 1:
        inputs = [[n, kind, False] for n, kind in _input_items(create.args[1], assigns, params)]
    for node in ast.walk(fn):  # a conditional expression's shorter branch: the rest optional
        if isinstance(node, ast.IfExp):
            try:
                branches = [{n for n, _ in _input_items(e, {}, params)}
                            for e in (node.body, node.orelse)]
            except Unreadable:
                continue
            for item in inputs:
                if item[0] in branches[0] ^ branches[1]:
                    item[2] = True
    # Shorter alternatives assigned in other branches make the extra inputs optional.
    for values in alternatives.values():
        for _, items in values:
            if items is None or not inputs or not any(items):
                continue
            fewer = {n for n, _ in items}
            if fewer & {i[0] for i in inputs}:
                for item in inputs:
                    if item[0] not in fewer:
                        item[2] = True
    for node in ast.walk(fn) if "inputs" not in override else ():
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("append", "extend"):
            for n, kind in _input_items(node.args[0], {}, params):
                if all(n != item[0] for item in inputs):
                    inputs.append([n, "list" if node.func.attr == "extend" else kind, True])
    attrs: dict[str, tuple] = {}
    if len(create.args) > 2:
        spec = create.args[2]
        if isinstance(spec, ast.Name) and spec.id in assigns:
            spec = assigns[spec.id]
        if isinstance(spec, ast.Dict):
            for k, v in zip(spec.keys, spec.values):
                if not isinstance(k, ast.Constant):
                    raise Unreadable("attribute dict with a computed key")
                try:
                    attrs[k.value] = _attr_rule(k.value, v, params, alternatives)
                except Unreadable:
                    if k.value not in (*override.get("drop_attrs", ()),
                                       *override.get("attrs", {})):
                        raise
        elif not (isinstance(spec, ast.Name) and spec.id in params):
            raise Unreadable(f"attributes {ast.unparse(spec)}")
    # Attributes set later on the dict (``attributes["x"] = p``).
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript) \
                and isinstance(node.targets[0].slice, ast.Constant):
            key = node.targets[0].slice.value
            if isinstance(key, str):
                attrs[key] = _attr_rule(key, node.value, params, alternatives)
    none_defaults = _none_defaults(fn, params, alternatives)
    attrs.update(override.get("attrs", {}))
    for key in override.get("drop_attrs", ()):
        attrs.pop(key, None)
    entry = {"type": op_type, "opset": module_opset, "params": params_list,
             "inputs": [tuple(i) for i in override.get("inputs", inputs)], "attrs": attrs}
    if none_defaults:
        entry["none_defaults"] = none_defaults
    entry.update({k: v for k, v in override.items()
                  if k not in ("inputs", "attrs", "drop_attrs")})
    used = {i[0] for i in entry["inputs"]} | {r[1] for r in attrs.values() if r[0] == "param"}
    if "attrs_from" not in entry:  # a dict of IR attributes by their own names
        entry.update({"attrs_from": p[0] for p in params_list
                      if p[0] in ("attrs", "attributes") and p[0] not in attrs})
    used |= {entry.get("attrs_from")} | {"name"}
    unused = [p[0] for p in params_list if p[0] not in used]
    if unused:
        entry["unused"] = unused  # read by the function's own logic only (reported, kept)
    return entry


def read_openvino():
    import openvino

    functions: dict[str, dict] = {}  # "opsetK.name" -> entry
    opsets: dict[int, dict[str, str]] = {}  # N -> {python name: "opsetK.name"}
    problems = []
    n = 1
    while True:
        try:
            module = importlib.import_module(f"openvino.opset{n}")
        except ImportError:
            break
        table = {}
        for name, value in sorted(vars(module).items()):
            if name.startswith("_") or not callable(value):
                continue
            defining = getattr(value, "__module__", "") or ""
            if name in HANDWRITTEN:  # unless a plain factory function (opset3's read_value)
                k = defining.split(".")[1][len("opset"):] if defining.startswith(
                    "openvino.opset") else ""
                try:
                    entry = _read(value, int(k), name) if k.isdigit() else None
                except Unreadable:
                    entry = None
                if entry is None:
                    table[name] = "handwritten"
                    continue
                functions.setdefault(f"opset{k}.{name}", entry)
                table[name] = f"opset{k}.{name}"
                continue
            if not defining.startswith("openvino.opset"):
                problems.append(f"opset{n}.{name}: defined in {defining}")
                continue
            k = int(defining.split(".")[1][len("opset"):])
            key = f"opset{k}.{name}"
            if key not in functions:
                try:
                    functions[key] = _read(value, k, name)
                except Unreadable as e:
                    problems.append(f"{key}: {e}")
                    continue
            table[name] = key
        opsets[n] = table
        n += 1
    return openvino.get_version(), functions, opsets, problems


def render(version: str, functions: dict, opsets: dict) -> str:
    release = version.split("-")[0]
    head = [
        '"""The functions of OpenVINO ' + release + "'s Python opset modules, as data.",
        "",
        "Generated by tools/make_opset_api.py from the installed OpenVINO; do not edit by hand.",
        "irexec/opsets/functions.py makes irexec's ``irexec.opsetN`` functions from it. Each",
        "entry: the op type, the opset whose module defines the function, its parameters (name,",
        "kind, default), the parameters feeding input ports in port order (name, 'one' or",
        "'list', optional) and each attribute's rule (('param', name, transform) or ('value',",
        "literal)).",
        '"""',
        "",
        "OPENVINO_VERSION = " + repr(release),
        "",
    ]
    body = "FUNCTIONS: dict[str, dict] = " + pprint.pformat(functions, width=99,
                                                            sort_dicts=True) + "\n\n"
    body += "OPSETS: dict[int, dict[str, str]] = " + pprint.pformat(opsets, width=99,
                                                                     sort_dicts=True) + "\n"
    return "\n".join(head) + "\n" + body


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the file instead of writing it")
    args = parser.parse_args(argv)
    version, functions, opsets, problems = read_openvino()
    for p in sorted(set(problems)):
        print(f"not read: {p}", file=sys.stderr)
    text = render(version, functions, opsets)
    if args.check:
        same = TARGET.exists() and TARGET.read_text(encoding="utf-8") == text
        print(f"{TARGET.relative_to(ROOT)} is {'up to date' if same else 'out of date'}")
        return 0 if same else 1
    TARGET.parent.mkdir(exist_ok=True)
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)} ({len(functions)} functions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
