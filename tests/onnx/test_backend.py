"""ONNX's own backend tests (``onnx.backend.test.BackendTest``) run against irexec.

Every ``test_reversesequence_*`` node test is included (new ones too, by pattern), plus the node
tests of the other ops irexec supports that pass (EXPECTED); the rest are excluded. The last test
runs the included suite and asserts that every test in EXPECTED ran and passed, so the list of
supported ONNX tests cannot silently shrink. Cast tests to or from string or complex (refused by
irexec), and those of float8/float4/int4/int2 types (not supported yet) are excluded.
"""

import io
import re
import unittest
import warnings

import pytest

pytest.importorskip("onnx")
import onnx.backend.test  # noqa: E402

import irexec.onnx_backend  # noqa: E402

EXPECTED = {
    "test_reversesequence_time_cpu", "test_reversesequence_batch_cpu",
    "test_reversesequence_bfloat16_cpu",
    "test_identity_cpu", "test_constant_cpu",
    "test_cast_FLOAT_to_FLOAT16_cpu", "test_cast_FLOAT_to_DOUBLE_cpu",
    "test_cast_FLOAT16_to_FLOAT_cpu", "test_cast_FLOAT16_to_DOUBLE_cpu",
    "test_cast_DOUBLE_to_FLOAT_cpu", "test_cast_DOUBLE_to_FLOAT16_cpu",
    "test_cast_FLOAT_to_BFLOAT16_cpu", "test_cast_BFLOAT16_to_FLOAT_cpu",
    "test_castlike_FLOAT_to_FLOAT16_expanded_cpu", "test_castlike_FLOAT_to_DOUBLE_expanded_cpu",
    "test_castlike_FLOAT16_to_FLOAT_expanded_cpu", "test_castlike_FLOAT16_to_DOUBLE_expanded_cpu",
    "test_castlike_DOUBLE_to_FLOAT_expanded_cpu", "test_castlike_DOUBLE_to_FLOAT16_expanded_cpu",
    "test_castlike_FLOAT_to_BFLOAT16_expanded_cpu", "test_castlike_BFLOAT16_to_FLOAT_expanded_cpu",
    "test_clip_default_inbounds_expanded_cpu", "test_clip_default_int8_inbounds_expanded_cpu",
}
INCLUDE_PATTERNS = [r"^test_reversesequence_\w+_cpu$"] + [f"^{name}$" for name in sorted(EXPECTED)]


def _backend_test() -> onnx.backend.test.BackendTest:
    with warnings.catch_warnings():  # ONNX's test-case generators warn about their own casts
        warnings.simplefilter("ignore")
        backend_test = onnx.backend.test.BackendTest(irexec.onnx_backend, __name__)
    for pattern in INCLUDE_PATTERNS:
        backend_test.include(pattern)
    return backend_test


def _tests(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from _tests(item)
        else:
            yield item


BACKEND_TEST = _backend_test()


def _included(suite):
    """The included tests of the suite (BackendTest keeps the others, marked as skipped)."""
    return {t.id().rsplit(".", 1)[-1]: t for t in _tests(suite)
            if any(re.search(p, t.id().rsplit(".", 1)[-1]) for p in INCLUDE_PATTERNS)}


INCLUDED = _included(BACKEND_TEST.test_suite)


@pytest.mark.parametrize("name", sorted(INCLUDED))
def test_onnx_node_test(name):
    result = unittest.TextTestRunner(stream=io.StringIO()).run(INCLUDED[name])
    problems = [e for _, e in result.failures + result.errors]
    assert not problems, problems[0]
    assert not result.skipped and result.testsRun == 1


def test_every_expected_onnx_test_ran_and_passed():
    result = unittest.TextTestRunner(stream=io.StringIO()).run(BACKEND_TEST.test_suite)
    problems = [(t.id(), e.splitlines()[-1]) for t, e in result.failures + result.errors]
    assert not problems
    skipped = {t.id().rsplit(".", 1)[-1] for t, _ in result.skipped}
    ran = {t.id().rsplit(".", 1)[-1] for t in _tests(BACKEND_TEST.test_suite)} - skipped
    assert EXPECTED <= ran, f"no longer run: {sorted(EXPECTED - ran)}"
    assert {"test_reversesequence_time_cpu", "test_reversesequence_batch_cpu"} <= ran


def test_backend_api():
    from onnx import TensorProto, helper

    import numpy as np

    node = helper.make_node("ReverseSequence", ["x", "n"], ["y"], batch_axis=0, time_axis=1)
    model = helper.make_model(helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                      helper.make_tensor_value_info("n", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])]))
    assert irexec.onnx_backend.supports_device("CPU")
    assert not irexec.onnx_backend.supports_device("CUDA")
    assert irexec.onnx_backend.is_compatible(model)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (y,) = irexec.onnx_backend.run_model(model, [x, np.array([3, 2])])
    assert y.tolist() == [[2, 1, 0], [4, 3, 5]]
    (y,) = irexec.onnx_backend.run_node(node, [x, np.array([0, 3])])
    assert y.tolist() == [[0, 1, 2], [5, 4, 3]]
