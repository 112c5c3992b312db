"""Op rules checked when a model is read: Reverse's mode and axes, ReverseSequence's axes,
ranks, length types and constant lengths."""

import numpy as np
import pytest

import irexec
from tests.helpers_ir import line_of, read_error, the_diagnostic, write_ir

from .models import reverse, reverse_sequence


def _op_error(tmp_path, xml_and_bin, code):
    path = write_ir(tmp_path, *xml_and_bin)
    diag = the_diagnostic(read_error(path), code)
    assert diag.location.layer_name == "op"
    assert diag.location.file == str(path)
    return diag, path


# --- Reverse ------------------------------------------------------------------------------------

@pytest.mark.parametrize("axes", [[2], [-3], [0, 5], [-100]])
def test_reverse_const_axis_out_of_range_is_ir306_at_read_time(tmp_path, axes):
    # -3 for rank 2 too (OpenVINO lets negative ones through until inference; irexec does not).
    diag, path = _op_error(tmp_path, reverse("2,3", str(len(axes)), values=axes), "IR306")
    assert diag.location.line == line_of(path, 'name="op"')
    bad = next(a for a in axes if not -2 <= a <= 1)
    assert str(bad) in diag.message and "[-2, 1]" in diag.message


@pytest.mark.parametrize("axes", [[0], [-1], [-2, 1], [1, 0], []])
def test_reverse_const_axes_in_range_are_accepted(tmp_path, axes):
    xml, data = reverse("2,3", str(len(axes)), values=axes)
    model = irexec.read_model(write_ir(tmp_path, xml, data))
    assert model.diagnostics == []


@pytest.mark.parametrize("axes", [[1, 1], [0, -2], [-1, 1]])
def test_reverse_const_repeated_axes_are_a_warning_ir312(tmp_path, axes):
    # Same axis twice after normalisation: accepted (the axis is flipped once), but flagged.
    xml, data = reverse("2,3", str(len(axes)), values=axes)
    path = write_ir(tmp_path, xml, data)
    model = irexec.read_model(path)
    assert [d.code for d in model.diagnostics] == ["IR312"]
    diag = model.diagnostics[0]
    assert diag.severity == "warning"
    assert diag.location.layer_name == "op"
    assert diag.location.line == line_of(path, 'name="op"')
    assert str(axes) in diag.message


@pytest.mark.parametrize("axes", [[0, 1, 0], [1, 1, -1], [0, 1, -1, -2]])
def test_reverse_const_more_axes_than_the_rank_is_a_warning_ir313(tmp_path, axes):
    # More axes than data has is reported as IR313 alone (it implies a repeat: no IR312 too).
    xml, data = reverse("2,3", str(len(axes)), values=axes)
    path = write_ir(tmp_path, xml, data)
    model = irexec.read_model(path)
    assert [d.code for d in model.diagnostics] == ["IR313"]
    diag = model.diagnostics[0]
    assert diag.severity == "warning"
    assert diag.location.layer_name == "op"
    assert diag.location.line == line_of(path, 'name="op"')
    assert f"{len(axes)} axes" in diag.message and "rank 2" in diag.message


def test_reverse_axes_from_a_parameter_are_not_checked_for_repeats(tmp_path):
    xml, data = reverse("2,3", "3")  # axes unknown until run time
    assert irexec.read_model(write_ir(tmp_path, xml, data)).diagnostics == []


def test_reverse_axes_are_not_checked_against_a_dynamic_rank(tmp_path):
    xml, data = reverse("...", "2", values=[7, -9])
    irexec.read_model(write_ir(tmp_path, xml, data))


@pytest.mark.parametrize("mask_len", ["1", "2", "4", "1..2"])
def test_reverse_mask_length_other_than_rank_is_ir314(tmp_path, mask_len):
    xml_and_bin = reverse("2,3,4", mask_len, "mask", second_type="boolean")
    diag, path = _op_error(tmp_path, xml_and_bin, "IR314")
    assert diag.severity == "error" and diag.info.name == "mask-length"
    assert mask_len in diag.message and "rank 3" in diag.message
    assert diag.location.line == line_of(path, 'name="op"')


def test_reverse_const_mask_of_wrong_length_is_ir314(tmp_path):
    xml_and_bin = reverse("2,3,4", "2", "mask", second_type="boolean", values=[True, False])
    diag, _ = _op_error(tmp_path, xml_and_bin, "IR314")
    assert "2 entries" in diag.message


@pytest.mark.parametrize("mask_len", ["?", "2..5"])
def test_reverse_mask_of_unknown_length_that_may_fit_is_accepted(tmp_path, mask_len):
    xml, data = reverse("2,3,4", mask_len, "mask", second_type="boolean")
    irexec.read_model(write_ir(tmp_path, xml, data))


def test_reverse_missing_mode_is_ir301(tmp_path):
    diag, path = _op_error(tmp_path, reverse("2,3", "1", mode=None, values=[0]), "IR301")
    assert "'mode'" in diag.message


@pytest.mark.parametrize("mode, stored, axes_type", [
    ("index", "index", "i64"), ("INDEX", "index", "i32"), ("Index", "index", "u8"),
    ("mask", "mask", "boolean"), ("Mask", "mask", "boolean"), ("MASK", "mask", "boolean"),
])
def test_reverse_mode_is_read_case_insensitively(tmp_path, mode, stored, axes_type):
    xml, data = reverse("2,3", "2", mode, second_type=axes_type)
    model = irexec.read_model(write_ir(tmp_path, xml, data))
    assert model.by_id[2].attrs["mode"] == stored


@pytest.mark.parametrize("mode", ["foo", "", "indices"])
def test_reverse_unknown_mode_is_ir302(tmp_path, mode):
    diag, path = _op_error(tmp_path, reverse("2,3", "1", mode), "IR302")
    assert "'mode'" in diag.message and "index" in diag.message and "mask" in diag.message
    assert diag.location.line == line_of(path, "mode=")


@pytest.mark.parametrize("mode, axes_type", [("index", "f32"), ("index", "boolean"),
                                             ("mask", "i64"), ("mask", "u8")])
def test_reverse_axes_of_the_wrong_type_are_ir304(tmp_path, mode, axes_type):
    diag, _ = _op_error(tmp_path, reverse("2,3", "2", mode, second_type=axes_type), "IR304")
    assert axes_type in diag.message


@pytest.mark.parametrize("axes_shape", ["", "1,1"])
def test_reverse_axes_not_1d_are_ir305(tmp_path, axes_shape):
    _op_error(tmp_path, reverse("2,3", axes_shape), "IR305")


# --- ReverseSequence ----------------------------------------------------------------------------

@pytest.mark.parametrize("batch_axis, seq_axis", [(0, 0), (1, -1), (-2, 0), (2, -1)])
def test_reverse_sequence_equal_axes_after_normalisation_are_ir311(tmp_path, batch_axis,
                                                                   seq_axis):
    data_shape = "3,3,3" if batch_axis == 2 else "3,3"
    diag, path = _op_error(tmp_path, reverse_sequence(data_shape, "3", batch_axis, seq_axis),
                           "IR311")
    assert diag.severity == "error" and diag.info.name == "same-axis"
    assert "batch_axis" in diag.message and "seq_axis" in diag.message
    assert diag.location.line == line_of(path, 'name="op"')
    assert "IR302" not in [d.code for d in read_error(path).diagnostics]


@pytest.mark.parametrize("batch_axis, seq_axis", [(2, 1), (0, -3), (-3, 1)])
def test_reverse_sequence_axis_out_of_range_is_ir306(tmp_path, batch_axis, seq_axis):
    diag, _ = _op_error(tmp_path, reverse_sequence("2,2", "2", batch_axis, seq_axis), "IR306")
    assert "[-2, 1]" in diag.message


@pytest.mark.parametrize("data_shape", ["4", ""])
def test_reverse_sequence_data_rank_below_2_is_ir305(tmp_path, data_shape):
    diag, _ = _op_error(tmp_path, reverse_sequence(data_shape, "4"), "IR305")
    assert "data" in diag.message


def test_reverse_sequence_lengths_not_1d_are_ir305(tmp_path):
    diag, _ = _op_error(tmp_path, reverse_sequence("2,3", "2,1"), "IR305")
    assert "seq_lengths" in diag.message


def test_reverse_sequence_boolean_lengths_are_ir304(tmp_path):
    diag, _ = _op_error(tmp_path, reverse_sequence("2,3", "2", second_type="boolean"), "IR304")
    assert "boolean" in diag.message


@pytest.mark.parametrize("length_type", ["i8", "u64", "f16", "f32", "f64"])
def test_reverse_sequence_numeric_lengths_are_accepted(tmp_path, length_type):
    irexec.read_model(write_ir(tmp_path, *reverse_sequence("2,3", "2", second_type=length_type)))


@pytest.mark.parametrize("lengths, length_type, bad_index, bad_text", [
    ([1, 4], "i32", 1, "4"),          # above dim(seq_axis) = 3
    ([-1, 2], "i64", 0, "-1"),
    ([2.0, np.nan], "f32", 1, "nan"),
    ([3, -0.5 - 1], "f64", 1, "-1.5"),
])
def test_reverse_sequence_bad_const_lengths_are_ir308(tmp_path, lengths, length_type,
                                                      bad_index, bad_text):
    xml_and_bin = reverse_sequence("2,3", "2", second_type=length_type, values=lengths)
    diag, _ = _op_error(tmp_path, xml_and_bin, "IR308")
    assert f"seq_lengths[{bad_index}]" in diag.message and bad_text in diag.message


def test_reverse_sequence_const_length_equal_to_the_dim_is_accepted(tmp_path):
    xml, data = reverse_sequence("2,3", "2", values=[3, 1])
    assert irexec.read_model(write_ir(tmp_path, xml, data)).diagnostics == []


def test_reverse_sequence_const_length_zero_is_a_warning_ir309(tmp_path):
    xml, data = reverse_sequence("2,3", "2", values=[2, 0])
    path = write_ir(tmp_path, xml, data)
    model = irexec.read_model(path)
    diag = the_diagnostic(model.diagnostics, "IR309")
    assert diag.severity == "warning" and diag.info.name == "zero-sequence-length"
    assert diag.location.layer_name == "op"
    assert diag.location.line == line_of(path, 'name="op"')
    assert "seq_lengths[1]" in diag.message


def test_reverse_sequence_lengths_checked_against_the_seq_axis(tmp_path):
    # batch_axis 1 (size 2), seq_axis 0 (size 5): a length of 5 fits, 6 does not.
    ok, data = reverse_sequence("5,2", "2", batch_axis=1, seq_axis=0, values=[5, 1])
    irexec.read_model(write_ir(tmp_path, ok, data))
    bad = reverse_sequence("5,2", "2", batch_axis=1, seq_axis=0, values=[6, 1])
    _op_error(tmp_path, bad, "IR308")
