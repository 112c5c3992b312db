"""User-registered operations: run end to end from a hand-written IR file; version lookup rules."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec.errors import OpError
from irexec.ops.domains import AxisIndices
from irexec.ops.spec import Attr, Input, Op, OpSpec, Output, Rank, TensorType
from irexec.runtime.inputs import make_inputs
from tests.runtime.runtime_irxml import L, ir_xml, layer_line


class Scale(Op):
    """y = x * factor (same element type); factor must be positive at run time."""

    spec = OpSpec(
        type="IrxTestScale", since=1,
        attrs=(Attr("factor", "int", doc="the multiplier"),
               Attr("flavour", "enum", default="plain", values=("plain", "fancy"))),
        inputs=(Input("x"),),
        outputs=(Output("y"),),
        doc="Multiplies by a constant.",
    )

    @staticmethod
    def kernel(x, *, factor, flavour):
        if factor <= 0:
            raise OpError(f"factor {factor} must be positive")
        return (x * factor).astype(x.dtype)


class Roll(Op):
    """np.roll along axes given by a second input; exercises a user value domain."""

    spec = OpSpec(
        type="IrxTestRoll", since=1,
        inputs=(Input("x"), Input("axes", rank=Rank(exact=1), domain=AxisIndices(0))),
        outputs=(Output("y"),),
    )

    @staticmethod
    def infer(ctx):
        return [TensorType(ctx.input_type(0).element_type, ctx.input_type(0).shape)]

    @staticmethod
    def kernel(x, axes):
        return np.roll(x, 1, axis=tuple(int(a) for a in axes))


def versioned(since, until=None):
    class Versioned(Op):
        spec = OpSpec(type="IrxTestVer", since=since, until=until, inputs=(Input("x"),),
                      outputs=(Output("y"),))

        @staticmethod
        def kernel(x):
            return x + np.asarray(since, x.dtype)  # tells which registration ran

    return Versioned


def scale_layers(type_name="IrxTestScale", data=None, version="opset1"):
    return [
        L(0, "x", "Parameter", {"shape": "2,2", "element_type": "i32"}, [], [([2, 2], "I32", "x")]),
        L(1, "scaled", type_name, {"factor": "3"} if data is None else data, [[2, 2]],
          [([2, 2], "I32", "y")], version=version),
        L(2, "out", "Result", {}, [[2, 2]]),
    ]


EDGES = [(0, 0, 1, 0), (1, 0, 2, 0)]
X = np.array([[1, -2], [3, 4]], np.int32)


@pytest.fixture
def user_ops(registry_sandbox):
    irexec.register_op(Scale)
    irexec.register_op(Roll)
    return registry_sandbox


def test_user_op_runs_end_to_end_from_an_ir_file(user_ops, ir_file):
    path = ir_file(scale_layers(), EDGES)
    model = irexec.read_model(path)
    node = next(n for n in model.nodes if n.name == "scaled")
    assert node.attrs == {"factor": 3, "flavour": "plain"}
    out = irexec.compile_model(model)({"x": X})
    assert list(out) == ["y"]
    np.testing.assert_array_equal(out["y"], X * 3)
    assert out["y"].dtype == np.int32


def test_register_op_works_as_a_decorator(registry_sandbox, ir_file):
    @irexec.register_op
    class Negate(Op):
        spec = OpSpec(type="IrxTestNegate", since=1, inputs=(Input("x"),), outputs=(Output("y"),))

        @staticmethod
        def kernel(x):
            return -x

    assert Negate.spec.type == "IrxTestNegate"  # the decorator returns the class
    path = ir_file(scale_layers("IrxTestNegate", data={}), EDGES)
    np.testing.assert_array_equal(irexec.compile_model(path)({"x": X})["y"], -X)


def test_user_op_type_is_case_insensitive_in_files(user_ops, ir_file):
    path = ir_file(scale_layers("irxtestscale", {"factor": "2", "flavour": "FANCY"}), EDGES)
    model = irexec.read_model(path)
    assert next(n for n in model.nodes if n.name == "scaled").attrs["flavour"] == "fancy"
    np.testing.assert_array_equal(irexec.compile_model(model)({"x": X})["y"], X * 2)


def test_user_op_attributes_are_checked_from_its_spec(user_ops, ir_file):
    layers = scale_layers(data={"flavour": "odd"})
    path = ir_file(layers, EDGES)
    with pytest.raises(irexec.IRError) as e:
        irexec.read_model(path)
    assert sorted(d.code for d in e.value.diagnostics) == ["IR301", "IR302"]  # factor, flavour
    for d in e.value.diagnostics:
        assert d.location.layer_name == "scaled" and d.location.file == str(path)
    assert "factor" in str(e.value.diagnostics[[d.code for d in e.value.diagnostics].index(
        "IR301")])


def test_user_op_kernel_error_is_ir605_naming_the_layer(user_ops, ir_file):
    layers = scale_layers(data={"factor": "-1"})
    path = ir_file(layers, EDGES)
    with pytest.raises(irexec.IRError) as e:
        irexec.compile_model(path)({"x": X})
    (d,) = e.value.diagnostics
    assert d.code == "IR605" and "factor -1 must be positive" in d.message
    assert (d.location.layer_name, d.location.layer_type) == ("scaled", "IrxTestScale")
    assert d.location.line == layer_line(ir_xml(layers, EDGES, 11, "model"), "scaled")


def test_user_op_value_domain_drives_generated_inputs(user_ops, ir_file):
    layers = [
        L(0, "x", "Parameter", {"shape": "2,3,4", "element_type": "f32"}, [],
          [([2, 3, 4], "FP32", None)]),
        L(1, "axes", "Parameter", {"shape": "2", "element_type": "i64"}, [], [([2], "I64", None)]),
        L(2, "rolled", "IrxTestRoll", {}, [[2, 3, 4], [2]], [([2, 3, 4], "FP32", None)]),
        L(3, "out", "Result", {}, [[2, 3, 4]]),
    ]
    model = irexec.read_model(ir_file(layers, [(0, 0, 2, 0), (1, 0, 2, 1), (2, 0, 3, 0)]))
    for seed in range(20):
        values = make_inputs(model, {}, seed)
        assert values["axes"].dtype == np.int64 and values["axes"].shape == (2,)
        assert ((values["axes"] >= -3) & (values["axes"] <= 2)).all()
        out = irexec.compile_model(model)(values)["out"]  # no tensor names: the Result
        expected = np.roll(values["x"], 1, axis=tuple(values["axes"].tolist()))
        np.testing.assert_array_equal(out, expected)


# --- version lookup ----------------------------------------------------------------------------

@pytest.mark.parametrize("opset, served", [(1, 1), (2, 1), (3, 3), (4, 3)])
def test_highest_registered_version_not_above_the_request(registry_sandbox, opset, served):
    irexec.register_op(versioned(1))
    irexec.register_op(versioned(3, until=4))
    assert registry_sandbox.lookup("IrxTestVer", f"opset{opset}").spec.since == served


@pytest.mark.parametrize("version", ["opset5", "opset100", "opset0"])
def test_lookup_fails_past_the_cap_or_before_the_first(registry_sandbox, version):
    irexec.register_op(versioned(1))
    irexec.register_op(versioned(3, until=4))
    with pytest.raises(registry_sandbox.LookupFailure) as e:
        registry_sandbox.lookup("IrxTestVer", version)
    message = str(e.value)
    assert version in message
    assert "IrxTestVer-1" in message and "IrxTestVer-3 (opset3 to opset4)" in message


@pytest.mark.parametrize("version", ["7", "opsetX", "experimental", ""])
def test_lookup_of_a_version_that_is_not_an_opset_name(registry_sandbox, version):
    irexec.register_op(versioned(1))
    with pytest.raises(registry_sandbox.LookupFailure) as e:
        registry_sandbox.lookup("IrxTestVer", version)
    assert f"'{version}'" in str(e.value)


@pytest.mark.parametrize("opset, added", [(1, 1), (2, 1), (3, 3), (4, 3)])
def test_version_lookup_from_an_ir_file(registry_sandbox, ir_file, opset, added):
    irexec.register_op(versioned(1))
    irexec.register_op(versioned(3, until=4))
    path = ir_file(scale_layers("IrxTestVer", data={}, version=f"opset{opset}"), EDGES)
    np.testing.assert_array_equal(irexec.compile_model(path)({"x": X})["y"], X + added)


def test_version_past_the_cap_in_an_ir_file_is_ir103(registry_sandbox, ir_file):
    irexec.register_op(versioned(1))
    irexec.register_op(versioned(3, until=4))
    layers = scale_layers("IrxTestVer", data={}, version="opset5")
    path = ir_file(layers, EDGES)
    with pytest.raises(irexec.IRError) as e:
        irexec.read_model(path)
    (d,) = e.value.diagnostics
    assert d.code == "IR103"
    assert d.location.layer_name == "scaled" and d.location.layer_type == "IrxTestVer"
    assert d.location.line == layer_line(ir_xml(layers, EDGES, 11, "model"), "scaled")
    assert "opset5" in d.message and "IrxTestVer-3" in d.message


def test_a_newer_registration_of_a_builtin_serves_newer_opsets_only(registry_sandbox):
    builtin = registry_sandbox.lookup("ReverseSequence", "opset16")

    class ReverseSequence17(Op):
        spec = OpSpec(type="ReverseSequence", since=17, inputs=builtin.spec.inputs,
                      attrs=builtin.spec.attrs, outputs=builtin.spec.outputs)

    irexec.register_op(ReverseSequence17)
    assert registry_sandbox.lookup("ReverseSequence", "opset16") is builtin
    assert registry_sandbox.lookup("reversesequence", "opset17") is ReverseSequence17
    assert registry_sandbox.lookup("ReverseSequence", "opset99") is ReverseSequence17


def test_builtin_caps(registry_sandbox):
    assert registry_sandbox.lookup("Reverse", "opset1").spec.type == "Reverse"
    with pytest.raises(registry_sandbox.LookupFailure, match="opset2"):
        registry_sandbox.lookup("Reverse", "opset2")
    assert registry_sandbox.lookup("ReverseSequence", "opset16").spec.since == 1
    with pytest.raises(registry_sandbox.LookupFailure, match="opset17"):
        registry_sandbox.lookup("ReverseSequence", "opset17")
    assert registry_sandbox.lookup("Const", "opset1").spec.type == "Constant"


def test_a_user_registration_overrides_a_builtin(registry_sandbox, ir_file):
    """Registering the same (type, since) again replaces the built-in (the registry is restored
    after this test)."""
    original = registry_sandbox.lookup("Convert", "opset1")

    class LoudConvert(Op):
        spec = original.spec

        infer = staticmethod(original.infer)

        @staticmethod
        def kernel(data, *, destination_type):
            return np.full(data.shape, 42, destination_type.dtype)

    irexec.register_op(LoudConvert)
    layers = scale_layers("Convert", data={"destination_type": "i32"})
    out = irexec.compile_model(ir_file(layers, EDGES))({"x": X})
    np.testing.assert_array_equal(out["y"], np.full((2, 2), 42, np.int32))


def test_the_registry_is_restored_after_overriding(ir_file):
    """Runs after the test above in file order: the built-in Convert is back."""
    layers = scale_layers("Convert", data={"destination_type": "i32"})
    np.testing.assert_array_equal(irexec.compile_model(ir_file(layers, EDGES))({"x": X})["y"], X)


def test_unknown_type_names_where_the_registered_are_listed(ir_file):
    layers = scale_layers("IrxTestNeverRegistered", data={})
    with pytest.raises(irexec.IRError) as e:
        irexec.read_model(ir_file(layers, EDGES))
    (d,) = e.value.diagnostics
    assert d.code == "IR103" and "IrxTestNeverRegistered" in d.message
    assert "`irexec ops`" in d.message and "ReverseSequence" not in d.message  # not all of them
