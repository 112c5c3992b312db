"""Edges and the graph: dangling edges, unconnected or doubly connected inputs, cycles, layers no
Result needs, several errors at once, and a deterministic topological order."""

import pytest

import irexec
import irexec.api
from tests.helpers_ir import (
    layer, line_of, net, parameter, read_error, result, the_diagnostic, write_ir)


def convert(id, name, dims=(2,)):
    return layer(id, name, "Convert", data={"destination_type": "f32"}, inputs=[list(dims)],
                 outputs=[list(dims)])


def _edge_line(path, a, b, c, d):
    return line_of(path, f'from-layer="{a}" from-port="{b}" to-layer="{c}" to-port="{d}"')


@pytest.mark.parametrize("edge", [(0, 0, 7, 0), (7, 0, 1, 0)])
def test_edge_naming_a_missing_layer_is_ir201(tmp_path, edge):
    xml = net([parameter(0, "x", "2", dims=[2]), result(1, "out", [2])],
              [(0, 0, 1, 0), edge])
    path = write_ir(tmp_path, xml)
    diag = the_diagnostic(read_error(path), "IR201")
    assert "7" in diag.message
    assert diag.location.file == str(path)
    assert diag.location.line == _edge_line(path, *edge)


def test_edge_naming_a_missing_output_port_is_ir201(tmp_path):
    xml = net([parameter(0, "x", "2", dims=[2]), result(1, "out", [2])], [(0, 3, 1, 0)])
    path = write_ir(tmp_path, xml)
    diag = the_diagnostic(read_error(path), "IR201")
    assert "'x'" in diag.message and "output port 3" in diag.message
    assert diag.location.line == _edge_line(path, 0, 3, 1, 0)


def test_edge_naming_a_missing_input_port_is_ir201(tmp_path):
    xml = net([parameter(0, "x", "2", dims=[2]), result(1, "out", [2])],
              [(0, 0, 1, 0), (0, 0, 1, 4)])
    path = write_ir(tmp_path, xml)
    diag = the_diagnostic(read_error(path), "IR201")
    assert "'out'" in diag.message and "input port 4" in diag.message
    assert diag.location.line == _edge_line(path, 0, 0, 1, 4)


def test_edge_with_a_non_integer_attribute_is_ir201(tmp_path):
    xml = net([parameter(0, "x", "2", dims=[2]), result(1, "out", [2])], [(0, 0, 1, 0)])
    xml = xml.replace("<edges>", '<edges>\n<edge from-layer="zero" from-port="0" to-layer="1"/>')
    path = write_ir(tmp_path, xml)
    diag = the_diagnostic(read_error(path), "IR201")
    assert diag.location.line == line_of(path, 'from-layer="zero"')


def test_input_port_with_no_edge_is_ir202(tmp_path):
    xml = net([parameter(0, "x", "2", dims=[2]), result(1, "out", [2]), result(2, "lonely", [2])],
              [(0, 0, 1, 0)])
    path = write_ir(tmp_path, xml)
    diag = the_diagnostic(read_error(path), "IR202")
    assert diag.location.layer_name == "lonely"
    assert diag.location.line == line_of(path, "<port", nth=3)  # lonely's input port
    assert "port 0" in diag.message


def test_two_edges_into_one_input_is_ir203(tmp_path):
    xml = net([parameter(0, "x", "2", dims=[2]), parameter(1, "y", "2", dims=[2]),
               result(2, "out", [2])],
              [(0, 0, 2, 0), (1, 0, 2, 0)])
    path = write_ir(tmp_path, xml)
    diag = the_diagnostic(read_error(path), "IR203")
    assert "'out'" in diag.message and "'x'" in diag.message
    assert diag.location.line == _edge_line(path, 1, 0, 2, 0)  # the second edge


def test_cycle_is_ir204_naming_the_layers_on_it(tmp_path):
    # x feeds nothing; a <-> b form a loop and out reads a.
    xml = net([parameter(0, "x", "2", dims=[2]), convert(1, "a"), convert(2, "b"),
               result(3, "out", [2])],
              [(2, 1, 1, 0), (1, 1, 2, 0), (1, 1, 3, 0)])
    path = write_ir(tmp_path, xml)
    diag = the_diagnostic(read_error(path), "IR204")
    assert "'a'" in diag.message and "'b'" in diag.message
    assert "'x'" not in diag.message and "'out'" not in diag.message
    assert diag.location.layer_name in ("a", "b")
    assert diag.location.line == line_of(path, f'name="{diag.location.layer_name}"')


def test_self_loop_is_ir204(tmp_path):
    xml = net([convert(1, "a"), result(3, "out", [2])], [(1, 1, 1, 0), (1, 1, 3, 0)])
    diag = the_diagnostic(read_error(write_ir(tmp_path, xml)), "IR204")
    assert "'a'" in diag.message and diag.location.layer_name == "a"


def test_layer_no_result_needs_is_a_warning_and_not_executed(tmp_path):
    xml = net([parameter(0, "x", "2", dims=[2]), convert(1, "used"), convert(2, "dead"),
               result(3, "out", [2])],
              [(0, 0, 1, 0), (0, 0, 2, 0), (1, 1, 3, 0)])
    path = write_ir(tmp_path, xml)
    model = irexec.read_model(path)
    diag = the_diagnostic(model.diagnostics, "IR205")
    assert diag.severity == "warning"
    assert diag.location.layer_name == "dead"
    assert diag.location.line == line_of(path, 'name="dead"')
    steps = irexec.compile_model(model).plan.steps
    assert [s.layer for s in steps] == ["used"]


def test_parameter_nobody_reads_is_not_reported(tmp_path):
    # A Parameter is part of the model's interface even when unused.
    xml = net([parameter(0, "x", "2", dims=[2]), parameter(1, "spare", "2", dims=[2]),
               result(2, "out", [2])], [(0, 0, 2, 0)])
    model = irexec.read_model(write_ir(tmp_path, xml))
    assert [d.code for d in model.diagnostics] == []


def test_several_errors_are_reported_at_once(tmp_path):
    xml = net([parameter(0, "x", "2", dims=[2]),
               parameter(0, "again", "2", dims=[2]),                      # IR102
               layer(2, "nover", "Convert", version=None),                # (version="None")
               layer(3, "bad", "Frobnicate", outputs=[["?"]]),            # IR103 + IR107
               result(4, "out", [2])],
              [(0, 0, 4, 0), (3, 0, 9, 0)])                               # IR201
    path = write_ir(tmp_path, xml.replace('version="None"', ""))        # IR101
    error = read_error(path)
    found = [(d.code, d.location.line) for d in error.diagnostics]
    assert found == [("IR102", line_of(path, 'name="again"')),  # in file order
                     ("IR101", line_of(path, 'name="nover"')),
                     ("IR103", line_of(path, 'name="bad"')),
                     ("IR107", line_of(path, "<dim>?</dim>")),
                     ("IR201", _edge_line(path, 3, 0, 9, 0))]
    assert "(and 4 more problems)" in str(error)


def test_dangling_edge_from_a_duplicated_layer_id_is_still_ir201(tmp_path):
    # Layer id 0 is used twice (IR102), so edges from it are not checked further; but an edge
    # from it to a layer id that does not exist at all is a separate problem.
    xml = net([parameter(0, "x", "2", dims=[2]), parameter(0, "again", "2", dims=[2]),
               result(4, "out", [2])],
              [(0, 0, 4, 0), (0, 0, 9, 0)])
    path = write_ir(tmp_path, xml)
    error = read_error(path)
    assert [(d.code, d.location.line) for d in error.diagnostics] == [
        ("IR102", line_of(path, 'name="again"')), ("IR201", _edge_line(path, 0, 0, 9, 0))]


def test_the_same_edge_twice_is_ir206_at_the_second(tmp_path):
    xml = net([parameter(0, "x", "2", dims=[2]), result(1, "out", [2])],
              [(0, 0, 1, 0), (0, 0, 1, 0)])
    path = write_ir(tmp_path, xml)
    error = read_error(path)
    assert [d.code for d in error.diagnostics] == ["IR206"]  # not IR203 as well
    diag = error.diagnostics[0]
    assert diag.severity == "error" and diag.info.name == "duplicate-edge"
    assert "0:0 -> 1:0" in diag.message
    assert diag.location.line == _edge_line(path, 0, 0, 1, 0) + 1  # the second copy
    text = path.read_text().splitlines()[diag.location.line - 1]
    assert diag.location.column == text.index("<edge") + 1


def test_edge_written_twice_and_another_source_give_ir206_and_ir203(tmp_path):
    xml = net([parameter(0, "x", "2", dims=[2]), parameter(1, "y", "2", dims=[2]),
               result(2, "out", [2])],
              [(0, 0, 2, 0), (0, 0, 2, 0), (1, 0, 2, 0)])
    path = write_ir(tmp_path, xml)
    error = read_error(path)
    assert [(d.code, d.location.line) for d in error.diagnostics] == [
        ("IR206", _edge_line(path, 0, 0, 2, 0) + 1), ("IR203", _edge_line(path, 1, 0, 2, 0))]


def test_a_cycle_is_reported_with_an_unrelated_error(tmp_path):
    # a <-> b loop, and elsewhere a Parameter with a bad element type: both are reported.
    xml = net([parameter(0, "x", "2", "f17", dims=[2]), convert(1, "a"), convert(2, "b"),
               result(3, "out", [2]), result(4, "out2", [2])],
              [(2, 1, 1, 0), (1, 1, 2, 0), (1, 1, 3, 0), (0, 0, 4, 0)])
    path = write_ir(tmp_path, xml)
    error = read_error(path)
    found = sorted((d.code, d.location.line) for d in error.diagnostics)
    cycle = the_diagnostic(error, "IR204")
    assert found == sorted([("IR302", line_of(path, 'element_type="f17"')),
                            ("IR204", line_of(path, f'name="{cycle.location.layer_name}"'))])
    assert "'a'" in cycle.message and "'b'" in cycle.message


def test_a_cycle_does_not_stop_checks_of_other_layers_edges(tmp_path):
    xml = net([parameter(0, "x", "2", dims=[2]), convert(1, "a"), convert(2, "b"),
               result(3, "out", [2]), result(4, "lonely", [2])],
              [(2, 1, 1, 0), (1, 1, 2, 0), (1, 1, 3, 0), (0, 0, 7, 0)])
    path = write_ir(tmp_path, xml)
    error = read_error(path)
    assert sorted(d.code for d in error.diagnostics) == ["IR201", "IR202", "IR204"]
    assert the_diagnostic(error, "IR201").location.line == _edge_line(path, 0, 0, 7, 0)
    assert the_diagnostic(error, "IR202").location.layer_name == "lonely"


def test_topological_order_puts_producers_first_and_keeps_xml_order_for_ties(tmp_path):
    # Layers are listed consumers-first; y and x are independent, so XML order (y before x)
    # breaks their tie.
    layers = [result(5, "out2", [2]), result(4, "out1", [2]), convert(3, "cb"), convert(2, "ca"),
              parameter(1, "y", "2", dims=[2]), parameter(0, "x", "2", dims=[2])]
    edges = [(0, 0, 2, 0), (1, 0, 3, 0), (2, 1, 4, 0), (3, 1, 5, 0)]
    model = irexec.read_model(write_ir(tmp_path, net(layers, edges)))
    assert [n.name for n in model.topological_order()] == ["y", "cb", "out2", "x", "ca", "out1"]


def test_topological_order_does_not_depend_on_edge_order(tmp_path):
    layers = [parameter(0, "x", "2", dims=[2]), convert(1, "a"), convert(2, "b"), convert(3, "c"),
              result(4, "r1", [2]), result(5, "r2", [2])]
    edges = [(0, 0, 1, 0), (0, 0, 2, 0), (1, 1, 3, 0), (3, 1, 4, 0), (2, 1, 5, 0)]
    orders = []
    for i, order in enumerate([edges, edges[::-1], edges[2:] + edges[:2]]):
        model = irexec.read_model(write_ir(tmp_path, net(layers, order), name=f"m{i}"))
        orders.append([n.name for n in model.topological_order()])
    assert orders[0] == ["x", "a", "b", "c", "r1", "r2"]
    assert orders[1] == orders[0] and orders[2] == orders[0]


def test_a_broken_layer_is_reported_once_not_again_by_its_edges(tmp_path):
    from tests.helpers_ir import net, parameter, read_error, result, write_ir

    headless = parameter(0, "x", "2", dims=[2]).replace(' version="opset1"', "")
    error = read_error(write_ir(tmp_path, net([headless, result(1, "out", [2])],
                                              [(0, 0, 1, 0)])))
    assert [d.code for d in error.diagnostics] == ["IR101"]


def test_a_layer_with_a_bad_port_id_is_reported_once(tmp_path):
    from tests.helpers_ir import net, parameter, read_error, result, write_ir

    bad_port = result(1, "out", [2]).replace('port id="0"', 'port id="zero"')
    error = read_error(write_ir(tmp_path, net([parameter(0, "x", "2", dims=[2]), bad_port],
                                              [(0, 0, 1, 0)])))
    assert [d.code for d in error.diagnostics] == ["IR104"]


def _column_of(path, line, element):
    return path.read_text().splitlines()[line - 1].index(element) + 1


def test_graph_problems_point_at_their_elements_column(tmp_path):
    # Indented differently from the helpers' output, so that a column of 1 would be wrong.
    xml = net([parameter(0, "x", "2", dims=[2], names="t"),
               parameter(0, "dup", "2", dims=[2]),                       # IR102
               parameter(5, "t", "2", dims=[2]),                         # IR207 (name t)
               convert(1, "a"), convert(2, "b"),                         # IR204
               convert(6, "dead"),                                       # IR205
               result(3, "out", [2]), result(4, "out2", [2]), result(7, "lonely", [2])],
              [(2, 1, 1, 0), (1, 1, 2, 0), (1, 1, 3, 0), (5, 0, 4, 0), (5, 0, 6, 0)])
    xml = "\n".join("   " + line if line.startswith("<layer") or line.startswith("<edge")
                    else line for line in xml.splitlines()) + "\n"
    path = write_ir(tmp_path, xml)
    _, diags = irexec.api.check_model(path)
    assert sorted(d.code for d in diags) == ["IR102", "IR202", "IR204", "IR205", "IR207"]
    for d in sorted(diags, key=lambda d: d.code == "IR202"):  # the port-level one last
        text = path.read_text().splitlines()[d.location.line - 1]
        element = "<port" if d.code == "IR202" else "<layer"
        assert d.location.column == _column_of(path, d.location.line, element), (d, text)


def test_layers_feeding_a_broken_layer_are_not_warned_about_as_unused(tmp_path):
    # headless lacks its version (IR101), so its edges are not connected; feeder, which feeds it,
    # is not "unused" (IR205): that would only repeat headless's problem.
    headless = convert(1, "headless").replace(' version="opset1"', "")
    xml = net([parameter(0, "x", "2", dims=[2]), convert(2, "feeder"), headless,
               result(3, "out", [2])],
              [(0, 0, 2, 0), (2, 1, 1, 0), (1, 1, 3, 0)])
    path = write_ir(tmp_path, xml)
    _, diags = irexec.api.check_model(path)
    assert [(d.code, d.location.layer_name) for d in diags] == [("IR101", "headless")]


# --- one mistake, one diagnostic: what a broken edge meant is not reported again --------------

@pytest.mark.parametrize("edge", [(7, 0, 1, 0), (0, 3, 1, 0)])
def test_an_edge_from_nowhere_gives_its_cause_only(tmp_path, edge):
    # 'out' has no other edge: its input is unfed because of the edge, not a second mistake.
    xml = net([parameter(0, "x", "2", dims=[2]), result(1, "out", [2])], [edge])
    path = write_ir(tmp_path, xml)
    error = read_error(path)
    assert [(d.code, d.location.line) for d in error.diagnostics] == [
        ("IR201", _edge_line(path, *edge))], str(error)


def test_an_unreadable_edge_gives_its_cause_only(tmp_path):
    xml = net([parameter(0, "x", "2", dims=[2]), result(1, "out", [2])], [(0, 0, 1, 0)])
    xml = xml.replace('from-port="0"', 'from-port="1e309"')
    path = write_ir(tmp_path, xml)
    assert [d.code for d in read_error(path).diagnostics] == ["IR201"]


@pytest.mark.parametrize("edge", [(1, 1, 9, 0), (1, 1, 2, 5)])
def test_the_source_of_an_edge_to_nowhere_is_not_also_unused(tmp_path, edge):
    # 'a' feeds only the broken edge; without it no Result needs 'a', but that is its consequence.
    xml = net([parameter(0, "x", "2", dims=[2]), convert(1, "a"), result(2, "out", [2])],
              [(0, 0, 1, 0), (0, 0, 2, 0), edge])
    path = write_ir(tmp_path, xml)
    assert [d.code for d in irexec.api.check_model(path)[1]] == ["IR201"]


def test_the_source_of_a_second_edge_into_an_input_is_not_also_unused(tmp_path):
    xml = net([parameter(0, "x", "2", dims=[2]), convert(1, "a"), result(2, "out", [2])],
              [(0, 0, 1, 0), (0, 0, 2, 0), (1, 1, 2, 0)])
    path = write_ir(tmp_path, xml)
    assert [d.code for d in irexec.api.check_model(path)[1]] == ["IR203"]


def test_edges_naming_a_layer_whose_id_is_unreadable_are_not_reported_again(tmp_path):
    # Layer "x" was meant to be 0: the edge from 0 is its edge, not a second mistake.
    xml = net([parameter(0, "x", "2", dims=[2]), result(1, "out", [2])], [(0, 0, 1, 0)])
    xml = xml.replace('<layer id="0"', '<layer id="0x0"')
    path = write_ir(tmp_path, xml)
    assert [d.code for d in read_error(path).diagnostics] == ["IR101"]


def test_more_missing_ids_than_unreadable_layers_are_all_reported(tmp_path):
    # One unreadable layer cannot be both 0 and 8: both edges are reported.
    xml = net([parameter(0, "x", "2", dims=[2]), result(1, "out", [2]), result(2, "out2", [2])],
              [(0, 0, 1, 0), (8, 0, 2, 0)])
    xml = xml.replace('<layer id="0"', '<layer id="0x0"')
    path = write_ir(tmp_path, xml)
    found = [(d.code, d.location.line) for d in read_error(path).diagnostics]
    assert found == [("IR101", line_of(path, 'id="0x0"')),
                     ("IR201", _edge_line(path, 0, 0, 1, 0)),
                     ("IR201", _edge_line(path, 8, 0, 2, 0))]
