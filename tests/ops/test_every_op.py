"""Every registered op (each version's registration) on the tensors that break kernels: rank 0,
an empty dimension, rank 0 broadcast against rank 3 (both ways), and a plain rank-3 baseline,
over the element types the op accepts (a fixed seeded sample: tests/ops/every_op.py builds the
cases; inputs come from the run-time generator, valid by the spec's value domains).

For every case:
- building, compiling and running either works or raises IRError (a clean refusal); any other
  exception is a bug;
- each output has the element type and a shape inside the partial shape that inference gave;
- the op's precise path (``config={"precision": "f64"}``) agrees within the op's numeric family
  (docs/numerics.md);
- where OpenVINO is installed (the oracle extra), OpenVINO's CPU plugin agrees too, on the cases
  it runs (the plugin's own departures: /work/shared/facts/openvino-cpu-opset.md, and
  docs/compatibility.md).

The whole sweep (about 2,400 cases) takes about ten seconds without OpenVINO.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from irexec import numerics
from irexec.ir import element_type as et_table
from irexec.ops import registry
from tests.ops import every_op

OPS = [op for op in registry.all_ops() if every_op.cases(op)]

def _run(case, precise: bool):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # overflow and NaN in random values are values
        return every_op.run_case(case, precise=precise)


def _check_types(case, outputs, model) -> None:
    results = model.results
    assert len(outputs) == len(results), case.id
    for array, result in zip(outputs, results):
        port = result.inputs[0].source
        et, shape = port.element_type, port.partial_shape
        if et.is_supported and not et.is_narrow and et.kind != "string":
            assert np.asarray(array).dtype == et.dtype, (case.id, array.dtype, et)
        assert shape.contains(np.shape(array)), (case.id, np.shape(array), shape)


def _compare(case, ours, reference, inputs, family: str, against_openvino: bool) -> None:
    for i, (a, b) in enumerate(zip(ours, reference)):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, (case.id, i, a.shape, b.shape)
        et = et_table.from_dtype(a.dtype) if a.dtype != object else None
        if et is None or not et.is_real:
            assert np.array_equal(a, b) or (a.dtype.kind == "f" and np.array_equal(
                a, b, equal_nan=True)), (case.id, i, a.ravel()[:5], b.ravel()[:5])
            continue
        tol = numerics.tolerance(family, et, against_openvino)
        bad = tol.outside(a, b, every_op.magnitude(inputs))
        assert not bad.any(), (case.id, i, family, a[bad][:5], b[bad][:5])


@pytest.mark.parametrize("op", OPS, ids=lambda op: f"{op.spec.type}-{every_op.version(op.spec)}")
def test_every_op_on_rank0_empty_and_broadcast_tensors(op):
    family = numerics.family(op.spec)
    for case in every_op.cases(op):
        got = _run(case, precise=True)
        if got[0] != "ran":
            continue
        (outputs, exact), model, inputs = got[1], got[2], got[3]
        _check_types(case, outputs, model)
        _check_types(case, exact, model)
        if op.spec.folds:  # not an op of chance (Multinomial draws by its f32 or f64 sums)
            _compare(case, outputs, exact, inputs, family, against_openvino=False)


def test_the_sweep_reaches_most_ops():
    """The generic cases run most registrations at least once (the rest need inputs that agree
    with each other in ways only their own tests build: NMS boxes and scores, recurrent cells'
    hidden sizes, proposals ...). A drop means the generator lost ops."""
    ran = 0
    for op in OPS:
        if any(_run(case, precise=False)[0] == "ran" for case in every_op.cases(op)):
            ran += 1
    assert ran >= 175, ran


# Where OpenVINO's CPU plugin departs on these cases, each with its row in docs/compatibility.md
# (or the facts it comes from); keyed by op type, narrowed by the case where it matters.
OPENVINO_DEPARTS = {
    # "Integer inputs to Exp, Sinh, Cosh ...": a NaN result is INT_MIN in the plugin, 0 here
    "Acosh": lambda case: case.main_type == "i32",
    "Asin": lambda case: case.main_type == "i32",
    "Acos": lambda case: case.main_type == "i32",
    "Atanh": lambda case: case.main_type == "i32",
    "Log": lambda case: case.main_type == "i32",
    "Sqrt": lambda case: case.main_type == "i32",
    # "BitwiseLeftShift/RightShift with a count outside [0, bits-1]": x86 masks the count
    "BitwiseLeftShift": lambda case: True,
    "BitwiseRightShift": lambda case: True,
    # "Range with Parameter inputs and stop on the wrong side of start": returns elements
    "Range": lambda case: True,
    # "GatherTree for a batch with max_seq_len 0", "CTCGreedyDecoderSeqLen with no time
    # steps": uninitialised outputs
    "GatherTree": lambda case: case.scenario in ("rank0", "empty"),
    "CTCGreedyDecoderSeqLen": lambda case: case.scenario == "empty",
    # "Convolution with no input channels": uninitialised values (they differ run to run)
    "Convolution": lambda case: case.scenario == "empty",
}


def test_every_op_against_openvino(tmp_path):
    """The sweep's cases in f32, i32 and boolean (the types the plugin computes as written)
    against OpenVINO's CPU plugin, in a child process that a plugin crash cannot take down
    (tests/ops/every_op_openvino.py). Every difference must be one the plugin is known for."""
    pytest.importorskip("openvino")
    from tests.ops.every_op_openvino import oracle_cases, sweep

    by_id = {case.id: case for case in oracle_cases()}
    found = sweep(tmp_path)
    unexpected = [(case_id, problems) for case_id, problems in found["differs"]
                  if not OPENVINO_DEPARTS.get(by_id[case_id].op.spec.type,
                                              lambda case: False)(by_id[case_id])]
    assert unexpected == []
    assert len(found["same"]) >= 450, {k: len(v) for k, v in found.items()}
