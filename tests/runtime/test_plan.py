"""The compiled plan: flat steps, constants resolved once, intermediates freed after last use."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder
from irexec.ops.spec import Input, Op, OpSpec, Output, TensorType
from irexec.runtime.plan import Plan, Step
from tests.runtime.runtime_irxml import L

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
CHAIN = SAMPLES / "convert_reverse_chain.xml"


# --- test-only ops ------------------------------------------------------------------------------

SEEN: list = []  # what the probe ops observed, in call order


class Remember(Op):
    """Passes its first input on (a new array) and remembers every input it was given."""

    spec = OpSpec(type="IrxTestRemember", since=1,
                  inputs=(Input("x"), Input("extra", optional=True)), outputs=(Output("y"),))

    @staticmethod
    def kernel(x, *extra):
        SEEN.append(("remember", [weakref.ref(x)] + [a for a in extra]))
        return x.copy()


class AliveProbe(Op):
    """Records whether the array the last Remember saw is still alive, then copies its input."""

    spec = OpSpec(type="IrxTestAliveProbe", since=1, inputs=(Input("x"),), outputs=(Output("y"),))

    @staticmethod
    def kernel(x):
        gc.collect()
        ref = next(item for kind, item in reversed(SEEN) if kind == "remember")[0]
        SEEN.append(("alive", ref() is not None))
        return x.copy()


class TwoOut(Op):
    """Two outputs: x + 1 and x - 1."""

    spec = OpSpec(type="IrxTestTwoOut", since=1, inputs=(Input("x"),),
                  outputs=(Output("plus"), Output("minus")))

    @staticmethod
    def infer(ctx):
        t = ctx.input_type(0)
        return [TensorType(t.element_type, t.shape), TensorType(t.element_type, t.shape)]

    @staticmethod
    def kernel(x):
        return x + 1, x - 1


@pytest.fixture
def probes(registry_sandbox):
    for op in (Remember, AliveProbe, TwoOut):
        irexec.register_op(op)
    SEEN.clear()
    yield
    SEEN.clear()


def chain_plan() -> Plan:
    return irexec.compile_model(irexec.read_model(CHAIN)).plan


def slot_of_input(plan: Plan, name: str) -> int:
    return next(i.slot for i in plan.inputs if i.name == name)


def slot_of_output(plan: Plan, name: str) -> int:
    return next(o.slot for o in plan.outputs if o.name == name)


# --- shape of the plan ----------------------------------------------------------------------------

def test_plan_is_a_flat_list_of_steps_in_topological_order():
    plan = chain_plan()
    assert isinstance(plan.steps, list) and all(isinstance(s, Step) for s in plan.steps)
    # Parameters, Consts and Results are not steps: only the three computing layers are.
    assert [(s.layer, s.type) for s in plan.steps] == [
        ("to_f32", "Convert"), ("reversed_sequences", "ReverseSequence"), ("flipped", "Reverse")]
    for step in plan.steps:
        assert callable(step.kernel)
        assert all(0 <= s < plan.num_slots for s in step.inputs + step.outputs)
    # Each step reads slots written earlier (by an input, a constant or a previous step).
    written = {i.slot for i in plan.inputs} | set(plan.constants)
    for step in plan.steps:
        assert set(step.inputs) <= written
        written |= set(step.outputs)
    assert [i.name for i in plan.inputs] == ["data", "seq_lengths"]
    assert [o.name for o in plan.outputs] == ["reversed_sequences", "flipped"]


def test_plan_steps_name_their_layer_and_location():
    plan = chain_plan()
    text = CHAIN.read_text().splitlines()
    for step in plan.steps:
        assert step.location.file == str(CHAIN)
        assert f'name="{step.layer}"' in text[step.location.line - 1]


def test_constants_are_in_the_plan_not_steps():
    plan = chain_plan()
    assert len(plan.constants) == 1
    (value,) = plan.constants.values()
    np.testing.assert_array_equal(value, np.array([-1], np.int64))
    assert value.dtype == np.int64


def test_kernels_have_attributes_bound():
    plan = chain_plan()
    rs = next(s for s in plan.steps if s.type == "ReverseSequence")
    # Calling the bound kernel with arrays only works: attributes are already keywords.
    data = np.arange(5 * 4 * 3, dtype=np.float32).reshape(5, 4, 3)
    out = rs.kernel(data, np.array([5, 1, 1, 1], np.int64))
    expected = data.copy()
    expected[:, 0] = data[::-1, 0]  # batch_axis=1, seq_axis=0: column 0 fully reversed
    np.testing.assert_array_equal(out, expected)


# --- constants resolved once -------------------------------------------------------------------

def test_constant_is_the_same_array_object_on_every_call(probes):
    b = ModelBuilder()
    x = b.parameter("x", "f32", [3])
    c = b.constant(np.array([7, 8, 9], np.int32), name="c")
    b.result(b.op("IrxTestRemember", x, c, name="rem"), "out")
    compiled = irexec.compile_model(b.build())
    for _ in range(3):
        compiled({"x": np.zeros(3, np.float32)})
    seen_consts = [extra[1] for kind, extra in SEEN if kind == "remember"]
    assert len(seen_consts) == 3
    assert seen_consts[0] is seen_consts[1] is seen_consts[2]
    assert seen_consts[0] is next(iter(compiled.plan.constants.values()))


def test_constant_from_bin_is_read_once(monkeypatch):
    """Running many times never goes back to the .bin: no Weights.tensor call after compiling."""
    from irexec.io import weights

    compiled = irexec.compile_model(irexec.read_model(CHAIN))
    calls = []
    monkeypatch.setattr(weights.Weights, "tensor", lambda *a, **k: calls.append(a))
    x = np.arange(60, dtype=np.int32).reshape(5, 4, 3)
    for _ in range(2):
        compiled({"data": x, "seq_lengths": np.array([1, 2, 3, 4], np.int64)})
    assert calls == []


# --- freeing -----------------------------------------------------------------------------------

def test_chain_plan_frees_each_slot_after_its_last_reader():
    plan = chain_plan()
    convert, rs, rev = plan.steps
    data, lengths = slot_of_input(plan, "data"), slot_of_input(plan, "seq_lengths")
    (const,) = plan.constants
    (as_float,) = convert.outputs
    seq_out, flipped = slot_of_output(plan, "reversed_sequences"), slot_of_output(plan,
                                                                                 "flipped")
    assert set(convert.free) == {data}
    assert set(rs.free) == {as_float, lengths}
    assert set(rev.free) == {const}  # reversed_sequences is an output: never freed
    all_freed = [s for step in plan.steps for s in step.free]
    assert seq_out not in all_freed and flipped not in all_freed
    assert len(all_freed) == len(set(all_freed))  # freed once


def test_free_lists_match_last_use_everywhere(probes):
    """On a wider graph: a slot is freed exactly at the last step reading it, outputs never."""
    b = ModelBuilder()
    x = b.parameter("x", "f32", [4])
    a = b.op("Convert", x, destination_type="f64", name="a")
    bb = b.op("IrxTestRemember", a, name="b")
    c = b.op("IrxTestRemember", bb, a, name="c")  # last reader of a
    d = b.op("IrxTestRemember", c, name="d")
    b.result(d, "out1")
    b.result(bb, "out2")  # b is an output: kept although c was its last reader
    plan = irexec.compile_model(b.build()).plan
    step = {s.layer: s for s in plan.steps}
    kept = {o.slot for o in plan.outputs}
    assert set(step["a"].free) == {slot_of_input(plan, "x")}  # a is x's only reader
    for i, s in enumerate(plan.steps):
        readers_after = {slot for later in plan.steps[i + 1:] for slot in later.inputs}
        for slot in s.free:
            assert slot not in readers_after and slot not in kept
        for slot in set(s.inputs) - readers_after - kept:
            assert slot in s.free
    assert step["c"].outputs[0] in step["d"].free
    assert step["a"].outputs[0] in step["c"].free
    assert step["b"].outputs[0] not in step["c"].free


def test_unread_output_is_freed_by_its_own_step(probes):
    b = ModelBuilder()
    x = b.parameter("x", "i32", [2])
    plus, _ = b.op("IrxTestTwoOut", x, name="two")  # output 0 used, output 1 nobody reads
    b.result(plus, "out")
    model = b.build()
    compiled = irexec.compile_model(model)
    (step,) = compiled.plan.steps
    plus_slot, minus_slot = step.outputs
    assert minus_slot in step.free and plus_slot not in step.free
    out = compiled({"x": np.array([10, 20], np.int32)})
    np.testing.assert_array_equal(out["two"], np.array([11, 21], np.int32))


def test_intermediate_is_released_before_the_call_ends(probes):
    """x -> Convert -> Remember -> AliveProbe -> Result: when AliveProbe runs, the Convert result
    (read only by Remember) must already be gone."""
    b = ModelBuilder()
    x = b.parameter("x", "f32", [1000])
    a = b.op("Convert", x, destination_type="f64", name="a")
    r = b.op("IrxTestRemember", a, name="remember")
    b.result(b.op("IrxTestAliveProbe", r, name="probe"), "out")
    irexec.compile_model(b.build())({"x": np.ones(1000, np.float32)})
    assert ("alive", False) in SEEN


def test_intermediate_that_is_an_output_is_kept_alive(probes):
    """The same chain, but the Convert result is also a model output: it must survive."""
    b = ModelBuilder()
    x = b.parameter("x", "f32", [1000])
    a = b.op("Convert", x, destination_type="f64", name="a")
    r = b.op("IrxTestRemember", a, name="remember")
    b.result(b.op("IrxTestAliveProbe", r, name="probe"), "out")
    b.result(a, "a_out")
    out = irexec.compile_model(b.build())({"x": np.ones(1000, np.float32)})
    assert ("alive", True) in SEEN
    np.testing.assert_array_equal(out["a"], np.ones(1000))


def test_run_leaves_no_reference_to_intermediates(probes):
    """After a call returns, nothing in the compiled model keeps intermediates alive."""
    b = ModelBuilder()
    x = b.parameter("x", "f32", [10])
    a = b.op("Convert", x, destination_type="f64", name="a")
    b.result(b.op("IrxTestRemember", a, name="remember"), "out")
    compiled = irexec.compile_model(b.build())
    compiled({"x": np.ones(10, np.float32)})
    gc.collect()
    ref = SEEN[-1][1][0]
    assert ref() is None


# --- unused layers -----------------------------------------------------------------------------

def test_layers_no_result_needs_are_not_in_the_plan(ir_file):
    layers = [
        L(0, "x", "Parameter", {"shape": "2,3", "element_type": "f32"}, [], [([2, 3], "FP32", "x")]),
        L(1, "used", "Convert", {"destination_type": "f64"}, [[2, 3]], [([2, 3], "FP64", "used")]),
        L(2, "unused", "Convert", {"destination_type": "i32"}, [[2, 3]],
          [([2, 3], "I32", "unused")]),
        L(3, "unused_axes", "Const", {"element_type": "i64", "shape": "1", "offset": "0",
                                      "size": "8"}, [], [([1], "I64", None)]),
        L(4, "unused_rev", "Reverse", {"mode": "index"}, [[2, 3], [1]], [([2, 3], "I32", None)]),
        L(5, "out", "Result", {}, [[2, 3]]),
    ]
    path = ir_file(layers, [(0, 0, 1, 0), (0, 0, 2, 0), (2, 0, 4, 0), (3, 0, 4, 1), (1, 0, 5, 0)],
                   weights=np.array([0], np.int64).tobytes())
    model = irexec.read_model(path)
    warned = {d.location.layer_name for d in model.diagnostics if d.code == "IR205"}
    assert warned == {"unused", "unused_axes", "unused_rev"}
    compiled = irexec.compile_model(model)
    assert [s.layer for s in compiled.plan.steps] == ["used"]
    assert compiled.plan.constants == {}
    assert "unused" not in str(compiled.plan)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = compiled({"x": x})
    assert list(out) == ["used"]
    np.testing.assert_array_equal(out["used"], x.astype(np.float64))


# --- printing ----------------------------------------------------------------------------------

def test_print_plan_is_readable():
    plan = chain_plan()
    text = str(plan)
    lines = text.splitlines()
    assert lines[0] == f"plan: {plan.num_slots} slots, 3 steps"
    for name in ("data", "seq_lengths"):
        assert any("input" in ln and repr(name) in ln for ln in lines)
    assert sum("constant" in ln for ln in lines) == 1
    for layer, type_ in (("to_f32", "Convert"), ("reversed_sequences", "ReverseSequence"),
                         ("flipped", "Reverse")):
        (line,) = [ln for ln in lines if f"# {layer}" in ln]
        assert f"{type_}(" in line
    assert any("output 'flipped'" in ln for ln in lines)
    assert any("output 'reversed_sequences'" in ln for ln in lines)
    assert any("free" in ln for ln in lines)
    assert all(len(ln) < 120 for ln in lines)
    assert "<" not in text  # no object reprs such as <function ...>


def test_alive_probe_sees_a_live_intermediate_when_freeing_is_disabled(probes):
    """Control for the test above: with the free lists emptied the probe does see the array, so
    the probe really measures the plan's freeing."""
    import dataclasses

    b = ModelBuilder()
    x = b.parameter("x", "f32", [1000])
    a = b.op("Convert", x, destination_type="f64", name="a")
    r = b.op("IrxTestRemember", a, name="remember")
    b.result(b.op("IrxTestAliveProbe", r, name="probe"), "out")
    compiled = irexec.compile_model(b.build())
    compiled.plan.steps = [dataclasses.replace(s, free=()) for s in compiled.plan.steps]
    compiled({"x": np.ones(1000, np.float32)})
    assert ("alive", True) in SEEN
