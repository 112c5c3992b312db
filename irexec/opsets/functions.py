"""The functions of ``irexec.opsetN``, made from data: OpenVINO's Python opset functions as
``irexec/opsets/signatures.py`` records them (names, parameters and defaults, which parameters
feed the input ports and which set attributes), served by irexec's registered ops.

A function is offered in ``irexec.opsetN`` when OpenVINO's ``openvino.opsetN`` has it and
irexec registers its op type in that opset. It makes the op version the OpenVINO module that
defines the function makes (Convolution-1 for ``convolution``, Interpolate-11 for
``interpolate`` in opset13), written with that version's first opset, as OpenVINO writes it.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from irexec.ir.model import Node
from irexec.ir.shape import PartialShape
from irexec.ops import openvino_opsets, registry
from irexec.opsets import graph, subgraphs
from irexec.opsets.graph import ArgumentError, as_outputs, element_type
from irexec.opsets.signatures import FUNCTIONS, OPSETS

_KINDS = {"positional": inspect.Parameter.POSITIONAL_OR_KEYWORD,
          "keyword": inspect.Parameter.KEYWORD_ONLY}


def _default(rule):
    if rule[0] == "required":
        return inspect.Parameter.empty
    return rule[1]  # an element type's default stays its name ("i32")


def signature(entry: dict) -> inspect.Signature:
    return inspect.Signature([inspect.Parameter(name, _KINDS[kind], default=_default(d))
                              for name, kind, d in entry["params"]])


def _attribute(rule, arguments: dict, function: str):
    if rule[0] == "value":
        return rule[1]
    param, transform = rule[1], rule[2]
    value = arguments.get(param)
    if len(rule) > 3 and arguments.get(rule[3]) is not None:
        value = arguments[rule[3]]  # a (deprecated) argument that wins when given
    if value is None:
        return None
    if transform == "element_type":
        return element_type(value, function, param)
    if transform in ("item0", "item1"):
        try:
            return list(value)[int(transform[-1])]
        except (TypeError, IndexError):
            raise ArgumentError(f"{function}: argument '{param}' must be two numbers, not "
                                f"{value!r}") from None
    if isinstance(value, PartialShape):
        return value
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple):
        return list(value)
    return value


def _fill(value, like) -> list:
    """The constant OpenVINO puts for an optional input left out before a given one."""
    node = graph.constant_layer(np.array(value, dtype=like.element_type.dtype))
    return list(node.outputs)


def make_function(python_name: str, entry: dict):
    """One opset function: binds its arguments as OpenVINO's does, makes the inputs (Constants
    of arrays and numbers), the attributes, and the layer."""
    sig = signature(entry)
    type_name = entry["type"]
    # The op version the defining module makes, written as OpenVINO writes it: the first opset
    # holding that version (Interpolate-4 from opset10's function is version="opset4").
    defining = entry["opset"]
    since = graph.lookup(type_name, f"opset{defining}").spec.since
    holding = [n for n in sorted(openvino_opsets.OPSETS) if since <= n <= defining
               and type_name in openvino_opsets.OPSETS[n]]
    version = f"opset{holding[0] if holding else defining}"  # MVN-1 first came in opset2
    input_params = {i[0] for i in entry["inputs"]}

    def function(*args, **kwargs):
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise ArgumentError(f"{python_name}: {e}") from None
        bound.apply_defaults()
        arguments = bound.arguments
        for param, rule in entry.get("none_defaults", {}).items():
            if arguments.get(param) is None:  # what OpenVINO's function puts there
                if rule[0] == "value":
                    arguments[param] = rule[1]
                elif hasattr(arguments.get(rule[2]), "__len__"):
                    arguments[param] = [rule[1]] * len(arguments[rule[2]])
        name = arguments.get("name")
        if name is not None and not isinstance(name, str):
            raise ArgumentError(f"{python_name}: argument 'name' must be text, not "
                                f"{type(name).__name__}")
        inputs = []
        items = entry["inputs"]
        for k, item in enumerate(items):
            param, kind, optional = item[:3]
            value = arguments.get(param)
            if value is None and optional:
                later = [i[0] for i in items[k + 1:] if arguments.get(i[0]) is not None]
                if not later:
                    continue
                if len(item) > 3:  # filled as OpenVINO fills it
                    inputs.extend(_fill(item[3], inputs[item[4]]))
                    continue
                raise ArgumentError(f"{python_name}: argument '{param}' is needed when "
                                    f"'{later[0]}' is given")
            if kind == "list":
                if isinstance(value, (Node, np.ndarray)) or not hasattr(value, "__iter__"):
                    raise ArgumentError(f"{python_name}: argument '{param}' must be a list of "
                                        f"nodes or outputs, not {type(value).__name__}")
                for v in value:
                    inputs.extend(as_outputs(v, python_name, param))
            else:
                inputs.extend(as_outputs(value, python_name, param))
        attrs = {}
        if entry.get("attrs_from"):
            given = arguments.get(entry["attrs_from"]) or {}
            if not isinstance(given, dict):
                raise ArgumentError(f"{python_name}: argument '{entry['attrs_from']}' must be "
                                    f"a dict of attributes, not {type(given).__name__}")
            attrs.update({k: _attribute(("param", k, None), given, python_name)
                          for k in given})
        for key, rule in entry["attrs"].items():
            if rule[0] == "param" and rule[1] in input_params:
                continue
            value = _attribute(rule, arguments, python_name)
            if value is not None:
                attrs[key] = value
        spec = graph.lookup(type_name, version).spec
        known = {a.name for a in spec.attrs}
        # Attributes OpenVINO's function writes that irexec's spec does not hold (internal
        # ones of older layer versions) are left out rather than written as unknown text.
        attrs = {k: v for k, v in attrs.items() if k in known}
        for key, value in attrs.items():  # a value of the wrong kind: name the argument
            try:
                spec.attr(key).coerce(value)
            except ValueError as e:
                rule = entry["attrs"].get(key)
                param = rule[1] if rule and rule[0] == "param" else entry.get("attrs_from", key)
                raise ArgumentError(f"{python_name}: argument '{param}' (attribute '{key}' of "
                                    f"{spec.type}): {e}") from None
        return graph.make_layer(type_name, version, inputs, attrs, name)

    function.__name__ = function.__qualname__ = python_name
    function.__signature__ = sig
    function.__doc__ = (f"{entry['type']}-{entry['opset']} as OpenVINO's "
                        f"openvino.opset{entry['opset']}.{python_name}: {sig}")
    return function


# --- the functions OpenVINO makes with classes --------------------------------------------------

def parameter(shape, dtype=np.float32, name=None) -> Node:
    """A Parameter (a model input) of this shape and element type."""
    et = element_type(dtype, "parameter", "dtype")
    return graph.make_layer("Parameter", "opset1", [],
                            {"element_type": et,
                             "shape": graph._shape(shape, "parameter", "shape")}, name)


def constant(value, dtype=None, name=None, *, shared_memory=False) -> Node:
    """A Constant holding ``value`` (an array, a number or a list), of ``dtype`` if given.
    ``shared_memory`` is accepted; irexec keeps its own copy either way."""
    del shared_memory
    if value is None or (isinstance(value, np.ndarray) and value.size == 0):
        raise ValueError("Cannot create an empty Constant. Please provide valid data.")
    return graph.constant_layer(value, dtype, name)


def result(data, name=None) -> Node:
    """A Result (a model output) of ``data``'s first output."""
    ports = as_outputs(data, "result", "data")
    return graph.make_layer("Result", "opset1", ports[:1], {}, name)


def read_value(*args, **kwargs) -> Node:
    """ReadValue-6, in both of OpenVINO's forms: ``read_value(init_value, variable_id,
    variable_type=None, variable_shape=None, name=None)`` and ``read_value(variable_id,
    variable_type=None, variable_shape=None, name=None)`` (zeros of the variable's shape before
    any Assign). OpenVINO's ``Variable`` objects are not taken: give the variable's id."""
    if args and isinstance(args[0], str) or (not args and "init_value" not in kwargs):
        names = ("variable_id", "variable_type", "variable_shape", "name")
        init = None
    else:
        names = ("init_value", "variable_id", "variable_type", "variable_shape", "name")
        init = ...
    if len(args) > len(names):
        raise ArgumentError(f"read_value: takes at most {len(names)} arguments")
    given = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names or key in given:
            raise ArgumentError(f"read_value: unexpected or repeated argument '{key}'")
        given[key] = value
    variable_id = given.get("variable_id")
    if not isinstance(variable_id, str):
        raise ArgumentError(f"read_value: argument 'variable_id' must be the variable's name "
                            f"(text), not {type(variable_id).__name__}")
    inputs = []
    if init is not None:
        inputs = as_outputs(given.get("init_value"), "read_value", "init_value")[:1]
    et = given.get("variable_type")
    shape = given.get("variable_shape")
    attrs = {"variable_id": variable_id,
             "variable_type": element_type(et, "read_value", "variable_type")
             if et is not None else "dynamic",
             "variable_shape": graph._shape(shape, "read_value", "variable_shape")
             if shape is not None else PartialShape.dynamic()}
    return graph.make_layer("ReadValue", "opset6", inputs, attrs, given.get("name"))


def assign(new_value, variable_id, name=None) -> Node:
    """Assign-6: the variable's value for the next call. Give it to the model as a sink:
    ``Model(results, sinks, parameters)`` or ``Model(results, parameters, sinks=[...])``."""
    if not isinstance(variable_id, str):
        raise ArgumentError(f"assign: argument 'variable_id' must be the variable's name "
                            f"(text), not {type(variable_id).__name__}")
    ports = as_outputs(new_value, "assign", "new_value")
    return graph.make_layer("Assign", "opset6", ports[:1], {"variable_id": variable_id},
                            name or None)


HANDWRITTEN = {"parameter": parameter, "constant": constant, "result": result,
               "read_value": read_value, "assign": assign,
               "tensor_iterator": subgraphs.tensor_iterator, "loop": subgraphs.loop,
               "if_op": subgraphs.if_op}


@functools.cache
def functions_of(n: int) -> dict:
    """Every function of ``irexec.opset{n}``: OpenVINO's names, served by irexec's ops."""
    table = {}
    for python_name, key in OPSETS.get(n, {}).items():
        if key == "handwritten":
            if python_name in HANDWRITTEN:
                table[python_name] = HANDWRITTEN[python_name]
            continue
        entry = FUNCTIONS[key]
        try:
            registry.lookup(entry["type"], f"opset{entry['opset']}")
        except registry.LookupFailure:
            continue  # an op irexec does not run: no function
        table[python_name] = make_function(python_name, entry)
    return table


def populate(namespace: dict, n: int) -> None:
    """Fill an ``irexec.opsetN`` module's namespace."""
    table = functions_of(n)
    namespace.update(table)
    namespace["__all__"] = sorted(table)
