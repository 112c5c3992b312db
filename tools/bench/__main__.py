"""Run one of irexec's benchmark suites:

    python -m tools.bench SUITE [options]      (from the repository's root; or python tools/bench)

    kernels      data-movement kernels against memcpy, np.flip and OpenVINO; the interpreter's
                 overhead; RandomUniform, EmbeddingBag (--quick: small sizes, as CI runs it)
    compute      MatMul, convolutions, pooling, Interpolate, reductions, DFT against numpy and
                 OpenVINO's CPU plugin, ratios measured in one run
    elementwise  element-wise ops on 64 MiB against the bare numpy expression; f16 against f32
    activation   each activation on 64 MiB against the bare numpy expression, f16 against f32,
                 and precise mode against the default (--quick)
    models       ResNet-18 and MobileNet-V2 at 224: latency against OpenVINO, precise mode,
                 ONNX's reference evaluator, peak memory, time per op type; --nine: the
                 whole-model speed issue's nine models, steady and first-result ratios
    sequence     a 1,000-iteration Loop and an LSTMSequence against OpenVINO's CPU plugin

``SUITE --help`` gives a suite's options. Each suite is also ``python -m tools.bench.SUITE``.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

SUITES = ("kernels", "compute", "elementwise", "activation", "models", "sequence")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in SUITES:
        print(__doc__.strip(), file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a folder too
    suite = importlib.import_module(f"tools.bench.{argv[0]}")
    return suite.main(argv[1:]) or 0


if __name__ == "__main__":
    sys.exit(main())
