"""Fuzzing the reader, the planner and the run loop with mutated sample models (see engine.py):
every case succeeds or raises IRError, within 5 s of CPU and a memory bound. CI runs a bounded
number of examples; ``tools/fuzz.py`` runs the same cases for as long as it is given. Every case
a fuzz run found failing is kept in ``crashes/`` and replayed here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from tests.fuzz.engine import (CRASHES, HypothesisRandom, draw_setting, load_crash, mutate,
                               run_case, samples)

SAMPLES = samples()
EXAMPLES = int(os.environ.get("IREXEC_FUZZ_EXAMPLES", "150"))


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_mutated_samples_succeed_or_raise_irerror(data, tmp_path_factory):
    r = HypothesisRandom(data)
    _, xml, weights = r.choice(SAMPLES)
    xml, weights, done = mutate(r, xml, weights)
    setting = draw_setting(r)
    note(f"mutations: {done}; setting: {setting.describe()}")
    run_case(xml, weights, tmp_path_factory.mktemp("case"), setting)


@pytest.mark.parametrize("case", sorted(CRASHES.glob("*.xml")), ids=lambda p: p.stem)
def test_crash_regressions(case: Path, tmp_path):
    xml, weights, setting = load_crash(case)
    run_case(xml, weights, tmp_path, setting)


def test_every_sample_runs(tmp_path):
    for name, xml, weights in SAMPLES:
        assert run_case(xml, weights, tmp_path / name) == "ok", name
