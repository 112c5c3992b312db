"""tools/bench_activation.py keeps working (its quick mode; the timings themselves mean nothing
here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TOOL = Path(__file__).parent.parent / "tools" / "bench_activation.py"


def test_quick_run_reports_every_case():
    proc = subprocess.run([sys.executable, str(TOOL), "--quick"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    for name in ("Relu", "Sigmoid", "Gelu tanh", "Swish"):
        assert f"  {name}" in proc.stdout
    assert "precise mode on a CNN-like chain" in proc.stdout
