"""Every element-wise op on rank-0 tensors of f16, bf16 and f32 (irexec/kernels/numeric.py: a
kernel computes 0-d inputs as one-element vectors): the result is a 0-d ndarray of the output's
element type, holding exactly what the same layer gives for shape [1], and (where OpenVINO is
installed) what OpenVINO's CPU plugin gives, within the op's tolerance.

numpy's ufuncs turn 0-d arrays into numpy scalars; before the rule, f16 Elu and Selu failed with
"copyto() argument 1 must be a numpy.ndarray", Gelu, HSwish, SquaredDifference and FakeConvert
with "return arrays must be of ArrayType" (exit 3).

An op counts as element-wise here when every input it requires accepts the float type and a
layer of it over rank-0 inputs of that type infers rank-0 outputs of that type; the ops are found
in the registry, not listed, so a new op is tested as it is added.
"""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec import numerics
from irexec.builder import ModelBuilder
from irexec.errors import IRError
from irexec.ir.element_type import from_name
from irexec.ops import registry
from irexec.ops.spec import resolve

TYPES = ("f16", "bf16", "f32")
_ATTR_VALUES = {"float": 0.5, "int": 1, "bool": False}  # a valid value of a required attribute
_STRINGS = {("FakeConvert", "destination_type"): "f8e4m3"}  # free-text attributes


def _attrs(spec) -> dict | None:
    """A value for every required attribute (None: one of a kind this test cannot make up)."""
    attrs = {}
    for a in spec.attrs:
        if not a.required:
            continue
        if a.values:
            attrs[a.name] = a.values[0]
        elif a.kind in _ATTR_VALUES:
            attrs[a.name] = _ATTR_VALUES[a.kind]
        elif (spec.type, a.name) in _STRINGS:
            attrs[a.name] = _STRINGS[spec.type, a.name]
        else:
            return None
    return attrs


def _model(op, type_name: str, shape: list[int], attrs: dict):
    """One layer of ``op`` over its required inputs, all of ``shape``: the first a Parameter,
    the others Constants (OpenVINO's CPU plugin wants Selu's and HardSigmoid's parameters
    constant); None when its inputs do not take ``type_name`` or the layer is not element-wise
    on them."""
    spec = op.spec
    et = from_name(type_name)
    required = [i for i in spec.inputs if not i.optional]
    count = sum(max(i.variadic or 1, 1) if i.variadic is not None else 1 for i in required)
    rules = [spec.input_rule(k) for k in range(count)]
    if not rules or any(r is None or not _allows(resolve(r.types, attrs), et) for r in rules):
        return None
    b = ModelBuilder("rank0")
    rng = np.random.default_rng(3)
    params = [b.parameter("in0", type_name, shape)]
    params += [b.constant(rng.uniform(0.1, 2.0, shape).astype(np.float32).astype(et.dtype),
                          type_name) for _ in range(count - 1)]
    try:
        outs = b.op(spec.type, *params, version=f"{spec.family}{spec.since}", name="op", **attrs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        for k, port in enumerate(outs):
            b.result(port, name=f"out{k}")
        model = b.build()
    except (IRError, ValueError, TypeError):
        return None
    for port in (p for n in model.nodes if n.name == "op" for p in n.outputs):
        ps = port.partial_shape
        if port.element_type != et or not ps.is_static or list(ps.to_shape()) != shape:
            return None
    return model


def _allows(rule, et) -> bool:
    return rule is not None and rule.allows(et)


def _variants(spec, attrs: dict) -> list[dict]:
    """The required attributes, and each other value of every enum attribute on top (Gelu's
    tanh form is another function than its default erf one)."""
    out = [attrs]
    for a in spec.attrs:
        if a.values and not a.required:
            out += [{**attrs, a.name: v} for v in a.values if v != a.default]
    return out


def _cases():
    for op in registry.all_ops():
        spec = op.spec
        if spec.role is not None or spec.bodies or not spec.folds or spec.keeps_state:
            continue
        attrs = _attrs(spec)
        if attrs is None:
            continue
        for variant in _variants(spec, attrs):
            extra = "".join(f"-{v}" for k, v in variant.items() if k not in attrs)
            for type_name in TYPES:
                if _model(op, type_name, [], variant) is not None \
                        and _model(op, type_name, [1], variant) is not None:
                    yield pytest.param(op, type_name, variant, id=f"{spec.type}-{spec.family}"
                                       f"{spec.since}{extra}-{type_name}")


CASES = list(_cases())


def _inputs(model, type_name: str, shape, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    dtype = from_name(type_name).dtype
    return {p.name: rng.uniform(0.1, 2.0, shape).astype(np.float32).astype(dtype)
            for p in model.get_parameters()}


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}")


def test_the_ops_that_failed_on_rank_0_are_among_the_cases():
    found = {(c.values[0].spec.type, c.values[1]) for c in CASES}
    for name in ("Elu", "Selu", "Gelu", "HSwish", "SquaredDifference", "FakeConvert", "Add",
                 "Exp", "Relu", "Clamp", "PRelu", "Swish", "HardSigmoid"):
        assert (name, "f16") in found, name


@pytest.mark.parametrize("op, type_name, attrs", CASES)
def test_rank_0_gives_a_0d_array_with_the_values_of_shape_1(op, type_name, attrs):
    model = _model(op, type_name, [], attrs)
    vector = _model(op, type_name, [1], attrs)
    feed = _inputs(model, type_name, (), seed=1)
    got = irexec.compile_model(model)(feed)
    want = irexec.compile_model(vector)({k: v.reshape(1) for k, v in feed.items()})
    dtype = from_name(type_name).dtype
    for name in want:
        out = got[name]
        assert type(out) is np.ndarray and out.shape == () and out.dtype == dtype, \
            (name, type(out), getattr(out, "shape", None))
        np.testing.assert_array_equal(_bits(out.reshape(1)), _bits(want[name]))


@pytest.mark.parametrize("op, type_name, attrs",
                         [c for c in CASES if c.values[0].spec.family == "opset"
                          and len(c.values[0].spec.outputs) == 1])
def test_rank_0_agrees_with_openvino(op, type_name, attrs, tmp_path):
    ov = pytest.importorskip("openvino")
    from tests.conformance.oracle import run_openvino

    model = _model(op, type_name, [], attrs)
    node = next(n for n in model.nodes if n.name == "op")
    if op.openvino_refuses is not None and op.openvino_refuses(node):
        pytest.skip(op.openvino_refuses(node))
    xml = tmp_path / "rank0.xml"
    irexec.save_model(model, xml)
    feed = _inputs(model, type_name, (), seed=2)
    ours = irexec.compile_model(irexec.read_model(xml))(feed)
    try:
        theirs = run_openvino(ov, xml, feed, list(ours))
    except RuntimeError as e:  # the plugin has no kernel for this layer on rank 0
        said = [line for line in str(e).splitlines() if line.strip()]
        pytest.skip(f"OpenVINO's CPU plugin refuses it: {said[-1][:200] if said else e!r}")
    tol = numerics.tolerance(numerics.family(op.spec), from_name(type_name))
    for name in ours:
        assert ours[name].shape == () and ours[name].dtype == theirs[name].dtype
        assert not tol.outside(ours[name], theirs[name]).any(), \
            (name, feed, ours[name], theirs[name])
