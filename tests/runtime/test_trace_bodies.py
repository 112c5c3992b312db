"""Tracing inside sub-graphs on request (``trace_bodies``; ``irexec run --trace-bodies``): every
body layer once per iteration, named by its path, nested bodies included; off by default."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import irexec
from irexec.runtime.trace import BodyLayer
from tests.cli.conftest import run_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "subgraphs"


def _traced(name: str, inputs: dict, bodies: bool):
    seen = []
    compiled = irexec.compile_model(irexec.read_model(DATA / f"{name}.xml"))
    outputs = compiled(inputs, trace=lambda layer, port, a: seen.append((layer, port, a.copy())),
                       trace_bodies=bodies)
    return seen, outputs


def test_body_layers_are_traced_per_iteration_with_their_values():
    x = np.arange(3, dtype=np.float32).reshape(1, 3)
    acc0 = np.full((1, 3), -1, np.float32)
    seen, outputs = _traced("loop_concat", {"x": x, "acc0": acc0, "trip": np.array(3)}, True)
    grown = [(layer, a) for layer, _, a in seen if isinstance(layer, BodyLayer)
             and layer.node.name == "grown"]
    assert [layer.name for layer, _ in grown] == [f"Loop_14/body/{i}/grown" for i in range(3)]
    assert [layer.iteration for layer, _ in grown] == [0, 1, 2]
    # Iteration i has appended x to the accumulator i + 1 times (a plain numpy loop).
    acc = acc0
    for i, (layer, value) in enumerate(grown):
        acc = np.concatenate([acc, x])
        np.testing.assert_array_equal(value, acc)
        assert layer.type == "Concat" and layer.id.startswith("4/body/")
    its = [a for layer, _, a in seen if isinstance(layer, BodyLayer) and layer.node.name == "its"]
    assert [float(a) for a in its] == [0.0, 1.0, 2.0]
    # The outer layer's outputs follow its body's last iteration.
    names = [layer.name for layer, _, _ in seen]
    assert names.index("Loop_14") > names.index("Loop_14/body/2/grown")
    np.testing.assert_array_equal(list(outputs.values())[0], acc)


def test_no_body_layers_unless_asked():
    x = np.zeros((1, 3), np.float32)
    seen, _ = _traced("loop_concat", {"x": x, "acc0": x, "trip": np.array(2)}, False)
    assert not [layer for layer, _, _ in seen if isinstance(layer, BodyLayer)]
    assert [layer.name for layer, _, _ in seen] == ["x", "acc0", "trip", "Loop_14", "Loop_14"]


def test_nested_bodies_carry_both_paths():
    seen, outputs = _traced("nested_loops", {"x": np.array([1.5], np.float32)}, True)
    added = [(layer.name, float(a[0])) for layer, _, a in seen
             if isinstance(layer, BodyLayer) and layer.node.name.endswith("added")]
    # outer iteration o, inner iteration i: x + 3*o + i + 1
    expected = [(o, i, 1.5 + 3 * o + i + 1) for o in range(2) for i in range(3)]
    assert [v for _, v in added] == [v for _, _, v in expected]
    for (name, _), (o, i, _) in zip(added, expected):
        assert name.startswith(f"outer_loop/body/{o}/inner_loop/body/{i}/")
    assert [float(v) for v in list(outputs.values())[1]] == [4.5, 7.5]


def test_if_traces_the_branch_it_ran():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    for cond, branch in ((True, "then_body"), (False, "else_body")):
        seen, _ = _traced("if_branches", {"c": np.array(cond), "a": a}, True)
        bodies = {layer.name.split("/")[1] for layer, _, _ in seen if isinstance(layer, BodyLayer)}
        assert bodies == {branch}


def test_cli_writes_body_files_and_needs_trace(tmp_path):
    np.save(tmp_path / "trip.npy", np.array(2, np.int64))
    proc = run_cli("run", DATA / "loop_concat.xml", "--input", f"trip={tmp_path / 'trip.npy'}",
                   "--trace", tmp_path / "t", "--trace-bodies")
    assert proc.returncode == 0, proc.stderr
    index = json.loads((tmp_path / "t" / "index.json").read_text())
    files = {e["layer"]: e["file"] for e in index["layers"]}
    assert files["Loop_14/body/1/grown"] == "Loop_14_body_1_grown.npy"
    assert np.load(tmp_path / "t" / "Loop_14_body_1_grown.npy").shape == (3, 3)
    proc = run_cli("run", DATA / "loop_concat.xml", "--trace-bodies")
    assert proc.returncode == 2 and "--trace-bodies: needs --trace DIR" in proc.stderr


@pytest.mark.parametrize("seed", range(5))
def test_generated_trip_counts_are_small(seed):
    """A Loop's generated trip count is 0 to 4, never negative (no limit): `irexec run` on a
    Loop model with no inputs given ends."""
    from irexec.runtime.inputs import make_inputs

    trip = make_inputs(irexec.read_model(DATA / "loop_concat.xml"), {}, seed)["trip"]
    assert 0 <= int(trip) <= 4
