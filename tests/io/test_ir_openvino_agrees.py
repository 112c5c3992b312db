"""OpenVINO reads the same files: where the facts say both accept or both reject, they do.

Only cases where irexec and OpenVINO 2026.x agree are here; the deliberate differences
(e.g. duplicate layer ids, port dims compared with inference, Reverse axis -3 for rank 2) are
tested on irexec alone.
"""

import numpy as np
import pytest

import irexec
from tests.helpers_ir import const, layer, net, parameter, result, write_ir

ov = pytest.importorskip("openvino")

I64_1 = np.array([1], "<i8").tobytes()


def _ov_read(path):
    return ov.Core().read_model(str(path))


def _reverse_model(rev_type="Reverse", version="opset1", in_ids=None, out_ids=None, edges=None,
                   const_attrs=None, data_dims=(2, 3)):
    attrs = {"element_type": "i64", "shape": "1", "offset": 0, "size": 8}
    attrs.update(const_attrs or {})
    attrs = {k: v for k, v in attrs.items() if v is not None}
    axes = layer(1, "axes", "Const", data=attrs, outputs=[[1]], precision="I64")
    rev = layer(2, "rev", rev_type, version=version, data={"mode": "index"},
                inputs=[list(data_dims), [1]], outputs=[list(data_dims)], in_ids=in_ids,
                out_ids=out_ids)
    return net([parameter(0, "data", "2,3", dims=[2, 3]), axes, rev,
                result(3, "out", list(data_dims))],
               edges or [(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 3, 0)])


def _param(shape="2", dims=(2,), precision="FP32", element_type="f32", version=11):
    return net([parameter(0, "x", shape, element_type, dims=list(dims), precision=precision),
                result(1, "out", list(dims))], [(0, 0, 1, 0)], version=version)


ACCEPTED = {
    "v10": (_param(version=10), b""),
    "v11": (_param(version=11), b""),
    "lower-case type": (_reverse_model(rev_type="reverse"), I64_1),
    "ports 5,7 -> 9": (_reverse_model(in_ids=[5, 7], out_ids=[9],
                                      edges=[(0, 0, 2, 5), (1, 0, 2, 7), (2, 9, 3, 0)]), I64_1),
    "inputs listed 1,0": (_reverse_model(in_ids=[1, 0], out_ids=[2],
                                         edges=[(0, 0, 2, 1), (1, 0, 2, 0), (2, 2, 3, 0)]),
                          I64_1),
    "Const size larger": (_reverse_model(const_attrs={"size": 16}), I64_1 + I64_1),
    "Const unaligned": (_reverse_model(const_attrs={"offset": 3}), b"abc" + I64_1),
    "no Const, no bin": (_param(), None),
    "precision BIN": (_param(precision="BIN"), b""),
    "precision U1": (_param(precision="U1"), b""),
    "precision f32": (_param(precision="f32"), b""),
    "element_type F32": (_param(element_type="F32"), b""),
}

REJECTED = {
    "v9": (_param(version=9), b"", "IR004"),
    "v12": (_param(version=12), b"", "IR004"),
    "no version": (_param(version=None), b"", "IR004"),
    "root not net": ('<?xml version="1.0"?>\n<model version="11"/>\n', b"", "IR003"),
    "unknown type": (_reverse_model(rev_type="Frobnicate"), I64_1, "IR103"),
    "Reverse opset2": (_reverse_model(version="opset2"), I64_1, "IR103"),
    "Reverse extension": (_reverse_model(version="extension"), I64_1, "IR103"),
    "dim ?": (_param(dims=["?"]), b"", "IR107"),
    "dim abc": (_param(dims=["abc"]), b"", "IR105"),
    "dim -2": (_param(dims=["-2"]), b"", "IR105"),
    "precision fp32": (_param(precision="fp32"), b"", "IR106"),
    "precision XYZ": (_param(precision="XYZ"), b"", "IR106"),
    "Const no element_type": (_reverse_model(const_attrs={"element_type": None}), I64_1, "IR301"),
    "Const no shape": (_reverse_model(const_attrs={"shape": None}), I64_1, "IR301"),
    "Const no offset": (_reverse_model(const_attrs={"offset": None}), I64_1, "IR301"),
    "Const no size": (_reverse_model(const_attrs={"size": None}), I64_1, "IR301"),
    "Const beyond bin": (_reverse_model(const_attrs={"offset": 4}), I64_1, "IR502"),
    "Const size too small": (_reverse_model(const_attrs={"size": 7}), I64_1, "IR503"),
    "Const without bin": (_reverse_model(), None, "IR501"),
    "shape 2,,3": (_param(shape="2,,3", dims=[2, 1, 3]), b"", "IR302"),
    "shape abc": (_param(shape="abc"), b"", "IR302"),
    "element_type FP32": (_param(element_type="FP32"), b"", "IR302"),
    "edge to missing port": (_reverse_model(edges=[(0, 0, 2, 0), (1, 0, 2, 6), (2, 2, 3, 0)]),
                             I64_1, "IR201"),
    "input without edge": (_reverse_model(edges=[(0, 0, 2, 0), (2, 2, 3, 0)]), I64_1, "IR202"),
}


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_both_accept(tmp_path, name):
    xml, weights = ACCEPTED[name]
    path = write_ir(tmp_path, xml, weights)
    ours = irexec.read_model(path)
    theirs = _ov_read(path)
    assert [str(p.partial_shape) for p in ours.outputs] == \
        [str(o.get_partial_shape()) for o in theirs.outputs]


@pytest.mark.parametrize("name", list(REJECTED))
def test_both_reject(tmp_path, name):
    xml, weights, code = REJECTED[name]
    path = write_ir(tmp_path, xml, weights)
    with pytest.raises(irexec.IRError) as info:
        irexec.read_model(path)
    assert code in [d.code for d in info.value.diagnostics]
    with pytest.raises(Exception):  # noqa: B017 - OpenVINO raises plain RuntimeError types
        _ov_read(path)


@pytest.mark.parametrize("shape", ["1,3,224,224", "?", "-1", "2..10", "..8", "3..", "...", "",
                                   "[1,2]", "1,?,2..10"])
def test_parameter_shape_strings_agree(tmp_path, shape):
    dims = None if shape == "..." else [-1] * len(ov.PartialShape(shape))
    xml = net([parameter(0, "x", shape, dims=dims), result(1, "out", dims)], [(0, 0, 1, 0)])
    path = write_ir(tmp_path, xml)
    ours = irexec.read_model(path).inputs[0].partial_shape
    assert str(ours) == str(_ov_read(path).inputs[0].get_partial_shape())


# element type, little-endian dtype, values
CONST_VALUES = [
    ("boolean", "u1", [0, 1, 2, 255]),
    ("i8", "<i1", [-128, -1, 0, 127]), ("i16", "<i2", [-32768, 5, 0, 32767]),
    ("i32", "<i4", [-2**31, 7, 0, 2**31 - 1]), ("i64", "<i8", [-2**63, 2**40, 0, 2**63 - 1]),
    ("u8", "<u1", [0, 1, 128, 255]), ("u16", "<u2", [0, 9, 2**15, 2**16 - 1]),
    ("u32", "<u4", [0, 9, 2**31, 2**32 - 1]), ("u64", "<u8", [0, 9, 2**63, 2**64 - 1]),
    ("f16", "<f2", [0.5, -2.0, 65504.0, -0.0]), ("f32", "<f4", [1.5, -0.0, 3e38, 1e-30]),
    ("f64", "<f8", [1e300, -1e-300, 0.1, -7.25]),
]


@pytest.mark.parametrize("element_type, dtype, values", CONST_VALUES,
                         ids=[c[0] for c in CONST_VALUES])
def test_const_values_agree(tmp_path, element_type, dtype, values):
    data = b"\x00" + np.array(values, dtype).tobytes()  # at offset 1: unaligned on purpose
    xml = net([const(0, "c", element_type, "4", 1, len(data) - 1, dims=[4]),
               result(1, "out", [4])], [(0, 0, 1, 0)])
    path = write_ir(tmp_path, xml, data)
    ours = irexec.read_model(path).nodes[0].value
    node = next(op for op in _ov_read(path).get_ops() if op.get_type_name() == "Constant")
    theirs = np.asarray(node.get_data())
    assert ours.tolist() == theirs.tolist()


def test_bf16_const_agrees(tmp_path):
    data = bytes([0x80, 0x3F, 0x00, 0xC0, 0x49, 0x40])
    xml = net([const(0, "c", "bf16", "3", 0, 6, dims=[3]), result(1, "out", [3])],
              [(0, 0, 1, 0)])
    path = write_ir(tmp_path, xml, data)
    ours = irexec.read_model(path).nodes[0].value.astype(np.float32)
    node = next(op for op in _ov_read(path).get_ops() if op.get_type_name() == "Constant")
    theirs = np.asarray(node.get_data()).view(np.uint16).astype(np.uint32) << 16
    assert ours.tolist() == theirs.view(np.float32).tolist()


def test_saved_model_reads_in_openvino_with_the_same_names(tmp_path):
    xml = net([parameter(0, "x", "2,3", dims=[2, 3], names=r"in\,put"),
               '<layer id="1" name="r" type="Result" version="opset1" output_names="y,z">\n'
               '<input><port id="0"><dim>2</dim><dim>3</dim></port></input>\n</layer>'],
              [(0, 0, 1, 0)])
    model = irexec.read_model(write_ir(tmp_path, xml))
    assert model.output_name(model.results[0]) == "y"
    out = tmp_path / "saved.xml"
    irexec.save_model(model, out)
    theirs = _ov_read(out)
    assert "in,put" in theirs.inputs[0].get_names()
    assert theirs.outputs[0].get_names() == {"y", "z"}
    assert irexec.read_model(out).output_name(irexec.read_model(out).results[0]) == "y"


@pytest.mark.parametrize("where", ["layer", "data"])
def test_result_output_names_agree(tmp_path, where):
    on_layer = ' output_names="y,z"' if where == "layer" else ""
    data = '<data output_names="y,z"/>\n' if where == "data" else ""
    xml = net([parameter(0, "x", "2", dims=[2], names="t"),
               f'<layer id="1" name="r" type="Result" version="opset1"{on_layer}>\n{data}'
               f'<input><port id="0"><dim>2</dim></port></input>\n</layer>'], [(0, 0, 1, 0)])
    path = write_ir(tmp_path, xml)
    ours = irexec.read_model(path)
    theirs = _ov_read(path).outputs[0].get_names()
    assert theirs == ({"y", "z"} if where == "layer" else {"t"})
    assert ours.output_name(ours.results[0]) in theirs
