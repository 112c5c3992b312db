"""The memory rule: every layer's outputs (and the temporaries its op declares) are held to the
memory budget before its kernel allocates -- from static shapes when the model is read (so
``validate`` refuses what ``run`` would) and compiled, and per call where a size comes from
values. The hostile cases (tests/runtime/hostile_memory.py) run in a child process whose address
space is capped, so a regression fails with a wrong code instead of taking the machine's memory;
its time is guarded generously (the 5 s / 300 MB figures are measured outside the tests:
docs/robustness.md)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import irexec
from irexec import budget
from irexec.runtime.plan import compile_plan
from tests.cli.inproc import irexec_cli
from tests.runtime import hostile_memory as hostile

ROOT = Path(__file__).resolve().parents[2]
GUARD = 120  # seconds: a hang, not a slow machine
CAP = 1 << 30  # address space the child may add to what importing took

CHILD = """
import json, sys
sys.path.insert(0, {root!r})
import irexec
from irexec import budget
from tests.runtime import hostile_memory as hostile
import resource
with open("/proc/self/status") as f:
    mapped = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
limit = mapped + {cap}
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
outcomes = {{}}
for name, runtime in {cases!r}:
    make = hostile.CASES.get(name) or hostile.ATTRIBUTE_CASES[name]
    where = "read"
    try:
        with budget.limit({budget}):
            model, feeds = make(runtime) if name in hostile.CASES else make()
            where = "compile"
            compiled = irexec.compile_model(model)
            where = "call"
            compiled(feeds)
            where = "ran"
        outcomes[f"{{name}}-{{runtime}}"] = [where, None, None, None]
    except irexec.IRError as e:
        d = e.diagnostics[0]
        outcomes[f"{{name}}-{{runtime}}"] = [where, e.code, d.message, len(e.diagnostics)]
    except BaseException as e:  # noqa: BLE001 - reported, the test fails on it
        outcomes[f"{{name}}-{{runtime}}"] = [where, type(e).__name__, str(e)[:300], None]
print(json.dumps(outcomes))
"""

VALUE_CASES = [(name, runtime) for name in hostile.CASES for runtime in (True, False)]
# (name, whether the size is known only when called)
RUNS = ("max_pool_big_kernel", "max_pool_indices_big_kernel")  # valid work: they run
ATTRIBUTE_CASES = [(name, name in hostile.AT_CALL) for name in hostile.ATTRIBUTE_CASES
                   if name not in RUNS]


def _run_child(cases, limit: int, cap: int = CAP) -> dict:
    script = CHILD.format(root=str(ROOT), cap=cap, cases=cases, budget=limit)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=GUARD, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def outcomes():
    return _run_child(VALUE_CASES + ATTRIBUTE_CASES, 100 << 20)


@pytest.mark.parametrize("name, runtime", VALUE_CASES + ATTRIBUTE_CASES)
def test_hostile_sizes_are_refused_before_anything_is_allocated(outcomes, name, runtime):
    """Broadcast [1] -> [23000, 23000] under 100 MiB peaked at 4.2 GB and exited 0; the same
    for the others. A size known when the model is read (a Const, an attribute) is refused
    then; one that comes with a call's values is refused by that call, before its kernel."""
    where, code, message, count = outcomes[f"{name}-{runtime}"]
    assert code == "IR109", (where, code, message)
    assert count == 1, message  # one line: the first layer over the budget, not its followers
    assert where == ("call" if runtime else "read"), (where, message)
    if "huge_times_zero" in name:  # [2**62, 0]: numpy's "array is too big" exited 3
        assert "past the largest array numpy can make" in message, message
    else:
        assert "more than the memory budget of 100.0 MiB" in message, message
        assert "GiB (" in message or "MiB (" in message, message  # the size, to the byte


def test_a_loop_whose_state_doubles_is_stopped_by_the_iteration_that_passes_the_budget(
        tmp_path):
    """The body's Concat of its state with itself: each iteration's per-call check holds the
    body's layers to the budget (it grew until the machine ran out)."""
    src = (ROOT / "tests" / "data" / "subgraphs" / "loop_concat.xml").read_text()
    old = '<edge from-layer="2" from-port="0" to-layer="4" to-port="1" />'
    assert old in src
    xml = tmp_path / "loop_doubles.xml"
    xml.write_text(src.replace(old, old.replace('from-layer="2"', 'from-layer="1"')))
    (tmp_path / "loop_doubles.bin").write_bytes(
        (ROOT / "tests" / "data" / "subgraphs" / "loop_concat.bin").read_bytes())
    np.save(tmp_path / "x.npy", np.ones((1, 3), np.float32))
    np.save(tmp_path / "trip.npy", np.array(100))
    script = f"""
import resource, sys
sys.path.insert(0, {str(ROOT)!r})
from irexec.cli.main import main
with open("/proc/self/status") as f:
    mapped = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (mapped + {CAP}, mapped + {CAP}))
sys.exit(main(["run", {str(xml)!r}, "--memory-budget", "16M", "-i", "x={tmp_path}/x.npy",
               "-i", "acc0={tmp_path}/x.npy", "-i", "trip={tmp_path}/trip.npy"]))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=GUARD, cwd=ROOT)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Loop_14/body/grown" in lines[0], lines
    assert "shape [2097152, 3] of f32 needs 24.0 MiB" in lines[0], lines  # 2**21 rows
    assert "memory budget of 16.0 MiB" in lines[0], lines


def test_validate_refuses_what_run_refuses_with_the_same_line(tmp_path):
    """A size the file fixes but no <dim> declares: ``validate`` passed it and ``run`` refused
    it with IR109; now both say the same thing, by the same code."""
    model, _ = hostile.broadcast(runtime=False)
    path = tmp_path / "broadcast.xml"
    irexec.save_model(model, path)
    text = path.read_text()
    assert text.count("<dim>23000</dim>") == 4
    path.write_text(text.replace("<dim>23000</dim>", "<dim>-1</dim>"))
    status, out, err = irexec_cli("validate", path, "--memory-budget", "100M")
    assert status == 1 and "IR109" in out, out
    reported = next(line for line in out.splitlines() if "IR109" in line)
    status, _, err = irexec_cli("run", path, "--memory-budget", "100M")
    assert status == 1 and len(err.strip().splitlines()) == 1, err
    message = reported.split("IR109 over-memory-budget: ", 1)[1]
    assert message in err, (message, err)
    assert "shape [23000, 23000] of f32 needs 2.0 GiB" in message
    with budget.limit(100 << 20):
        assert [d.code for d in irexec.api.validate_file(path) if d.is_error] == ["IR109"]
    status, out, _ = irexec_cli("validate", path)  # the default budget holds it
    assert status == 0, out


def test_running_out_of_memory_first_names_the_size_and_the_budget():
    """Within a budget of 1 TiB the machine (here an address space capped at 1 GiB past the
    imports) fails first: IR605 names the allocation and the budget."""
    script = f"""
import resource, sys
sys.path.insert(0, {str(ROOT)!r})
import irexec
from irexec import budget
from tests.runtime import hostile_memory as hostile
model, feeds = hostile.broadcast(runtime=True)
compiled = irexec.compile_model(model)
with open("/proc/self/status") as f:
    mapped = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (mapped + {CAP}, mapped + {CAP}))
try:
    with budget.limit(1 << 40):
        compiled(feeds)
except irexec.IRError as e:
    print(e.code, e.diagnostics[0].message)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=GUARD, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("IR605 not enough memory"), result.stdout
    assert "2.0 GiB (2116000000 bytes)" in result.stdout, result.stdout
    assert "shape [23000, 23000] of float32" in result.stdout, result.stdout
    assert "memory budget is 1.0 TiB" in result.stdout, result.stdout


def test_compiling_under_a_smaller_budget_checks_static_shapes_again():
    """Read under the default budget, compiled under 1 MiB: refused when compiling, before any
    call; under the default budget the same model compiles and runs."""
    model, feeds = hostile.concat_doubling(runs=10)  # [1024] f32 doubled ten times: 4 MiB
    with budget.limit(1 << 20):
        with pytest.raises(irexec.IRError) as caught:
            irexec.compile_model(model)
    assert caught.value.code == "IR109" and "concat_" in str(caught.value)
    assert irexec.compile_model(model)(feeds)[0].shape == (1024 << 10,)


def test_static_models_get_no_per_call_check_and_value_sized_outputs_do():
    """Static shapes are checked once, when compiling: no step of a static model carries a
    per-call check. A Broadcast whose target shape arrives with the call does."""
    model, _ = hostile.concat_doubling(runs=4)
    assert all(step.check is None for step in compile_plan(model).steps)
    model, feeds = hostile.broadcast(runtime=True)
    steps = compile_plan(model).steps
    assert [step.check is not None for step in steps] == [True]
    feeds["shape"] = np.array([3, 2], np.int64)
    assert irexec.compile_model(model)(feeds)[0].shape == (3, 2)


def test_valid_work_runs_within_the_budget_it_was_given():
    """What fits runs: 31 MiB of doubled Concats under a 64 MiB budget (each tensor fits)."""
    model, feeds = hostile.concat_doubling(runs=13)
    with budget.limit(64 << 20):
        out = irexec.compile_model(model)(feeds)[0]
    assert out.shape == (1024 << 13,) and out.sum() == 1024 << 13


@pytest.mark.skipif(not hasattr(resource, "RLIMIT_AS") or os.name != "posix",
                    reason="needs an address-space limit")
def test_max_pool_with_a_huge_kernel_runs_under_a_small_cap():
    """MaxPool with a 1e5 kernel and as much padding built a 149 GiB padded copy for four
    outputs (values, and indices too); under a 1 GiB address space and a 1 MiB budget it
    runs."""
    outcome = _run_child([(name, False) for name in RUNS], 1 << 20)
    assert [outcome[f"{name}-False"][0] for name in RUNS] == ["ran"] * len(RUNS), outcome



def test_a_second_call_like_the_first_is_still_held_to_the_budget():
    """A call whose signature was seen before skips shape inference (runtime/plan.py), but not
    the memory rule: a Broadcast's target taken from the call's values is checked again when
    those values change (a small [3, 3] call first, then [23000, 23000] under 100 MB)."""
    model, feeds = hostile.broadcast(True)
    (name,) = [k for k, v in feeds.items() if v.dtype.kind == "i"]
    with budget.limit(100 << 20):
        compiled = irexec.compile_model(model)
        small = dict(feeds, **{name: np.array([3, 3], feeds[name].dtype)})
        assert compiled(small)[0].shape == (3, 3)
        assert compiled(small)[0].shape == (3, 3)
        with pytest.raises(irexec.IRError) as e:
            compiled(feeds)
    assert e.value.code == "IR109"
