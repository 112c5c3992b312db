"""Every pair of finite f16 values through the f16 Add, Subtract, Multiply, Divide and
SquaredDifference kernels, against the same kernels with irexec.kernels.half's shortcuts off
(numpy's own f16 loops, or f32 rounded once): bit for bit.

    python tools/check_f16_arith.py [--first N] [Add Subtract ...]

63,488 x 63,488 = 4.03e9 pairs an op, 3-10 minutes each on one core. Pairs with an infinity or
a NaN are left out: the kernels compute those chunks the direct way by construction (and
tests/kernels/test_half_arith.py checks them against every value).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from irexec.kernels import half
from irexec.ops.arithmetic.binary import OPS

NAMES = ("Add", "Subtract", "Multiply", "Divide", "SquaredDifference")


def check(name: str, first: int | None = None, rows: int = 32) -> tuple[int, int]:
    """(pairs whose bits differ, pairs checked), printing the first few that differ; ``first``:
    only that many values of a (in the order of their bits), each against every b."""
    kernel = OPS[name].kernel
    every = np.arange(1 << 16, dtype=np.uint16)
    finite = every[(every & 0x7C00) != 0x7C00]
    count = finite.size if first is None else min(first, finite.size)
    bad = 0
    for start in range(0, count, rows):
        rows = min(rows, count - start)
        a = np.repeat(finite[start:start + rows], finite.size).view(np.float16)
        b = np.tile(finite, rows).view(np.float16)
        got = kernel(a, b).view(np.uint16)
        with half.direct():
            expected = kernel(a, b).view(np.uint16)
        wrong = np.flatnonzero(got != expected)
        for k in wrong[:max(0, 5 - bad)]:
            print(f"  {name}: a={a.view(np.uint16)[k]:#06x} b={b.view(np.uint16)[k]:#06x} "
                  f"gives {got[k]:#06x}, directly {expected[k]:#06x}")
        bad += wrong.size
    return bad, count * finite.size


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ops", nargs="*", metavar="OP", help=f"of {', '.join(NAMES)} (all)")
    parser.add_argument("--first", type=int, help="only the first N values of a")
    args = parser.parse_args(argv)
    unknown = [n for n in args.ops if n not in NAMES]
    if unknown:
        print(f"error: unknown op {unknown[0]!r}; choose from {', '.join(NAMES)}")
        return 1
    failed = False
    with np.errstate(all="ignore"):
        for name in args.ops or NAMES:
            start = time.perf_counter()
            bad, pairs = check(name, args.first)
            print(f"{name}: {bad} of {pairs:,} pairs differ "
                  f"({time.perf_counter() - start:.0f} s)")
            failed |= bad > 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
