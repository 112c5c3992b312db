"""irexec: read, check and run OpenVINO IR models with numpy.

    import irexec
    model = irexec.read_model("model.xml")
    compiled = irexec.compile_model(model)
    outputs = compiled({"data": x})
"""

from irexec import ops as _ops  # noqa: F401  (registers the built-in operations)
from irexec import properties
from irexec.api import (Core, Version, compile_model, convert_model, get_version, read_model,
                        save_model, serialize)
from irexec import pickling as _pickling  # noqa: F401  (Model and CompiledModel pickle as IR)
from irexec.errors import InternalError, IRError, OpError
from irexec.generation import generate
from irexec.ir import layout as layout_helpers
from irexec.ir.element_type import ElementType
from irexec.ir.element_type import ElementType as Type
from irexec.ir.layout import Layout, get_batch, set_batch
from irexec.ir.model import InputPort, Model, Node, OutputPort
from irexec.ir.rt_info import RtValue as OVAny
from irexec.ir.shape import Dimension, PartialShape, Shape
from irexec.opsets import graph as _graph  # noqa: F401  (Model(results, parameters, name))
from irexec.ops.registry import register as register_op
from irexec.runtime.compiled_model import CompiledModel
from irexec.runtime.infer_request import (AsyncInferQueue, InferRequest, ProfilingInfo,
                                          VariableState)
from irexec.runtime.results import Results, Tensor
from irexec.version import __version__

# OpenVINO's names for the port classes (isinstance checks in scripts written for it)
Output = ConstOutput = OutputPort
Input = InputPort
OVDict = Results

__all__ = [
    "AsyncInferQueue", "CompiledModel", "ConstOutput", "Core", "Dimension", "ElementType",
    "IRError", "InferRequest", "Input", "InputPort", "InternalError", "Layout", "Model", "Node",
    "OVAny", "OVDict", "OpError", "Output", "OutputPort", "PartialShape", "ProfilingInfo",
    "Results", "Shape", "Tensor", "Type", "VariableState", "Version", "compile_model",
    "convert_model", "generate", "get_batch", "get_version", "layout_helpers", "properties", "read_model",
    "register_op", "save_model", "serialize", "set_batch",
]


def __getattr__(name: str):
    """``irexec.opset13``, ``irexec.preprocess``: imported when first named (as OpenVINO's
    package offers them), so ``import irexec`` stays quick."""
    import importlib

    if name == "preprocess":
        return importlib.import_module("irexec.preprocess")
    if name.startswith("opset") and name[5:].isdigit() and 1 <= int(name[5:]) <= 17:
        return importlib.import_module(f"irexec.opset{int(name[5:])}")
    raise AttributeError(f"module 'irexec' has no attribute {name!r}")
