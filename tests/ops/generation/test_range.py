"""Range-1/4: spec examples, counts and values against numpy, wrapping, codes, OpenVINO."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.errors import IRError
from irexec.ir.shape import PartialShape
from tests.ops.build import Const, run_op
from tests.ops.shapeops_oracle import check, openvino


def test_spec_examples():
    (out,), m = run_op("Range", Const(np.int32(2)), Const(np.int32(23)), Const(np.int32(3)),
                       version="opset1")
    assert out.tolist() == [2, 5, 8, 11, 14, 17, 20] and m.outputs[0].partial_shape == [7]
    (out,), _ = run_op("Range", Const(np.int32(23)), Const(np.int32(2)), Const(np.int32(-3)),
                       version="opset1")
    assert out.tolist() == [23, 20, 17, 14, 11, 8, 5]
    (out,), _ = run_op("Range", Const(np.float32(1)), Const(np.float32(2.5)),
                       Const(np.float32(0.5)), version="opset4", output_type="f32")
    assert out.tolist() == [1.0, 1.5, 2.0] and out.dtype == np.float32
    (out,), _ = run_op("Range", Const(np.float32(2.1)), Const(np.float32(11.4)),
                       Const(np.float32(3)), version="opset4", output_type="i32")
    assert out.tolist() == [2, 5, 8] and out.dtype == np.int32  # inputs truncated first


@settings(max_examples=50, deadline=None)
@given(start=st.integers(-50, 50), stop=st.integers(-50, 50),
       step=st.integers(-9, 9).filter(bool), dtype=st.sampled_from(["i32", "i64", "f32"]))
def test_integer_ranges_match_numpy(start, stop, step, dtype):
    (out,), _ = run_op("Range", np.array(start, np.int64), np.array(stop, np.int64),
                       np.array(step, np.int64), version="opset4", output_type=dtype)
    np.testing.assert_array_equal(out, np.arange(start, stop, step).astype(out.dtype))


def test_float_values_are_start_plus_i_times_step_in_f32():
    (out,), _ = run_op("Range", np.float32(0.1), np.float32(2.0), np.float32(0.3),
                       version="opset1")
    expected = np.float32(0.1) + np.arange(7).astype(np.float32) * np.float32(0.3)
    assert out.tobytes() == expected.tobytes()


def test_integer_output_wraps():
    (out,), _ = run_op("Range", np.array(120, np.int64), np.array(132, np.int64),
                       np.array(5, np.int64), version="opset4", output_type="i8")
    assert out.tolist() == [120, 125, -126]  # 130 wraps to -126 in i8 (count from doubles)


@pytest.mark.parametrize("start, stop, step", [(0, 5, 0), (0, np.inf, 1), (np.nan, 1, 1)])
def test_bad_values_are_ir335(start, stop, step):
    args = [np.float32(start), np.float32(stop), np.float32(step)]
    with pytest.raises(IRError) as e:
        run_op("Range", *[Const(a) for a in args], version="opset1")
    assert e.value.code == "IR335"
    with pytest.raises(IRError) as e:  # the same code at run time
        run_op("Range", *args, version="opset1")
    assert e.value.code == "IR335"


def test_mixed_input_types_are_fine_in_range4_only():
    (out,), _ = run_op("Range", Const(np.int32(0)), Const(np.float32(3)), Const(np.int64(1)),
                       version="opset4", output_type="i64")
    assert out.tolist() == [0, 1, 2]
    with pytest.raises(IRError) as e:
        run_op("Range", Const(np.int32(0)), Const(np.float32(3)), Const(np.int64(1)),
               version="opset1")
    assert e.value.code == "IR304"


def test_parameter_inputs_give_a_dynamic_length():
    _, model = run_op("Range", np.int64(0), np.int64(4), np.int64(1), version="opset4",
                      output_type="i64")
    assert model.outputs[0].partial_shape == PartialShape([-1])


def test_openvino_conformance(tmp_path):
    openvino()
    import openvino.opset1 as o1
    import openvino.opset12 as o4  # its range is Range-4
    params = [o4.parameter([], np.int64) for _ in range(3)]
    fparams = [o1.parameter([], np.float32) for _ in range(3)]
    outs = [o4.range(*params, output_type="i32").output(0),
            o4.range(*params, output_type="f32").output(0),
            o4.range(*params, output_type="f16").output(0),
            o4.range(*fparams, output_type="f16").output(0),
            o1.range(*fparams).output(0)]
    feeds = []
    for start, stop, step in [(0, 10, 3), (5, -7, -2), (-3, 4, 1), (2, 3, 5)]:
        feeds.append([np.array(start, np.int64), np.array(stop, np.int64),
                      np.array(step, np.int64), np.float32(start * 0.5),
                      np.float32(stop * 0.5), np.float32(step * 0.25)])
    check(tmp_path, outs, params + fparams, feeds)


def test_integer_fast_path_gives_the_general_paths_numbers():
    # start and step already of the output's integer type take numpy's arange where nothing
    # wraps; the numbers are the general path's (start + i * step, wrapping as C++ does)
    import itertools

    from irexec.ir import element_type as et
    from irexec.ops.generation import range as module

    def general(*args):
        saved, module._SAME_INT = module._SAME_INT, ()
        try:
            return module.run(*args)
        finally:
            module._SAME_INT = saved

    for name in ("i64", "i32"):
        out = et.from_name(name)
        values = [0, 1, -1, 5, -7, 100, -100, 2 ** 29, -2 ** 29, 2 ** 31 - 1, -2 ** 31]
        for a, b, c in itertools.product(values, values, values):
            if c == 0 or module.count(a, b, c, True) > 5000:
                continue
            args = [np.array(v, out.dtype) for v in (a, b, c)]
            fast, want = module.run(*args, out), general(*args, out)
            assert fast.dtype == want.dtype and np.array_equal(fast, want), (name, a, b, c)
