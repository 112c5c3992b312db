#!/usr/bin/env python3
"""Fuzz irexec for a long time: mutated sample models through read_model + compile_model + a
call, each case either succeeding or raising IRError (tests/fuzz/engine.py says what counts as a
failure: another exception, over 5 s of CPU or 60 s blocked, memory growth past a bound).

atheris does not install here (it builds against a libFuzzer this machine lacks), so this drives
hypothesis: batches of ``--batch`` examples, each batch with its own seed derived from
``--seed``, until ``--minutes`` have passed. A failing case is shrunk by hypothesis and kept in
tests/fuzz/crashes/ (<hash>.xml, .bin, and .txt saying what went wrong), where
tests/fuzz/test_fuzz.py replays it from then on; the run then goes on with the next batch.
``--memory`` caps the address space the run may add (6 GiB by default), so that a case that
needs more fails with MemoryError rather than swamping a shared machine.

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

from tests.fuzz.engine import (FuzzFailure, HypothesisRandom, draw_setting,  # noqa: E402
                               mutate, run_case, samples, save_crash)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch", type=int, default=500, help="examples per hypothesis run")
    parser.add_argument("--memory", type=float, default=6.0,
                        help="GiB of address space the run may add (RLIMIT_AS): a case that "
                             "needs more fails with MemoryError instead of swamping the machine")
    args = parser.parse_args(argv)
    _limit_memory(args.memory)

    cases = samples()
    outcomes: collections.Counter[str] = collections.Counter()
    crashes: list[Path] = []
    last: list[FuzzFailure] = []
    harness: list[str] = []
    start = time.monotonic()
    deadline = start + args.minutes * 60
    batch = 0
    with tempfile.TemporaryDirectory(prefix="irexec-fuzz-") as work:
        folder = Path(work)

        def one(data):
            r = HypothesisRandom(data)
            _, xml, weights = r.choice(cases)
            xml, weights, _ = mutate(r, xml, weights)
            setting = draw_setting(r)
            try:
                outcomes[run_case(xml, weights, folder / "case", setting)] += 1
            except FuzzFailure as e:
                last[:] = [e]
                raise

        while time.monotonic() < deadline:
            test = settings(max_examples=args.batch, deadline=None, database=None,
                            suppress_health_check=list(HealthCheck))(
                seed(args.seed * 1_000_003 + batch)(given(st.data())(one)))
            last.clear()
            try:
                test()
            except Exception as e:
                if last:  # a case failed (hypothesis may call it flaky if a rerun passed)
                    path = save_crash(last[0])
                    crashes.append(path)
                    flaky = "" if isinstance(e, FuzzFailure) else " (not on every rerun)"
                    print(f"batch {batch}: FAILURE{flaky} kept as {path}: "
                          f"{str(last[0]).splitlines()[0]}", flush=True)
                else:  # the fuzzer's own trouble: say so, go on
                    harness.append(f"batch {batch}: {type(e).__name__}: {e}")
                    print(f"batch {batch}: HARNESS ERROR {type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else ''}", flush=True)
            batch += 1
            total = sum(outcomes.values())
            print(f"{(time.monotonic() - start) / 60:6.1f} min  batch {batch}  {total} cases  "
                  f"{len(crashes)} failures  top outcomes: {outcomes.most_common(6)}", flush=True)
    total = sum(outcomes.values())
    print(f"done: {total} cases in {(time.monotonic() - start) / 60:.1f} min, "
          f"{len(crashes)} failures, {len(harness)} harness errors; "
          f"outcomes: {dict(sorted(outcomes.items()))}")
    return 1 if crashes or harness else 0


def _limit_memory(gib: float) -> None:
    """Cap the address space at what the process maps now plus ``gib``."""
    import resource

    try:
        with open("/proc/self/status") as f:
            mapped = next(int(line.split()[1]) * 1024 for line in f
                          if line.startswith("VmSize:"))
    except (OSError, StopIteration):
        return
    limit = mapped + int(gib * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


if __name__ == "__main__":
    sys.exit(main())
