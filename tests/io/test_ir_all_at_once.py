"""Every problem in one run: the reader and inference keep going past a broken layer, a cycle or
a bad edge, each diagnostic points at its element (line and column), and ``check_model`` returns
errors and warnings together while ``read_model`` raises the errors."""

import numpy as np
import pytest

import irexec
import irexec.api
from tests.helpers_ir import line_of, read_error, write_ir

AXES = np.array([1], "<i8").tobytes()  # 8 bytes: the Const below asks for 16 at offset 0

# Ten problems (eight errors, two warnings) in different layers and one edge, written by hand
# with varied indentation so that the columns differ; each is marked with its code in a comment.
# Layers downstream of a broken one are still read and checked themselves.
MANY = """\
<?xml version="1.0"?>
<net name="many" version="11">
 <layers>
  <layer id="0" name="p_bad_type" type="Parameter" version="opset1">
    <data shape="2,3" element_type="f17"/> <!-- IR302 -->
    <output><port id="0" precision="FP32"><dim>2</dim><dim>3</dim></port></output>
  </layer>
  <layer id="1" name="after_broken" type="Convert" version="opset1">
      <data destination_type="i32"/>
      <input><port id="0"><dim>2</dim><dim>?</dim></port></input> <!-- IR107 -->
      <output><port id="1" precision="I32"><dim>2</dim><dim>3</dim></port></output>
  </layer>
  <layer id="2" name="r0" type="Result" version="opset1">
    <input><port id="0"><dim>2</dim><dim>3</dim></port></input>
  </layer>
  <layer id="3" name="x" type="Parameter" version="opset1">
    <data shape="2,3" element_type="f32"/>
    <output><port id="0" precision="FP32"><dim>2</dim><dim>3</dim></port></output>
  </layer>
  <layer id="4" name="mask" type="Parameter" version="opset1">
    <data shape="3" element_type="boolean"/>
    <output><port id="0" precision="BOOL"><dim>3</dim></port></output>
  </layer>
  <layer id="5" name="rev_mask" type="Reverse" version="opset1"> <!-- IR314 -->
    <data mode="mask"/>
    <input><port id="0"><dim>2</dim><dim>3</dim></port><port id="1"><dim>3</dim></port></input>
    <output><port id="2" precision="FP32"><dim>2</dim><dim>3</dim></port></output>
  </layer>
  <layer id="6" name="r1" type="Result" version="opset1">
    <input><port id="0"><dim>2</dim><dim>3</dim></port></input>
  </layer>
  <layer id="7" name="lengths" type="Parameter" version="opset1">
    <data shape="2" element_type="i32"/>
    <output><port id="0" precision="I32"><dim>2</dim></port></output>
  </layer>
    <layer id="8" name="rs_same" type="ReverseSequence" version="opset1"> <!-- IR311 -->
      <data batch_axis="0" seq_axis="-2"/>
      <input><port id="0"><dim>2</dim><dim>3</dim></port><port id="1"><dim>2</dim></port></input>
      <output><port id="2" precision="FP32"><dim>2</dim><dim>3</dim></port></output>
    </layer>
  <layer id="9" name="r2" type="Result" version="opset1">
    <input><port id="0"><dim>2</dim><dim>3</dim></port></input>
  </layer>
  <layer id="10" name="axes" type="Const" version="opset1">
        <data element_type="i64" shape="2" offset="0" size="16"/> <!-- IR502 -->
    <output><port id="0" precision="I64"><dim>2</dim></port></output>
  </layer>
  <layer id="11" name="rev_idx" type="Reverse" version="opset1">
    <data mode="index"/>
    <input><port id="0"><dim>2</dim><dim>3</dim></port><port id="1"><dim>2</dim></port></input>
    <output><port id="2" precision="FP32"><dim>2</dim><dim>3</dim></port></output>
  </layer>
  <layer id="12" name="r3" type="Result" version="opset1">
    <input><port id="0"><dim>2</dim><dim>3</dim></port></input>
  </layer>
  <layer id="13" name="cvt_dims" type="Convert" version="opset1">
    <data destination_type="f16" colour="red"/> <!-- IR310 (warning) -->
    <input><port id="0"><dim>2</dim><dim>3</dim></port></input>
    <output>   <port id="1" precision="FP16"><dim>3</dim><dim>2</dim></port></output> <!-- IR401 -->
  </layer>
  <layer id="14" name="r4" type="Result" version="opset1">
    <input><port id="0"><dim>2</dim><dim>3</dim></port></input>
  </layer>
  <layer id="15" name="frob" type="Frobnicate" version="opset1"> <!-- IR103 -->
    <input><port id="0"><dim>2</dim><dim>3</dim></port></input>
    <output><port id="1" precision="FP32"><dim>2</dim><dim>3</dim></port></output>
  </layer>
  <layer id="16" name="r5" type="Result" version="opset1">
    <input><port id="0"><dim>2</dim><dim>3</dim></port></input>
  </layer>
  <layer id="17" name="cvt_prec" type="Convert" version="opset1">
    <data destination_type="i64"/>
    <input><port id="0"><dim>2</dim><dim>3</dim></port></input>
    <output><port id="1" precision="FP32"><dim>2</dim><dim>3</dim></port></output> <!-- IR402 -->
  </layer>
  <layer id="18" name="r6" type="Result" version="opset1">
    <input><port id="0"><dim>2</dim><dim>3</dim></port></input>
  </layer>
 </layers>
 <edges>
  <edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>
  <edge from-layer="1" from-port="1" to-layer="2" to-port="0"/>
  <edge from-layer="3" from-port="0" to-layer="5" to-port="0"/>
  <edge from-layer="4" from-port="0" to-layer="5" to-port="1"/>
  <edge from-layer="5" from-port="2" to-layer="6" to-port="0"/>
  <edge from-layer="3" from-port="0" to-layer="8" to-port="0"/>
  <edge from-layer="7" from-port="0" to-layer="8" to-port="1"/>
  <edge from-layer="8" from-port="2" to-layer="9" to-port="0"/>
  <edge from-layer="3" from-port="0" to-layer="11" to-port="0"/>
  <edge from-layer="10" from-port="0" to-layer="11" to-port="1"/>
  <edge from-layer="11" from-port="2" to-layer="12" to-port="0"/>
  <edge from-layer="3" from-port="0" to-layer="13" to-port="0"/>
  <edge from-layer="13" from-port="1" to-layer="14" to-port="0"/>
  <edge from-layer="3" from-port="0" to-layer="15" to-port="0"/>
  <edge from-layer="15" from-port="1" to-layer="16" to-port="0"/>
  <edge from-layer="3" from-port="0" to-layer="17" to-port="0"/>
  <edge from-layer="17" from-port="1" to-layer="18" to-port="0"/>
  <edge from-layer="3" from-port="0" to-layer="42" to-port="0"/> <!-- IR201 -->
 </edges>
</net>
"""

# code -> (layer the diagnostic names or None, a snippet of its line, the element it points at)
EXPECTED = [
    ("IR302", "p_bad_type", 'element_type="f17"', "<data"),
    ("IR107", "after_broken", "<dim>?</dim>", "<dim>?"),
    ("IR314", "rev_mask", 'name="rev_mask"', "<layer"),
    ("IR311", "rs_same", 'name="rs_same"', "<layer"),
    ("IR502", "axes", 'size="16"', "<data"),
    ("IR310", "cvt_dims", 'colour="red"', "<data"),
    ("IR401", "cvt_dims", '<port id="1" precision="FP16">', "<port"),
    ("IR103", "frob", 'name="frob"', "<layer"),
    ("IR402", "cvt_prec", "IR402", "<port"),
    ("IR201", None, 'to-layer="42"', "<edge"),
]


def _where(path, snippet, element):
    line = line_of(path, snippet)
    text = path.read_text().splitlines()[line - 1]
    return line, text.index(element) + 1


@pytest.fixture
def many(tmp_path):
    return write_ir(tmp_path, MANY, AXES)


def test_check_model_gives_every_problem_in_file_order(many):
    model, diags = irexec.api.check_model(many)
    assert model is not None
    assert [(d.code, d.location.layer_name) for d in diags] == [(c, n) for c, n, _, _ in EXPECTED]
    assert all(d.location.file == str(many) for d in diags)


@pytest.mark.parametrize("code, layer_name, snippet, element", EXPECTED,
                         ids=[e[0] for e in EXPECTED])
def test_each_problem_at_its_line_and_column(many, code, layer_name, snippet, element):
    _, diags = irexec.api.check_model(many)
    (diag,) = [d for d in diags if d.code == code]
    line, column = _where(many, snippet, element)
    assert (diag.location.line, diag.location.column) == (line, column)
    assert many.read_text().splitlines()[line - 1][column - 1] == "<"


def test_read_model_raises_every_error_and_no_warning(many):
    error = read_error(many)
    assert [d.code for d in error.diagnostics] == [
        c for c, _, _, _ in EXPECTED if c not in ("IR310", "IR402")]
    assert all(d.is_error for d in error.diagnostics)
    assert "(and 7 more problems)" in str(error)


def test_broken_layers_are_marked_and_healthy_ones_inferred(many):
    model, _ = irexec.api.check_model(many)
    by_name = {n.name: n for n in model.nodes}
    assert by_name["p_bad_type"].broken and by_name["axes"].broken
    assert not by_name["x"].broken and not by_name["cvt_prec"].broken
    # The healthy branches got their types even though other layers are broken.
    assert by_name["cvt_prec"].outputs[0].element_type.name == "i64"
    assert str(by_name["cvt_dims"].outputs[0].partial_shape) == "[2,3]"


def test_unparsable_xml_is_the_one_problem(tmp_path):
    # Only XML that cannot be parsed stops the file: one IR002, with its line and a column.
    path = write_ir(tmp_path, MANY.replace(" </layers>", " </layerz>"), AXES)
    model, diags = irexec.api.check_model(path)
    assert model is None
    assert [d.code for d in diags] == ["IR002"]
    assert diags[0].location.line == line_of(path, "</layerz>")
    assert diags[0].location.column is not None and diags[0].location.column >= 1
    assert [d.code for d in read_error(path).diagnostics] == ["IR002"]


def test_cycle_with_other_errors_in_one_run(tmp_path):
    xml = """\
    <?xml version="1.0"?>
    <net name="loop" version="11">
      <layers>
        <layer id="0" name="x" type="Parameter" version="opset1">
          <data shape="2" element_type="f32"/>
          <output><port id="0" precision="FP32"><dim>?</dim></port></output>
        </layer>
        <layer id="1" name="a" type="Convert" version="opset1">
          <data destination_type="f32"/>
          <input><port id="0"><dim>2</dim></port></input>
          <output><port id="1" precision="FP32"><dim>2</dim></port></output>
        </layer>
        <layer id="2" name="b" type="Convert" version="opset1">
          <data destination_type="f32"/>
          <input><port id="0"><dim>2</dim></port></input>
          <output><port id="1" precision="FP32"><dim>2</dim></port></output>
        </layer>
        <layer id="3" name="out" type="Result" version="opset1">
          <input><port id="0"><dim>2</dim></port></input>
        </layer>
      </layers>
      <edges>
        <edge from-layer="2" from-port="1" to-layer="1" to-port="0"/>
        <edge from-layer="1" from-port="1" to-layer="2" to-port="0"/>
        <edge from-layer="1" from-port="1" to-layer="3" to-port="0"/>
        <edge from-layer="0" from-port="0" to-layer="5" to-port="0"/>
      </edges>
    </net>
    """
    path = write_ir(tmp_path, xml)
    _, diags = irexec.api.check_model(path)
    found = [(d.code, d.location.line) for d in diags]
    cycle = next(d for d in diags if d.code == "IR204")
    assert "'a'" in cycle.message and "'b'" in cycle.message
    assert sorted(found) == sorted([
        ("IR107", line_of(path, "<dim>?</dim>")),
        ("IR204", line_of(path, f'name="{cycle.location.layer_name}"')),
        ("IR201", line_of(path, 'to-layer="5"')),
    ])
    assert [d.code for d in read_error(path).diagnostics] == [c for c, _ in found]
