"""``irexec convert MODEL.onnx -o MODEL.xml``: an ONNX model as OpenVINO IR v11 (+ ``.bin``).

The ONNX model is read (and checked) like any other, then each layer of the ``onnx`` family is
written with OpenVINO's ops by its op's ``to_openvino`` (ReverseSequence -> ReverseSequence-1,
Cast -> Convert-1, Identity removed: its tensor names move to the tensor it passes on). The
result is checked again and written by io/ir_writer.py.
"""

from __future__ import annotations

import os

from irexec.builder import ModelBuilder
from irexec.cli import common
from irexec.cli.usage import UsageError
from irexec.errors import IRError
from irexec.ir.model import Model


def onnx_to_openvino(model: Model) -> Model:
    """A Model of OpenVINO ops equal to ``model`` (a Model read from ONNX)."""
    b = ModelBuilder(model.name)
    ports = {}  # id(port of model) -> port of the new model
    for node in model.topological_order():
        role = node.op.spec.role
        if role == "parameter":
            new = b.parameter(node.name, node.attrs["element_type"], node.attrs["shape"])
        elif role == "constant":
            new = b.constant(node.value, node.attrs["element_type"], name=node.name)
        elif role == "result":
            result = b.result(ports[id(node.inputs[0].source)], node.name)
            result.attrs["output_names"] = tuple(node.attrs.get("output_names", ()))
            continue
        elif node.op.spec.family == "onnx" and node.op.to_openvino is not None:
            inputs = [ports[id(p.source)] for p in node.inputs]
            new = node.op.to_openvino(b, node, *inputs)
        else:
            raise IRError.make("IR103", f"{node.type}-{node.version} has no OpenVINO equivalent "
                                        f"in irexec convert", node.location)
        for name in node.outputs[0].names:  # ONNX tensor names stay on the ports
            if name not in new.names:
                new.names.append(name)
        ports[id(node.outputs[0])] = new
    for node in b.nodes:  # a layer's own name is only a tensor name if ONNX had it as one
        if node.op.spec.role not in ("parameter", "result") and node.outputs:
            port = node.outputs[0]
            if len(port.names) > 1 and port.names[0] == node.name and node.name not in \
                    model_tensor_names(model):
                port.names.pop(0)
    return b.build()


def model_tensor_names(model: Model) -> set[str]:
    return {n for node in model.nodes for p in node.outputs for n in p.names}


def add_parser(sub) -> None:
    p = sub.add_parser("convert", help="convert an ONNX model to OpenVINO IR v11",
                       description="Convert an ONNX model (ReverseSequence, Cast, Identity) to "
                                   "OpenVINO IR v11: writes the .xml and the .bin beside it.")
    common.add_model_arguments(p, weights=False, help="the .onnx file (needs irexec[onnx])")
    p.add_argument("--output", "-o", required=True, metavar="OUT.xml",
                   help="the IR .xml to write (the .bin goes beside it)")


def execute(args) -> int:
    from irexec.io.ir_writer import ir_bytes
    from irexec.io.onnx_reader import is_onnx_file

    if not is_onnx_file(args.model):
        raise UsageError(f"'{args.model}' is not an ONNX model (.onnx)")
    if not args.output.lower().endswith(".xml"):
        raise UsageError(f"--output '{args.output}' must name an .xml file")
    weights = os.path.splitext(args.output)[0] + ".bin"
    common.check_output("--output", args.output, args)
    common.check_output("--output", weights, args)
    model = common.load_model(args)
    converted = onnx_to_openvino(model)
    xml, data = ir_bytes(converted)
    common.write_output("--output", weights, lambda f: f.write(data), args)
    common.write_output("--output", args.output, lambda f: f.write(xml), args)
    print(f"wrote {args.output} and {weights} ({len(converted.nodes)} layers)")
    return 0
