"""irexec: read, check and run OpenVINO IR models with numpy.

    import irexec
    model = irexec.read_model("model.xml")
    compiled = irexec.compile_model(model)
    outputs = compiled({"data": x})
"""

from irexec import ops as _ops  # noqa: F401  (registers the built-in operations)
from irexec.api import Core, compile_model, read_model, save_model
from irexec import pickling as _pickling  # noqa: F401  (Model and CompiledModel pickle as IR)
from irexec.errors import InternalError, IRError, OpError
from irexec.ir.element_type import ElementType
from irexec.ir.model import Model
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.registry import register as register_op
from irexec.runtime.compiled_model import CompiledModel, InferRequest
from irexec.runtime.results import Tensor
from irexec.version import __version__

__all__ = [
    "CompiledModel", "Core", "Dimension", "ElementType", "IRError", "InferRequest",
    "InternalError", "Model", "OpError", "PartialShape", "Tensor", "compile_model", "read_model",
    "register_op", "save_model",
]
