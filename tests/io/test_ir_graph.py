"""Edges and the graph: dangling edges, unconnected or doubly connected inputs, cycles, layers no
Result needs, several errors at once, and a deterministic topological order."""

import pytest

import irexec
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
               layer(3, "bad", "Frobnicate", outputs=[["?"]]),            # IR103 + IR105
               result(4, "out", [2])],
              [(0, 0, 4, 0), (0, 0, 9, 0)])                               # IR201
    path = write_ir(tmp_path, xml.replace('version="None"', ""))        # IR101
    error = read_error(path)
    codes = sorted(d.code for d in error.diagnostics)
    assert codes == ["IR101", "IR102", "IR103", "IR105", "IR201"]
    assert len(error.diagnostics) > 1
    assert "(and 4 more problems)" in str(error)


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
