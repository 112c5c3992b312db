"""Any values given at run time to the shape, sort and generation ops either work or raise
IRError with a code: never another exception (random inputs, including hostile ones)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec import budget
from tests.ops.build import run_op

HOSTILE = [0, 1, -1, 2, 3, -7, 2**31 - 1, -(2**31), 2**40]


def small(draw, dtype, shape):
    values = draw(st.lists(st.sampled_from(HOSTILE), min_size=int(np.prod(shape)),
                           max_size=int(np.prod(shape))))
    with np.errstate(all="ignore"):
        return np.array(values, np.int64).astype(dtype).reshape(shape)


@st.composite
def cases(draw):
    which = draw(st.sampled_from(["TopK", "Range", "Eye", "OneHot", "CumSum", "Unique",
                                  "GatherTree", "NonZero", "SearchSorted"]))
    data = small(draw, np.float32, (2, 3))
    scalar = lambda: small(draw, np.int64, ())  # noqa: E731
    vec = lambda n: small(draw, np.int64, (n,))  # noqa: E731
    if which == "TopK":
        return which, (data, scalar()), dict(version="opset11", axis=1, mode="max",
                                             sort="value")
    if which == "Range":
        return which, (scalar(), scalar(), scalar()), dict(version="opset4", output_type="i32")
    if which == "Eye":
        return which, (scalar(), scalar(), vec(draw(st.integers(0, 2))), vec(1)), \
            dict(version="opset9", output_type="f32")
    if which == "OneHot":
        return which, (vec(3), scalar(), np.float32(1), np.float32(0)), \
            dict(version="opset1", axis=draw(st.integers(-3, 2)))
    if which == "CumSum":
        return which, (data, scalar()), dict(version="opset3")
    if which == "Unique":
        return which, (data, vec(draw(st.integers(1, 2)))), dict(version="opset10")
    if which == "GatherTree":
        t = small(draw, np.float32, (2, 2, 2))
        return which, (t, small(draw, np.float32, (2, 2, 2)), small(draw, np.float32, (2,)),
                       np.float32(0)), dict(version="opset1")
    if which == "NonZero":
        return which, (data,), dict(version="opset3")
    return which, (np.sort(data, axis=1), small(draw, np.float32, (2, 2))), \
        dict(version="opset15")


@settings(max_examples=150, deadline=None)
@given(cases())
def test_runs_or_raises_irerror(case):
    which, inputs, attrs = case
    try:
        with budget.limit(64 << 20):  # sizes from values are checked before allocating
            run_op(which, *inputs, **attrs)
    except irexec.IRError as e:
        assert e.code.startswith("IR") and str(e)


def test_sizes_from_values_are_checked_against_the_budget():
    with budget.limit(1 << 20):
        for which, inputs, attrs in [
                ("Eye", (np.int64(100_000), np.int64(3), np.int64(0)),
                 dict(version="opset9", output_type="f32")),
                ("Range", (np.int64(0), np.int64(10**7), np.int64(1)),
                 dict(version="opset4", output_type="i32")),
                ("OneHot", (np.zeros(1000, np.int64), np.int64(10**4), np.float32(1),
                            np.float32(0)), dict(version="opset1", axis=0)),
                ("Einsum", (np.zeros(1000, np.float32), np.zeros(1000, np.float32)),
                 dict(version="opset7", equation="i,j->ij"))]:
            try:
                run_op(which, *inputs, **attrs)
            except irexec.IRError as e:
                assert e.code == "IR109", which
            else:
                raise AssertionError(f"{which} ran past the budget")
