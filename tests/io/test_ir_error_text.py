"""Every error about a layer reads ``file:line: layer 'name' (Type): message``; an edge's names
no layer."""

import numpy as np
import pytest

from tests.helpers_ir import const, layer, line_of, net, parameter, read_error, result, write_ir
from tests.infer.models import reverse_sequence

I64_1 = np.array([1], "<i8").tobytes()


def _rev(mode="index", data_dims=(2, 3), axes_dims=(1,), out_dims=(2, 3)):
    return layer(2, "rev", "Reverse", data={"mode": mode}, inputs=[list(data_dims),
                                                                    list(axes_dims)],
                 outputs=[list(out_dims)])


def _with(rev_xml, axes=None, data_shape="2,3"):
    axes = axes or const(1, "axes", "i64", "1", 0, 8, dims=[1], precision="I64")
    dims = [int(d) for d in data_shape.split(",")]
    return net([parameter(0, "data", data_shape, dims=dims), axes, rev_xml,
                result(3, "out", [2, 3])],
               [(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 3, 0)])


# (case id, xml, bin, the layer the error names, a snippet on the line it points at)
CASES = [
    ("IR101", net([parameter(0, "x", "2", dims=[2]).replace('version="opset1"', "")], []),
     b"", "x", 'name="x"'),
    ("IR103", _with(_rev().replace('version="opset1"', 'version="opset3"')), I64_1, "rev",
     'name="rev"'),
    ("IR104", net([parameter(0, "x", "2", dims=[2]).replace('port id="0"', 'port id="p"')], []),
     b"", "x", "<port"),
    ("IR105", net([parameter(0, "x", "2", dims=["two"])], []), b"", "x", "<dim>"),
    ("IR107", net([parameter(0, "x", "2", dims=["?"])], []), b"", "x", "<dim>"),
    ("IR106", net([parameter(0, "x", "2", dims=[2], precision="fp32")], []), b"", "x", "<port"),
    ("IR202", _with(_rev()).replace('<edge from-layer="1"', '<not-an-edge from-layer="1"'),
     I64_1, "rev", '<port id="1">'),
    ("IR301", _with(_rev().replace('mode="index"', "")), I64_1, "rev", "<data />"),
    ("IR302", _with(_rev(mode="both")), I64_1, "rev", 'mode="both"'),
    ("IR305", _with(_rev(axes_dims=(1, 1)),
                    axes=const(1, "axes", "i64", "1,1", 0, 8, dims=[1, 1], precision="I64")),
     I64_1, "rev", 'name="rev"'),
    ("IR306", _with(_rev()), np.array([5], "<i8").tobytes(), "rev", 'name="rev"'),
    # The same edge again, its attributes in another order.
    ("IR206", _with(_rev()).replace("</edges>", '<edge to-layer="2" to-port="0" '
                                                 'from-layer="0" from-port="0"/>\n</edges>'),
     I64_1, None, '<edge to-layer="2"'),
    ("IR307", reverse_sequence("4,3", "3")[0], b"", "op", 'name="op"'),
    ("IR311", reverse_sequence("3,3", "3", batch_axis=1, seq_axis=-1)[0], b"", "op",
     'name="op"'),
    ("IR314", _with(_rev(mode="mask", axes_dims=(1,)),
                    axes=const(1, "axes", "boolean", "1", 0, 1, dims=[1])),
     b"\x01", "rev", 'name="rev"'),
    ("IR401", _with(_rev(out_dims=(3, 2))), I64_1, "rev", '<port id="2" precision="FP32">'),
    ("IR501", _with(_rev()), None, "axes", 'element_type="i64"'),
    ("IR502", _with(_rev()), b"\x01", "axes", 'element_type="i64"'),
    ("IR503", _with(_rev(), axes=const(1, "axes", "i64", "1", 0, 4, dims=[1], precision="I64")),
     I64_1, "axes", 'element_type="i64"'),
]


@pytest.mark.parametrize("code, xml, weights, layer_name, snippet", CASES,
                         ids=[c[0] for c in CASES])
def test_error_text_names_file_line_and_layer(tmp_path, code, xml, weights, layer_name,
                                              snippet):
    path = write_ir(tmp_path, xml, weights)
    error = read_error(path)
    first = error.diagnostics[0]
    assert first.code == code, [str(d) for d in error.diagnostics]
    line = line_of(path, snippet)
    assert first.location.line == line
    if layer_name is None:  # a problem with an edge names no layer
        assert str(error).startswith(f"{path}:{line}: ")
        assert first.location.layer_name is None
    else:
        assert str(error).startswith(f"{path}:{line}: layer '{layer_name}' (")
    assert first.message in str(error)



@pytest.mark.parametrize("code, xml, weights, layer_name, snippet", CASES,
                         ids=[c[0] for c in CASES])
def test_error_column_points_at_the_element(tmp_path, code, xml, weights, layer_name, snippet):
    # location.column is the 1-based column of the "<" that opens the element holding the snippet.
    path = write_ir(tmp_path, xml, weights)
    first = read_error(path).diagnostics[0]
    text = path.read_text().splitlines()[first.location.line - 1]
    at = text.index(snippet)
    expected = at + 1 if snippet.startswith("<") else text.rindex("<", 0, at) + 1
    assert first.location.column == expected, (text, first.location)
