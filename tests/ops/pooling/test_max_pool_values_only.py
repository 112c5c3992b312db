"""MaxPool-8/14 whose indices nothing reads (converted models): the plan binds the values-only
kernel (the spec's ``skip_unread``), which must give the values the full kernel gives."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec.builder import ModelBuilder
from irexec.ops.pooling import max_pool
from tests.ops.support import dtype_of


def _model(shape, dtype_name, version, at, read_indices):
    b = ModelBuilder()
    x = b.parameter("x", dtype_name, list(shape))
    values, indices = b.op("MaxPool", x, version=version, **at)
    b.result(values, "values")
    if read_indices:
        b.result(indices, "indices")
    return irexec.compile_model(b.build())


@settings(max_examples=40, deadline=None)
@given(nsp=st.integers(1, 3), data=st.data(), version=st.sampled_from(["opset8", "opset14"]),
       type_name=st.sampled_from(["f32", "f16", "bf16", "i32", "u8"]))
def test_unread_indices_give_the_same_values(nsp, data, version, type_name):
    draw = data.draw
    kernel = [draw(st.integers(1, 3)) for _ in range(nsp)]
    dil = [draw(st.integers(1, 2)) for _ in range(nsp)]
    spatial = [draw(st.integers((k - 1) * d + 1, (k - 1) * d + 5))
               for k, d in zip(kernel, dil)]
    at = dict(kernel=kernel, strides=[draw(st.integers(1, 3)) for _ in range(nsp)],
              dilations=dil, pads_begin=[draw(st.integers(0, k - 1)) for k in kernel],
              pads_end=[draw(st.integers(0, k - 1)) for k in kernel],
              rounding_type=draw(st.sampled_from(["floor", "ceil"])))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 3)), *spatial)
    x = (np.random.default_rng(draw(st.integers(0, 2**16))).standard_normal(shape) * 50)
    x = x.astype(dtype_of(type_name))
    values_only = _model(shape, type_name, version, at, read_indices=False)
    (step,) = values_only.plan.steps
    assert step.kernel.func is max_pool._values_only  # the values-only kernel is bound
    full = _model(shape, type_name, version, at, read_indices=True)
    got = list(values_only({"x": x}).values())[0]
    want = list(full({"x": x}).values())[0]  # the first Result: the values
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
