"""CompiledModel.__call__: binding inputs by name or position, checking them, naming outputs."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder
from irexec.ir.shape import Dimension, PartialShape
from tests.runtime.runtime_irxml import L, ir_xml, layer_line


def codes(err: irexec.IRError) -> list[str]:
    return [d.code for d in err.diagnostics]


# --- a two-input model from a hand-written file ------------------------------------------------
# x (f32 [2,3], tensor names x_tensor, x_alias) -> Convert f64 "conv" (tensor name "converted")
# n (i32 [3], tensor name "lengths") -> ReverseSequence(conv, n) batch_axis=1 seq_axis=0 "rs"

def two_input_layers(x_shape="2,3", x_dims=(2, 3)):
    x_dims = list(x_dims)
    return [
        L(0, "x", "Parameter", {"shape": x_shape, "element_type": "f32"}, [],
          [(x_dims, "FP32", "x_tensor,x_alias")]),
        L(1, "n", "Parameter", {"shape": "3", "element_type": "i32"}, [],
          [([3], "I32", "lengths")]),
        L(2, "conv", "Convert", {"destination_type": "f64"}, [x_dims],
          [(x_dims, "FP64", "converted")]),
        L(3, "rs", "ReverseSequence", {"batch_axis": "1", "seq_axis": "0"}, [x_dims, [3]],
          [(x_dims, "FP64", "rs_out")]),
        L(4, "result", "Result", {}, [x_dims]),
    ]


TWO_INPUT_EDGES = [(0, 0, 2, 0), (2, 0, 3, 0), (1, 0, 3, 1), (3, 0, 4, 0)]


@pytest.fixture
def two_input(ir_file):
    path = ir_file(two_input_layers(), TWO_INPUT_EDGES)
    return irexec.compile_model(irexec.read_model(path))


def reference_rs(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """ReverseSequence with batch_axis=1, seq_axis=0, by a plain loop."""
    out = x.astype(np.float64)
    for b in range(x.shape[1]):
        k = int(n[b])
        out[:k, b] = x[:k, b][::-1]
    return out


X = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
N = np.array([2, 1, 2], np.int32)


# --- binding -----------------------------------------------------------------------------------

@pytest.mark.parametrize("x_key", ["x", "x_tensor", "x_alias"])
@pytest.mark.parametrize("n_key", ["n", "lengths"])
def test_inputs_by_layer_name_or_any_tensor_name(two_input, x_key, n_key):
    out = two_input({x_key: X, n_key: N})
    assert list(out) == ["rs_out"]
    np.testing.assert_array_equal(out["rs_out"], reference_rs(X, N))
    assert out["rs_out"].dtype == np.float64


def test_inputs_as_a_list_in_parameter_order(two_input):
    np.testing.assert_array_equal(two_input([X, N])["rs_out"], reference_rs(X, N))
    np.testing.assert_array_equal(two_input((X, N))["rs_out"], reference_rs(X, N))


def test_list_of_the_wrong_length_is_ir602(two_input):
    with pytest.raises(irexec.IRError) as e:
        two_input([X])
    assert codes(e.value) == ["IR602"]
    assert "x" in str(e.value) and "n" in str(e.value)


def test_unknown_name_is_ir601_listing_the_inputs(two_input):
    with pytest.raises(irexec.IRError) as e:
        two_input({"x": X, "n": N, "nope": X})
    assert codes(e.value) == ["IR601"]
    message = e.value.diagnostics[0].message
    assert "'nope'" in message and "'x'" in message and "'n'" in message


def test_missing_input_is_ir602_naming_it(two_input):
    with pytest.raises(irexec.IRError) as e:
        two_input({"x_alias": X})
    assert codes(e.value) == ["IR602"]
    assert "'n'" in e.value.diagnostics[0].message
    with pytest.raises(irexec.IRError) as e:
        two_input({})
    assert codes(e.value) == ["IR602"]
    assert "'x'" in str(e.value) and "'n'" in str(e.value)
    with pytest.raises(irexec.IRError) as e:
        two_input()
    assert codes(e.value) == ["IR602"]


@pytest.mark.parametrize("second", ["x_tensor", "x_alias"])
def test_the_same_input_given_twice_is_ir601(two_input, second):
    with pytest.raises(irexec.IRError) as e:
        two_input({"x": X, second: X, "n": N})
    assert codes(e.value) == ["IR601"]
    assert "twice" in str(e.value) and "'x'" in str(e.value)


def test_one_value_for_a_model_of_two_inputs_is_ir602_naming_them(two_input):
    with pytest.raises(irexec.IRError) as e:
        two_input(X)
    assert codes(e.value) == ["IR602"] and "x, n" in str(e.value)
    with pytest.raises(irexec.IRError) as e:
        two_input({1.5: X})
    assert codes(e.value) == ["IR601"]


def test_input_name_resolution(two_input):
    assert two_input.input_names() == ["x", "n"]
    assert two_input.input_name("x_alias") == "x"
    assert two_input.input_name("lengths") == "n"
    assert two_input.input_name("converted") is None  # not an input
    assert two_input.output_names() == ["rs_out"]
    assert [p.node.name for p in two_input.inputs] == ["x", "n"]
    # an output is its Result's, as OpenVINO's; ``source`` is the producing layer's port
    assert [p.get_node().get_type_name() for p in two_input.outputs] == ["Result"]
    assert [p.source.node.name for p in two_input.outputs] == ["rs"]


# --- element types ------------------------------------------------------------------------------

@pytest.mark.parametrize("other", [np.float64, np.float16, np.int32, np.int64, np.bool_])
def test_numbers_of_another_type_are_converted_as_openvino_converts_them(two_input, other):
    # OpenVINO's Python API casts an array of another numeric type to the input's (astype)
    given = (X * 1.5).astype(other)
    out = two_input({"x": given, "n": N.astype(np.int64)})
    np.testing.assert_array_equal(out["rs_out"], reference_rs(given.astype(np.float32), N))


@pytest.mark.parametrize("other", [np.float64, np.int32, np.bool_])
def test_check_input_is_strict_about_element_types(two_input, other):
    # irexec's own check (the command line's --input files) does not convert: IR603 saying
    # what was expected, then what was given
    with pytest.raises(irexec.IRError) as e:
        two_input.check_input("x", X.astype(other))
    assert codes(e.value) == ["IR603"]
    d = e.value.diagnostics[0]
    assert d.location.layer_name == "x" and d.location.layer_type == "Parameter"
    message = d.message
    got = irexec.Type(other).get_type_name()
    assert "f32" in message and got in message
    assert message.index("f32") < message.index(got)  # expected first, then what was given
    assert "expect" in message


def test_python_values_are_converted_like_arrays(two_input):
    out = two_input({"x": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "n": [2, 1, 2]})
    np.testing.assert_array_equal(out["rs_out"], reference_rs(X, N))


@pytest.mark.parametrize("dtype", [np.complex64, object, "U3"])
def test_types_irexec_cannot_hold_are_ir603(two_input, dtype):
    with pytest.raises(irexec.IRError) as e:
        two_input({"x": np.zeros((2, 3), dtype), "n": N})
    assert codes(e.value) == ["IR603"]


def test_big_endian_input_is_read_by_value(two_input):
    out = two_input({"x": X.astype(">f4"), "n": N.astype(">i4")})
    np.testing.assert_array_equal(out["rs_out"], reference_rs(X, N))


# --- shapes ------------------------------------------------------------------------------------

def convert_model(shape: PartialShape):
    b = ModelBuilder()
    x = b.parameter("x", "f32", shape)
    b.result(b.op("Convert", x, destination_type="f64", name="conv"), "out")
    return irexec.compile_model(b.build())


@pytest.mark.parametrize("shape, ok, bad", [
    (PartialShape([2, 3]), [(2, 3)], [(3, 2), (2, 3, 1), (6,), (), (2, 4)]),
    (PartialShape([Dimension(2, 10), 3]), [(2, 3), (5, 3), (10, 3)], [(1, 3), (11, 3), (0, 3),
                                                                      (5, 2), (5,)]),
    (PartialShape([-1, 4]), [(0, 4), (1, 4), (100, 4)], [(4,), (3, 5)]),
    (PartialShape([Dimension(3, None)]), [(3,), (50,)], [(2,), (0,)]),
    (PartialShape([Dimension(0, 8)]), [(0,), (8,)], [(9,)]),
    (PartialShape([]), [()], [(1,), (1, 1)]),
    (PartialShape(None), [(), (7,), (2, 3), (1, 2, 3, 4, 5)], []),
])
def test_shapes_are_checked_against_the_partial_shape(shape, ok, bad):
    compiled = convert_model(shape)
    for s in ok:
        out = compiled({"x": np.ones(s, np.float32)})
        assert out["conv"].shape == s and out["conv"].dtype == np.float64
    for s in bad:
        with pytest.raises(irexec.IRError) as e:
            compiled({"x": np.ones(s, np.float32)})
        assert codes(e.value) == ["IR604"], s
        message = e.value.diagnostics[0].message
        assert str(shape) in message  # what the Parameter allows
        assert str(list(s)).replace(" ", "") in message.replace(" ", "")  # what was given
        assert e.value.diagnostics[0].location.layer_name == "x"


def test_interval_shape_read_from_a_file(ir_file):
    path = ir_file(two_input_layers("2..10,3", (-1, 3)), TWO_INPUT_EDGES)
    compiled = irexec.compile_model(irexec.read_model(path))
    for rows in (2, 10):
        x = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3)
        np.testing.assert_array_equal(compiled({"x": x, "n": N})["rs_out"], reference_rs(x, N))
    for rows in (1, 11):
        with pytest.raises(irexec.IRError) as e:
            compiled({"x": np.zeros((rows, 3), np.float32), "n": N})
        assert codes(e.value) == ["IR604"]


def test_type_is_checked_before_shape(two_input):
    with pytest.raises(irexec.IRError) as e:
        two_input.check_input("x", np.zeros((9, 9), np.float64))
    assert codes(e.value) == ["IR603"]
    with pytest.raises(irexec.IRError) as e:  # a call converts the type, then checks the shape
        two_input({"x": np.zeros((9, 9), np.float64), "n": N})
    assert codes(e.value) == ["IR604"]


# --- run-time errors ----------------------------------------------------------------------------

def test_kernel_error_has_the_rules_code_naming_the_layer(ir_file):
    layers = two_input_layers()
    path = ir_file(layers, TWO_INPUT_EDGES)
    compiled = irexec.compile_model(irexec.read_model(path))
    with pytest.raises(irexec.IRError) as e:
        compiled({"x": X, "n": np.array([1, 3, 1], np.int32)})  # 3 > dim(seq_axis) = 2
    assert codes(e.value) == ["IR308"]  # the code a Const [1, 3, 1] gets when read
    d = e.value.diagnostics[0]
    assert (d.location.layer_name, d.location.layer_type) == ("rs", "ReverseSequence")
    assert d.location.file == str(path)
    assert d.location.line == layer_line(ir_xml(layers, TWO_INPUT_EDGES, 11, "model"), "rs")
    assert "seq_lengths[1]" in d.message and "3" in d.message
    assert str(e.value).startswith(f"{path}:{d.location.line}: layer 'rs' (ReverseSequence): ")


@pytest.mark.parametrize("lengths", [[0, -1, 0], [1, 1, 7]])
def test_negative_or_too_long_lengths_are_ir308(two_input, lengths):
    with pytest.raises(irexec.IRError) as e:
        two_input({"x": X, "n": np.array(lengths, np.int32)})
    assert codes(e.value) == ["IR308"]
    bad = next(i for i, v in enumerate(lengths) if not 0 <= v <= 2)
    assert f"seq_lengths[{bad}]" in str(e.value) and str(lengths[bad]) in str(e.value)


def test_mask_of_the_wrong_length_at_run_time_is_ir314():
    b = ModelBuilder()
    x = b.parameter("x", "f32", [2, 3])
    m = b.parameter("mask", "boolean", [-1])
    b.result(b.op("Reverse", x, m, mode="mask", name="rev"), "out")
    compiled = irexec.compile_model(b.build())
    with pytest.raises(irexec.IRError) as e:
        compiled({"x": np.zeros((2, 3), np.float32), "mask": np.array([True, False, True])})
    assert codes(e.value) == ["IR314"]
    assert e.value.diagnostics[0].location.layer_name == "rev"
    out = compiled({"x": X, "mask": np.array([False, True])})
    np.testing.assert_array_equal(out["rev"], X[:, ::-1])


def test_index_out_of_range_at_run_time_is_ir306():
    b = ModelBuilder()
    x = b.parameter("x", "f32", [2, 3])
    a = b.parameter("axes", "i64", [1])
    b.result(b.op("Reverse", x, a, mode="index", name="rev"), "out")
    compiled = irexec.compile_model(b.build())
    with pytest.raises(irexec.IRError) as e:
        compiled({"x": X, "axes": np.array([2], np.int64)})
    assert codes(e.value) == ["IR306"] and "rev" in str(e.value)
    np.testing.assert_array_equal(compiled({"x": X, "axes": np.array([-2])})["rev"], X[::-1])


# --- output names ------------------------------------------------------------------------------

def named_outputs_layers(result_layer_attrs=None, port_names="converted", result_data=None):
    return [
        L(0, "x", "Parameter", {"shape": "2", "element_type": "f32"}, [], [([2], "FP32", "x")]),
        L(1, "conv", "Convert", {"destination_type": "i32"}, [[2]], [([2], "I32", port_names)]),
        L(2, "result", "Result", result_data or {}, [[2]], layer_attrs=result_layer_attrs or {}),
    ]


EDGES = [(0, 0, 1, 0), (1, 0, 2, 0)]


@pytest.mark.parametrize("version, expected", [(11, "custom"), (10, "converted")])
def test_output_names_attribute_counts_in_v11_only(ir_file, version, expected):
    """OpenVINO's serializer writes output_names on the Result's <layer>; IR v10 has none (checked
    against OpenVINO 2026: v11 names the output {custom, other}, v10 ignores the attribute)."""
    path = ir_file(named_outputs_layers({"output_names": "custom,other"}), EDGES, version=version)
    out = irexec.compile_model(irexec.read_model(path))({"x": np.array([1.5, -2.5], np.float32)})
    assert list(out) == [expected]
    np.testing.assert_array_equal(out[expected], np.array([1, -2], np.int32))


def test_output_names_inside_data_is_ignored(ir_file):
    """OpenVINO ignores output_names written inside <data>; so does irexec."""
    path = ir_file(named_outputs_layers(result_data={"output_names": "custom"}), EDGES)
    model = irexec.read_model(path)
    assert [(d.code, d.location.layer_name) for d in model.diagnostics] == [("IR310", "result")]
    out = irexec.compile_model(model)({"x": np.zeros(2, np.float32)})
    assert list(out) == ["converted"]


def test_output_named_by_the_first_tensor_name(ir_file):
    path = ir_file(named_outputs_layers(port_names="first,second"), EDGES)
    compiled = irexec.compile_model(irexec.read_model(path))
    assert list(compiled({"x": np.zeros(2, np.float32)})) == ["first"]


@pytest.mark.parametrize("port_names", [None, ""])
def test_output_without_tensor_names_is_named_by_the_result_layer(ir_file, port_names):
    path = ir_file(named_outputs_layers(port_names=port_names), EDGES)
    compiled = irexec.compile_model(irexec.read_model(path))
    assert list(compiled({"x": np.zeros(2, np.float32)})) == ["result"]


def test_two_results_on_one_port_fall_back_to_their_layer_names(ir_file):
    layers = named_outputs_layers() + [L(3, "result2", "Result", {}, [[2]])]
    path = ir_file(layers, EDGES + [(1, 0, 3, 0)])
    out = irexec.compile_model(irexec.read_model(path))({"x": np.array([3, 4], np.float32)})
    assert list(out) == ["converted", "result2"]
    for v in out.values():
        np.testing.assert_array_equal(v, np.array([3, 4], np.int32))


def test_output_names_never_collide(ir_file):
    """The first Result takes the tensor name 't'; the second has no tensor name and its layer is
    also called 't'. Both outputs must still come back, under different names."""
    layers = [
        L(0, "x", "Parameter", {"shape": "2", "element_type": "f32"}, [], [([2], "FP32", "t")]),
        L(1, "conv", "Convert", {"destination_type": "f64"}, [[2]], [([2], "FP64", None)]),
        L(2, "r1", "Result", {}, [[2]]),
        L(3, "t", "Result", {}, [[2]]),
    ]
    path = ir_file(layers, [(0, 0, 2, 0), (0, 0, 1, 0), (1, 0, 3, 0)])
    compiled = irexec.compile_model(irexec.read_model(path))
    x = np.array([1.5, 2.5], np.float32)
    out = compiled({"x": x})
    assert len(out) == 2 and len(set(compiled.output_names())) == 2
    assert list(out)[0] == "t"
    assert out["t"].dtype == np.float32
    (other,) = [k for k in out if k != "t"]
    assert out[other].dtype == np.float64
    np.testing.assert_array_equal(out[other], x.astype(np.float64))


def test_results_with_the_same_layer_name_get_distinct_output_names(ir_file):
    layers = [
        L(0, "x", "Parameter", {"shape": "2", "element_type": "f32"}, [], [([2], "FP32", None)]),
        L(1, "conv", "Convert", {"destination_type": "f64"}, [[2]], [([2], "FP64", None)]),
        L(2, "r", "Result", {}, [[2]]),
        L(3, "r", "Result", {}, [[2]]),
    ]
    path = ir_file(layers, [(0, 0, 2, 0), (0, 0, 1, 0), (1, 0, 3, 0)])
    out = irexec.compile_model(irexec.read_model(path))({"x": np.array([1, 2], np.float32)})
    assert len(out) == 2
    first, second = out.values()
    assert first.dtype == np.float32 and second.dtype == np.float64
    assert list(out)[0] == "r"


# --- outputs are the caller's to keep ----------------------------------------------------------

def test_parameter_passed_straight_through_is_a_copy():
    b = ModelBuilder()
    x = b.parameter("x", "f32", [3])
    b.result(x, "out")
    compiled = irexec.compile_model(b.build())
    given = np.array([1, 2, 3], np.float32)
    out = compiled({"x": given})["x"]
    assert out is not given and not np.shares_memory(out, given)
    out[:] = 0
    np.testing.assert_array_equal(given, [1, 2, 3])


def test_constant_output_is_a_copy(ir_file):
    layers = [
        L(0, "c", "Const", {"element_type": "i32", "shape": "3", "offset": "0", "size": "12"}, [],
          [([3], "I32", "c")]),
        L(1, "out", "Result", {}, [[3]]),
    ]
    path = ir_file(layers, [(0, 0, 1, 0)], weights=np.array([5, 6, 7], np.int32).tobytes())
    compiled = irexec.compile_model(irexec.read_model(path))
    first = compiled({})["c"]
    np.testing.assert_array_equal(first, [5, 6, 7])
    first[:] = -1  # the copy is writeable, and writing it changes nothing in the model
    np.testing.assert_array_equal(compiled({})["c"], [5, 6, 7])
    np.testing.assert_array_equal(compiled([])["c"], [5, 6, 7])
    assert compiled({})["c"] is not compiled({})["c"]


def test_constant_output_from_the_builder_is_a_copy():
    b = ModelBuilder()
    value = np.array([1.0, 2.0])
    b.result(b.constant(value, name="c"), "out")
    compiled = irexec.compile_model(b.build())
    out = compiled()["c"]
    out += 10
    np.testing.assert_array_equal(compiled()["c"], [1.0, 2.0])


def test_op_outputs_are_fresh_each_call(two_input):
    a = two_input({"x": X, "n": N})["rs_out"]
    a[:] = 0
    np.testing.assert_array_equal(two_input({"x": X, "n": N})["rs_out"], reference_rs(X, N))


def test_inputs_are_never_modified(two_input):
    x, n = X.copy(), N.copy()
    two_input({"x": x, "n": n})
    np.testing.assert_array_equal(x, X)
    np.testing.assert_array_equal(n, N)


# --- the request-style interface ---------------------------------------------------------------

def test_infer_request(two_input):
    request = two_input.create_infer_request()
    assert request.results == {}
    out = request.infer({"x_tensor": X, "lengths": N})
    np.testing.assert_array_equal(out["rs_out"], reference_rs(X, N))
    assert request.results is out
    again = request.infer([X, np.array([0, 0, 0], np.int32)])
    np.testing.assert_array_equal(again["rs_out"], X.astype(np.float64))
    assert request.results is again


def test_compile_model_accepts_a_path(ir_file):
    path = ir_file(two_input_layers(), TWO_INPUT_EDGES)
    for p in (path, str(path)):
        compiled = irexec.compile_model(p, "CPU")
        assert isinstance(compiled, irexec.CompiledModel)
        np.testing.assert_array_equal(compiled([X, N])["rs_out"], reference_rs(X, N))


def test_check_input_checks_one_input_by_any_of_its_names(two_input):
    np.testing.assert_array_equal(two_input.check_input("x_alias", X), X)
    for value, code in ((X.astype(np.float64), "IR603"), (X.T, "IR604")):
        with pytest.raises(irexec.IRError) as e:
            two_input.check_input("x", value)
        assert codes(e.value) == [code]
    with pytest.raises(irexec.IRError) as e:
        two_input.check_input("converted", X)
    assert codes(e.value) == ["IR601"] and "'x'" in str(e.value)
