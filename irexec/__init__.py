"""irexec: read, check and run OpenVINO IR models with numpy.

    import irexec
    model = irexec.read_model("model.xml")
    compiled = irexec.compile_model(model)
    outputs = compiled({"data": x})
"""

from irexec import ops as _ops  # noqa: F401  (registers the built-in operations)
from irexec.api import Core, compile_model, read_model, save_model
from irexec.errors import InternalError, IRError, OpError
from irexec.generation import generate
from irexec.ir.element_type import ElementType
from irexec.ir.model import Model
from irexec.ir.shape import Dimension, PartialShape
from irexec.opsets import graph as _graph  # noqa: F401  (Model(results, parameters, name))
from irexec.ops.registry import register as register_op
from irexec.runtime.compiled_model import CompiledModel, InferRequest
from irexec.runtime.results import Tensor
from irexec.version import __version__

__all__ = [
    "CompiledModel", "Core", "Dimension", "ElementType", "IRError", "InferRequest",
    "InternalError", "Model", "OpError", "PartialShape", "Tensor", "compile_model", "generate", "read_model",
    "register_op", "save_model",
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
