"""The layers that hold sub-graphs, made as OpenVINO's Python API makes them: objects whose
bodies, inputs and outputs are given one call at a time.

    ti = ops.tensor_iterator()
    ti.set_body(body)                                  # an irexec Model of Parameters/Results
    ti.set_sliced_input(x_param, x, 0, 1, 1, -1, 1)    # a body Parameter, the outer value ...
    ti.set_merged_input(h_param, h0, h_result)         # ... a back edge from a body Result
    out = ti.get_iter_value(h_result, -1)              # an output of the layer

``loop(trip_count, execution_condition)`` adds ``set_function`` and ``set_special_body_ports``;
``if_op(condition)`` has ``set_then_body``, ``set_else_body``, ``set_input`` and ``set_output``.

NOTE for developers: each object is the layer itself (a Node), so it feeds other layers and
``Model`` gathers it like any. Every call rebuilds its ports and port maps from what was given
(an output port keeps its object as inputs come after it); each new output infers the layer,
and an IRError there names the layer and the rule, as every layer made in Python.
"""

from __future__ import annotations

from irexec.diagnostics.diagnostic import Diagnostics
from irexec.errors import IRError
from irexec.infer import infer_new_layer
from irexec.ir.model import Body, InputPort, Model, Node, OutputPort, PortMapping, Ports
from irexec.opsets import graph
from irexec.opsets.graph import ArgumentError, as_outputs


def _role(node, role: str) -> bool:
    return isinstance(node, Node) and node.op is not None and node.op.spec.role == role


class _Subgraph(Node):
    """What TensorIterator, Loop and If share."""

    TYPE = VERSION = ""
    BODIES: tuple[str, ...] = ("body",)

    def _start(self, fixed: list[OutputPort]) -> None:
        op = graph.lookup(self.TYPE, self.VERSION)
        node_id = next(graph._ids)
        Node.__init__(self, id=node_id, name=f"{op.spec.type}_{node_id}", type=op.spec.type,
                      version=self.VERSION, op=op)
        self.attrs = {a.name: a.default for a in op.spec.attrs if not a.required}
        self._fixed = fixed
        self._ins: list[tuple] = []  # (outer port, {body: Parameter}, slicing, {body: Result})
        self._outs: list[tuple] = []  # (port, {body: Result}, slicing)
        self._models: dict[str, Model] = {}
        self._special: list[int] | None = None
        self._rebuild()

    # -- what the calls give --------------------------------------------------------------

    def _body_model(self, name: str, model) -> None:
        if not isinstance(model, Model):
            raise ArgumentError(f"{self.TYPE}: a body is an irexec Model (Model(results, "
                                f"parameters)), not {type(model).__name__}")
        self._models[name] = model
        self._rebuild()

    def _parameter(self, body: str, param, what: str) -> Node:
        if not _role(param, "parameter"):
            raise ArgumentError(f"{self.TYPE}.{what}: the body value must be a Parameter of "
                                f"the body, not {param!r}")
        model = self._models.get(body)
        if model is None:
            raise ArgumentError(f"{self.TYPE}.{what}: set the body first")
        if not any(param is p for p in model.parameters):
            raise ArgumentError(f"{self.TYPE}.{what}: Parameter '{param.name}' is not one of "
                                f"the body's")
        return param

    def _result(self, body: str, value, what: str) -> Node:
        """The body's Result for a Result layer or the output port a Result reads."""
        model = self._models.get(body)
        if model is None:
            raise ArgumentError(f"{self.TYPE}.{what}: set the body first")
        for result in model.results:
            if value is result or (isinstance(value, OutputPort) and (
                    value.node is result or result.inputs[0].source is value)):
                return result
            if isinstance(value, Node) and result.inputs[0].source is not None \
                    and result.inputs[0].source.node is value:
                return result
        raise ArgumentError(f"{self.TYPE}.{what}: {value!r} is not a Result of the body (nor "
                            f"what one reads)")

    def _outer(self, value, what: str) -> OutputPort:
        return as_outputs(value, f"{self.TYPE}.{what}", "value")[0]

    def _add_output(self, results: dict, slicing) -> OutputPort:
        port = OutputPort(self, len(self._outs), 0)
        self._outs.append((port, results, slicing))
        self._rebuild()
        try:
            self._infer()
        except Exception:
            self._outs.pop()  # the layer stays as it was before the call
            self._rebuild()
            raise
        return port

    # -- ports, port maps and types -------------------------------------------------------

    def _rebuild(self) -> None:
        for port in self.inputs:
            if port.source is not None and port in port.source.consumers:
                port.source.consumers.remove(port)
        sources = [*self._fixed, *(entry[0] for entry in self._ins)]
        self.inputs = Ports(InputPort(self, i, i, source=s) for i, s in enumerate(sources))
        for port in self.inputs:
            port.source.consumers.append(port)
        outputs = Ports()
        for j, (port, _, _) in enumerate(self._outs):
            port.index, port.port_id = j, len(sources) + j
            outputs.append(port)
        self.outputs = outputs
        self.bodies = {}
        for name in self.BODIES:
            model = self._models.get(name)
            if model is None:
                continue
            body = Body(name, model, port_map_tag="port_map" if len(self.BODIES) == 1
                        else f"{name.split('_')[0]}_port_map")
            for k, (_, params, slicing, back) in enumerate(self._ins):
                param = params.get(name)
                if param is None:
                    continue
                body.inputs.append(PortMapping(len(self._fixed) + k, param.id, **(slicing or {})))
                if back.get(name) is not None:
                    body.back_edges.append((back[name].id, param.id))
            for port, results, slicing in self._outs:
                if results.get(name) is not None:
                    body.outputs.append(PortMapping(port.port_id, results[name].id,
                                                    **(slicing or {})))
            if self._special is not None:
                current, condition = self._special
                if current >= 0:
                    body.inputs.append(PortMapping(-1, model.parameters[current].id,
                                                   purpose="current_iteration"))
                if condition >= 0:
                    body.outputs.append(PortMapping(-1, model.results[condition].id,
                                                    purpose="execution_condition"))
            self.bodies[name] = body

    def _infer(self) -> None:
        missing = [name for name in self.BODIES if name not in self._models]
        if missing:
            raise ArgumentError(f"{self.TYPE}: set its {' and '.join(missing)} before asking "
                                f"for outputs")
        diags = Diagnostics()

        def keep(count: int) -> None:
            if count != len(self.outputs):
                raise ArgumentError(f"{self.TYPE}: inference gives {count} outputs for "
                                    f"{len(self.outputs)} ports")

        if infer_new_layer(self, graph._values, graph._bounds, diags, keep) is None \
                or diags.errors:
            raise IRError(diags.errors)

    def get_function(self) -> Model:
        return self._models[self.BODIES[0]]


class _Iterated(_Subgraph):
    """TensorIterator and Loop: one body, sliced, merged and invariant inputs, per-iteration
    and concatenated outputs."""

    def set_body(self, body: Model) -> None:
        self._body_model("body", body)

    set_function = set_body

    def get_body(self) -> Model:
        return self._models["body"]

    def set_invariant_input(self, body_parameter, value) -> None:
        param = self._parameter("body", body_parameter, "set_invariant_input")
        self._ins.append((self._outer(value, "set_invariant_input"), {"body": param}, None, {}))
        self._rebuild()

    def set_sliced_input(self, parameter, value, start: int, stride: int, part_size: int,
                         end: int, axis: int) -> None:
        param = self._parameter("body", parameter, "set_sliced_input")
        slicing = dict(axis=int(axis), start=int(start), stride=int(stride),
                       part_size=int(part_size), end=int(end))
        self._ins.append((self._outer(value, "set_sliced_input"), {"body": param}, slicing, {}))
        self._rebuild()

    def set_merged_input(self, body_parameter, initial_value, successive_value) -> None:
        param = self._parameter("body", body_parameter, "set_merged_input")
        result = self._result("body", successive_value, "set_merged_input")
        self._ins.append((self._outer(initial_value, "set_merged_input"), {"body": param},
                          None, {"body": result}))
        self._rebuild()

    def get_iter_value(self, body_value, iteration: int = -1) -> OutputPort:
        if iteration != -1:
            raise ArgumentError(f"{self.TYPE}.get_iter_value: only the last iteration's value "
                                f"(-1) is an output, as OpenVINO's")
        result = self._result("body", body_value, "get_iter_value")
        return self._add_output({"body": result}, None)

    def get_concatenated_slices(self, value, start: int, stride: int, part_size: int,
                                end: int, axis: int) -> OutputPort:
        result = self._result("body", value, "get_concatenated_slices")
        return self._add_output({"body": result}, dict(
            axis=int(axis), start=int(start), stride=int(stride), part_size=int(part_size),
            end=int(end)))


class tensor_iterator(_Iterated):  # noqa: N801 (OpenVINO's name)
    """TensorIterator-1: ``ops.tensor_iterator()``, then its body, inputs and outputs."""

    TYPE, VERSION = "TensorIterator", "opset1"

    def __init__(self):
        self._start([])


class loop(_Iterated):  # noqa: N801 (OpenVINO's name)
    """Loop-5: ``ops.loop(trip_count, execution_condition)``; ``set_special_body_ports([current
    iteration Parameter index or -1, condition Result index])``."""

    TYPE, VERSION = "Loop", "opset5"

    def __init__(self, trip_count, execution_condition):
        self._start([as_outputs(trip_count, "loop", "trip_count")[0],
                     as_outputs(execution_condition, "loop", "execution_condition")[0]])

    def set_special_body_ports(self, special_body_ports) -> None:
        ports = [int(p) for p in special_body_ports]
        if len(ports) != 2:
            raise ArgumentError("loop.set_special_body_ports: give [current iteration "
                                "Parameter index, condition Result index] (-1 for none)")
        self._special = ports
        self._rebuild()


class if_op(_Subgraph):  # noqa: N801 (OpenVINO's name)
    """If-8: ``ops.if_op(condition)``; ``set_then_body``, ``set_else_body``,
    ``set_input(value, then_parameter, else_parameter)`` (either may be None),
    ``set_output(then_result, else_result)`` -> the output."""

    TYPE, VERSION = "If", "opset8"
    BODIES = ("then_body", "else_body")

    def __init__(self, execution_condition):
        self._start([as_outputs(execution_condition, "if_op", "execution_condition")[0]])

    def set_then_body(self, body: Model) -> None:
        self._body_model("then_body", body)

    def set_else_body(self, body: Model) -> None:
        self._body_model("else_body", body)

    def get_then_body(self) -> Model:
        return self._models["then_body"]

    def get_else_body(self) -> Model:
        return self._models["else_body"]

    def set_input(self, value, then_parameter, else_parameter) -> None:
        params = {}
        if then_parameter is not None:
            params["then_body"] = self._parameter("then_body", then_parameter, "set_input")
        if else_parameter is not None:
            params["else_body"] = self._parameter("else_body", else_parameter, "set_input")
        self._ins.append((self._outer(value, "set_input"), params, None, {}))
        self._rebuild()

    def set_output(self, then_result, else_result) -> OutputPort:
        return self._add_output({"then_body": self._result("then_body", then_result,
                                                             "set_output"),
                                 "else_body": self._result("else_body", else_result,
                                                           "set_output")}, None)
