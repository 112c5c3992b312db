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
    start = next(i for i, line in enumerate(lines) if line.startswith("per op type ("))
    header, *rows, outside = lines[start + 1:]
    assert header.split() == ["op", "type", "per", "call", "share", "layers"]
    *rows, total = rows
    types = {r.split()[0] for r in rows}
    model = irexec.read_model(SAMPLE)
    assert types == {f"{n.type}-{n.version}" for n in model.nodes
                     if n.type not in ("Parameter", "Constant", "Result")}
    shares = [float(re.search(r"([\d.]+)%", r).group(1)) for r in rows]
    # Shares of the time spent in layers: they add up to 100 (each rounded to 0.1).
    assert abs(sum(shares) - 100) <= 0.05 * len(shares) + 1e-9, shares
    assert total.split()[:2] == ["in", "layers"] and "100%" in total
    assert total.split()[-1] == str(len(rows))  # one layer of each type in this sample
    assert re.fullmatch(r"outside layers: [\d.]+ (s|ms|us) per call \([\d.]+% of the mean "
                        r"call\): .*", outside), outside


def test_per_op_shares_add_up_to_100_whatever_the_calls_took(monkeypatch):
    """Shares were taken of the median call while the layers' times are means over every call
    (and the profiling adds to the calls): they could add up past 200%. Made slow and uneven
    on purpose here, they still add up to 100%."""
    import time

    from irexec.ops.movement.reverse_sequence import ReverseSequence

    real = ReverseSequence.kernel
    calls = []

    def uneven(*args, **kwargs):
        calls.append(None)
        time.sleep(0.02 if len(calls) % 3 == 0 else 0.0)
        return real(*args, **kwargs)

    monkeypatch.setattr(ReverseSequence, "kernel", staticmethod(uneven))
    status, out, _ = irexec_cli("bench", SAMPLE, "--per-op", "-n", "6", "--warmup", "0")
    assert status == 0
    shares = [float(m.group(1)) for line in out.splitlines()
              if line.startswith("  ") and not line.strip().startswith(("in layers", "op type"))
              for m in [re.search(r"([\d.]+)%$", line.split()[-2])] if m]
    assert len(shares) == 3 and abs(sum(shares) - 100) <= 0.15, shares
