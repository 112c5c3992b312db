"""The sweep of tests/ops/every_op.py against OpenVINO's CPU plugin, run as a child process
(``python -m tests.ops.every_op_openvino FOLDER [SKIP_ID ...]``): the plugin segfaults on some
one-layer models (facts: Broadcast of a scalar to [], Slice with Parameter axes ...), which must
not take the test process with it.

For each case that irexec runs, in the element types the plugin computes as written (f32, i32,
boolean: it narrows i64 and f64 and saturates u8, see docs/compatibility.md), the child saves
the model, runs it in the plugin and compares. It prints one JSON line per case: ``start`` (so
that the parent knows which case a crash killed), then ``same``, ``differs`` (with the first
differing elements) or ``refused`` (the plugin would not compile or run it).
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np

import irexec
from irexec import numerics
from irexec.ir import element_type as et_table
from irexec.ops import registry
from tests.ops import every_op

PLUGIN_EXACT_TYPES = {"f32", "i32", "boolean"}
OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"}


def oracle_cases():
    """The cases the plugin is asked about, in a fixed order."""
    for op in registry.all_ops():
        if op.spec.family != "opset" or not op.spec.folds:
            continue
        for case in every_op.cases(op):
            if all(t in PLUGIN_EXACT_TYPES for t, _ in case.inputs):
                yield case


def op_key(case) -> str:
    return f"{case.op.spec.type}-{case.op.spec.family}{case.op.spec.since}"


def _say(**fields) -> None:
    print(json.dumps(fields), flush=True)


def _outside(ours, theirs, family: str, magnitude: float) -> list:
    out = []
    for i, (a, b) in enumerate(zip(ours, theirs)):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return [f"output {i}: shape {list(a.shape)} vs {list(b.shape)}"]
        et = et_table.from_dtype(a.dtype)
        if et.is_real:
            bad = numerics.tolerance(family, et).outside(a, b.astype(a.dtype), magnitude)
        else:
            bad = a != b.astype(a.dtype)
        if bad.any():
            out.append(f"output {i}: {a[bad][:3].tolist()} vs {b[bad][:3].tolist()}")
    return out


def main(argv: list[str]) -> int:
    import openvino as ov

    from tests.conformance.oracle import run_openvino

    folder, skip = Path(argv[0]), set(argv[1:])
    warnings.simplefilter("ignore")
    checked = False
    for case in oracle_cases():
        if case.id in skip or op_key(case) in skip:
            continue
        try:
            got = every_op.run_case(case)
        except Exception:  # irexec's own failures are test_every_op.py's to report
            continue
        if got[0] != "ran":
            continue
        outputs, model, inputs = got[1], got[2], got[3]
        xml = folder / "case.xml"
        irexec.save_model(model, xml)
        names = list(irexec.compile_model(irexec.read_model(xml)).output_names())
        _say(event="start", case=case.id)
        try:
            theirs = run_openvino(ov, xml, inputs, names)
        except Exception as e:  # the plugin refuses the model: not an oracle for this case
            _say(event="refused", case=case.id, why=str(e).splitlines()[0][:200])
            continue
        checked = True
        problems = _outside(outputs, [theirs[n] for n in names],
                            numerics.family(case.op.spec), every_op.magnitude(inputs))
        _say(event="differs" if problems else "same", case=case.id, problems=problems)
    _say(event="done", checked=checked)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


def sweep(folder: Path, timeout: float = 1200) -> dict[str, list]:
    """Run the child until it has seen every case, restarting it past the op whose case
    crashed the plugin (its other cases are likely to crash it as well). {"same": [ids],
    "differs": [(id, problems)], "refused": [(id, why)], "crashed": [ids]}."""
    import os
    import subprocess

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    found: dict[str, list] = {"same": [], "differs": [], "refused": [], "crashed": []}
    skip: list[str] = []
    while True:
        proc = subprocess.run([sys.executable, "-m", "tests.ops.every_op_openvino", str(folder),
                               *skip], cwd=root, env=env, capture_output=True, text=True,
                              timeout=timeout)
        started, done = None, False
        for line in proc.stdout.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            kind = event["event"]
            if kind == "start":
                started = event["case"]
            elif kind == "done":
                done = True
            else:
                skip.append(event["case"])
                started = None
                found[kind].append(event["case"] if kind == "same" else
                                   (event["case"], event.get("problems") or event.get("why")))
        if done:
            return found
        if started is None:
            raise AssertionError(f"the OpenVINO sweep stopped outside a case: "
                                 f"{proc.stderr[-2000:]}")
        found["crashed"].append(started)
        skip.append(started.rsplit("-", 2)[0])  # the op key: type-family+version
