"""``irexec bench --per-op``: where a call's time goes, by op type; and the ``profile`` argument
of a compiled model's call it is built on."""

from __future__ import annotations

import re

import irexec
from irexec.runtime.inputs import make_inputs
from tests.cli.inproc import irexec_cli

SAMPLE = "samples/convert_reverse_chain.xml"


def test_profile_times_every_layer_that_runs():
    model = irexec.read_model(SAMPLE)
    compiled = irexec.compile_model(model)
    profile: dict = {}
    inputs = make_inputs(model, {}, 0)
    compiled(inputs, profile=profile)
    ran = {str(n.id) for n in model.nodes if n.type not in ("Parameter", "Constant", "Result")}
    assert set(profile) <= ran and len(profile) >= 1
    assert all(t >= 0 for t in profile.values())
    before = dict(profile)
    compiled(inputs, profile=profile)
    assert all(profile[k] >= before[k] for k in before)  # a second call adds to the first's


def test_per_op_table_lists_the_op_types_that_ran():
    status, out, _ = irexec_cli("bench", SAMPLE, "--per-op", "-n", "3", "--warmup", "1")
    assert status == 0
    lines = out.splitlines()
    start = lines.index("per op type (time per call; layers folded into constants take none):")
    header, *rows = lines[start + 1:]
    assert header.split() == ["op", "type", "per", "call", "share", "layers"]
    types = {r.split()[0] for r in rows if not r.strip().startswith("(between")}
    model = irexec.read_model(SAMPLE)
    assert types == {f"{n.type}-{n.version}" for n in model.nodes
                     if n.type not in ("Parameter", "Constant", "Result")}
    shares = [float(m.group(1)) for r in rows for m in [re.search(r"([\d.]+)%", r)] if m]
    # The layers' times and the time between them make up the median call (shares rounded;
    # the layers of the median call are averages of every call, so not exactly 100).
    assert len(shares) == len(rows) and sum(shares) > 0
    assert rows[-1].strip().startswith("(between layers)")
