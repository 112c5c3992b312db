#!/usr/bin/env python3
"""Fuzz irexec for a long time: mutated sample models through read_model + compile_model + a
call, each case either succeeding or raising IRError (tests/fuzz/engine.py says what counts as a
failure: another exception, a hang over 5 s, memory growth past a bound).

atheris does not install here (it builds against a libFuzzer this machine lacks), so this drives
hypothesis: batches of ``--batch`` examples, each batch with its own seed derived from
``--seed``, until ``--minutes`` have passed. A failing case is shrunk by hypothesis and kept in
tests/fuzz/crashes/ (<hash>.xml, .bin, and .txt saying what went wrong), where
tests/fuzz/test_fuzz.py replays it from then on; the run then goes on with the next batch.

    python tools/fuzz.py --minutes 30 --seed 1
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.fuzz.engine import (FuzzFailure, HypothesisRandom, mutate, run_case,  # noqa: E402
                               samples, save_crash)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch", type=int, default=500, help="examples per hypothesis run")
    args = parser.parse_args(argv)

    cases = samples()
    outcomes: collections.Counter[str] = collections.Counter()
    crashes: list[Path] = []
    last: list[FuzzFailure] = []
    start = time.monotonic()
    deadline = start + args.minutes * 60
    batch = 0
    with tempfile.TemporaryDirectory(prefix="irexec-fuzz-") as work:
        folder = Path(work)

        def one(data):
            r = HypothesisRandom(data)
            _, xml, weights = r.choice(cases)
            xml, weights, _ = mutate(r, xml, weights)
            try:
                outcomes[run_case(xml, weights, folder / "case")] += 1
            except FuzzFailure as e:
                last[:] = [e]
                raise

        while time.monotonic() < deadline:
            test = settings(max_examples=args.batch, deadline=None, database=None,
                            suppress_health_check=list(HealthCheck))(
                seed(args.seed * 1_000_003 + batch)(given(st.data())(one)))
            try:
                test()
            except FuzzFailure:
                path = save_crash(last[0])
                crashes.append(path)
                print(f"batch {batch}: FAILURE kept as {path}: {str(last[0]).splitlines()[0]}",
                      flush=True)
            batch += 1
            total = sum(outcomes.values())
            print(f"{(time.monotonic() - start) / 60:6.1f} min  batch {batch}  {total} cases  "
                  f"{len(crashes)} failures  top outcomes: {outcomes.most_common(6)}", flush=True)
    total = sum(outcomes.values())
    print(f"done: {total} cases in {(time.monotonic() - start) / 60:.1f} min, "
          f"{len(crashes)} failures; outcomes: {dict(sorted(outcomes.items()))}")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
