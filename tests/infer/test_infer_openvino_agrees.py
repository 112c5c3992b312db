"""OpenVINO's shape inference on the same files: same output shapes where both accept, both
reject where the facts say OpenVINO rejects too."""

import pytest

import irexec
from tests.helpers_ir import write_ir

from .models import reverse, reverse_sequence

ov = pytest.importorskip("openvino")

ACCEPTED = {
    "RS batch merge static": reverse_sequence("?,?,?,?", "3", batch_axis=2, seq_axis=1),
    "RS batch merge intervals": reverse_sequence("2..5,4,1..3", "3..6"),
    "RS negative axes": reverse_sequence("?,5,?", "7", batch_axis=-1, seq_axis=-2),
    "RS f32 lengths": reverse_sequence("2,3", "2", second_type="f32"),
    "RS const lengths": reverse_sequence("2,3", "2", values=[3, 1]),
    "Reverse intervals": reverse("2..10,?,3", "1", values=[-1]),
    "Reverse dynamic rank": reverse("...", "?"),
    "Reverse mode INDEX": reverse("2,3", "1", "INDEX", values=[1]),
    "Reverse mode Mask": reverse("2,3", "2", "Mask", second_type="boolean", values=[1, 0]),
    "Reverse repeated axes": reverse("2,3", "3", values=[1, 1, -1]),
}

REJECTED = {
    "Reverse axis = rank": (reverse("2,3", "1", values=[2]), "IR306"),
    "Reverse mask too short": (reverse("2,3,4", "2", "mask", second_type="boolean"), "IR314"),
    "Reverse mode foo": (reverse("2,3", "1", "foo", values=[0]), "IR302"),
    "Reverse f32 axes": (reverse("2,3", "1", second_type="f32"), "IR304"),
    "Reverse mask of i64": (reverse("2,3", "2", "mask", second_type="i64"), "IR304"),
    "RS rank 1": (reverse_sequence("4", "4"), "IR305"),
    "RS boolean lengths": (reverse_sequence("2,3", "2", second_type="boolean"), "IR304"),
    "RS 2-D lengths": (reverse_sequence("2,3", "2,1"), "IR305"),
    "RS disjoint batch": (reverse_sequence("2..5,4,1..3", "6..8"), "IR307"),
    "RS length mismatch": (reverse_sequence("4,3", "3"), "IR307"),
    "RS batch_axis out of range": (reverse_sequence("2,3", "2", batch_axis=2), "IR306"),
}


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_same_output_shape(tmp_path, name):
    path = write_ir(tmp_path, *ACCEPTED[name])
    ours = irexec.read_model(path).outputs[0]
    theirs = ov.Core().read_model(str(path)).outputs[0]
    assert str(ours.partial_shape) == str(theirs.get_partial_shape())
    assert ours.element_type.name == theirs.get_element_type().get_type_name()


@pytest.mark.parametrize("name", list(REJECTED))
def test_both_reject(tmp_path, name):
    (xml, weights), code = REJECTED[name]
    path = write_ir(tmp_path, xml, weights)
    with pytest.raises(irexec.IRError) as info:
        irexec.read_model(path)
    assert [d.code for d in info.value.diagnostics] == [code]
    with pytest.raises(Exception):  # noqa: B017 - OpenVINO raises plain RuntimeError types
        ov.Core().read_model(str(path))
