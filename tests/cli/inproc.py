"""Run ``irexec ARGS`` in this process (faster than a subprocess; lets a test monkeypatch a
kernel): exit code, stdout and stderr."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from irexec.cli.main import main
from tests.cli.conftest import SAMPLES

SAMPLE_MODELS = sorted(SAMPLES.glob("*.xml"))


def irexec_cli(*args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    assert "Traceback" not in err.getvalue(), err.getvalue()
    return code, out.getvalue(), err.getvalue()


def sample_ids(path: Path) -> str:
    return path.stem
