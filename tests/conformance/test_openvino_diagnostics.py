"""Warnings and errors against OpenVINO: a file irexec only warns about reads and runs in OpenVINO
with the same results; a file with one of the new structural errors is rejected by both.

The warnings mark things OpenVINO is silent about (docs/compatibility.md, "Reported where OpenVINO
is silent"); if OpenVINO starts rejecting one of these files, the warning should become an error.
"""

from __future__ import annotations

import numpy as np
import pytest

import irexec
import irexec.api
from tests.conformance.oracle import run_both, same_bits
from tests.helpers_ir import const, layer, net, parameter, result, write_ir

ov = pytest.importorskip("openvino")


def _convert(id, name, destination_type, *, precision, data_extra=None, in_ids=None,
             out_ids=None, names="y"):
    return layer(id, name, "Convert", data={"destination_type": destination_type,
                                            **(data_extra or {})},
                 inputs=[[2, 3]], outputs=[[2, 3]], precision=precision, names=names,
                 in_ids=in_ids, out_ids=out_ids)


def _convert_model(**kw):
    return net([parameter(0, "x", "2,3", dims=[2, 3]), _convert(1, "c", "i32", **kw),
                result(2, "out", [2, 3])],
               [(0, 0, 1, (kw.get("in_ids") or [0])[0]), (1, (kw.get("out_ids") or [1])[0], 2, 0)])


def _reverse_model(axes, size=None, bin_extra=b""):
    data = np.array(axes, "<i8").tobytes()
    return net([parameter(0, "x", "2,3", dims=[2, 3]),
                const(1, "axes", "i64", str(len(axes)), 0, size or len(data), dims=[len(axes)]),
                layer(2, "rev", "Reverse", data={"mode": "index"},
                      inputs=[[2, 3], [len(axes)]], outputs=[[2, 3]], names="y"),
                result(3, "out", [2, 3])],
               [(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 3, 0)]), data + bin_extra


def _reverse_sequence_model(lengths):
    data = np.array(lengths, "<i4").tobytes()
    return net([parameter(0, "x", "2,3", dims=[2, 3]),
                const(1, "n", "i32", "2", 0, len(data), dims=[2]),
                layer(2, "rs", "ReverseSequence", data={"batch_axis": 0, "seq_axis": 1},
                      inputs=[[2, 3], [2]], outputs=[[2, 3]], names="y"),
                result(3, "out", [2, 3])],
               [(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 3, 0)]), data


WARNED = {
    "IR108": (_convert_model(precision="I32", in_ids=[3], out_ids=[4]), b""),
    "IR310": (_convert_model(precision="I32", data_extra={"colour": "red"}), b""),
    "IR402": (_convert_model(precision="FP32"), b""),
    "IR504": _reverse_model([1], size=16, bin_extra=bytes(8)),
    "IR312": _reverse_model([1, -1]),
    "IR313": _reverse_model([0, 1, 0]),
    "IR309": _reverse_sequence_model([0, 3]),
}


@pytest.mark.parametrize("code", list(WARNED))
def test_openvino_runs_what_irexec_only_warns_about(tmp_path, code):
    xml, weights = WARNED[code]
    path = write_ir(tmp_path, xml, weights)
    model = irexec.read_model(path)
    assert [d.code for d in model.diagnostics] == [code]
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    ours, theirs = run_both(ov, path, {"x": x})
    assert list(ours) == ["y"]
    assert same_bits(ours["y"], theirs["y"]), (ours["y"], theirs["y"])


REJECTED = {
    "IR206": net([parameter(0, "x", "2", dims=[2]), result(1, "out", [2])],
                 [(0, 0, 1, 0), (0, 0, 1, 0)]),
    "IR204": net([parameter(0, "x", "2", dims=[2]),
                  layer(1, "a", "Convert", data={"destination_type": "f32"}, inputs=[[2]],
                        outputs=[[2]]),
                  layer(2, "b", "Convert", data={"destination_type": "f32"}, inputs=[[2]],
                        outputs=[[2]]),
                  result(3, "out", [2])],
                 [(2, 1, 1, 0), (1, 1, 2, 0), (1, 1, 3, 0)]),
}


@pytest.mark.parametrize("code", list(REJECTED))
def test_both_reject(tmp_path, code):
    path = write_ir(tmp_path, REJECTED[code])
    _, diags = irexec.api.check_model(path)
    assert [d.code for d in diags if d.is_error] == [code]
    with pytest.raises(Exception):  # noqa: B017 - OpenVINO raises plain RuntimeError types
        ov.Core().read_model(str(path))
