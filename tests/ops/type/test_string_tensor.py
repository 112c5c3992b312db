"""StringTensorUnpack-15 and StringTensorPack-15: the specification's examples, round trips over
any text (bytes that are not UTF-8 included), errors, and OpenVINO."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec.errors import IRError
from tests.ops.build import run_op
from tests.ops.shapeops_oracle import openvino


def strings(values, shape=None):
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out.reshape(shape or (len(values),))


def test_spec_examples():
    begins, ends, symbols = run_op("StringTensorUnpack", strings(["Intel", "OpenVINO"]),
                                   version="opset15")[0]
    assert begins.tolist() == [0, 5] and ends.tolist() == [5, 13]
    assert symbols.tobytes() == b"IntelOpenVINO" and symbols.dtype == np.uint8
    begins, ends, symbols = run_op("StringTensorUnpack",
                                   strings(["OMZ", "", "GenAI", " ", "2024"]),
                                   version="opset15")[0]
    assert begins.tolist() == [0, 3, 3, 8, 9] and ends.tolist() == [3, 3, 8, 9, 13]
    data = strings(["Intel", "OpenVINO", "OMZ", "GenAI"], (2, 2))
    begins, ends, symbols = run_op("StringTensorUnpack", data, version="opset15")[0]
    assert begins.tolist() == [[0, 5], [13, 16]] and ends.tolist() == [[5, 13], [16, 21]]
    (packed,), _ = run_op("StringTensorPack", begins, ends, symbols, version="opset15")
    assert packed.tolist() == [["Intel", "OpenVINO"], ["OMZ", "GenAI"]]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(max_size=6), min_size=0, max_size=6))
def test_round_trip_and_utf8(texts):
    data = strings(texts)
    begins, ends, symbols = run_op("StringTensorUnpack", data, version="opset15")[0]
    assert symbols.tobytes() == "".join(texts).encode("utf-8", "surrogatepass")
    assert (ends - begins).tolist() == [len(t.encode("utf-8", "surrogatepass")) for t in texts]
    (back,), _ = run_op("StringTensorPack", begins, ends, symbols, version="opset15")
    assert back.tolist() == texts


def test_pack_takes_any_spans_and_keeps_raw_bytes():
    symbols = np.frombuffer(b"ab\xffcd", np.uint8)
    (out,), _ = run_op("StringTensorPack", np.array([[3, 0], [2, 1]], np.int64),
                       np.array([[5, 2], [3, 1]], np.int64), symbols, version="opset15")
    assert out.tolist() == [["cd", "ab"], ["\udcff", ""]]
    _, _, back = run_op("StringTensorUnpack", out, version="opset15")[0]
    assert back.tobytes() == b"cdab\xff"


@pytest.mark.parametrize("begins, ends, code", [
    ([0, 2], [1], "IR307"), ([2], [1], "IR308"), ([0], [9], "IR308"), ([-1], [1], "IR308")])
def test_bad_spans(begins, ends, code):
    with pytest.raises(IRError) as e:
        run_op("StringTensorPack", np.array(begins, np.int32), np.array(ends, np.int32),
               np.zeros(4, np.uint8), version="opset15")
    assert e.value.code == code


def test_unpack_takes_strings_only():
    with pytest.raises(IRError) as e:
        run_op("StringTensorUnpack", np.zeros(2, np.uint8), version="opset15")
    assert e.value.code == "IR304"


def test_openvino_conformance(tmp_path):
    ov = openvino()
    import openvino.opset15 as o
    data = o.parameter([2, 3], ov.Type.string)
    unpack = o.string_tensor_unpack(data)
    pack = o.string_tensor_pack(unpack.output(0), unpack.output(1), unpack.output(2))
    model = ov.Model([unpack.output(0), unpack.output(1), unpack.output(2), pack.output(0)],
                     [data], "strings")
    xml = tmp_path / "strings.xml"
    ov.save_model(model, str(xml))
    compiled = ov.Core().compile_model(str(xml), "CPU")
    feed = strings(["Intel", "", "\u00e9t\u00e9", "\U0001f600x", "  ", "OpenVINO"], (2, 3))
    theirs = compiled([ov.Tensor(feed.astype(str))])
    ours = list(irexec.compile_model(irexec.read_model(xml))(
        {data.get_friendly_name(): feed}).values())
    for k in range(3):
        assert np.array_equal(ours[k], theirs[compiled.outputs[k]])
    assert ours[3].tolist() == np.asarray(theirs[compiled.outputs[3]]).tolist() == feed.tolist()
