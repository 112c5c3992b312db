"""BinaryConvolution-1: the specification's example, properties against a direct-loop count of
matching bits, u1 weights as OpenVINO writes them, and one diagnostic per bad input. OpenVINO's
CPU plugin computes other values (docs/compatibility.md), so it is no oracle here."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec.ir.shape import PartialShape
from tests.ops.compute_support import build_layer, layer_error, run_layer
from tests.ops.convolution.reference import pads_for
from tests.ops.support import dtype_of


def attrs(nsp, strides=1, pads_begin=0, pads_end=0, dilations=1, auto_pad="explicit",
          pad_value=0.0):
    def spread(v):
        return tuple(v) if isinstance(v, (tuple, list)) else (v,) * nsp
    return dict(strides=spread(strides), pads_begin=spread(pads_begin),
                pads_end=spread(pads_end), dilations=spread(dilations), auto_pad=auto_pad,
                mode="xnor-popcount", pad_value=pad_value)


def reference(x, bits, at):
    """Direct loops: +1 per tap whose data value equals the weight bit, -1 otherwise."""
    nsp = x.ndim - 2
    pb, pe = pads_for(list(x.shape[2:]), list(bits.shape[2:]), at["strides"], at["dilations"],
                      at["pads_begin"], at["pads_end"], at["auto_pad"])
    padded = np.full(x.shape[:2] + tuple(s + b + e for s, b, e in zip(x.shape[2:], pb, pe)),
                     at["pad_value"], np.float64)
    padded[(Ellipsis, *(slice(b, b + s) for b, s in zip(pb, x.shape[2:])))] = x
    kernel = bits.shape[2:]
    out_sizes = [(p - (k - 1) * d - 1) // s + 1 for p, k, d, s in
                 zip(padded.shape[2:], kernel, at["dilations"], at["strides"])]
    y = np.zeros(x.shape[:1] + bits.shape[:1] + tuple(out_sizes))
    for idx in np.ndindex(*y.shape):
        b, o, pos = idx[0], idx[1], idx[2:]
        total = 0
        for c in range(x.shape[1]):
            for tap in np.ndindex(*kernel):
                where = tuple(p * s + t * d for p, s, t, d in
                              zip(pos, at["strides"], tap, at["dilations"]))
                total += 1 if padded[(b, c) + where] == bits[(o, c) + tap] else -1
        y[idx] = total
    assert nsp == len(out_sizes)
    return y


def u1(a):
    return np.asarray(a).astype(np.uint8).astype(ml_dtypes.uint1)


def test_spec_example_shape():
    model, _ = build_layer("BinaryConvolution", np.zeros(1, np.float32), u1([0]),
                           shapes=[[1, 3, 224, 224], [64, 3, 3, 3]], consts=(),
                           **attrs(2, pads_begin=2, pads_end=2, dilations=2))
    assert model.results[0].inputs[0].source.partial_shape == PartialShape([1, 64, 224, 224])


def test_hand_checked_window():
    x = np.array([[[1, 0, 1, 1]]], np.float32)
    bits = u1([[[1, 1]]])
    # windows [1,0] [0,1] [1,1]: one match, one match, two matches; 2*m - 2
    y = run_layer("BinaryConvolution", x, bits, consts=(1,), **attrs(1))
    assert y.tolist() == [[[0.0, 0.0, 2.0]]]
    # a value that is neither 0 nor 1 matches no bit; pad_value 1 matches bit 1
    x2 = np.array([[[0.5, 1]]], np.float32)
    y2 = run_layer("BinaryConvolution", x2, bits, consts=(1,),
                   **attrs(1, pads_begin=1, pad_value=1.0))
    assert y2.tolist() == [[[0.0, 0.0]]]


@st.composite
def cases(draw):
    nsp = draw(st.integers(1, 3))
    kernel = [draw(st.integers(1, 2)) for _ in range(nsp)]
    at = attrs(nsp, [draw(st.integers(1, 2)) for _ in range(nsp)],
               [draw(st.integers(0, 1)) for _ in range(nsp)],
               [draw(st.integers(0, 1)) for _ in range(nsp)],
               [draw(st.integers(1, 2)) for _ in range(nsp)],
               draw(st.sampled_from(["explicit", "valid", "same_upper", "same_lower"])),
               draw(st.sampled_from([0.0, 1.0, -1.0, 0.5])))
    spatial = [draw(st.integers((k - 1) * d + 1, (k - 1) * d + 3))
               for k, d in zip(kernel, at["dilations"])]
    return (draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3)), spatial,
            kernel, at, draw(st.integers(0, 2 ** 16)))


@settings(max_examples=40, deadline=None)
@given(cases(), st.sampled_from(["f32", "f16", "f64"]))
def test_property_equals_counting_matches(case, type_name):
    n, ci, co, spatial, kernel, at, seed = case
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2, (n, ci, *spatial)).astype(dtype_of(type_name))
    x[rng.random(x.shape) < 0.1] = 0.5  # neither 0 nor 1
    bits = rng.integers(0, 2, (co, ci, *kernel))
    y = run_layer("BinaryConvolution", x, u1(bits), consts=(1,), **at)
    assert y.dtype == x.dtype
    np.testing.assert_array_equal(y, reference(x, bits, at).astype(x.dtype))


def test_reads_the_u1_weights_openvino_writes(tmp_path):
    ov = pytest.importorskip("openvino")
    import openvino.opset1 as o1
    rng = np.random.default_rng(2)
    x = rng.integers(0, 2, (1, 3, 5, 5)).astype(np.float32)
    bits = rng.integers(0, 2, (2, 3, 3, 3))
    p = o1.parameter([1, 3, 5, 5], ov.Type.f32)
    weights = ov.op.Constant(ov.Type.u1, ov.Shape([2, 3, 3, 3]), bits.reshape(-1).tolist())
    node = o1.binary_convolution(p, weights, [1, 1], [1, 0], [0, 1], [1, 1], "xnor-popcount",
                                 1.0)
    node.output(0).get_tensor().set_names({"y"})
    xml = tmp_path / "bin.xml"
    ov.save_model(ov.Model([node.output(0)], [p]), str(xml), compress_to_fp16=False)
    model = irexec.read_model(xml)
    y = irexec.compile_model(model)({model.inputs[0].names[0]: x})["y"]
    at = attrs(2, pads_begin=(1, 0), pads_end=(0, 1), pad_value=1.0)
    np.testing.assert_array_equal(y, reference(x, bits, at).astype(np.float32))


F = np.zeros(1, np.float32)


@pytest.mark.parametrize("inputs, shapes, at, code", [
    ([F, u1([0])], [[1, 3, 5, 5], [2, 2, 3, 3]], attrs(2), "IR348"),
    ([F, u1([0])], [[1, 3, 2, 2], [2, 3, 3, 3]], attrs(2), "IR346"),
    ([F, u1([0])], [[1, 3, 5, 5], [2, 3, 3, 3]], attrs(2, strides=(1,)), "IR345"),
    ([F, F], [[1, 3, 5, 5], [2, 3, 3, 3]], attrs(2), "IR304"),  # f32 weights
    ([F, u1([0])], [[1, 3, 5, 5], [2, 3, 3, 3]], dict(attrs(2), mode="xnor"), "IR302"),
])
def test_bad_inputs_give_one_coded_error(inputs, shapes, at, code):
    e = layer_error("BinaryConvolution", *inputs, shapes=shapes, **at)
    assert [d.code for d in e.diagnostics] == [code], [str(d) for d in e.diagnostics]


def test_irexec_compare_does_not_take_openvino_as_the_oracle():
    from irexec.ops import registry
    op = registry.lookup("BinaryConvolution", "opset1")
    assert "BinaryConvolution" in op.openvino_refuses(None)
