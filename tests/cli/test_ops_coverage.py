"""``irexec ops --coverage``: which op types and versions of OpenVINO's opsets irexec runs,
computed from the registry and OpenVINO's per-opset table (data in the repository)."""

from __future__ import annotations

import json
import subprocess
import sys

from irexec.ops import openvino_opsets, registry
from tests.cli.conftest import SAMPLES, run_cli
from tests.cli.inproc import irexec_cli
from tests.hidden_ops import hidden


def _expected() -> dict[str, tuple[set[int], set[int]]]:
    """type -> (opsets holding it, opsets irexec serves it in), from the registrations' own
    since/until (not from the lookup the command uses)."""
    holding: dict[str, set[int]] = {}
    for n, types in openvino_opsets.OPSETS.items():
        for t in types:
            holding.setdefault(t, set()).add(n)
    served: dict[str, set[int]] = {t: set() for t in holding}
    for op in registry.all_ops():
        spec = op.spec
        if spec.family != "opset":
            continue
        for name in (spec.type, *spec.aliases):
            for t in holding:
                if t.lower() != name.lower():
                    continue
                # the registration with the highest since <= n serves opset n, until its until
                later = [o.spec.since for o in registry.all_ops() if o.spec.family == "opset"
                         and o.spec.type == spec.type and o.spec.since > spec.since]
                last = min([spec.until or 10**6, *(s - 1 for s in later)])
                served[t] |= {n for n in holding[t] if spec.since <= n <= last}
    return {t: (holding[t], served[t]) for t in holding}


def _rows(text: str) -> dict[str, str]:
    body = text.split("\n\n")[1]
    return {line.split()[0]: line for line in body.splitlines()}


def test_coverage_counts_every_op_type_of_every_opset():
    code, out, err = irexec_cli("ops", "--coverage")
    assert code == 0 and err == ""
    expected = _expected()
    full = sum(1 for have, runs in expected.values() if have == runs)
    pairs = sum(len(have) for have, _ in expected.values())
    pairs_run = sum(len(runs) for _, runs in expected.values())
    first = out.splitlines()[0]
    assert f"opset1-{max(openvino_opsets.OPSETS)}" in first
    assert f"irexec runs {full} of {len(expected)} op types" in first, first
    assert f"{pairs_run} of {pairs} (op type, opset) pairs" in first, first
    rows = _rows(out)
    assert set(rows) == set(expected)
    assert "opset1-16" in rows["Relu"] and "runs (Relu-1)" in rows["Relu"]
    assert "Interpolate-4" in rows["Interpolate"] and "Interpolate-11" in rows["Interpolate"]
    assert rows["Convert"].split()[1] == "opset1-17" and rows["Relu"].split()[1] == "opset1-16"


def test_coverage_lists_a_missing_op_and_still_exits_0():
    with hidden("Gelu"):
        code, out, err = irexec_cli("ops", "--coverage")
    assert code == 0 and err == ""
    assert _rows(out)["Gelu"].split()[1:] == ["opset2-16", "MISSING"]
    missing = out.strip().splitlines()[-1]
    assert missing.startswith("missing (") and "Gelu" in missing.split(": ", 1)[1].split(", ")
    _, again, _ = irexec_cli("ops", "--coverage")
    assert "Gelu" not in again.strip().splitlines()[-1].split(": ", 1)[1].split(", ")


def test_coverage_names_the_opsets_a_partly_served_type_misses():
    # Hide only TopK-11: TopK of opset11 to 16 is then missing, opset1 to 10 still runs.
    newest = [op for op in registry.all_ops() if op.spec.type == "TopK"
              and op.spec.family == "opset" and op.spec.since == 11]
    assert newest
    registry.unregister(newest[0])
    try:
        code, out, _ = irexec_cli("ops", "--coverage")
        _, js, _ = irexec_cli("ops", "--coverage", "--format", "json")
    finally:
        registry.register(newest[0])
    assert code == 0
    assert "runs opset1-10 (TopK-1, TopK-3); missing opset11-16" in _rows(out)["TopK"]
    assert "TopK (opset11-16)" in out.strip().splitlines()[-1]
    data = json.loads(js)
    assert {"type": "TopK", "opsets": list(range(11, 17))} in data["missing"]


def test_coverage_json_carries_the_same_report():
    code, out, err = irexec_cli("ops", "--coverage", "--format", "json")
    assert code == 0 and err == ""
    data = json.loads(out)
    expected = _expected()
    assert data["openvino"] == openvino_opsets.OPENVINO_VERSION
    assert data["opsets"] == sorted(openvino_opsets.OPSETS)
    assert data["types"] == len(expected)
    by_type = {o["type"]: o for o in data["ops"]}
    for t, (have, runs) in expected.items():
        assert set(by_type[t]["opsets"]) == have and set(by_type[t]["runs"]) == runs, t
    assert [m["type"] for m in data["missing"]] == [t for t in by_type
                                                   if expected[t][0] != expected[t][1]]
    assert data["types_run"] == sum(1 for h, r in expected.values() if h == r)


def test_coverage_with_a_type_is_a_usage_error():
    proc = run_cli("ops", "--coverage", "Relu")
    assert proc.returncode == 2 and "--coverage takes no operation type" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_coverage_needs_no_openvino():
    # The per-opset table is data: the report is the same when OpenVINO cannot be imported.
    code = ("import sys; sys.modules['openvino'] = None; sys.modules['torch'] = None\n"
            "from irexec.cli.main import main; sys.exit(main(['ops', '--coverage']))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=SAMPLES.parent, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == run_cli("ops", "--coverage").stdout
