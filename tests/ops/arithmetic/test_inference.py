"""Inference of the element-wise ops over partial shapes (intervals, dynamic dims, dynamic rank)
and their generic diagnostics (attribute values, port counts), as read from IR text."""

from __future__ import annotations

import pytest

import irexec
from irexec.infer import infer_model
from irexec.builder import ModelBuilder
from irexec.ir.shape import Dimension, PartialShape

D = Dimension


def _infer(op, shapes, types=None, version=None, **attrs):
    b = ModelBuilder()
    types = types or ["f32"] * len(shapes)
    ports = [b.parameter(f"p{i}", t, s) for i, (t, s) in enumerate(zip(types, shapes))]
    node = b.op(op, *ports, version=version, name="op", **attrs)
    b.result(node, name="out")
    model = b.build()
    diagnostics = infer_model(model)
    return node, [d.code for d in diagnostics]


@pytest.mark.parametrize("a, b, expected", [
    (PartialShape([D(1, 5), D.static(3)]), PartialShape([D.static(3)]), "[1..5,3]"),
    (PartialShape([D.dynamic(), D.static(1)]), PartialShape([D.static(4)]), "[?,4]"),
    (PartialShape.dynamic(), PartialShape([D.static(4)]), "[...]"),
    (PartialShape([D.static(2), D(2, 8)]), PartialShape([D.static(2), D.static(1)]), "[2,2..8]"),
])
def test_numpy_broadcast_over_partial_shapes(a, b, expected):
    for op in ("Add", "Equal", "Maximum"):
        port, codes = _infer(op, [a, b])
        assert codes == [] and str(port.partial_shape) == expected, op


def test_pdpd_keeps_the_first_shape():
    port, codes = _infer("Subtract", [PartialShape([D.dynamic(), D.static(3), D.static(4)]),
                                      PartialShape([D.static(3), D.static(1)])],
                         auto_broadcast="pdpd")
    assert codes == [] and str(port.partial_shape) == "[?,3,4]"


def test_unary_keeps_the_shape_and_type():
    port, codes = _infer("Exp", [PartialShape([D(0, 7), D.dynamic()])], types=["f16"])
    assert codes == [] and str(port.partial_shape) == "[..7,?]"
    assert port.element_type.name == "f16"


def test_comparison_gives_boolean():
    port, codes = _infer("Less", [PartialShape([D.static(2)]), PartialShape([D.static(2)])],
                         types=["i64", "i64"])
    assert codes == [] and port.element_type.name == "boolean"


def test_select_partial_shapes():
    port, codes = _infer("Select", [PartialShape([D.static(4)]),
                                    PartialShape([D(1, 3), D.static(1)]),
                                    PartialShape([D.static(4)])], types=["boolean", "f32", "f32"])
    assert codes == [] and str(port.partial_shape) == "[1..3,4]"


def test_interval_that_cannot_meet_is_ir307():
    with pytest.raises(irexec.IRError) as info:
        _infer("Add", [PartialShape([D(5, 8)]), PartialShape([D(2, 3)])])
    assert info.value.code == "IR307" and "[5..8]" in str(info.value)


def test_bad_auto_broadcast_is_ir302():
    with pytest.raises(irexec.IRError) as info:
        _infer("Add", [[2], [2]], auto_broadcast="explicit")
    assert info.value.code == "IR302"


def test_wrong_port_count_is_ir303(tmp_path):
    from tests.helpers_ir import layer, net, parameter, result, write_ir
    xml = net([parameter(0, "a", "2", dims=(2,)),
               layer(1, "add", "Add", inputs=[(2,)], outputs=[(2,)]),
               result(2, "out", (2,))], [(0, 0, 1, 0), (1, 1, 2, 0)])
    path = write_ir(tmp_path, xml)
    with pytest.raises(irexec.IRError) as info:
        irexec.read_model(path)
    assert "IR303" in [d.code for d in info.value.diagnostics]
