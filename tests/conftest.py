"""Shared test settings.

The oracles: tests that compare with OpenVINO (or ONNX / ONNX Runtime) call ``pytest.importorskip("openvino")``.
CI sets IREXEC_REQUIRE_ORACLE=1 so that a missing oracle fails the run instead of silently
skipping the conformance tests.
"""

import os

import pytest


def pytest_configure(config):
    if os.environ.get("IREXEC_REQUIRE_ORACLE"):
        try:
            import onnx  # noqa: F401
            import onnxruntime  # noqa: F401
            import openvino  # noqa: F401
        except ImportError as e:
            raise pytest.UsageError(f"IREXEC_REQUIRE_ORACLE is set but OpenVINO is missing: {e}")


def pytest_collection_modifyitems(config, items):
    if not os.environ.get("IREXEC_REQUIRE_ORACLE"):
        return
    # importorskip would hide a broken oracle install: in CI, a skip is a failure.
    config.pluginmanager.register(_NoSkips(), "irexec-no-skips")


class _NoSkips:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if report.skipped and any(oracle in str(report.longrepr)
                                  for oracle in ("openvino", "onnx", "onnxruntime")):
            report.outcome = "failed"


@pytest.fixture(autouse=True)
def _ir113_has_an_op_irexec_lacks(request):
    """IR113's fixture is a real OpenVINO op (Inverse) that irexec is made not to run while a test
    parametrized with that code runs (tests/hidden_ops.py): IR113 stays testable when irexec runs
    every op of OpenVINO's opsets."""
    callspec = getattr(request.node, "callspec", None)
    if callspec is None or callspec.params.get("code") != "IR113":
        yield
        return
    from tests.hidden_ops import hidden

    with hidden("Inverse"):
        yield
