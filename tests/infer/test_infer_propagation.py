"""Element types and partial shapes through Reverse, ReverseSequence and Convert, including
dynamic and interval dims and dynamic rank."""

import pytest

import irexec
from irexec.ir.element_type import ElementType
from irexec.ir.shape import Dimension, PartialShape
from tests.helpers_ir import layer, net, parameter, read_error, result, the_diagnostic, write_ir

from .models import reverse, reverse_sequence

DYN = Dimension.dynamic()


def _out(tmp_path, xml_and_bin):
    model = irexec.read_model(write_ir(tmp_path, *xml_and_bin))
    port = model.by_id[2].outputs[0]
    assert model.outputs[0].source is port  # outputs are the Results' (OpenVINO's)
    return port


@pytest.mark.parametrize("shape, expected", [
    ("2,3", PartialShape([2, 3])),
    ("2..10,?,3", PartialShape([(2, 10), DYN, 3])),
    ("..4,5..", PartialShape([(0, 4), (5, None)])),
    ("...", PartialShape.dynamic()),
])
def test_reverse_keeps_the_data_shape_and_type(tmp_path, shape, expected):
    port = _out(tmp_path, reverse(shape, "1", data_type="i16", values=[0]))
    assert port.partial_shape == expected
    assert port.element_type == ElementType.i16


def test_reverse_with_parameter_axes_and_dynamic_rank(tmp_path):
    port = _out(tmp_path, reverse("...", "?"))
    assert not port.partial_shape.rank_is_static


def test_reverse_sequence_batch_dim_merges_with_seq_lengths(tmp_path):
    # data [-1,-1,-1,-1] + seq_lengths [3], batch_axis 2 -> [?,?,3,?] (facts (b) 5; TP-RS)
    port = _out(tmp_path, reverse_sequence("?,?,?,?", "3", batch_axis=2, seq_axis=1))
    assert port.partial_shape == PartialShape([DYN, DYN, 3, DYN])


def test_reverse_sequence_interval_batch_dims_intersect(tmp_path):
    # data [2..5,4,1..3] + seq_lengths [3..6] -> [3..5,4,1..3]
    port = _out(tmp_path, reverse_sequence("2..5,4,1..3", "3..6"))
    assert port.partial_shape == PartialShape([(3, 5), 4, (1, 3)])


def test_reverse_sequence_disjoint_batch_intervals_are_ir307(tmp_path):
    path = write_ir(tmp_path, *reverse_sequence("2..5,4,1..3", "6..8"))
    diag = the_diagnostic(read_error(path), "IR307")
    assert diag.location.layer_name == "op"
    assert "2..5" in diag.message and "6..8" in diag.message


def test_reverse_sequence_static_length_mismatch_is_ir307(tmp_path):
    path = write_ir(tmp_path, *reverse_sequence("4,3", "3"))
    assert the_diagnostic(read_error(path), "IR307").location.layer_name == "op"


def test_reverse_sequence_with_negative_batch_axis_merges_the_right_dim(tmp_path):
    port = _out(tmp_path, reverse_sequence("?,5,?", "7", batch_axis=-1, seq_axis=-2))
    assert port.partial_shape == PartialShape([DYN, 5, 7])


@pytest.mark.parametrize("lengths_shape", ["?", "..."])
def test_reverse_sequence_dynamic_lengths_keep_the_batch_dim(tmp_path, lengths_shape):
    port = _out(tmp_path, reverse_sequence("2..4,6", lengths_shape))
    assert port.partial_shape == PartialShape([(2, 4), 6])


def test_reverse_sequence_dynamic_rank_passes_through(tmp_path):
    port = _out(tmp_path, reverse_sequence("...", "5", data_type="u8"))
    assert not port.partial_shape.rank_is_static
    assert port.element_type == ElementType.u8


@pytest.mark.parametrize("shape, expected", [
    ("2,3", PartialShape([2, 3])), ("?,1..8", PartialShape([DYN, (1, 8)])),
    ("", PartialShape([])), ("...", PartialShape.dynamic()),
])
def test_convert_keeps_the_shape_and_changes_the_type(tmp_path, shape, expected):
    dims = None if shape == "..." else [-1] * len(expected) if shape else []
    xml = net([parameter(0, "x", shape, "f32", dims=dims),
               layer(1, "c", "Convert", data={"destination_type": "u16"}, inputs=[dims],
                     outputs=[dims], precision="U16"),
               result(2, "out", dims)],
              [(0, 0, 1, 0), (1, 1, 2, 0)])
    model = irexec.read_model(write_ir(tmp_path, xml))
    port = model.nodes[1].outputs[0]
    assert port.element_type == ElementType.u16
    assert port.partial_shape == expected


def test_chain_convert_reverse_sequence_reverse(tmp_path):
    # x [?,2..6,4] f16 -> Convert(f32) -> ReverseSequence(lengths [3..]) -> Reverse(mask)
    xml = net([parameter(0, "x", "?,2..6,4", "f16", dims=[-1, -1, 4]),
               parameter(1, "len", "3..", "i64", dims=[-1]),
               parameter(2, "mask", "3", "boolean", dims=[3]),
               layer(3, "cvt", "Convert", data={"destination_type": "f32"},
                     inputs=[[-1, -1, 4]], outputs=[[-1, -1, 4]]),
               layer(4, "rs", "ReverseSequence", data={"batch_axis": 0, "seq_axis": 1},
                     inputs=[[-1, -1, 4], [-1]], outputs=[[-1, -1, 4]]),
               layer(5, "rev", "Reverse", data={"mode": "mask"}, inputs=[[-1, -1, 4], [3]],
                     outputs=[[-1, -1, 4]]),
               result(6, "out", [-1, -1, 4])],
              [(0, 0, 3, 0), (3, 1, 4, 0), (1, 0, 4, 1), (4, 2, 5, 0), (2, 0, 5, 1),
               (5, 2, 6, 0)])
    model = irexec.read_model(write_ir(tmp_path, xml))
    shapes = {n.name: n.outputs[0].partial_shape for n in model.nodes if n.outputs}
    assert shapes["cvt"] == PartialShape([DYN, (2, 6), 4])
    assert shapes["rs"] == PartialShape([(3, None), (2, 6), 4])
    assert shapes["rev"] == shapes["rs"]
    assert model.outputs[0].element_type == ElementType.f32
